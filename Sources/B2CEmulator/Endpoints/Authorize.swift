import B2CProtocol
import Foundation
import Hummingbird

/// What the app asked for, as checked: the authorize request's parameters that the pages, the answer and the code carry.
struct AppRequest: Codable, Sendable {
    var clientId: String
    var redirectUri: String
    /// The kind of the redirect URI's registration (a code for a web redirect needs the app's secret).
    var redirectType: EmulatorSeed.RedirectType
    var responseType: [String]
    var responseMode: String
    var scope: String
    var state: String?
    var nonce: String?
    var codeChallenge: String?
    var codeChallengeMethod: String?
    var prompt: [String]
    var loginHint: String?
    var clientInfo: Bool
    /// `domain_hint`: straight to the identity provider it names.
    var domainHint: String? = nil
    /// The pages' language, resolved once from `ui_locales`, the browser's `Accept-Language` and the user flow's languages.
    var language = "en"
    /// The authorize request's query parameters, for a custom policy's `{OAUTH-KV:name}` resolvers (`Self.kept`); nil for a
    /// user flow (which has no resolvers: its transactions, read and written on every page, stay small) and in a transaction
    /// stored before they were kept.
    var parameters: [String: String]? = nil

    /// The parameters a transaction keeps: at most 32, each value at most 1,024 characters, and never an `id_token_hint`
    /// (a token, not a value a policy reads by name here).
    static func kept(_ query: [String: String]) -> [String: String] {
        let fitting = query.filter { $0.key != "id_token_hint" && $0.key.count <= 128 && $0.value.count <= 1024 }
        return Dictionary(uniqueKeysWithValues: fitting.sorted { $0.key < $1.key }.prefix(32).map { ($0.key, $0.value) })
    }
}

/// An authorize request waiting for the user, kept in the store between pages (as JSON, `Codable`). Its app request's
/// fields read as its own (`tx.scope`).
@dynamicMemberLookup
struct AuthorizeTransaction: Codable, Sendable {
    var id: String
    var policy: String
    var tenantSegment: String
    var origin: String
    var request: AppRequest
    /// Where the journey stands, with what that step keeps (`JourneyStep`).
    var step = JourneyStep.start
    /// What the journey has learnt about the person so far.
    var claims = JourneyClaims()
    /// The orchestration step of the policy's journey (`Journey`) the transaction is at.
    var stepIndex = 0

    subscript<T>(dynamicMember field: KeyPath<AppRequest, T>) -> T { request[keyPath: field] }

    var reply: ReplyTo { ReplyTo(redirectUri: request.redirectUri, mode: request.responseMode, state: request.state, journey: id) }
}

/// Where and how a result goes back to the app.
struct ReplyTo: Sendable {
    var redirectUri: String
    var mode: String
    var state: String?
    /// The journey this answer ends (the recorder's), if one had begun.
    var journey: String? = nil
}

/// `/authorize`: the request checked, then the user journey of the policy (its pages, or the SSO session), then the answer
/// to the app (query, fragment or form_post).
struct AuthorizeEndpoint: JourneyStepType {
    let parts: JourneyParts

    /// Exact match, or `http://localhost` registered = any loopback host and port with the same path (RFC 8252 §7.3).
    static func redirectAllowed(_ uri: String, registered: [String]) -> Bool {
        matchingRedirect(uri, registered: registered.map { EmulatorSeed.Redirect(uri: $0, type: .publicClient) }) != nil
    }

    /// The registration a redirect URI matches: exactly, else an `http://localhost`-style one on any port (RFC 8252 §7.3).
    static func matchingRedirect(_ uri: String, registered: [EmulatorSeed.Redirect]) -> EmulatorSeed.Redirect? {
        guard let u = URLComponents(string: uri), u.scheme != nil, u.fragment == nil else { return nil }
        if let exact = registered.first(where: { $0.uri == uri }) { return exact }
        return registered.first { r in
            guard let ru = URLComponents(string: r.uri), ru.scheme == "http", Loopback.isHost(ru.host ?? ""), ru.port == nil else {
                return false
            }
            let samePath = u.path == ru.path || (["", "/"].contains(u.path) && ["", "/"].contains(ru.path))
            return u.scheme == "http" && Loopback.isHost(u.host ?? "") && samePath && u.query == nil
        }
    }

