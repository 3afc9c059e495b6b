import B2CEmulator
import B2CKit
import Foundation
import Testing

@Suite(.serialized) struct ClientCoreTests {
    @Test func twoPeopleSignInAccountsGroupAndTokensRefreshPerPolicy() async throws {
        try await World.with { w in
            // Two people under B2C_1_susi (separate browsers), Alice also under edit profile through her SSO session.
            let a = try await w.b2c(["signin", "--policy", "B2C_1_susi"], as: alice, jar: "alice")
            #expect(a.status == 0, "\(a.stderr)")
            #expect(a.stdout.contains("Signed in as alice@contoso.com under B2C_1_susi"))
            let b = try await w.b2c(["signin", "--policy", "B2C_1_susi"], as: bob, jar: "bob")
            #expect(b.status == 0, "\(b.stderr)")
            let e = try await w.b2c(["signin", "--policy", "B2C_1_edit_profile"], as: nil, jar: "alice")
            #expect(e.status == 0, "SSO: no credentials needed. \(e.stderr)")

            let accounts = try await w.b2c(["accounts", "--output", "json"])
            #expect(accounts.status == 0)
            let people = try #require(accounts.json["people"]?.arrayValue)
            #expect(people.count == 2)
            let alicePerson = try #require(people.first { $0["email"] == .string(alice.email) })
            let policies = alicePerson["accounts"]?.arrayValue?.compactMap { $0["policy"]?.stringValue }.sorted()
            #expect(policies == ["B2C_1_edit_profile", "B2C_1_susi"])
            #expect(alicePerson["accounts"]?.arrayValue?.allSatisfy { $0["refreshToken"] == true } == true)
            let susiOnly = try await w.b2c(["accounts", "--policy", "B2C_1_susi", "--output", "json"])
            #expect(susiOnly.json["people"]?.arrayValue?.count == 2)
            let table = try await w.b2c(["accounts", "--output", "table"])
            #expect(
                ["Alice Example ", "<alice@contoso.com>", "Bob Example ", "<bob@contoso.com>"].allSatisfy(table.stdout.contains),
                "\(table.stdout)")
            #expect(table.stdout.split(separator: "\n").allSatisfy { $0.count <= 80 }, "the table fits 80 columns:\n\(table.stdout)")

            // Two accounts under B2C_1_susi: the current one (Bob signed in last) unless --account says otherwise.
            let current = try await w.b2c(["token", "--format", "json"])
            #expect(current.json["accountId"]?.stringValue == "\(bob.oid)-b2c_1_susi.\(tenantID)")
            #expect(current.json["fromCache"] == true)
            let aliceToken = try await w.b2c(["token", "--account", alice.email, "--format", "json"])
            #expect(
                aliceToken.json["fromCache"] == true && aliceToken.json["accountId"]?.stringValue == "\(alice.oid)-b2c_1_susi.\(tenantID)")
            let before = try await w.tokenLog().count

            // After the clock moves past the access token's lifetime, `token` refreshes with that policy's refresh token.
            try await w.advanceClock(3500)
            let refreshed = try await w.b2c(["token", "--account", alice.email, "--format", "json"])
            #expect(refreshed.status == 0, "\(refreshed.stderr)")
            #expect(refreshed.json["fromCache"] == false)
            #expect(refreshed.json["accessToken"] != aliceToken.json["accessToken"])
            let again = try await w.b2c(["token", "--account", alice.email, "--format", "json"])
            #expect(again.json["fromCache"] == true)
            let editToken = try await w.b2c(["token", "--policy", "B2C_1_edit_profile", "--format", "json", "--force-refresh"])
            #expect(editToken.status == 0 && editToken.json["accountId"]?.stringValue == "\(alice.oid)-b2c_1_edit_profile.\(tenantID)")
            let log = try await w.tokenLog().dropFirst(before)
            let refreshes = log.filter { $0["grantType"] == "refresh_token" }
            #expect(refreshes.count == 2)
            #expect(refreshes.allSatisfy { $0["outcome"] == "ok" }, "a refresh token is only ever sent to its own policy: \(refreshes)")
            #expect(refreshes.map { $0["policy"]?.stringValue ?? "" }.sorted() == ["b2c_1_edit_profile", "b2c_1_susi"])

