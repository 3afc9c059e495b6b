import B2CProtocol
import Foundation
import Hummingbird

/// Federated sign-in (reference: b2c-journeys.md §2): a provider's button on the unified page (or `domain_hint`) sends the
/// browser to the provider — here the tenant's own mock provider — which answers at `/{tenant}/oauth2/authresp`. A
/// returning person (same provider and subject) goes on at once; a first-time one gets the social sign-up page, pre-filled
/// from the provider's claims, and becomes a user whose tokens carry `idp` (and `newUser` the first time).
struct FederationStep: OrchestrationStep {
    let parts: JourneyParts

    /// To the provider the claims bag names (a button of the page, or `domain_hint`).
    func enter(_ tx: AuthorizeTransaction, _ visit: Visit, policy: EmulatorSeed.Policy) async throws -> StepOutcome {
        let chosen = tx.claims.provider ?? ""
        if let oidc = policy.oidcProviders.first(where: { $0.id == chosen }) {
            return .respond(try await federate(tx, to: oidc, origin: visit.origin))
        }
        if let saml = policy.samlProviders.first(where: { $0.id == chosen }) {
            return .respond(try await federate(tx, to: saml, origin: visit.origin, policy: policy))
        }
        guard let provider = EmulatorSeed.IdentityProvider(rawValue: chosen), provider != .local,
            policy.identityProviders.contains(provider)
        else {
            throw PageError(code: "AADB2C90051", message: "No suitable claims providers were found.")
        }
        return .respond(try federate(tx, to: provider, origin: visit.origin))
    }

    /// To the provider's authorize page, with this tenant's `authresp` as the redirect URI and the transaction as state.
    func federate(_ tx: AuthorizeTransaction, to provider: EmulatorSeed.IdentityProvider, origin: String) throws -> Response {
        var tx = tx
        tx.federatingWith = provider.rawValue
        try store.saveTransaction(tx, now: clock.now())
        store.journeys.note(tx.id, .decision, "sent to an identity provider", ["provider": .string(provider.rawValue), "protocol": "mock"])
        let params: [(String, String)] =
            [
                ("client_id", "b2c-\(tenantID)"), ("response_type", "code"), ("response_mode", "form_post"),
                ("redirect_uri", "\(origin)/\(tx.tenantSegment)/oauth2/authresp"), ("scope", "openid email profile"), ("state", tx.id),
                ("nonce", Random.token(bytes: 12)),
            ] + (tx.loginHint.map { [("login_hint", $0)] } ?? [])
        return .redirect("\(origin)/_idp/\(provider.rawValue)/authorize?" + FormEncoding.encode(params))
    }

    /// To an OpenID Connect provider's authorize endpoint (from its discovery document), with PKCE and a nonce kept in the
    /// transaction.
    func federate(_ tx: AuthorizeTransaction, to provider: EmulatorSeed.OIDCProvider, origin: String) async throws -> Response {
        var tx = tx
        let discovery: OIDCRelyingParty.Discovery
        do { discovery = try await OIDCRelyingParty.discovery(provider) } catch let e as OIDCRelyingParty.Failure {
            throw PageError(code: "AADB2C90273", message: "An invalid response was received : '\(e.reason)'")
        }
        let pending = OIDCPending(
            providerID: provider.id, discovery: discovery, verifier: PKCE().verifier, nonce: Random.token(bytes: 16))
        tx.oidc = pending
        tx.federatingWith = provider.id
        try store.saveTransaction(tx, now: clock.now())
        store.journeys.note(tx.id, .decision, "sent to an identity provider", ["provider": .string(provider.id), "protocol": "oidc"])
        store.requests.log(
            .init(at: clock.now(), endpoint: "idp", grantType: provider.id, policy: tx.policy, clientId: "", oid: nil, outcome: "sent"))
        return .redirect(
            OIDCRelyingParty.authorizeURL(
                provider, redirectURI: "\(origin)/\(tx.tenantSegment)/oauth2/authresp", state: tx.id, pending: pending,
                loginHint: tx.loginHint))
    }

    /// `idp` (a provider's button): the provider must be one of the policy's; the journey goes on to it.
    func providerChosen(_ form: [String: String], _ tx: AuthorizeTransaction, policy: EmulatorSeed.Policy) throws -> StepOutcome {
        let chosen = form["provider"] ?? ""
        let offered =
            policy.oidcProviders.contains { $0.id == chosen } || policy.samlProviders.contains { $0.id == chosen }
            || EmulatorSeed.IdentityProvider(rawValue: chosen).map { $0 != .local && policy.identityProviders.contains($0) } == true
        guard offered else { throw PageError(code: "AADB2C90051", message: "No suitable claims providers were found.") }
        var tx = tx
        tx.claims.provider = chosen
        return .next(tx)
    }

    /// `/{tenant}/oauth2/authresp`: the provider's answer (code or error) for the transaction named by `state`.
    func providerAnswered(_ req: Request, _ context: EmulatorRequestContext) async throws -> Response {
        var request = req
        let q = try await request.queryAndForm()
        guard let state = q["state"], let tx = try store.transaction(id: state, now: clock.now()),
            let policy = parts.customPolicies.authority(tx.policy, seed: seed)
        else {
            throw PageError(
                code: "AADB2C90208",
                message: "This sign-in page has expired or was already used. Go back to your application and start again.")
        }
        store.journeys.note(
            tx.id, .step, "identity provider answered",
            ["expected": .string(tx.federatingWith ?? "none"), "answer": .string(q["error"].map { "error \($0)" } ?? "code")])
        return try await recording(tx.id) {
            let outcome = try await providerAnswered(q, tx: tx, policy: policy, context)
            let step: Journey.Step = policy.runsCustomPolicy ? .customPolicy : .federation
            return try await JourneyRunner(self).proceed(outcome, after: step, policy: policy, Visit(req, context))
        }
    }