    // MARK: /authorize

    /// Checks the request (errors before a redirect URI is trusted are pages; after, they go back to the app), then starts
    /// the user journey of the policy.
    func authorize(
        _ req: Request, _ context: EmulatorRequestContext, authority: AuthorityRef, policy: EmulatorSeed.Policy
    ) async throws -> Response {
        var request = req
        let q = try await request.queryAndForm()
        guard let clientId = q["client_id"], !clientId.isEmpty else {
            throw PageError(code: "AADB2C90008", message: "The request does not contain a client ID parameter.")
        }
        guard let app = seed.app(clientId: clientId) else {
            let (code, message) = seed.unregisteredApp(clientId)
            throw PageError(code: code, message: message)
        }
        guard let redirectUri = q["redirect_uri"], !redirectUri.isEmpty else {
            throw PageError(
                code: "AADB2C90006", message: "The request does not contain a redirect_uri parameter for the client ID '\(clientId)'.")
        }
        // The device authorization grant's verification page starts the journey for the device's public client, and the
        // journey comes back to the page.
        let deviceCompletion =
            seed.tenant.externalId && redirectUri == DeviceAuthorization.completionURI(context.origin, tenant: authority.tenantSegment)
            ? EmulatorSeed.Redirect(uri: redirectUri, type: .publicClient) : nil
        guard let registration = Self.matchingRedirect(redirectUri, registered: app.redirects) ?? deviceCompletion else {
            throw PageError(
                code: "AADB2C90006",
                message: "The redirect URI '\(redirectUri)' provided in the request is not registered for the client ID '\(clientId)'.")
        }
        let responseType = SpaceList.items(q["response_type"] ?? "").map { $0.lowercased() }
        let implicit = responseType.contains("token") || responseType.contains("id_token")
        var reply = ReplyTo(redirectUri: redirectUri, mode: implicit ? "fragment" : "query", state: q["state"])
        if let mode = q["response_mode"] {
            guard ["query", "fragment", "form_post"].contains(mode) else {
                return redirectError(
                    reply,
                    OAuthFailure(
                        error: "invalid_request", code: "AADB2C90014",
                        message: "The requested response mode '\(mode)' provided in the request is not supported."))
            }
            reply.mode = mode
        }
        do {
            var tx = try authorizeTransaction(
                q, app: app, redirect: (redirectUri, registration.type), responseMode: reply.mode, policy: policy,
                authority: authority, origin: context.origin)
            tx.request.language = PageStrings.resolve(
                uiLocales: q["ui_locales"], acceptLanguage: req.headers[.acceptLanguage], settings: policy.languages)
            var asked: [String: JSONValue] = [
                "response_type": .string(responseType.joined(separator: " ")), "response_mode": .string(reply.mode),
                "scope": .string(tx.scope), "language": .string(tx.language),
            ]
            for name in ["prompt", "login_hint", "domain_hint", "ui_locales"] { if let v = q[name] { asked[name] = .string(v) } }
            store.journeys.begin(tx.id, channel: "browser", policy: policy.id, clientId: clientId, at: clock.now(), detail: asked)
            return try await startJourney(tx, req, context, policy: policy)
        } catch let f as OAuthFailure {
            return redirectError(reply, f)
        }
    }

