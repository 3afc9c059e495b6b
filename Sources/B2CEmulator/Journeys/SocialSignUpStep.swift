import B2CProtocol
import Foundation
import Hummingbird

/// The social sign-up page of a first-time federated person: pre-filled from the provider's claims (and the connector
/// after federating), validated by the connector before the user is created, then a new user linked to the identity.
struct SocialSignUpStep: OrchestrationStep {
    let parts: JourneyParts

    func enter(_ tx: AuthorizeTransaction, _ visit: Visit, policy: EmulatorSeed.Policy) async throws -> StepOutcome {
        guard let identity = tx.claims.firstTimeIdentity else { return .next(tx) }
        var tx = tx
        tx.federated = identity
        try store.saveTransaction(tx, now: clock.now())
        return .respond(pages.socialSignUpPage(tx, identity: identity))
    }

    /// `socialsignup`: the page's names, the connector "before creating the user", then the user.
    func resume(_ form: [String: String], _ tx: AuthorizeTransaction, policy: EmulatorSeed.Policy) async throws -> StepOutcome {
        guard let identity = tx.federated else { throw PageError(code: nil, message: "Sign in with your identity provider first.") }
        var tx = tx
        var given = (form["givenName"] ?? "").trimmingCharacters(in: .whitespaces)
        var surname = (form["surname"] ?? "").trimmingCharacters(in: .whitespaces)
        var display = (form["displayName"] ?? "").trimmingCharacters(in: .whitespaces)
        guard !display.isEmpty else {
            return .respond(pages.socialSignUpPage(tx, identity: identity, error: pages.strings(tx)["required_displayName"], form: form))
        }
        var attributes: [String: JSONValue] = [:]
        let claims = connectorClaims(
            email: identity.email, identity: identity, displayName: display, givenName: given, surname: surname, attributes: [:])
        switch try await callConnector(.postAttributeCollection, policy: policy, tx: tx, claims: claims) {
        case .block(let message): return .respond(try blockPage(tx, message: message))
        case .validationError(let message): return .respond(pages.socialSignUpPage(tx, identity: identity, error: message, form: form))
        case .proceed(let returned):
            SignUpStep.apply(
                returned, policy: policy, displayName: &display, givenName: &given, surname: &surname, attributes: &attributes)
        }
        var user: EmulatorStore.UserRecord
        do {
            user = try store.createFederatedUser(identity, displayName: display, givenName: given, surname: surname, now: clock.now())
        } catch EmulatorStore.UserError.emailTaken {
            return .respond(
                pages.socialSignUpPage(
                    tx, identity: identity, error: pages.strings(tx)["UserMessageIfClaimsPrincipalAlreadyExists"], form: form))
        }
        if !attributes.isEmpty {
            try store.setAttributes(oid: user.oid, attributes)
            user.attributes = attributes
        }
        tx.claims.signedIn(user.oid, at: clock.now(), newUser: true)
        return .next(tx)
    }
}
