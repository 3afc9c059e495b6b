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

    /// `b2c-emulator browser --idp google` with no --display-name: the mock provider vouches for a person with a name made
    /// from the address, so the social sign-up page is filled. A provider answer with no name at all leaves the page
    /// asking: the scripted browser names the field and the option (exit 64), and b2c, with no terminal to paste into,
    /// stops at once with that message instead of waiting for --timeout (issue 37, item 4).
    @Test func theScriptedBrowserFillsTheSocialSignUpOrSaysWhatItNeeds() async throws {
        try await World.with { w in
            let browser = "'\(emulatorBinary.path)' browser --ca '\(w.caPath)' --idp google --as"
            let erin = try await w.b2c(
                ["signin", "--policy", "B2C_1_susi_social"], extra: ["BROWSER": "\(browser) erin.example@gmail.com"])
            #expect(erin.status == 0, "\(erin.stderr)")
            let who = try await w.b2c(["whoami", "--policy", "B2C_1_susi_social", "--output", "json"])
            #expect(who.json["person"]?["name"] == "Erin Example", "\(who.stdout)")

            _ = try await w.admin("POST", "/idp/google/next", ["sub": "g-nameless", "email": "nameless@gmail.com"])
            let started = Date()
            let stuck = try await w.b2c(
                ["signin", "--policy", "B2C_1_susi_social", "--prompt", "login", "--timeout", "120"],
                extra: ["BROWSER": "\(browser) nameless@gmail.com"])
            #expect(stuck.status == 1, "\(stuck.stderr)")
            #expect(stuck.stderr.contains("there is no terminal to paste"), "\(stuck.stderr)")
            #expect(
                stuck.stderr.contains("could not fill displayName") && stuck.stderr.contains("--display-name")
                    && stuck.stderr.contains("failed (exit 64)"), "\(stuck.stderr)")
            #expect(!stuck.stderr.contains("no answer from the browser"), "it waited for the timeout: \(stuck.stderr)")
            #expect(Date().timeIntervalSince(started) < 100, "it waited for the timeout")
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
