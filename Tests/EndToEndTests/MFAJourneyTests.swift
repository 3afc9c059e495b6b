import B2CEmulator
import B2CKit
import Foundation
import Testing

/// MFA journeys through the built `b2c` and its browser (the scripted agent doing what a person does with the outbox and
/// an authenticator app): what the client shows and stores, and the tenant's refusals as exit codes.
@Suite(.serialized) struct MFAJourneyTests {
    static var seed: EmulatorSeed {
        var s = EmulatorSeed.default
        var phone = s.policy(named: "B2C_1_susi")!
        phone.id = "B2C_1_susi_phone"
        phone.mfa = .init(methods: [.phone], enforcement: .always)
        var totp = phone
        totp.id = "B2C_1_susi_totp"
        totp.mfa = .init(methods: [.totp], enforcement: .always)
        s.policies += [phone, totp]
        return s
    }

    @Test func emailMFASignInThenSilentTokensAndNoSecondAskInTheSameSession() async throws {
        try await World.with { w in
            let first = try await w.b2c(["signin", "--policy", "B2C_1_susi_mfa"], as: alice)
            #expect(first.status == 0, "\(first.stderr)")
            #expect(first.stdout.contains("Signed in as alice@contoso.com under B2C_1_susi_mfa"))
            let outbox = try await w.admin("GET", "/outbox")["messages"]?.arrayValue ?? []
            #expect(outbox.first?["purpose"] == "mfa" && outbox.first?["channel"] == "email")
            #expect(try await w.b2c(["token", "--policy", "B2C_1_susi_mfa", "--force-refresh"]).status == 0)
            // The same browser session did MFA: a second sign-in sends no second code.
            let again = try await w.b2c(["signin", "--policy", "B2C_1_susi_mfa"], as: alice)
            #expect(again.status == 0)
            #expect((try await w.admin("GET", "/outbox")["messages"]?.arrayValue ?? []).count == outbox.count)
        }
    }

    @Test func phoneRegistrationAndAuthenticatorRegistrationThroughTheClient() async throws {
        try await World.with(seed: Self.seed) { w in
            let phone = try await w.b2c(["signin", "--policy", "B2C_1_susi_phone"], as: alice, extra: ["B2C_AGENT_PHONE": "+447700900123"])
            #expect(phone.status == 0, "\(phone.stderr)")
            let sms = try #require((try await w.admin("GET", "/outbox")["messages"]?.arrayValue)?.first)
            #expect(sms["channel"] == "sms" && sms["to"] == "+447700900123")
            #expect(try await w.admin("GET", "/users/\(alice.email)/mfa")["phoneEnrolled"] == true)
            // The authenticator: registered by its QR code's secret, remembered in the browser's jar for the next sign-in.
            let totp = try await w.b2c(["signin", "--policy", "B2C_1_susi_totp", "--prompt", "login"], as: alice)
            #expect(totp.status == 0, "\(totp.stderr)")
            #expect(try await w.admin("GET", "/users/\(alice.email)/mfa")["totpEnrolled"] == true)
            let later = try await w.b2c(["signin", "--policy", "B2C_1_susi_totp", "--prompt", "login"], as: alice)
            #expect(later.status == 0, "\(later.stderr)")
        }
    }

    @Test func threeWrongCodesAreSaidWithTheTenantsCodeAndNothingIsStored() async throws {
        try await World.with(seed: Self.seed) { w in
            _ = try await w.admin("POST", "/users/\(bob.email)/mfa", ["phone": "+14255550100"])
            let r = try await w.b2c(["signin", "--policy", "B2C_1_susi_phone"], as: bob, extra: ["B2C_AGENT_ACTION": "wrong-codes"])
            #expect(r.status == 1, "\(r.stderr)")
            #expect(r.stderr.contains("too many wrong verification codes (AADB2C90151)"), "\(r.stderr)")
            #expect(r.stderr.contains("Run: b2c signin --policy B2C_1_susi_phone"), "\(r.stderr)")
            #expect(try w.storeSnapshot().contains(bob.oid) == false)
        }
    }

    @Test func passwordsAloneAreRefusedWhereMFAIsAlways() async throws {
        var seed = EmulatorSeed.default
        let i = seed.policies.firstIndex { $0.id == "B2C_1_ROPC_Auth" }!
        seed.policies[i].mfa = .init(methods: [.email], enforcement: .always)
        try await World.with(seed: seed) { w in
            let r = try await w.b2c(
                ["signin", "--policy", "B2C_1_ROPC_Auth", "--username", alice.email, "--password-stdin"], stdin: alice.password + "\n")
            #expect(r.status == 3, "\(r.stderr)")
            #expect(r.stderr.contains("does not accept passwords from this app") && r.stderr.contains("AADB2C90224"), "\(r.stderr)")
        }
    }
}
