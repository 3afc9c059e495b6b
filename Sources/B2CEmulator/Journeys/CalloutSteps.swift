import B2CProtocol
import Foundation
import Hummingbird

/// B2C's API connector as an orchestration step: "after federating with an identity provider during sign-up" (the answer
/// may stop the journey or change the names the social sign-up page shows) and "before sending the token" (its claims go
/// into this sign-in's tokens, not into later refreshes). The third point, "before creating the user", validates the
/// sign-up pages (`SignUpStep`, `SocialSignUpStep`), as B2C runs it.
struct ConnectorCalloutStep: OrchestrationStep {
    let parts: JourneyParts
    let point: EmulatorSeed.APIConnectors.Step

    init(parts: JourneyParts, point: EmulatorSeed.APIConnectors.Step) { (self.parts, self.point) = (parts, point) }
    init(parts: JourneyParts) { self.init(parts: parts, point: .preTokenIssuance) }

    func enter(_ tx: AuthorizeTransaction, _ visit: Visit, policy: EmulatorSeed.Policy) async throws -> StepOutcome {
        var tx = tx
        switch point {
        case .postFederationSignup:
            guard var identity = tx.claims.firstTimeIdentity else { return .next(tx) }
            let claims = connectorClaims(
                email: identity.email, identity: identity, displayName: identity.name, givenName: identity.givenName,
                surname: identity.surname, attributes: [:])
            switch try await callConnector(.postFederationSignup, policy: policy, tx: tx, claims: claims) {
            case .block(let message): return .respond(try blockPage(tx, message: message))
            case .validationError: throw PageError(code: "AADB2C90261", message: "ValidationError is not an answer of this step.")
            case .proceed(let returned):
                identity.name = returned["displayName"]?.stringValue ?? identity.name
                identity.givenName = returned["givenName"]?.stringValue ?? identity.givenName
                identity.surname = returned["surname"]?.stringValue ?? identity.surname
            }
            tx.claims.firstTimeIdentity = identity
        case .preTokenIssuance:
            let user = try DirectoryReadStep(parts: parts).user(tx, visit)
            tx.claims.extraClaims.merge(try await preTokenClaims(tx, user: user, policy: policy)) { _, new in new }
        case .postAttributeCollection:
            break
        }
        return .next(tx)
    }
}

/// External ID's OnTokenIssuanceStart extension as an orchestration step: the claims it provides go into the tokens; a
/// failure sends the app an error and no token is made. Native authentication calls the same rule (`tokenIssuanceClaims`).
struct TokenExtensionStep: OrchestrationStep {
    let parts: JourneyParts

    func enter(_ tx: AuthorizeTransaction, _ visit: Visit, policy: EmulatorSeed.Policy) async throws -> StepOutcome {
        var tx = tx
        let user = try DirectoryReadStep(parts: parts).user(tx, visit)
        switch await tokenIssuanceClaims(tx.callout, user: user) {
        case .success(let claims):
            tx.claims.extraClaims.merge(claims) { _, new in new }
            return .next(tx)
        case .failure(let f):
            try store.deleteTransaction(id: tx.id)
            return .respond(
                redirectError(tx.reply, OAuthFailure(error: "server_error", code: "AADSTS\(f.code)", message: f.pageError.message)))
        }
    }
}

/// The directory read of a journey (B2C's `AAD-UserReadUsingObjectId`): the person the claims name still exists, and
/// the claims the directory holds for them reach the recorder.
struct DirectoryReadStep: OrchestrationStep {
    let parts: JourneyParts

    /// The user the claims bag names; a person deleted while the journey ran ends it as B2C ends a sign-in of nobody.
    func user(_ tx: AuthorizeTransaction, _ visit: Visit) throws -> EmulatorStore.UserRecord {
        guard let oid = tx.claims.oid, let user = try visit.directory.user(oid, read: { try store.user(oid: oid) }) else {
            throw PageError(code: "AADB2C99002", message: "This user does not exist. Please sign up before you can sign in.")
        }
        return user
    }

    func enter(_ tx: AuthorizeTransaction, _ visit: Visit, policy: EmulatorSeed.Policy) async throws -> StepOutcome {
        let user = try user(tx, visit)
        if AccountRule.disabled(user) {
            // Whatever named the person (an SSO session, a provider, a custom policy), a disabled account ends the journey.
            try store.deleteTransaction(id: tx.id)
            store.journeys.end(tx.id, outcome: "AADSTS50057", ["why": "the account is disabled"])
            return .respond(redirectError(tx.reply, AccountRule.refusal(error: "access_denied")))
        }
        store.journeys.note(
            tx.id, .claims, "directory read",
            [
                "objectId": .string(user.oid), "email": .string(user.email), "displayName": .string(user.displayName),
                "idp": .string(user.idp ?? "local"), "attributes": .object(user.attributes),
            ], user: user.email)
        return .next(tx)
    }
}
