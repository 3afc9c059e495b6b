import B2CEmulator
import B2CKit
import Foundation
import Testing

/// Federated sign-in through the built `b2c` and its browser: the person signs in at a social provider (the tenant's mock
/// provider); b2c keeps the account and says which provider it came from.
@Suite(.serialized) struct FederationJourneyTests {
    @Test func aSocialSignUpThenASilentTokenAndTheProviderShown() async throws {
        try await World.with { w in
            let carol = (email: "carol@gmail.com", password: "", oid: "")
            let first = try await w.b2c(
                ["signin", "--policy", "B2C_1_susi_social"], as: carol,
                extra: ["B2C_AGENT_IDP": "google", "B2C_AGENT_DISPLAY_NAME": "Carol Gee"])
            #expect(first.status == 0, "\(first.stderr)")
            #expect(first.stdout.contains("Signed in as carol@gmail.com under B2C_1_susi_social"))
            let who = try await w.b2c(["whoami", "--policy", "B2C_1_susi_social", "--output", "json"])
            #expect(who.json["identityProvider"] == "google.com" && who.json["person"]?["name"] == "Carol Gee", "\(who.stdout)")
            let accounts = try await w.b2c(["accounts", "--output", "json"])
            let account = accounts.json["people"]?.arrayValue?.first?["accounts"]?.arrayValue?.first
            #expect(account?["identityProvider"] == "google.com", "\(accounts.stdout)")
            let table = try await w.b2c(["accounts", "--output", "table"])
            #expect(table.stdout.contains("B2C_1_susi_social (google.com)"), "\(table.stdout)")
            #expect(try await w.b2c(["token", "--policy", "B2C_1_susi_social", "--force-refresh"]).status == 0)
        }
    }

    @Test func domainHintAndACancelAtTheProvider() async throws {
        try await World.with { w in
            _ = try await w.admin("POST", "/idp/facebook/next", ["sub": "fb-7", "email": "dan@example.com", "name": "Dan"])
            let dan = (email: "dan@example.com", password: "", oid: "")
            let hinted = try await w.b2c(["signin", "--policy", "B2C_1_susi_social", "--domain-hint", "facebook.com"], as: dan)
            #expect(hinted.status == 0, "\(hinted.stderr)")
            #expect(try await w.b2c(["whoami", "--policy", "B2C_1_susi_social", "-o", "json"]).json["identityProvider"] == "facebook.com")
            _ = try await w.admin("POST", "/idp/google/next", ["error": "access_denied", "errorDescription": "Permissions error"])
            let refused = try await w.b2c(
                ["signin", "--policy", "B2C_1_susi_social", "--domain-hint", "google.com", "--prompt", "login"], as: dan)
            #expect(refused.status == 1, "\(refused.stderr)")
            #expect(refused.stderr.contains("the identity provider did not sign the person in to B2C_1_susi_social (AADB2C90273"))
        }
    }
}