            // Revoked grant: exit 4 and the exact command to run.
            _ = try await w.admin("POST", "/users/\(alice.email)/revoke")
            let revoked = try await w.b2c(["token", "--account", alice.email, "--force-refresh"])
            #expect(revoked.status == 4, "\(revoked.stderr)")
            #expect(
                revoked.stderr.contains("AADB2C90129")
                    && revoked.stderr.contains("Run: b2c signin --policy B2C_1_susi --login-hint alice@contoso.com"))
            #expect(revoked.stdout.isEmpty)
            // The store is untouched by the failure.
            #expect(try await w.b2c(["accounts", "--output", "json"]).json["people"]?.arrayValue?.count == 2)
            let whoami = try await w.b2c(["whoami", "--account", bob.email, "--output", "json"])
            #expect(whoami.json["person"]?["name"] == "Bob Example" && whoami.json["claims"]?["tfp"] == "B2C_1_susi")
        }
    }

    @Test func concurrentTokenProcessesCauseOneRefresh() async throws {
        try await World.with { w in
            #expect(try await w.b2c(["signin"], as: alice).status == 0)
            try await w.advanceClock(3600)
            let before = try await w.tokenLog().filter { $0["grantType"] == "refresh_token" }.count
            let env = w.environment(as: nil)
            let results = try await withThrowingTaskGroup(of: Run.self) { group in
                for _ in 0..<32 { group.addTask { try await run(b2cBinary, ["token", "--format", "json"], environment: env) } }
                var all: [Run] = []
                for try await r in group { all.append(r) }
                return all
            }
            #expect(results.allSatisfy { $0.status == 0 }, "\(results.filter { $0.status != 0 }.map(\.stderr))")
            #expect(Set(results.compactMap { $0.json["accessToken"]?.stringValue }).count == 1, "all 32 got the same fresh token")
            let after = try await w.tokenLog().filter { $0["grantType"] == "refresh_token" }.count
            #expect(after - before == 1, "the emulator saw \(after - before) refresh grants")
        }
    }

    @Test func forgotPasswordRunsTheResetPolicyAndResumesTheSignIn() async throws {
        try await World.with { w in
            let r = try await w.b2c(
                ["signin"], as: bob, extra: ["B2C_AGENT_ACTION": "forgot", "B2C_AGENT_NEW_PASSWORD": "Bob-reset-2026!"])
            #expect(r.status == 0, "\(r.stderr)")
            #expect(r.stderr.contains("Password reset requested: running B2C_1_reset"))
            #expect(r.stdout.contains("Signed in as bob@contoso.com under B2C_1_susi"))
            let accounts = try await w.b2c(["accounts", "--output", "json"])
            let policies = accounts.json["people"]?.arrayValue?.first?["accounts"]?.arrayValue?.compactMap { $0["policy"]?.stringValue }
                .sorted()
            #expect(policies == ["B2C_1_reset", "B2C_1_susi"])
            #expect(try await w.b2c(["token"]).status == 0)
        }
    }

    /// A browser that chooses "Forgot your password?" again when the sign-in resumes after the reset (b2c-emulator's
    /// scripted browser without `--jar`, which forgets the reset between runs) ends the sign-in saying so, not claiming
    /// that no reset policy is configured.
    @Test func forgotPasswordChosenAgainAfterTheResetIsSaidAsSuch() async throws {
        try await World.with { w in
            let browser = "'\(emulatorBinary.path)' browser --as bob@contoso.com --action forgot --ca '\(w.caPath)'"
            let r = try await w.b2c(
                ["signin"],
                extra: [
                    "BROWSER": browser, "B2C_EMULATOR_PASSWORD": bob.password, "B2C_EMULATOR_NEW_PASSWORD": "Bob-reset-2026!",
                ])
            #expect(r.status == 1, "\(r.stdout) \(r.stderr)")
            #expect(r.stderr.contains("Password reset requested: running B2C_1_reset"), "\(r.stderr)")
            #expect(r.stderr.contains("was chosen again when the sign-in to B2C_1_susi resumed after B2C_1_reset"), "\(r.stderr)")
            #expect(!r.stderr.contains("has no policy of role resetPassword"), "\(r.stderr)")
        }
    }
}
