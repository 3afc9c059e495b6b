import B2CEmulator
import B2CKit
import Foundation
import Testing

/// What the store says about an account's tokens, and when it is trusted (issue 22, item 13).
@Suite struct TokenStateTests {
    /// Runs SQL on the world's store (the columns used here are not encrypted).
    static func sql(_ w: World, _ statement: String) throws -> String {
        let r = try runBlocking(
            URL(fileURLWithPath: "/usr/bin/sqlite3"),
            ["-cmd", ".timeout 5000", w.home.appendingPathComponent("store.sqlite").path, statement],
            environment: [:])
        #expect(r.status == 0, "\(r.stderr)")
        return r.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    @Test func aForcedRefreshIsNotStoppedByATokenCachedInTheFuture() async throws {
        try await World.with { w in
            #expect(try await w.b2c(["signin"], as: alice).status == 0)
            // The clock went back a day since the token was cached (or the store came from a machine a day ahead).
            _ = try Self.sql(w, "UPDATE access_tokens SET cached_at = cached_at + 86400")
            let before = try await w.tokenLog().filter { $0["grantType"] == "refresh_token" }.count
            let forced = try await w.b2c(["token", "--force-refresh", "--format", "json"])
            #expect(forced.status == 0 && forced.json["fromCache"] == false, "\(forced.stdout) \(forced.stderr)")
            #expect(try await w.tokenLog().filter { $0["grantType"] == "refresh_token" }.count == before + 1)
        }
    }

    /// `accounts` says what the last refresh answered: the refresh token is still held after a refusal, but not usable.
    @Test func accountsShowsARevokedOrExpiredRefreshTokenAsSuch() async throws {
        try await World.with { w in
            func refresh(_ row: JSONValue?) -> (JSONValue?, JSONValue?) { (row?["refreshToken"], row?["refreshRefused"]) }
            func account() async throws -> JSONValue? {
                try await w.b2c(["accounts", "-o", "json"]).json["people"]?.arrayValue?.first?["accounts"]?.arrayValue?.first
            }
            #expect(try await w.b2c(["signin"], as: alice).status == 0)
            #expect(refresh(try await account()) == (true, .null))
            #expect(try await w.b2c(["accounts", "-o", "table"]).stdout.contains(" yes"))

            _ = try await w.admin("POST", "/users/\(alice.email)/revoke")
            #expect(try await w.b2c(["token", "--force-refresh"]).status == 4)
            #expect(refresh(try await account()) == (true, "revoked"))
            let table = try await w.b2c(["accounts", "-o", "table"]).stdout
            #expect(table.contains(" revoked") && !table.contains(" yes"), "\(table)")

            // A new sign-in gives a usable refresh token again; one past its lifetime is "expired".
            #expect(try await w.b2c(["signin"], as: alice).status == 0)
            #expect(refresh(try await account()) == (true, .null))
            try await w.advanceClock(100 * 86_400)
            #expect(try await w.b2c(["token", "--force-refresh"]).status == 4)
            #expect(refresh(try await account()) == (true, "expired"))
            #expect(try await w.b2c(["accounts", "-o", "table"]).stdout.contains(" expired"))
        }
    }
}
