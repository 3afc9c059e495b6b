import B2CKit
import Foundation
import Testing

@testable import B2CEmulator

/// The transaction's step: what each page's request may be, decided in one place, and the fields each step keeps.
@Suite struct JourneyStepTests {
    static func post(
        _ t: TestTenant, _ policy: String, _ action: String, tx: String, _ form: [String: String] = [:]
    ) async throws
        -> TestResponse
    {
        try await t.post("/contoso.onmicrosoft.com/\(policy.lowercased())/emulator/\(action)", form.merging(["tx": tx]) { a, _ in a })
    }

    /// A page posted out of turn is refused, at every step: the first page, the second factor, the reset code.
    @Test func aPagePostedOutOfTurnIsRefused() async throws {
        try await TestTenant.with(seed: MFATests.seed) { t in
            // At the first page: no second factor, no reset code, no social sign-up.
            let first = try await Browser(t).get(authorizeURL())
            let tx = MFATests.tx(first)
            for action in ["mfaverify", "mfacontinue", "resetverify", "socialsignup"] {
                let r = try await Self.post(t, "B2C_1_susi", action, tx: tx, ["verificationCode": "000000"])
                #expect(r.status == 400 && r.body.contains("it waits for the first page"), "\(action): \(r.status) \(r.body.prefix(200))")
            }
            // At the second factor: the password page cannot be posted again, nor a sign-up.
            let b = Browser(t)
            let mfa = try await b.signIn(policy: "B2C_1_mfa_email", email: alice.email, password: alice.password)
            let mfaTx = MFATests.tx(mfa)
            for (action, form) in [("signin", ["logonIdentifier": bob.email, "password": bob.password]), ("signup", [:])] {
                let r = try await Self.post(t, "B2C_1_mfa_email", action, tx: mfaTx, form)
                #expect(r.status == 400 && r.body.contains("it waits for the second factor"), "\(action): \(r.body.prefix(200))")
            }
            // The refusal ended the journey in the recorder; the right step still goes on for a new sign-in.
            #expect(t.emulator.store.journeys.journey(mfaTx)?.outcome == "error page")
            let again = try await Browser(t).signIn(policy: "B2C_1_mfa_email", email: alice.email, password: alice.password)
            #expect(again.body.contains("id=\"ReadOnlyEmail_ver_but_send\""))
        }
    }

    @Test func aResetCodeStepTakesOnlyItsCodeAResendOrAnotherAddress() async throws {
        try await TestTenant.with { t in
            let b = Browser(t)
            let page = try await b.get(authorizeURL(policy: "B2C_1_reset"))
            let sent = try await b.submit(page, form: "attributeVerification", ["email": alice.email])
            let tx = MFATests.tx(sent)
            let r = try await Self.post(t, "B2C_1_reset", "signin", tx: tx, ["logonIdentifier": alice.email, "password": alice.password])
            #expect(r.status == 400 && r.body.contains("it waits for the reset code"), "\(r.status) \(r.body.prefix(300))")
        }
    }

    /// Each field lives in its step: setting one moves the transaction there, clearing it goes back to the first page;
    /// claims stay across steps; the whole survives the store's JSON.
    @Test func theFieldsLiveInTheirSteps() throws {
        let request = AppRequest(
            clientId: "c", redirectUri: "http://localhost", redirectType: .publicClient, responseType: ["code"], responseMode: "query",
            scope: "openid", prompt: [], clientInfo: false)
        var tx = AuthorizeTransaction(
            id: "t", policy: "B2C_1_susi", tenantSegment: "contoso.onmicrosoft.com", origin: "o", request: request)
        #expect(tx.step.accepts.contains("signin") && tx.mfa == nil)
        tx.idpAccessToken = "idp"
        tx.federatingWith = "google"
        #expect(tx.federatingWith == "google" && tx.step.accepts.contains("signin") && !tx.step.accepts.contains("mfaverify"))
        tx.federatingWith = nil
        tx.mfa = PendingMFA(oid: "o", method: .email, enrolling: false)
        #expect(tx.step.accepts == ["mfasend", "mfaverify", "mfacontinue", "mfaqr", "cancel"] && tx.federatingWith == nil)
        let decoded = try JSONDecoder().decode(AuthorizeTransaction.self, from: JSONEncoder().encode(tx))
        #expect(decoded.mfa?.oid == "o" && decoded.idpAccessToken == "idp")
        tx.mfa = nil
        #expect(tx.step.accepts.contains("signin") && tx.idpAccessToken == "idp")
        tx.resetEmail = "a@b.c"
        tx.resetCodeHash = "h"
        tx.resetAttempts = 2
        #expect(tx.resetCodeHash == "h" && tx.resetAttempts == 2 && tx.step.accepts.contains("resetverify"))
        tx.resetEmail = nil
        #expect(tx.resetCodeHash == nil && tx.resetAttempts == 0)
    }
}
