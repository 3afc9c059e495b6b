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

    /// What a step answered; a step that went on instead fails the test.
    static func response(_ o: StepOutcome, sourceLocation: SourceLocation = #_sourceLocation) throws -> Response {
        guard case .respond(let r) = o else {
            Issue.record("the step went on; it was to answer", sourceLocation: sourceLocation)
            throw PageError(code: nil, message: "no response")
        }
        return r
    }

    /// The transaction a step went on with; a step that answered instead fails the test.
    static func next(_ o: StepOutcome, sourceLocation: SourceLocation = #_sourceLocation) throws -> AuthorizeTransaction {
        guard case .next(let tx) = o else {
            Issue.record("the step answered; it was to go on", sourceLocation: sourceLocation)
            throw PageError(code: nil, message: "no next")
        }
        return tx
    }

    static let request = Request(head: .init(method: .post, scheme: "https", authority: "x", path: "/"), body: .init(buffer: .init()))
    static func visit(_ t: TestTenant) -> Visit { Visit(secure: true, origin: t.base, request: request) }

    static func body(_ r: StepOutcome) async throws -> String { try await body(response(r)) }

    static func body(_ r: Response) async throws -> String {
        let collector = CollectingWriter()
        try await r.body.write(collector)
        return String(decoding: await collector.bytes, as: UTF8.self)
    }

    @Test func theSecondFactorIsEnteredOrSkippedAsThePolicySays() async throws {
        try await TestTenant.with(seed: MFATests.seed) { t in
            let step = SecondFactorStep(t.emulator.authorize)
            // A policy that asks: the step shows its page and the transaction waits at the second factor, for this person.
            var first = try await Self.transaction(t, policy: "B2C_1_mfa_email")
            first.claims.signedIn(alice.oid, at: 100)
            let policy = try #require(t.emulator.seed.policy(named: "B2C_1_mfa_email"))
            let askedPage = try await Self.body(step.enter(first, Self.visit(t), policy: policy))
            #expect(askedPage.contains("id=\"ReadOnlyEmail_ver_but_send\""))
            let waiting = try #require(try t.emulator.store.transaction(id: first.id, now: t.emulator.clock.now()))
            #expect(waiting.mfa?.oid == alice.oid && waiting.claims.authTime == 100 && waiting.step.accepts.contains("mfaverify"))
            // Resumed: a wrong code is said on the page; the right one, then Continue, goes on with the second factor done.
            _ = try await step.resume("mfasend", [:], waiting, policy: policy, request: Self.request)
            let sent = try #require(try t.emulator.store.transaction(id: waiting.id, now: t.emulator.clock.now()))
            let code = try #require(try await MFATests.outbox(t).first?["code"]?.stringValue)
            let wrong = try await step.resume(
                "mfaverify", ["ReadOnlyEmail_ver_input": code == "000000" ? "111111" : "000000"], sent, policy: policy,
                request: Self.request)
            let wrongPage = try await Self.body(wrong)
            #expect(wrongPage.contains("That code is incorrect"), "\(wrongPage.prefix(300))")
            let again = try #require(try t.emulator.store.transaction(id: waiting.id, now: t.emulator.clock.now()))
            _ = try await step.resume("mfaverify", ["ReadOnlyEmail_ver_input": code], again, policy: policy, request: Self.request)
            let verified = try #require(try t.emulator.store.transaction(id: waiting.id, now: t.emulator.clock.now()))
            let done = try Self.next(try await step.resume("mfacontinue", [:], verified, policy: policy, request: Self.request))
            #expect(done.claims.mfaDone && done.mfa == nil && done.claims.oid == alice.oid)
            // A policy that does not ask: the step goes on at once, and says why.
            var other = try await Self.transaction(t, policy: "B2C_1_susi")
            other.claims.signedIn(alice.oid, at: 100)
            let susi = try #require(t.emulator.seed.policy(named: "B2C_1_susi"))
            let skipped = try Self.next(try await step.enter(other, Self.visit(t), policy: susi))
            #expect(!skipped.claims.mfaDone)
            let why = t.emulator.store.journeys.journey(other.id)?.events.last { $0.name == "MFA not asked" }?.detail["why"]
            #expect(why == "the user flow does not ask for it")
            // A person marked mfaRequired is asked whatever the user flow says (the rule native authentication keeps too).
            try t.emulator.store.setMFARequired(oid: alice.oid, true)
            let required = try await Self.body(step.enter(other, Self.visit(t), policy: susi))
            #expect(required.contains("id=\"ReadOnlyEmail_ver_but_send\""))
        }
    }

    /// Token issuance: the claims the journey carried are in the tokens, and only a first factor typed on a page makes a
    /// session.
    @Test func tokenIssuanceMakesTheCodeAndTheSessionFromTheJourneysClaims() async throws {
        try await TestTenant.with { t in
            let step = TokenIssuanceStep(t.emulator.authorize)
            let policy = try #require(t.emulator.seed.policy(named: "B2C_1_susi"))
            let pkce = PKCE()
            let page = try await Browser(t).get(authorizeURL(pkce: pkce))
            var tx = try #require(try t.emulator.store.transaction(id: MFATests.tx(page), now: t.emulator.clock.now()))
            tx.claims.signedIn(alice.oid, at: 42, newUser: true)
            tx.claims.extraClaims = ["loyaltyTier": "gold"]
            let issued = try Self.response(try await step.enter(tx, Self.visit(t), policy: policy))
            let location = try #require(issued.headers[.location])
            #expect(issued.headers[values: .setCookie].contains { $0.contains("x-ms-cpim-sso") }, "a new session's cookie")
            let code = try #require(URLComponents(string: location)?.queryItems?.first { $0.name == "code" }?.value)
            let c = try claims(
                try await t.token("B2C_1_susi", redeemForm(code: code, verifier: pkce.verifier)).json["id_token"]?.stringValue)
            #expect(c["oid"] == .string(alice.oid) && c["auth_time"] == 42 && c["newUser"] == true, "\(c)")
            #expect(c["loyaltyTier"] == "gold", "the callouts' claims reach the token")
            // The transaction is spent: its answer was given.
            #expect(try t.emulator.store.transaction(id: tx.id, now: t.emulator.clock.now()) == nil)
            // An SSO session's answer makes no new session.
            let other = try await Browser(t).get(authorizeURL())
            var tx2 = try #require(try t.emulator.store.transaction(id: MFATests.tx(other), now: t.emulator.clock.now()))
            tx2.claims.fromSession(alice.oid, authTime: 42, mfa: false)
            let quiet = try Self.response(try await step.enter(tx2, Self.visit(t), policy: policy))
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
            let wrong = try await step.resume(["logonIdentifier": alice.email, "password": "nope"], tx, policy: policy)
            let wrongPage = try await T.body(wrong)
            #expect(wrongPage.contains("Your password is incorrect") && wrongPage.contains(alice.email), "\(wrongPage.prefix(300))")
            let right = try await step.resume(["logonIdentifier": alice.email, "password": alice.password], tx, policy: policy)
            #expect(try T.next(right).claims.oid == alice.oid && T.next(right).claims.newSession)
            let answer = try await JourneyRunner(t.emulator.authorize).proceed(right, after: .combinedSignIn, policy: policy, T.visit(t))
            #expect(Self.code(answer) != nil)
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
            let refused = try T.response(try await step.resume(form, tx, policy: policy))
            #expect(try t.emulator.store.user(email: "sam@contoso.com") == nil && refused.status == .ok)
            form["reenterPassword"] = "Sam-dev-2026!"
            let made = try await step.resume(form, tx, policy: policy)
            #expect(try T.next(made).claims.newUser)
            let answer = try await JourneyRunner(t.emulator.authorize).proceed(made, after: .signUp, policy: policy, T.visit(t))
            #expect(Self.code(answer) != nil)
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
                ["verificationCode": code, "newPassword": "Alice-new-2026!", "reenterPassword": "Alice-new-2026!"], tx, policy: policy)
            #expect(try T.next(done).claims.oid == alice.oid)
            #expect(try t.emulator.store.checkPassword(email: alice.email, password: "Alice-new-2026!") != nil)
        }
    }

    @Test func theProfilePageWritesTheDirectoryThenIssues() async throws {
        try await TestTenant.with { t in
            let policy = try #require(t.emulator.seed.policy(named: "B2C_1_edit_profile"))
            let step = ProfileEditStep(t.emulator.authorize)
            var tx = try await T.transaction(t, policy: "B2C_1_edit_profile")
            await #expect(throws: PageError.self) { try await step.resume(["displayName": "A"], tx, policy: policy) }
            tx.claims.signedIn(alice.oid, at: 42)
            let page = try await T.body(step.enter(tx, T.visit(t), policy: policy))
            #expect(page.contains("Alice"))
            let done = try await step.resume(["displayName": "Alice Renamed", "givenName": "Alice", "surname": "R"], tx, policy: policy)
            _ = try T.next(done)
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
