import B2CKit
import Foundation
import Hummingbird
import Testing

@testable import B2CEmulator

/// The step types, entered and resumed in-process against a tenant's own parts: what each takes from the transaction,
/// what it shows, and what it leaves (the transaction's step, the claims in the tokens).
@Suite struct JourneyStepTypeTests {
    /// A transaction as the authorize request leaves it (its first page shown).
    static func transaction(_ t: TestTenant, policy: String) async throws -> AuthorizeTransaction {
        let page = try await Browser(t).get(authorizeURL(policy: policy))
        return try #require(try t.emulator.store.transaction(id: MFATests.tx(page), now: t.emulator.clock.now()))
    }

    static func body(_ r: Response) async throws -> String {
        let collector = CollectingWriter()
        try await r.body.write(collector)
        return String(decoding: await collector.bytes, as: UTF8.self)
    }

    @Test func theSecondFactorIsEnteredOrSkippedAsThePolicySays() async throws {
        try await TestTenant.with(seed: MFATests.seed) { t in
            let person = try #require(try t.emulator.store.user(email: alice.email))
            let step = SecondFactorStep(t.emulator.authorize)
            // A policy that asks: the step shows its page and the transaction waits at the second factor, for this person.
            let first = try await Self.transaction(t, policy: "B2C_1_mfa_email")
            let asked = try await step.enter(
                first, user: person, authTime: 100, newUser: false, secure: true,
                newSession: true, sessionDidMFA: false, policy: try #require(t.emulator.seed.policy(named: "B2C_1_mfa_email")))
            let askedPage = try await Self.body(asked)
            #expect(asked.status == .ok && askedPage.contains("id=\"ReadOnlyEmail_ver_but_send\""))
            let waiting = try #require(try t.emulator.store.transaction(id: first.id, now: t.emulator.clock.now()))
            #expect(waiting.mfa?.oid == alice.oid && waiting.mfa?.authTime == 100 && waiting.step.accepts.contains("mfaverify"))
            // Resumed: a wrong code is said on the page; the right one, then Continue, goes on to token issuance.
            let policy = try #require(t.emulator.seed.policy(named: "B2C_1_mfa_email"))
            let request = Request(head: .init(method: .post, scheme: "https", authority: "x", path: "/"), body: .init(buffer: .init()))
            _ = try await step.resume("mfasend", [:], waiting, policy: policy, request: request, secure: true)
            let sent = try #require(try t.emulator.store.transaction(id: waiting.id, now: t.emulator.clock.now()))
            let code = try #require(try await MFATests.outbox(t).first?["code"]?.stringValue)
            let wrong = try await step.resume(
                "mfaverify", ["ReadOnlyEmail_ver_input": code == "000000" ? "111111" : "000000"], sent, policy: policy, request: request,
                secure: true)
            let wrongPage = try await Self.body(wrong)
            #expect(wrongPage.contains("That code is incorrect"), "\(wrongPage.prefix(300))")
            let again = try #require(try t.emulator.store.transaction(id: waiting.id, now: t.emulator.clock.now()))
            _ = try await step.resume("mfaverify", ["ReadOnlyEmail_ver_input": code], again, policy: policy, request: request, secure: true)
            let verified = try #require(try t.emulator.store.transaction(id: waiting.id, now: t.emulator.clock.now()))
            let done = try await step.resume("mfacontinue", [:], verified, policy: policy, request: request, secure: true)
            let location = try #require(done.headers[.location])
            #expect(location.contains("code="), "\(location)")
            // A policy that does not ask: the step is skipped, straight to token issuance.
            let skipped = try await step.enter(
                try await Self.transaction(t, policy: "B2C_1_susi"), user: person, authTime: 100, newUser: false, secure: true,
                newSession: true, sessionDidMFA: false, policy: try #require(t.emulator.seed.policy(named: "B2C_1_susi")))
            #expect(skipped.headers[.location]?.contains("code=") == true)
        }
    }

    /// Token issuance: the claims the journey carried are in the tokens, and only a first factor typed on a page makes a
    /// session.
    @Test func tokenIssuanceMakesTheCodeAndTheSessionFromTheJourneysClaims() async throws {
        try await TestTenant.with { t in
            let person = try #require(try t.emulator.store.user(email: alice.email))
            let step = TokenIssuanceStep(t.emulator.authorize)
            let pkce = PKCE()
            let page = try await Browser(t).get(authorizeURL(pkce: pkce))
            var tx = try #require(try t.emulator.store.transaction(id: MFATests.tx(page), now: t.emulator.clock.now()))
            tx.rememberMe = false
            let issued = try await step.enter(tx, user: person, authTime: 42, newUser: true, secure: true, newSession: true)
            let location = try #require(issued.headers[.location])
            #expect(issued.headers[values: .setCookie].contains { $0.contains("x-ms-cpim-sso") }, "a new session's cookie")
            let code = try #require(URLComponents(string: location)?.queryItems?.first { $0.name == "code" }?.value)
            let c = try claims(
                try await t.token("B2C_1_susi", redeemForm(code: code, verifier: pkce.verifier)).json["id_token"]?.stringValue)
            #expect(c["oid"] == .string(person.oid) && c["auth_time"] == 42 && c["newUser"] == true, "\(c)")
            // The transaction is spent: its answer was given.
            #expect(try t.emulator.store.transaction(id: tx.id, now: t.emulator.clock.now()) == nil)
            // An SSO session's answer makes no new session.
            let other = try await Browser(t).get(authorizeURL())
            let tx2 = try #require(try t.emulator.store.transaction(id: MFATests.tx(other), now: t.emulator.clock.now()))
            let quiet = try await step.enter(tx2, user: person, authTime: 42, newUser: false, secure: true, newSession: false)
            #expect(!quiet.headers[values: .setCookie].contains { $0.contains("x-ms-cpim-sso") })
        }
    }
}

/// Collects a response body's bytes.
actor CollectingWriter: ResponseBodyWriter {
    var bytes: [UInt8] = []
    func write(_ buffer: ByteBuffer) async throws { bytes += buffer.readableBytesView }
    func finish(_ trailingHeaders: HTTPFields?) async throws {}
}

/// The first-page steps and federation, each entered or resumed in-process: claims in (the form, the transaction), claims
/// out (the directory, the tokens, the transaction's next step).
@Suite struct FirstPageStepTests {
    typealias T = JourneyStepTypeTests

    static func code(_ r: Response) -> String? {
        r.headers[.location].flatMap { URLComponents(string: $0)?.queryItems?.first { $0.name == "code" }?.value }
    }

    @Test func signInChecksThePasswordThenGoesOn() async throws {
        try await TestTenant.with { t in
            let policy = try #require(t.emulator.seed.policy(named: "B2C_1_susi"))
            let step = SignInStep(t.emulator.authorize)
            let tx = try await T.transaction(t, policy: "B2C_1_susi")
            let wrong = try await step.resume(["logonIdentifier": alice.email, "password": "nope"], tx, policy: policy, secure: true)
            let wrongPage = try await T.body(wrong)
            #expect(wrongPage.contains("Your password is incorrect") && wrongPage.contains(alice.email), "\(wrongPage.prefix(300))")
            let right = try await step.resume(
                ["logonIdentifier": alice.email, "password": alice.password], tx, policy: policy, secure: true)
            #expect(Self.code(right) != nil)
            let events = t.emulator.store.journeys.journey(tx.id)?.events.map(\.name) ?? []
            #expect(events.contains("MFA not asked") && events.last == "tokens", "\(events)")
        }
    }

    @Test func signUpMakesTheAccountFromThePage() async throws {
        var seed = EmulatorSeed.default
        seed.policies[seed.policies.firstIndex { $0.id == "B2C_1_susi" }!].emailVerification = .off
        try await TestTenant.with(seed: seed) { t in
            let policy = try #require(t.emulator.seed.policy(named: "B2C_1_susi"))
            let step = SignUpStep(t.emulator.authorize)
            let tx = try await T.transaction(t, policy: "B2C_1_susi")
            var form = [
                "email": "sam@contoso.com", "newPassword": "Sam-dev-2026!", "reenterPassword": "Sam-dev-2026!", "givenName": "Sam",
                "surname": "Lee", "displayName": "Sam Lee",
            ]
            form["reenterPassword"] = "different"
            let refused = try await step.resume(form, tx, policy: policy, secure: true)
            #expect(try t.emulator.store.user(email: "sam@contoso.com") == nil && refused.status == .ok)
            form["reenterPassword"] = "Sam-dev-2026!"
            let made = try await step.resume(form, tx, policy: policy, secure: true)
            #expect(Self.code(made) != nil)
            let sam = try #require(try t.emulator.store.user(email: "sam@contoso.com"))
            #expect(sam.displayName == "Sam Lee" && sam.givenName == "Sam")
            let issued = t.emulator.store.journeys.journey(tx.id)?.events.first { $0.name == "token issuance" }
            #expect(issued?.detail["newUser"] == true && issued?.detail["oid"] == .string(sam.oid))
        }
    }

    @Test func aResetSendsACodeThenTakesItAndTheNewPassword() async throws {
        try await TestTenant.with { t in
            let policy = try #require(t.emulator.seed.policy(named: "B2C_1_reset"))
            let step = PasswordResetStep(t.emulator.authorize)
            var tx = try await T.transaction(t, policy: "B2C_1_reset")
            _ = try await step.requestCode(email: alice.email, &tx, policy: policy)
            #expect(tx.resetEmail == alice.email && tx.step.accepts.contains("resetverify"))
            let code = try #require(try await MFATests.outbox(t).first?["code"]?.stringValue)
            let done = try await step.resume(
                ["verificationCode": code, "newPassword": "Alice-new-2026!", "reenterPassword": "Alice-new-2026!"], &tx, policy: policy,
                secure: true)
            #expect(Self.code(done) != nil)
            #expect(try t.emulator.store.checkPassword(email: alice.email, password: "Alice-new-2026!") != nil)
        }
    }

    @Test func theProfilePageWritesTheDirectoryThenIssues() async throws {
        try await TestTenant.with { t in
            let policy = try #require(t.emulator.seed.policy(named: "B2C_1_edit_profile"))
            let step = ProfileEditStep(t.emulator.authorize)
            var tx = try await T.transaction(t, policy: "B2C_1_edit_profile")
            let request = Request(head: .init(method: .post, scheme: "https", authority: "x", path: "/"), body: .init(buffer: .init()))
            await #expect(throws: PageError.self) {
                try await step.resume(["displayName": "A"], tx, policy: policy, request: request, secure: true)
            }
            tx.oid = alice.oid
            let done = try await step.resume(
                ["displayName": "Alice Renamed", "givenName": "Alice", "surname": "R"], tx, policy: policy, request: request, secure: true)
            #expect(Self.code(done) != nil)
            #expect(try t.emulator.store.user(oid: alice.oid)?.displayName == "Alice Renamed")
        }
    }

    @Test func federationSendsToTheProviderAndWaitsForItsAnswerOnly() async throws {
        try await TestTenant.with { t in
            let step = FederationStep(t.emulator.authorize)
            let tx = try await T.transaction(t, policy: "B2C_1_susi_social")
            let sent = try step.federate(tx, to: .google, origin: t.base)
            #expect(sent.headers[.location]?.hasPrefix(t.base + "/_idp/google/authorize?") == true)
            let waiting = try #require(try t.emulator.store.transaction(id: tx.id, now: t.emulator.clock.now()))
            #expect(waiting.federatingWith == "google" && waiting.step.name == "the identity provider google")
        }
    }
}
