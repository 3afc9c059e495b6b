@testable import B2CEmulator
import B2CKit
import Foundation
import Testing

/// Entra External ID: browser sign-in at a policy-less authority, through the built binary against the emulator's
/// External ID tenant (issue 13, item 5).
@Suite struct ExternalIDTests {
    @Test func browserSignInAtAPolicylessAuthorityAndEveryCommandAfterIt() async throws {
        try await World.with(seed: .defaultExternalID) { w in
            let config = try ClientConfiguration.load(path: w.configPath)
            #expect(config.tenantType == .externalId && config.policies.isEmpty)
            let signin = try await w.b2c(["signin", "--verbose"], as: alice)
            #expect(signin.status == 0, "\(signin.stderr)")
            #expect(signin.stdout.contains("under ExternalID (account \(alice.oid).\(tenantID))"), "\(signin.stdout)")
            // No policy in any URL: discovery at /<tenant>/v2.0/…, authorize and token below the tenant.
            #expect(signin.stderr.contains("/contoso.onmicrosoft.com/v2.0/.well-known/openid-configuration"), "\(signin.stderr)")
            #expect(!signin.stderr.lowercased().contains("b2c_1_"), "\(signin.stderr)")

            let token = try await w.b2c(["token", "--api", "hello"])
            let claims = try #require(JWT.payload(of: token.stdout.trimmingCharacters(in: .whitespacesAndNewlines)))
            #expect(claims["ver"] == "2.0" && claims["tid"] == .string(tenantID) && claims["tfp"] == nil && claims["acr"] == nil)
            let who = try await w.b2c(["whoami", "-o", "json"])
            #expect(who.json["claims"]?["preferred_username"] == .string(alice.email), "\(who.stdout)")
            #expect(try await w.b2c(["token", "--force-refresh"]).status == 0)
            let call = try await w.b2c(["call-api", "--api", "hello"])
            #expect(call.status == 0 && call.json["name"] == "Alice Example", "\(call.stderr)")
            // Microsoft Graph /me, as the tenant serves it: a table of the person, or Graph's JSON.
            let me = try await w.b2c(["call-api", "--api", "graph", "/me", "-o", "table"])
            #expect(
                me.status == 0 && me.stdout.contains("PROPERTY") && me.stdout.contains("displayName        Alice Example"),
                "\(me.stdout)\(me.stderr)")
            #expect(me.stderr.contains("/graph/v1.0/me"), "\(me.stderr)")
            let meJSON = try await w.b2c(["call-api", "--api", "graph", "/me", "-o", "json"])
            #expect(meJSON.json["mail"] == .string(alice.email) && meJSON.json["id"] == .string(alice.oid), "\(meJSON.stdout)")
            let graphToken = try #require(
                JWT.payload(of: try await w.b2c(["token", "--api", "graph"]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)))
            #expect(graphToken["aud"] == "00000003-0000-0000-c000-000000000000" && graphToken["scp"] == "User.Read")

            // Native authentication in the same tenant is the same account, not a second one.
            let native = try await w.b2c(
                ["signin", "--native", "--username", alice.email, "--password-stdin"], stdin: alice.password + "\n")
            #expect(native.status == 0, "\(native.stderr)")
            let people = try await w.b2c(["accounts", "-o", "json"]).json["people"]?.arrayValue ?? []
            #expect(people.count == 1 && people[0]["accounts"]?.arrayValue?.count == 1, "\(people)")

            let out = try await w.b2c(["signout", "--browser", "--account", alice.email], as: alice)
            #expect(out.status == 0 && out.stdout.contains("browser session is ended"), "\(out.stdout) \(out.stderr)")
            #expect(try await w.b2c(["accounts", "-o", "json"]).json["people"] == .array([]))
        }
    }

    @Test func aPolicyIsRefusedWithTheReason() async throws {
        try await World.with(seed: .defaultExternalID) { w in
            _ = try await w.b2c(["accounts"])
            let before = try w.storeSnapshot()
            for args in [["signin", "--policy", "B2C_1_susi"], ["token", "--policy", "B2C_1_susi"]] {
                let r = try await w.b2c(args, as: alice)
                #expect(r.status == 64 && r.stderr.contains("External ID tenant") && r.stderr.contains("--policy"), "\(args): \(r.stderr)")
            }
            #expect(try w.storeSnapshot() == before)
            // A configuration that lists policies for an External ID host is refused where it is read.
            try w.editConfig { $0["policies"] = [["name": "B2C_1_susi", "role": "signUpSignIn"]] }
            let invalid = try await w.b2c(["accounts"])
            #expect(invalid.status == 3 && invalid.stderr.contains("$.policies"), "\(invalid.stderr)")
        }
    }
}