    /// The authorize request as a transaction, after B2C's checks in B2C's order.
    /// Long on purpose: B2C's checks of an authorize request in B2C's order, each failure with its own code.
    private func authorizeTransaction(
        _ q: [String: String], app: EmulatorSeed.App, redirect: (uri: String, type: EmulatorSeed.RedirectType), responseMode: String,
        policy: EmulatorSeed.Policy, authority: AuthorityRef, origin: String
    ) throws -> AuthorizeTransaction {
        let redirectUri = redirect.uri
        let responseType = SpaceList.items(q["response_type"] ?? "").map { $0.lowercased() }
        let implicit = responseType.contains("token") || responseType.contains("id_token")
        let reply = ReplyTo(redirectUri: redirectUri, mode: responseMode, state: q["state"])
        if policy.kind == .ropc {
            throw OAuthFailure(
                error: "invalid_request", code: "AADB2C99003",
                message:
                    "The policy '\(policy.id)' is a resource owner password credentials (ROPC) flow and has no sign-in pages; use the "
                    + "token endpoint with grant_type=password."
            )
        }
        guard !responseType.isEmpty, Set(responseType).isSubset(of: ["code", "id_token", "token"]) else {
            throw OAuthFailure(
                error: "unsupported_response_type", code: "AADB2C90013",
                message: "The requested response type '\(q["response_type"] ?? "")' provided in the request is not supported.")
        }
        if implicit && !app.allowImplicitFlow {
            throw OAuthFailure(
                error: "unauthorized_client", code: "AADB2C90057",
                message: "The provided application is not configured to allow the 'OAuth' Implicit flow.")
        }
        if implicit && reply.mode == "query" {
            throw OAuthFailure(
                error: "invalid_request", code: "AADB2C90014",
                message:
                    "The requested response mode 'query' is not supported for response type '\(responseType.joined(separator: " "))'.")
        }
        let scopes = try issuer.resolveScopes(q["scope"], app: app)
        if responseType.contains("code") && !scopes.openid && scopes.resourceAppId == nil {
            throw OAuthFailure(
                error: "invalid_request", code: "AADB2C90115",
                message:
                    "The scope '\(q["scope"] ?? "")' must include openid or a resource (an API scope or the client ID) for the "
                    + "authorization code flow."
            )
        }
        if responseType.contains("id_token") && !scopes.openid {
            throw OAuthFailure(
                error: "invalid_request", code: "AADB2C90110",
                message: "The scope parameter must include 'openid' when requesting an id_token.")
        }
        let prompt = SpaceList.items(q["prompt"] ?? "").map { $0.lowercased() }
        for p in prompt where !["none", "login", "consent", "select_account", "create"].contains(p) {
            throw OAuthFailure(
                error: "invalid_request", code: "AADB2C90043",
                message:
                    "The prompt included in the request contains invalid values. Expected 'none', 'login', 'consent' or "
                    + "'select_account'."
            )
        }
        let challengeMethod = try codeChallengeMethod(q)
        if redirect.type == .spa && responseType.contains("code") && challengeMethod == nil {
            throw OAuthFailure(
                error: "invalid_request", code: "AADB2C99059",
                message:
                    "The supplied request must present a code_challenge. Required for single-page apps using the authorization code flow.")
        }
        if let maxAge = q["max_age"], Int(maxAge).map({ $0 >= 0 }) != true {
            throw OAuthFailure(
                error: "invalid_request", code: "AADB2C90120",
                message: "Max age must be an integer between '0' and '2147483647' inclusive.")
        }
        let request = AppRequest(
            clientId: app.clientId, redirectUri: redirectUri, redirectType: redirect.type, responseType: responseType,
            responseMode: responseMode, scope: q["scope"] ?? "", state: q["state"], nonce: q["nonce"],
            codeChallenge: q["code_challenge"], codeChallengeMethod: challengeMethod, prompt: prompt, loginHint: q["login_hint"],
            clientInfo: ["1", "true"].contains(q["client_info"]?.lowercased() ?? ""), domainHint: q["domain_hint"],
            parameters: policy.type == .custom ? AppRequest.kept(q) : nil)
        return AuthorizeTransaction(
            id: Random.token(bytes: 18), policy: policy.id, tenantSegment: authority.tenantSegment, origin: origin, request: request)
    }

    /// The PKCE method of a code challenge (S256 or plain), nil without one.
    private func codeChallengeMethod(_ q: [String: String]) throws -> String? {
        guard let challenge = q["code_challenge"] else {
            if q["code_challenge_method"] != nil {
                throw OAuthFailure(
                    error: "invalid_request", code: "AADB2C90183", message: "The request has a code_challenge_method but no code_challenge."
                )
            }
            return nil
        }
        let method = q["code_challenge_method"] ?? "plain"
        guard method == "S256" || method == "plain" else {
            throw OAuthFailure(
                error: "invalid_request", code: "AADB2C90184",
                message: "The supplied code_challenge_method '\(method)' is not supported. Supported values are 'plain' or 'S256'.")
        }
        let valid = method == "S256" ? (challenge.count == 43 && Base64URL.decode(challenge)?.count == 32) : PKCE.isValidVerifier(challenge)
        guard valid else {
            throw OAuthFailure(error: "invalid_request", code: "AADB2C90183", message: "The supplied code_challenge is invalid.")
        }
        return method
    }

