import B2CProtocol
import Foundation
import Hummingbird

/// Federated sign-in (reference: b2c-journeys.md §2): a provider's button on the unified page (or `domain_hint`) sends the
/// browser to the provider — here the tenant's own mock provider — which answers at `/{tenant}/oauth2/authresp`. A
/// returning person (same provider and subject) goes on at once; a first-time one gets the social sign-up page, pre-filled
/// from the provider's claims, and becomes a user whose tokens carry `idp` (and `newUser` the first time).
struct FederationStep: JourneyStepType {
    let parts: JourneyParts

    init(_ c: some JourneyContext) { parts = JourneyParts(c) }

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
        store.log(
            .init(at: clock.now(), endpoint: "idp", grantType: provider.id, policy: tx.policy, clientId: "", oid: nil, outcome: "sent"))
        return .redirect(
            OIDCRelyingParty.authorizeURL(
                provider, redirectURI: "\(origin)/\(tx.tenantSegment)/oauth2/authresp", state: tx.id, pending: pending,
                loginHint: tx.loginHint))
    }

    /// `idp` (a provider's button): the provider must be one of the policy's.
    func providerChosen(
        _ form: [String: String], _ tx: AuthorizeTransaction, policy: EmulatorSeed.Policy, origin: String
    ) async throws
        -> Response
    {
        if let oidc = policy.oidcProviders.first(where: { $0.id == form["provider"] }) {
            return try await federate(tx, to: oidc, origin: origin)
        }
        if let saml = policy.samlProviders.first(where: { $0.id == form["provider"] }) {
            return try await federate(tx, to: saml, origin: origin, policy: policy)
        }
        guard let provider = EmulatorSeed.IdentityProvider(rawValue: form["provider"] ?? ""), provider != .local,
            policy.identityProviders.contains(provider)
        else {
            throw PageError(code: "AADB2C90051", message: "No suitable claims providers were found.")
        }
        return try federate(tx, to: provider, origin: origin)
    }

    /// `/{tenant}/oauth2/authresp`: the provider's answer (code or error) for the transaction named by `state`.
    func providerAnswered(_ req: Request, _ context: EmulatorRequestContext) async throws -> Response {
        var request = req
        let q = try await request.queryAndForm()
        guard let state = q["state"], let tx = try store.transaction(id: state, now: clock.now()),
            let policy = seed.policy(named: tx.policy)
        else {
            throw PageError(
                code: "AADB2C90208",
                message: "This sign-in page has expired or was already used. Go back to your application and start again.")
        }
        store.journeys.note(
            tx.id, .step, "identity provider answered",
            ["expected": .string(tx.federatingWith ?? "none"), "answer": .string(q["error"].map { "error \($0)" } ?? "code")])
        return try await recording(tx.id) { try await providerAnswered(q, tx: tx, policy: policy, context) }
    }

    private func providerAnswered(
        _ q: [String: String], tx: AuthorizeTransaction, policy: EmulatorSeed.Policy, _ context: EmulatorRequestContext
    ) async throws -> Response {
        var tx = tx
        // Only the provider this sign-in was sent to may answer it, and once: an answer of another provider, or one for a
        // sign-in that sent nobody, would sign a stranger up at any policy.
        guard let chosen = tx.federatingWith else {
            throw PageError(
                code: "AADB2C90273", message: "An invalid response was received : 'this sign-in did not ask an identity provider'")
        }
        if let error = q["error"] {
            try store.deleteTransaction(id: tx.id)
            return redirectError(
                tx.reply,
                OAuthFailure(
                    error: "access_denied", code: "AADB2C90273",
                    message: "An invalid response was received : 'Error: \(error),Error Description: \(q["error_description"] ?? "")'"))
        }
        let pendingOIDC = tx.oidc
        tx.federatingWith = nil
        tx.oidc = nil
        try store.saveTransaction(tx, now: clock.now())
        let identity: FederatedIdentity
        if let pending = pendingOIDC {
            guard pending.providerID == chosen, let provider = policy.oidcProviders.first(where: { $0.id == chosen }) else {
                throw PageError(
                    code: "AADB2C90273", message: "An invalid response was received : 'the identity provider is not this policy's'")
            }
            do {
                identity = try await OIDCRelyingParty.redeem(
                    code: q["code"] ?? "", provider, pending: pending, redirectURI: "\(context.origin)/\(tx.tenantSegment)/oauth2/authresp")
            } catch let e as OIDCRelyingParty.Failure {
                store.log(
                    .init(
                        at: clock.now(), endpoint: "idp", grantType: provider.id, policy: tx.policy, clientId: "", oid: nil,
                        outcome: "invalid"))
                throw PageError(code: "AADB2C90273", message: "An invalid response was received : '\(e.reason)'")
            }
            store.log(
                .init(at: clock.now(), endpoint: "idp", grantType: provider.id, policy: tx.policy, clientId: "", oid: nil, outcome: "ok"))
        } else {
            guard let code = q["code"], let mock = try store.redeemIdPCode(code, now: clock.now()) else {
                throw PageError(
                    code: "AADB2C90273", message: "An invalid response was received : 'the identity provider's code is not valid'")
            }
            guard let provider = mock.provider, provider.rawValue == chosen, policy.identityProviders.contains(provider) else {
                throw PageError(
                    code: "AADB2C90273",
                    message: "An invalid response was received : 'the code is \(mock.provider?.label ?? "another provider")'s, "
                        + "and this sign-in was sent to \(chosen)'")
            }
            identity = mock
        }
        // A mock provider's access token is made up (opaque); an OpenID Connect provider's is its own, when it sent one.
        tx.idpAccessToken = identity.accessToken ?? identity.provider.map { "mock-\($0.rawValue)-" + Random.token(bytes: 24) }
        return try await federated(identity, tx, policy: policy, secure: context.isHTTPS)
    }

    /// The provider vouched for `identity`: a returning person goes on at once, a first-time one gets the social sign-up
    /// page.
    func federated(
        _ identity: FederatedIdentity, _ tx: AuthorizeTransaction, policy: EmulatorSeed.Policy, secure: Bool
    ) async throws
        -> Response
    {
        var tx = tx
        let returning = try store.federatedUser(identity)
        store.journeys.note(
            tx.id, .claims, "identity provider's claims",
            [
                "provider": .string(identity.provider?.rawValue ?? identity.issuer ?? ""), "email": .string(identity.email),
                "name": .string(identity.name ?? ""),
                "person": .string(returning == nil ? "first time: social sign-up" : "known"),
            ], user: identity.email)
        if let user = returning {
            return try await SecondFactorStep(self).enter(
                tx, user: user, authTime: clock.now(), newUser: false, secure: secure, newSession: true, sessionDidMFA: false,
                policy: policy)
        }
        // A person the directory does not know can sign up only where the user flow signs people up.
        guard [.signUpSignIn, .signUp].contains(policy.kind) else {
            try store.deleteTransaction(id: tx.id)
            return redirectError(
                tx.reply,
                OAuthFailure(
                    error: "access_denied", code: "AADB2C99002",
                    message: "This user does not exist. Please sign up before you can sign in."))
        }
        // "After federating with an identity provider during sign-up": the connector may stop here or pre-fill the page.
        var identity = identity
        let claims = connectorClaims(
            email: identity.email, identity: identity, displayName: identity.name, givenName: identity.givenName,
            surname: identity.surname, attributes: [:])
        switch try await callConnector(.postFederationSignup, policy: policy, tx: tx, claims: claims) {
        case .block(let message): return try blockPage(tx, message: message)
        case .validationError: throw PageError(code: "AADB2C90261", message: "ValidationError is not an answer of this step.")
        case .proceed(let returned):
            identity.name = returned["displayName"]?.stringValue ?? identity.name
            identity.givenName = returned["givenName"]?.stringValue ?? identity.givenName
            identity.surname = returned["surname"]?.stringValue ?? identity.surname
        }
        tx.federated = identity
        try store.saveTransaction(tx, now: clock.now())
        return pages.socialSignUpPage(tx, identity: identity)
    }

    /// `socialsignup`: the first-time federated person's page, then a new user linked to the identity.
    func socialSignUpSubmitted(
        _ form: [String: String], _ tx: AuthorizeTransaction, policy: EmulatorSeed.Policy, secure: Bool
    ) async throws
        -> Response
    {
        guard let identity = tx.federated else { throw PageError(code: nil, message: "Sign in with your identity provider first.") }
        var given = (form["givenName"] ?? "").trimmingCharacters(in: .whitespaces)
        var surname = (form["surname"] ?? "").trimmingCharacters(in: .whitespaces)
        var display = (form["displayName"] ?? "").trimmingCharacters(in: .whitespaces)
        guard !display.isEmpty else {
            return pages.socialSignUpPage(tx, identity: identity, error: pages.strings(tx)["required_displayName"], form: form)
        }
        var attributes: [String: JSONValue] = [:]
        let claims = connectorClaims(
            email: identity.email, identity: identity, displayName: display, givenName: given, surname: surname, attributes: [:])
        switch try await callConnector(.postAttributeCollection, policy: policy, tx: tx, claims: claims) {
        case .block(let message): return try blockPage(tx, message: message)
        case .validationError(let message): return pages.socialSignUpPage(tx, identity: identity, error: message, form: form)
        case .proceed(let returned):
            SignUpStep.apply(
                returned, policy: policy, displayName: &display, givenName: &given, surname: &surname, attributes: &attributes)
        }
        var user: EmulatorStore.UserRecord
        do {
            user = try store.createFederatedUser(identity, displayName: display, givenName: given, surname: surname, now: clock.now())
        } catch EmulatorStore.UserError.emailTaken {
            return pages.socialSignUpPage(
                tx, identity: identity, error: pages.strings(tx)["UserMessageIfClaimsPrincipalAlreadyExists"], form: form)
        }
        if !attributes.isEmpty {
            try store.setAttributes(oid: user.oid, attributes)
            user.attributes = attributes
        }
        return try await SecondFactorStep(self).enter(
            tx, user: user, authTime: clock.now(), newUser: true, secure: secure, newSession: true, sessionDidMFA: false, policy: policy)
    }
}
