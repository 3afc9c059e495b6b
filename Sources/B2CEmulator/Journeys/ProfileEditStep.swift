import B2CProtocol
import Foundation
import Hummingbird

/// The edit-profile user flow's page, after the sign-in (or the SSO session): the names and the user flow's attributes
/// written to the directory, then tokens with the new values.
struct ProfileEditStep: OrchestrationStep {
    let parts: JourneyParts

    func enter(_ tx: AuthorizeTransaction, _ visit: Visit, policy: EmulatorSeed.Policy) async throws -> StepOutcome {
        let user = try DirectoryReadStep(parts: parts).user(tx, visit)
        try store.saveTransaction(tx, now: clock.now())
        return .respond(pages.profilePage(tx, policy: policy, user: user))
    }

    /// The profile form: the names and attributes written to the directory; token issuance reads them back.
    func resume(_ form: [String: String], _ tx: AuthorizeTransaction, policy: EmulatorSeed.Policy) async throws -> StepOutcome {
        guard let oid = tx.oid, let user = try store.user(oid: oid) else {
            throw PageError(code: nil, message: "Sign in first: the profile page follows the sign-in.")
        }
        let display = (form["displayName"] ?? "").trimmingCharacters(in: .whitespaces)
        guard !display.isEmpty else {
            return .respond(pages.profilePage(tx, policy: policy, user: user, error: pages.strings(tx)["error_displayName_required"]))
        }
        let collected: [String: JSONValue]
        do { collected = try SignUpStep.collectedAttributes(form, policy: policy) } catch let e as SignUpStep.AttributeProblem {
            return .respond(pages.profilePage(tx, policy: policy, user: user, error: "\(e.label): \(pages.strings(tx)[e.stringID])"))
        }
        if !collected.isEmpty { try store.setAttributes(oid: oid, user.attributes.merging(collected) { _, new in new }) }
        try store.updateProfile(
            oid: oid, displayName: display,
            givenName: (form["givenName"] ?? "").trimmingCharacters(in: .whitespaces),
            surname: (form["surname"] ?? "").trimmingCharacters(in: .whitespaces))
        return .next(tx)
    }
}
