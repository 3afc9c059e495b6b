@testable import B2CEmulator
import B2CKit
import Foundation
import Testing

/// The discovery documents and key sets cached in the store: their age counts from the fetch (issue 22, item 14).
@Suite struct MetadataCacheTests {
    /// `url|fetched_at` of every cached document.
    static func cached(_ w: World) throws -> [String] {
        let r = try runBlocking(
            URL(fileURLWithPath: "/usr/bin/sqlite3"),
            ["-readonly", w.home.appendingPathComponent("store.sqlite").path, "SELECT url, fetched_at FROM metadata ORDER BY url"],
            environment: [:])
        #expect(r.status == 0, "\(r.stderr)")
        return r.stdout.split(separator: "\n").map(String.init)
    }

    static func fetchTimes(_ rows: [String]) -> [Int] { rows.compactMap { $0.split(separator: "|").last.flatMap { Int($0) } } }

    @Test func aCacheHitNeverRewritesTheDocumentSoItIsFetchedAgainADayAfterItsFetch() async throws {
        try await World.with { w in
            #expect(try await w.b2c(["signin"], as: alice).status == 0)
            let token = try await w.b2c(["token"]).stdout
            let fetched = try Self.cached(w)
            #expect(fetched.count == 2, "discovery and the key set: \(fetched)")
            // 23 hours later, every read is a cache hit: nothing is written, so the age still counts from the first fetch.
            for _ in 0..<2 {
                _ = try await w.b2c(["jwt", "verify"], extra: ["B2C_CLOCK_OFFSET": String(23 * 3600)], stdin: token)
                #expect(try Self.cached(w) == fetched, "a read rewrote the cache")
            }
            // 25 hours after the fetch, both are fetched again (and stored with the new time).
            _ = try await w.b2c(["jwt", "verify"], extra: ["B2C_CLOCK_OFFSET": String(25 * 3600)], stdin: token)
            let again = Self.fetchTimes(try Self.cached(w))
            let first = Self.fetchTimes(fetched)
            #expect(again.count == 2 && zip(again, first).allSatisfy { $0 - $1 >= 25 * 3600 - 60 }, "\(again) after \(first)")
        }
    }

    /// Issue 22, item 13: `b2c jwt verify` with the tenant down checks with the cached discovery document and key set, and
    /// says so (docs/exit-codes.md); with nothing cached it is exit 5.
    @Test func verifyWithTheTenantDownSaysItUsedTheCachedKeys() async throws {
        let w = try await World.start()
        #expect(try await w.b2c(["signin"], as: alice).status == 0)
        // A token valid for two days, signed with the tenant's key, so that it is still valid after the cache's day.
        var claims = try #require(JWT.payload(of: try await w.b2c(["token"]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)))
        claims["exp"] = JSONValue(Int(Date().timeIntervalSince1970) + 2 * 86_400)
        let signer = try w.server.emulator.keys.current(.userFlow)
        let token = try JWT.sign(claims: .object(claims), kid: signer.kid, key: signer.key)
        await w.stop()

        // Within the day: no request at all, and the signature row says which keys.
        let fresh = try await w.b2c(["jwt", "verify", "-o", "json"], stdin: token)
        #expect(fresh.status == 0 && fresh.json["keys"]?["fromCache"] == true, "\(fresh.stdout) \(fresh.stderr)")
        let row = fresh.json["checks"]?.arrayValue?.first { $0["name"] == "signature" }?["detail"]?.stringValue ?? ""
        #expect(row.contains("(cached, fetched "), "\(row)")
        // After the day: the tenant is asked, does not answer, and the cached copies are used — said on stderr.
        let stale = try await w.b2c(["jwt", "verify", "-o", "json"], extra: ["B2C_CLOCK_OFFSET": String(25 * 3600)], stdin: token)
        #expect(stale.status == 0 && stale.json["valid"] == true, "\(stale.stdout) \(stale.stderr)")
        #expect(
            stale.stderr.contains("the tenant could not be reached")
                && stale.stderr.contains("checked with the discovery document and key set cached"),
            "\(stale.stderr)")
        #expect(stale.json["keys"]?["tenantUnreachable"]?.stringValue?.contains("connection refused") == true, "\(stale.stdout)")
        // Nothing cached: exit 5.
        let empty = try await w.b2c(["jwt", "verify"], extra: ["B2C_HOME": w.dir.appendingPathComponent("empty-home").path], stdin: token)
        #expect(empty.status == 5, "\(empty.stderr)")
    }
}
