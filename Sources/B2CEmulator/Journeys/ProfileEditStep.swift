import B2CProtocol
import Foundation
import Hummingbird

/// The edit-profile user flow's page, after the sign-in (or the SSO session): the names and the user flow's attributes
/// written to the directory, then tokens with the new values.
struct ProfileEditStep: JourneyStepType {
    let parts: JourneyParts

    init(_ c: some JourneyContext) { parts = JourneyParts(c) }

    func resume(
        _ form: [String: String], _ tx: AuthorizeTransaction, policy: EmulatorSeed.Policy, request: Request, secure: Bool
    ) async throws -> Response {
        let now = clock.now()
        guard let oid = tx.oid, let user = try store.user(oid: oid) else {
            throw PageError(code: nil, message: "Sign in first: the profile page follows the sign-in.")
        }
        let display = (form["displayName"] ?? "").trimmingCharacters(in: .whitespaces)
        guard !display.isEmpty else {
            return pages.profilePage(tx, policy: policy, user: user, error: pages.strings(tx)["error_displayName_required"])
        }
        let collected: [String: JSONValue]
        do { collected = try SignUpStep.collectedAttributes(form, policy: policy) } catch let e as SignUpStep.AttributeProblem {
            return pages.profilePage(tx, policy: policy, user: user, error: "\(e.label): \(pages.strings(tx)[e.stringID])")
        }
        if !collected.isEmpty { try store.setAttributes(oid: oid, user.attributes.merging(collected) { _, new in new }) }
        try store.updateProfile(
            oid: oid, displayName: display,
            givenName: (form["givenName"] ?? "").trimmingCharacters(in: .whitespaces),
            surname: (form["surname"] ?? "").trimmingCharacters(in: .whitespaces))
        let updated = try store.user(oid: oid) ?? user
        let authTime = try sessions.current(request, now: now)?.authTime ?? now
        return try await TokenIssuanceStep(self).enter(tx, user: updated, authTime: authTime, newUser: false, secure: secure)
    }
}
