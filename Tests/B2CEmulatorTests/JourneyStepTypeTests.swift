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