    private func providerAnswered(
        _ q: [String: String], tx: AuthorizeTransaction, policy: EmulatorSeed.Policy, _ context: EmulatorRequestContext
    ) async throws -> StepOutcome {
        var tx = tx
        // Only the provider this sign-in was sent to may answer it, and once: an answer of another provider, or one for a
        // sign-in that sent nobody, would sign a stranger up at any policy.
        guard let chosen = tx.federatingWith else {
            throw PageError(
                code: "AADB2C90273", message: "An invalid response was received : 'this sign-in did not ask an identity provider'")
        }
        if let error = q["error"] {
            try store.deleteTransaction(id: tx.id)
            return .respond(
                redirectError(
                    tx.reply,
                    OAuthFailure(
                        error: "access_denied", code: "AADB2C90273",
                        message: "An invalid response was received : 'Error: \(error),Error Description: \(q["error_description"] ?? "")'"))
            )
        }
        let pendingOIDC = tx.oidc
        let customPolicy = tx.federatingCustomPolicy
        tx.federatingWith = nil
        tx.oidc = nil
        try store.saveTransaction(tx, now: clock.now())
        let identity: FederatedIdentity
        if let pending = pendingOIDC {
            // A user flow's provider, or the custom policy's profile that federated.
            let provider =
                try policy.oidcProviders.first { $0.id == chosen }
                ?? customPolicy.flatMap { try CustomPolicyStep(parts: parts).oidcProvider(tx, state: $0, policy: policy) }
            guard pending.providerID == chosen, let provider, provider.id == chosen else {
                throw PageError(
                    code: "AADB2C90273", message: "An invalid response was received : 'the identity provider is not this policy's'")
            }
            do {
                identity = try await OIDCRelyingParty.redeem(
                    code: q["code"] ?? "", provider, pending: pending, redirectURI: "\(context.origin)/\(tx.tenantSegment)/oauth2/authresp")
            } catch let e as OIDCRelyingParty.Failure {
                store.requests.log(
                    .init(
                        at: clock.now(), endpoint: "idp", grantType: provider.id, policy: tx.policy, clientId: "", oid: nil,
                        outcome: "invalid"))
                throw PageError(code: "AADB2C90273", message: "An invalid response was received : '\(e.reason)'")
            }
            store.requests.log(
                .init(at: clock.now(), endpoint: "idp", grantType: provider.id, policy: tx.policy, clientId: "", oid: nil, outcome: "ok"))
        } else {
            guard let code = q["code"], let mock = try store.redeemIdPCode(code, now: clock.now()) else {
                throw PageError(
                    code: "AADB2C90273", message: "An invalid response was received : 'the identity provider's code is not valid'")
            }
            // The provider must be the one this sign-in was sent to: a user flow's, or the custom policy's own profile's.
            guard let provider = mock.provider, provider.rawValue == chosen,
                customPolicy != nil || policy.identityProviders.contains(provider)
            else {
                throw PageError(
                    code: "AADB2C90273",
                    message: "An invalid response was received : 'the code is \(mock.provider?.label ?? "another provider")'s, "
                        + "and this sign-in was sent to \(chosen)'")
            }
            identity = mock
        }
        // A mock provider's access token is made up (opaque); an OpenID Connect provider's is its own, when it sent one.
        tx.idpAccessToken = identity.accessToken ?? identity.provider.map { "mock-\($0.rawValue)-" + Random.token(bytes: 24) }
        if let customPolicy { return try await CustomPolicyStep(parts: parts).federated(identity, tx, state: customPolicy, policy: policy) }
        return try federated(identity, tx, policy: policy)
    }

    /// The provider vouched for `identity`: a returning person is signed in; a first-time one goes on to the social sign-up
    /// steps, where the user flow signs people up.
    func federated(_ identity: FederatedIdentity, _ tx: AuthorizeTransaction, policy: EmulatorSeed.Policy) throws -> StepOutcome {
        var tx = tx
        let returning = try store.federatedUser(identity)
        store.journeys.note(
            tx.id, .claims, "identity provider's claims",
            [
                "provider": .string(identity.provider?.rawValue ?? identity.issuer ?? ""), "email": .string(identity.email),
                "name": .string(identity.name ?? ""),
                "person": .string(returning == nil ? "first time: social sign-up" : "known"),
            ], user: identity.email)
        tx.claims.provider = nil
        if let user = returning {
            tx.claims.signedIn(user.oid, at: clock.now())
            return .next(tx)
        }
        // A person the directory does not know can sign up only where the user flow signs people up.
        guard JourneyRunner(self).journey(tx, policy: policy).contains(.socialSignUp) else {
            try store.deleteTransaction(id: tx.id)
            return .respond(
                redirectError(
                    tx.reply,
                    OAuthFailure(
                        error: "access_denied", code: "AADB2C99002",
                        message: "This user does not exist. Please sign up before you can sign in.")))
        }
        tx.claims.firstTimeIdentity = identity
        return .next(tx)
    }
}
