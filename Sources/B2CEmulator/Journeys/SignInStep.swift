import B2CProtocol
import Foundation
import Hummingbird

/// The combined page (B2C's unifiedssp): the local account's password, the providers' buttons (`FederationStep`) and the
/// sign-up link (`SignUpStep`). Skipped when an SSO session already named the person.
struct SignInStep: OrchestrationStep {
    let parts: JourneyParts

    func enter(_ tx: AuthorizeTransaction, _ visit: Visit, policy: EmulatorSeed.Policy) async throws -> StepOutcome {
        try store.saveTransaction(tx, now: clock.now())
        return .respond(pages.signInPage(tx, policy: policy))
    }

    /// The sign-in form: the password checked; the person is known and the journey goes on.
    func resume(_ form: [String: String], _ tx: AuthorizeTransaction, policy: EmulatorSeed.Policy) async throws -> StepOutcome {
        var tx = tx
        let email = (form["logonIdentifier"] ?? "").trimmingCharacters(in: .whitespaces)
        let password = form["password"] ?? ""
        guard !email.isEmpty, !password.isEmpty else {
            return .respond(pages.signInPage(tx, policy: policy, error: pages.strings(tx)["requiredField_credentials"], email: email))
        }
        let user: EmulatorStore.UserRecord
        let said = { (id: String) in StepOutcome.respond(pages.signInPage(tx, policy: policy, error: pages.strings(tx)[id], email: email)) }
        switch try await submitPassword(email, password, tx: tx.callout) {
        case .noUser: return said("UserMessageIfClaimsPrincipalDoesNotExist")
        case .wrongPassword: return said("UserMessageIfInvalidPassword")
        case .mustChangePassword: return said("UserMessageIfPasswordExpired")
        case .disabled: return said("UserMessageIfUserAccountDisabled")
        case .blocked(let title, let message): return .respond(pages.blockPage(tx, message: "\(title). \(message)"))
        case .failed(let failure): throw failure.pageError
        case .user(let known): user = known
        }
        tx.rememberMe = policy.session.kmsiDays != nil && ["true", "on"].contains(form["rememberMe"]?.lowercased() ?? "")
        tx.claims.signedIn(user.oid, at: clock.now())
        tx.claims.passwordChangeDue = AccountRule.passwordChangeDue(user, policy: policy, externalId: seed.tenant.externalId)
        tx.claims.provider = nil  // a provider chosen before the Back button is not asked any more
        return .next(tx)
    }
}