    /// The SSO session answers when it can (not with prompt=login, nor for another person than the hint); otherwise
    /// the policy's first page.
    private func startJourney(
        _ tx: AuthorizeTransaction, _ req: Request, _ context: EmulatorRequestContext, policy: EmulatorSeed.Policy
    )
        async throws -> Response
    {
        var tx = tx
        let prompt = tx.prompt
        let session = try sessions.current(req, for: (policy, tx.clientId), now: clock.now())
        let hintMatches =
            tx.loginHint.map { h in
                session.map { $0.user.email.caseInsensitiveCompare(h) == .orderedSame || $0.user.oid == h.lowercased() } ?? false
            } ?? true
        let usableSession = (prompt.contains("login") || !hintMatches) ? nil : session
        let runner = JourneyRunner(self)
        let visit = Visit(req, context)
        // A session that has not done the MFA this user asks for cannot answer prompt=none: that needs a page.
        let mfaPending =
            try session.map { s in
                let state = try store.mfaState(oid: s.user.oid)
                return !s.mfa && (policy.mfa?.enforcement == .always || state.mfaRequired)
            } ?? false
        if prompt.contains("none") {
            guard let s = session, hintMatches, policy.kind != .resetPassword, policy.kind != .signUp, !mfaPending else {
                throw OAuthFailure(
                    error: "interaction_required", code: "AADB2C90077",
                    message: "User does not have an existing session and request prompt parameter has a value of 'None'.")
            }
            store.journeys.note(
                tx.id, .decision, "single sign-on", ["why": "prompt=none and a session of this user flow"], user: s.user.email)
            tx.claims.fromSession(s.user.oid, authTime: s.authTime, mfa: s.mfa)
            tx.claims.sessionClaims = s.claims.flatMap { try? JSONDecoder().decode([String: ClaimValue].self, from: Data($0.utf8)) }
            return try await runner.silently(tx, policy: policy, visit)
        }
        // domain_hint: a provider of this policy's page is asked at once (an unknown hint shows the page, as B2C appears to).
        if usableSession == nil, let hint = tx.domainHint, let provider = Self.hintedProvider(hint, policy: policy) {
            let journey = runner.journey(tx, policy: policy)
            if let first = journey.steps.first, journey.contains(.federation) {
                tx.claims.provider = provider
                return try await runner.proceed(.next(tx), after: first.step, policy: policy, visit)
            }
        }
        // The SSO session names the person: the journey's pages before the second factor are skipped.
        if let s = usableSession, [.signUpSignIn, .signIn, .editProfile].contains(policy.kind) {
            store.journeys.note(tx.id, .decision, "single sign-on", ["why": "a session of this user flow for this app"], user: s.user.email)
            tx.claims.fromSession(s.user.oid, authTime: s.authTime, mfa: s.mfa)
            tx.claims.sessionClaims = s.claims.flatMap { try? JSONDecoder().decode([String: ClaimValue].self, from: Data($0.utf8)) }
        }
        return try await runner.start(tx, policy: policy, visit)
    }

    /// The provider a `domain_hint` names among the policy's: a built-in one, or an OpenID Connect or SAML provider by its
    /// domain hint or id.
    static func hintedProvider(_ hint: String, policy: EmulatorSeed.Policy) -> String? {
        if let provider = EmulatorSeed.IdentityProvider.hinted(hint), policy.identityProviders.contains(provider) {
            return provider.rawValue
        }
        let h = hint.lowercased()
        return policy.oidcProviders.first { $0.domainHint?.lowercased() == h || $0.id.lowercased() == h }?.id
            ?? policy.samlProviders.first { $0.domainHint?.lowercased() == h || $0.id.lowercased() == h }?.id
    }
}
