import B2CProtocol
import Foundation
import Hummingbird

/// The reset-password user flow: a code to the account's address, then the code and the new password, then tokens.
struct PasswordResetStep: OrchestrationStep {
    let parts: JourneyParts

    func enter(_ tx: AuthorizeTransaction, _ visit: Visit, policy: EmulatorSeed.Policy) async throws -> StepOutcome {
        try store.saveTransaction(tx, now: clock.now())
        return .respond(pages.resetEmailPage(tx, policy: policy))
    }

    /// "Send verification code": the code goes to the outbox (`GET /_admin/outbox`).
    func requestCode(
        email: String, _ tx: inout AuthorizeTransaction, policy: EmulatorSeed.Policy
    ) async throws
        -> Response
    {
        let now = clock.now()
        guard let user = try store.user(email: email) else {
            return pages.resetEmailPage(tx, policy: policy, error: pages.strings(tx)["reset_account_not_found"])
        }
        let code = Random.digits(6)
        try await sendEmailCode(to: user.email, purpose: "password_reset", code: code, now: now, tx: tx.callout)
        tx.resetEmail = user.email
        tx.resetCodeHash = EmulatorStore.hash(code)
        tx.resetAttempts = 0
        try store.saveTransaction(tx, now: now)
        return pages.resetVerifyPage(tx, policy: policy)
    }

    /// The emailed code and the new password: three wrong codes need a new code; a good one sets the password, and the
    /// person is signed in.
    func resume(_ form: [String: String], _ tx: AuthorizeTransaction, policy: EmulatorSeed.Policy) async throws -> StepOutcome {
        var tx = tx
        let now = clock.now()
        let t = pages.strings(tx)
        guard let email = tx.resetEmail, let expected = tx.resetCodeHash, let user = try store.user(email: email) else {
            throw PageError(code: nil, message: "Send a verification code first.")
        }
        let code = (form["verificationCode"] ?? "").trimmingCharacters(in: .whitespaces)
        guard EmulatorStore.hash(code) == expected else {
            tx.resetAttempts += 1
            if tx.resetAttempts >= 3 { tx.resetCodeHash = nil }
            try store.saveTransaction(tx, now: now)
            let message = t[tx.resetAttempts >= 3 ? "reset_too_many_attempts" : "reset_code_mismatch"]
            return .respond(pages.resetVerifyPage(tx, policy: policy, error: message))
        }
        let pw = form["newPassword"] ?? ""
        if let problem = SignUpStep.passwordProblem(pw) { return .respond(pages.resetVerifyPage(tx, policy: policy, error: t[problem])) }
        guard pw == form["reenterPassword"] else {
            return .respond(pages.resetVerifyPage(tx, policy: policy, error: t["error_passwordEntryMismatch"]))
        }
        try store.setPassword(oid: user.oid, password: pw, now: now)
        tx.claims.signedIn(user.oid, at: now)
        return .next(tx)
    }
}
