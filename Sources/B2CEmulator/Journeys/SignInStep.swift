import B2CProtocol
import Foundation
import Hummingbird

/// The combined page's local account: the password checked, then the second factor (or, for edit profile, the profile
/// page after a new session).
struct SignInStep: JourneyStepType {
    let parts: JourneyParts

    init(_ c: some JourneyContext) { parts = JourneyParts(c) }

    /// The sign-in form: the password checked, then the edit-profile page (edit profile signs in first) or back to the app.
    func resume(
        _ form: [String: String], _ tx: AuthorizeTransaction, policy: EmulatorSeed.Policy, secure: Bool
    ) async throws
        -> Response
    {
        var tx = tx
        let now = clock.now()
        let email = (form["logonIdentifier"] ?? "").trimmingCharacters(in: .whitespaces)
        let password = form["password"] ?? ""
        guard !email.isEmpty, !password.isEmpty else {
            return pages.signInPage(tx, policy: policy, error: pages.strings(tx)["requiredField_credentials"], email: email)
        }
        guard try store.user(email: email) != nil else {
            return pages.signInPage(tx, policy: policy, error: pages.strings(tx)["UserMessageIfClaimsPrincipalDoesNotExist"], email: email)
        }
        guard let user = try store.checkPassword(email: email, password: password) else {
            return pages.signInPage(tx, policy: policy, error: pages.strings(tx)["UserMessageIfInvalidPassword"], email: email)
        }
        tx.rememberMe = policy.session.kmsiDays != nil && ["true", "on"].contains(form["rememberMe"]?.lowercased() ?? "")
        if policy.kind == .editProfile {
            let keep = tx.rememberMe ? policy.session.kmsiDays.map { $0 * 86_400 } : nil
            let sessionID = try store.createSession(
                oid: user.oid, now: now, expiresAt: now + (keep ?? policy.session.lifetimeMinutes * 60), persistent: keep != nil,
                clientID: tx.clientId, policy: policy.id)
            tx.oid = user.oid
            try store.saveTransaction(tx, now: now)
            return pages.profilePage(
                tx, policy: policy, user: user, headers: [sessions.cookie(sessionID, secure: secure, keepSeconds: keep)])
        }
        return try await SecondFactorStep(self).enter(
            tx, user: user, authTime: now, newUser: false, secure: secure, newSession: true, sessionDidMFA: false, policy: policy)
    }
}
