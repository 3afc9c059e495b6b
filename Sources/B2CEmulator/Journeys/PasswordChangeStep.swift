import Foundation

/// After a right password, the new one an administrator asked for (Graph's `forceChangePasswordNextSignIn`; B2C's "Forced
/// password reset"): the tenant's password rules, typed twice, not the one just used. The password is set, the request
/// is done, and the journey goes on to the second factor and tokens.
struct PasswordChangeStep: OrchestrationStep {
    let parts: JourneyParts

    func enter(_ tx: AuthorizeTransaction, _ visit: Visit, policy: EmulatorSeed.Policy) async throws -> StepOutcome {
        var tx = tx
        tx.step = .passwordChange
        try store.saveTransaction(tx, now: clock.now())
        return .respond(pages.passwordChangePage(tx))
    }

    func resume(_ form: [String: String], _ tx: AuthorizeTransaction, policy: EmulatorSeed.Policy) async throws -> StepOutcome {
        var tx = tx
        let t = pages.strings(tx)
        guard let oid = tx.claims.oid, let user = try store.user(oid: oid) else {
            throw PageError(code: "AADB2C99002", message: "This user does not exist. Please sign up before you can sign in.")
        }
        let password = form["newPassword"] ?? ""
        let refusal: String? =
            if let problem = SignUpStep.passwordProblem(password) {
                t[problem]
            } else if password != form["reenterPassword"] {
                t["error_passwordEntryMismatch"]
            } else if try store.checkPassword(email: user.email, password: password) != nil {
                t["password_change_same"]
            } else {
                nil
            }
        if let refusal { return .respond(pages.passwordChangePage(tx, error: refusal)) }
        let now = clock.now()
        try store.setPassword(oid: oid, password: password, now: now)
        store.journeys.note(tx.id, .decision, "password changed", ["why": "a change was due at this sign-in"], user: user.email)
        tx.claims.passwordChangeDue = false
        tx.step = .start
        return .next(tx)
    }
}
