import B2CProtocol
import Foundation
import Hummingbird

/// The token endpoint of a policy: authorization code (with PKCE), refresh token, ROPC and client-credentials grants;
/// client secrets (`client_secret_post`, `client_secret_basic`) for confidential apps; CORS for single-page apps.
struct TokenEndpoint: TenantPart {
    let seed: EmulatorSeed
    let store: EmulatorStore
    let clock: EmulatorClock
    let issuer: TokenIssuer
    let customPolicies: CustomPolicies

    func missing(_ name: String) -> OAuthFailure {
        OAuthFailure(error: "invalid_request", code: "AADB2C90083", message: "The request is missing required parameter: \(name).")
    }

    /// Who calls: the app, and whether it proved itself with one of its secrets.
    struct Caller {
        var form: [String: String]
        var app: EmulatorSeed.App
        var authenticated: Bool
        /// The `Origin` of a browser's cross-origin request (a single-page app's redemption).
        var origin: String?
    }

    /// Common checks of a token request: POST, form body, a registered client, and its secret when one is sent (in the
    /// form or as Basic credentials, RFC 6749 §2.3.1). A public client must not send one.
    func caller(_ req: Request) async throws -> Caller {
        guard req.method == .post else {
            throw OAuthFailure(error: "invalid_request", code: "AADB2C90083", message: "The token endpoint accepts only POST.", status: 405)
        }
        var request = req
        var form = try await request.formParameters()
        for (k, v) in try req.queryParameters() where form[k] == nil && k != "p" { form[k] = v }
        let basic = try Self.basicCredentials(req.headers[.authorization])
        if let basic, let formID = form["client_id"], !formID.equalsIgnoringCase(basic.id) {
            throw OAuthFailure(
                error: "invalid_request", code: "AADB2C90083", message: "The client_id of the body and of the Basic credentials differ.")
        }
        guard let clientId = basic?.id ?? form["client_id"], !clientId.isEmpty else { throw missing("client_id") }
        guard let app = seed.app(clientId: clientId) else {
            let (code, message) = seed.unregisteredApp(clientId)
            throw OAuthFailure(error: code == "AADSTS700016" ? "unauthorized_client" : "invalid_client", code: code, message: message)
        }
        form["client_id"] = clientId
        let origin = req.headers[.origin]
        guard let secret = basic?.secret ?? form["client_secret"] else {
            return Caller(form: form, app: app, authenticated: false, origin: origin)
        }
        guard app.isConfidential else {
            throw OAuthFailure(
                error: "invalid_request", code: "AADB2C90084",
                message: "Public clients should not send a client_secret when redeeming a publicly acquired grant.")
        }
        let now = clock.now()
        guard app.secrets.contains(where: { $0.hash == EmulatorSeed.Secret.hash(secret) && ($0.expiresAt.map { now < $0 } ?? true) }) else {
            // B2C documents AADB2C90081 for a wrong secret; an expired one is the same to the caller (the emulator's choice).
            throw OAuthFailure(
                error: "invalid_client", code: "AADB2C90081",
                message: "The specified client_secret does not match the expected value for this client.",
                status: 401)
        }
        return Caller(form: form, app: app, authenticated: true, origin: origin)
    }

    /// `Authorization: Basic` with the form-encoded client id and secret.
    static func basicCredentials(_ header: String?) throws -> (id: String, secret: String)? {
        guard let header, header.lowercased().hasPrefix("basic ") else { return nil }
        guard let data = Data(base64Encoded: String(header.dropFirst(6)).trimmingCharacters(in: .whitespaces)),
            let text = String(data: data, encoding: .utf8), let colon = text.firstIndex(of: ":")
        else {
            throw OAuthFailure(
                error: "invalid_request", code: "AADB2C90083", message: "The Basic credentials are not base64 of 'client_id:client_secret'."
            )
        }
        func decode(_ s: Substring) -> String { String(s).replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? String(s) }
        return (decode(text[..<colon]), decode(text[text.index(after: colon)...]))
    }

    func token(
        _ req: Request, _ context: EmulatorRequestContext, authority: AuthorityRef, policy: EmulatorSeed.Policy
    ) async throws -> Response {
        if req.method == .options { return preflight(req) }
        let caller = try await caller(req)
        let grantType = caller.form["grant_type"] ?? ""
        var entry = EmulatorStore.LogEntry(
            at: clock.now(), endpoint: "token", grantType: grantType, policy: policy.lowercasedID,
            clientId: caller.app.clientId, oid: nil, outcome: "ok")
        do {
            let out: Response
            switch grantType {
            case "authorization_code": out = try await redeemCode(caller, policy: policy, origin: context.origin, log: &entry)
            case "refresh_token": out = try await redeemRefreshToken(caller, policy: policy, origin: context.origin, log: &entry)
            case "password":
                out = try await passwordGrant(caller.form, app: caller.app, policy: policy, origin: context.origin, log: &entry)
            case "client_credentials": out = try await clientCredentials(caller, policy: policy, origin: context.origin)
            case Self.jwtBearer: out = try await onBehalfOf(caller, authority: authority, origin: context.origin, log: &entry)
            case DeviceAuthorization.grantType:
                out = try await redeemDeviceCode(caller, policy: policy, authority: authority, origin: context.origin, log: &entry)
            case "": throw missing("grant_type")
            default:
                throw OAuthFailure(
                    error: "unsupported_grant_type", code: "AADB2C90086",
                    message: "The supplied grant_type [\(grantType)] is not supported.")
            }
            store.requests.log(entry)
            return cors(out, caller)
        } catch let f as OAuthFailure {
            entry.outcome = f.code
            store.requests.log(entry)
            return cors(f.response(at: clock.date), caller)
        }
    }

    // MARK: single-page apps

    /// The origins of every `spa` redirect URI of an app (or of the tenant).
    static func spaOrigins(_ apps: [EmulatorSeed.App]) -> Set<String> {
        Set(
            apps.flatMap(\.redirects).filter { $0.type == .spa }.compactMap { r in
                URLComponents(string: r.uri).flatMap { c in
                    c.scheme.flatMap { s in c.host.map { "\(s)://\($0)" + (c.port.map { ":\($0)" } ?? "") } }
                }
            })
    }

    /// CORS preflight: answered for the origins of the tenant's `spa` redirect URIs only (the request names no client yet);
    /// another origin gets no `Access-Control-Allow-Origin`, and the browser refuses the request.
    func preflight(_ req: Request) -> Response {
        guard let origin = req.headers[.origin], Self.spaOrigins(seed.apps).contains(origin.lowercased()) else {
            return .empty(204, headers: [("Vary", "Origin")])
        }
        let headers = req.headers[.accessControlRequestHeaders] ?? "content-type"
        return .empty(
            204,
            headers: [
                ("Access-Control-Allow-Origin", origin), ("Access-Control-Allow-Methods", "POST, OPTIONS"),
                ("Access-Control-Allow-Headers", headers), ("Access-Control-Max-Age", "86400"), ("Vary", "Origin"),
            ])
    }

    /// The answer to a cross-origin request carries the origin back only for that app's own `spa` origins.
    func cors(_ response: Response, _ caller: Caller) -> Response {
        guard let origin = caller.origin, Self.spaOrigins([caller.app]).contains(origin.lowercased()) else { return response }
        return response.withHeader("Access-Control-Allow-Origin", origin).withHeader("Vary", "Origin")
    }

    // MARK: client credentials

    static let noPolicy = OAuthFailure(
        error: "invalid_request", code: "AADB2C90055",
        message: "The request names no policy. Put the policy in the path (/<tenant>/B2C_1_susi/...) or in the p query parameter.")

    /// A client-credentials request for Microsoft Graph (the body is read into the request, which stays usable).
    static func isGraphAppRequest(_ req: inout Request) async -> Bool {
        guard req.method == .post, let form = try? await req.formParameters(), form["grant_type"] == "client_credentials" else {
            return false
        }
        return isGraphScope(form["scope"] ?? "")
    }

    /// `https://graph.microsoft.com/.default` (or by Graph's app id).
    static func isGraphScope(_ scope: String) -> Bool {
        isGraphScope(SpaceList.items(scope))
    }

    /// The same, of a scope already split (one set lookup: this runs on every client-credentials grant).
    static func isGraphScope(_ items: [Substring]) -> Bool { items.count == 1 && graphScopes.contains(items[0]) }

    private static let graphScopes: Set<Substring> = [GraphEndpoint.resource + "/.default", GraphEndpoint.appId + "/.default"]

    /// A B2C tenant's token endpoint without a policy (Entra's, on login.microsoftonline.com, in a real tenant): app-only
    /// tokens for Microsoft Graph only.
    func tenantToken(_ req: Request, _ context: EmulatorRequestContext) async throws -> Response {
        let caller = try await caller(req)
        guard caller.form["grant_type"] == "client_credentials" else { throw Self.noPolicy }
        return try await clientCredentials(caller, policy: nil, origin: context.origin)
    }

    /// An app-only token for `<App ID URI>/.default`: the app's granted roles of that API in `scp`, no id token, no refresh
    /// token, no `scope` in the answer (reference §13.2).
    func clientCredentials(_ caller: Caller, policy: EmulatorSeed.Policy?, origin: String) async throws -> Response {
        guard caller.app.isConfidential else {
            throw OAuthFailure(
                error: "unauthorized_client", code: "AADB2C90079",
                message: "The application '\(caller.app.clientId)' has no client secret; "
                    + "the client credentials grant needs a confidential client.")
        }
        guard caller.authenticated else {
            throw OAuthFailure(
                error: "invalid_request", code: "AADB2C90079",
                message: "Clients must send a client_secret when redeeming a confidential grant.")
        }
        guard let scope = caller.form["scope"], !scope.isEmpty else { throw missing("scope") }
        let items = SpaceList.items(scope)
        // Microsoft Graph (its trustFramework API: custom-policy deployment), as Entra issues its app-only tokens.
        if Self.isGraphScope(items) { return try issuer.graphAppToken(app: caller.app, origin: origin) }
        // (The suffix compared as bytes: `hasSuffix` and `dropLast` walked characters, 8,600 instructions a grant.)
        let suffix = "/.default".utf8
        guard items.count == 1, items[0].utf8.count > suffix.count, items[0].utf8.suffix(suffix.count).elementsEqual(suffix),
            let api = seed.apis.first(where: {
                $0.identifierUri.equalsIgnoringCase(Substring(items[0].utf8.dropLast(suffix.count)))
            })
        else {
            // The exact code is not documented (reference §13.2): the emulator's choice.
            throw OAuthFailure(
                error: "invalid_scope", code: "AADB2C90012",
                message: "The scope '\(scope)' provided in request is not supported. "
                    + "The client credentials grant takes one '<App ID URI>/.default'.")
        }
        let roles = api.appRoles.filter {
            $0.allowedMemberTypes.contains("Application") && caller.app.applicationPermissions.contains(api.fullScope($0.value))
        }
        guard !roles.isEmpty else {
            throw OAuthFailure(
                error: "unauthorized_client", code: "AADB2C90205",
                message: "This application does not have sufficient permissions against this web resource to perform the operation.")
        }
        guard let policy else { throw Self.noPolicy }
        return try await issuer.appToken(app: caller.app, api: api, roles: roles.map(\.value), policy: policy, origin: origin)
    }

    /// B2C checks a code redemption in a fixed order, each failure with its own code; the order reads here.
    func redeemCode(
        _ caller: Caller, policy: EmulatorSeed.Policy, origin: String, log: inout EmulatorStore.LogEntry
    ) async throws -> Response {
        let form = caller.form, app = caller.app
        guard let code = form["code"], !code.isEmpty else { throw missing("code") }
        let now = clock.now()
        let record: EmulatorStore.CodeRecord
        switch try store.codes.redeem(code, now: now) {
        case .unknown:
            throw OAuthFailure(error: "invalid_grant", code: "AADB2C90090", message: "The provided JWE token is not valid.")
        case .replayed:
            throw OAuthFailure(
                error: "invalid_grant", code: "AADB2C90129",
                message:
                    "The provided grant has been revoked. Please reauthenticate and try again. (The authorization code was already "
                    + "redeemed.)"
            )
        case .fresh(let r): record = r
        }
        log.oid = record.oid
        if now >= record.createdAt + TokenIssuer.codeLifetime {
            throw OAuthFailure(
                error: "invalid_grant", code: "AADB2C90080",
                message:
                    "The provided grant has expired. Please re-authenticate and try again. Current time: \(now), Grant issued time: "
                    + "\(record.createdAt), Grant expiration time: \(record.createdAt + TokenIssuer.codeLifetime)"
            )
        }
        guard record.clientId == app.clientId else {
            throw OAuthFailure(
                error: "invalid_grant", code: "AADB2C90279",
                message: "The provided client id '\(app.clientId)' does not match the client id that issued the grant.")
        }
        guard record.policy == policy.lowercasedID else {
            throw OAuthFailure(
                error: "invalid_grant", code: "AADB2C90088",
                message:
                    "The provided grant has not been issued for this endpoint. Actual Value : \(policy.lowercasedID) and Expected Value : "
                    + "\(record.policy)"
            )
        }
        guard let redirect = form["redirect_uri"] else { throw missing("redirect_uri") }
        guard redirect == record.redirectUri else {
            throw OAuthFailure(
                error: "invalid_grant", code: "AADB2C90006",
                message:
                    "The redirect URI '\(redirect)' provided in the request does not match the redirect URI the authorization code was "
                    + "issued to."
            )
        }
        // A web app's code needs its secret, and never comes from a browser's cross-origin request.
        if record.redirectType == .web && (!caller.authenticated || caller.origin != nil) {
            throw OAuthFailure(
                error: "invalid_request", code: "AADB2C90079",
                message: "Clients must send a client_secret when redeeming a confidential grant.")
        }
        try checkVerifier(form["code_verifier"], of: record)
        guard let user = try store.user(oid: record.oid) else {
            throw OAuthFailure(
                error: "invalid_grant", code: "AADB2C90128",
                message: "The account associated with this grant no longer exists. Please reauthenticate and try again.")
        }
        let authorized = try grantedScopes(asked: form["scope"], of: record, app: app)
        let issued = try await issuer.issue(
            Issuance(
                user: user, policy: policy, app: app, scopes: authorized, nonce: record.nonce, authTime: record.authTime,
                newUser: record.newUser, origin: origin, clientInfo: TokenIssuer.wantsClientInfo(form), grant: (record.grantId, now),
                client: .init(confidential: caller.authenticated, spa: record.redirectType == .spa), idpAccessToken: record.idpAccessToken,
                extraClaims: record.extraClaims))
        return issuer.tokenResponse(issued)
    }

    /// PKCE: a code issued with a challenge needs the verifier that matches it (S256 or plain); one without takes none.
    private func checkVerifier(_ verifier: String?, of record: EmulatorStore.CodeRecord) throws {
        guard let challenge = record.challenge else {
            if verifier != nil {
                throw OAuthFailure(
                    error: "invalid_grant", code: "AADB2C90182",
                    message: "A code_verifier was sent but the authorization request had no code_challenge.")
            }
            return
        }
        guard let verifier, !verifier.isEmpty else {
            throw OAuthFailure(
                error: "invalid_request", code: "AADB2C90183",
                message: "The supplied code_verifier is invalid. The request has no code_verifier.")
        }
        guard PKCE.isValidVerifier(verifier) else {
            throw OAuthFailure(error: "invalid_request", code: "AADB2C90183", message: "The supplied code_verifier is invalid.")
        }
        let computed = record.challengeMethod == "S256" ? PKCE.s256Challenge(for: verifier) : verifier
        guard computed == challenge else {
            throw OAuthFailure(
                error: "invalid_grant", code: "AADB2C90182", message: "The supplied code_verifier does not match associated code_challenge."
            )
        }
    }

    /// The scopes a code's tokens carry: the token request may narrow the resource; without a scope parameter the authorize
    /// request's scopes apply, and offline_access asked at either step holds.
    private func grantedScopes(asked: String?, of record: EmulatorStore.CodeRecord, app: EmulatorSeed.App) throws -> TokenIssuer.Scopes {
        let scopes = try issuer.resolveScopes(asked.flatMap { $0.isEmpty ? nil : $0 } ?? record.scopes, app: app)
        var authorized = try issuer.resolveScopes(record.scopes, app: app)
        authorized.resourceAppId = scopes.resourceAppId ?? authorized.resourceAppId
        authorized.shortScopes = scopes.resourceAppId != nil ? scopes.shortScopes : authorized.shortScopes
        authorized.fullScopes = scopes.resourceAppId != nil ? scopes.fullScopes : authorized.fullScopes
        authorized.offlineAccess = authorized.offlineAccess || scopes.offlineAccess
        return authorized
    }

    private func redeemRefreshToken(
        _ caller: Caller, policy: EmulatorSeed.Policy, origin: String, log: inout EmulatorStore.LogEntry
    ) async throws
        -> Response
    {
        let form = caller.form, app = caller.app
        guard let token = form["refresh_token"], !token.isEmpty else { throw missing("refresh_token") }
        let (record, user) = try issuer.checkRefreshToken(token, app: app, policy: policy)
        if record.confidential && !caller.authenticated {
            throw OAuthFailure(
                error: "invalid_request", code: "AADB2C90079",
                message: "Clients must send a client_secret when redeeming a confidential grant.")
        }
        log.oid = user.oid
        let scopes = try issuer.resolveScopes(form["scope"].flatMap { $0.isEmpty ? nil : $0 } ?? record.scopes, app: app)
        let claims = policy.runsCustomPolicy ? try await customPolicyClaims(policy, user: user, grantedAt: record.issuedAt) : [:]
        return try await issuer.refreshed(
            record, user: user, policy: policy, app: app, scopes: scopes, form: form, origin: origin, extraClaims: claims)
    }

    private func passwordGrant(
        _ form: [String: String], app: EmulatorSeed.App, policy: EmulatorSeed.Policy, origin: String,
        log: inout EmulatorStore.LogEntry
    ) async throws -> Response {
        guard policy.kind == .ropc else {
            throw OAuthFailure(
                error: "unauthorized_client", code: "AADB2C90224",
                message:
                    "Resource owner flow has not been enabled for the application. The policy '\(policy.id)' is not a resource owner "
                    + "password credentials (ROPC) policy."
            )
        }
        // The emulator's choice (B2C's ROPC user flow has no MFA setting): a password alone cannot pass a policy that always
        // asks for a second factor.
        if policy.mfa?.enforcement == .always {
            throw OAuthFailure(
                error: "invalid_grant", code: "AADB2C90224",
                message:
                    "The policy '\(policy.id)' requires multi-factor authentication, which the resource owner password credentials "
                    + "flow cannot perform. Sign in through the authorization endpoint.")
        }
        guard let username = form["username"], !username.isEmpty else { throw missing("username") }
        guard let password = form["password"], !password.isEmpty else { throw missing("password") }
        guard let user = try store.checkPassword(email: username, password: password) else {
            throw OAuthFailure(
                error: "access_denied", code: "AADB2C90225", message: "The username or password provided in the request are invalid.")
        }
        log.oid = user.oid
        let scopes = try issuer.resolveScopes(form["scope"] ?? "openid", app: app)
        let now = clock.now()
        let issued = try await issuer.issue(
            Issuance(
                user: user, policy: policy, app: app, scopes: scopes, authTime: now, origin: origin,
                clientInfo: TokenIssuer.wantsClientInfo(form)))
        return issuer.tokenResponse(issued)
    }

    /// A custom policy's claims on a refresh: its relying party's `Token` journey run without pages when it declares one
    /// (B2C's `RedeemRefreshToken`), else the relying party's claims from the directory's profile of the person (the
    /// emulator's choice: B2C keeps them in the refresh token, and they are the same unless the directory changed).
    private func customPolicyClaims(
        _ policy: EmulatorSeed.Policy, user: EmulatorStore.UserRecord, grantedAt: Int
    ) async throws -> [String: JSONValue] {
        let effective: EffectivePolicy
        do { effective = try customPolicies.effective(policy.id) } catch {
            throw OAuthFailure(error: "server_error", code: "AADB2C90067", message: "The custom policy '\(policy.id)' cannot run: \(error)")
        }
        let run = PolicyRun(
            policy: effective,
            resolvers: ClaimResolvers.of(
                tenantName: seed.tenant.name, tenantId: seed.tenant.id, policyId: policy.id, request: [:], language: "en",
                correlationId: UUID().uuidString.lowercased(), now: clock.date),
            store: store, tenantName: seed.tenant.name, now: clock.now(), note: { _, _ in }, policyKeys: seed.tenant.policyKeyValues,
            caFile: seed.tenant.customPolicyCAFile, registrations: (seed.apps, seed.apis))
        var state = PolicyJourneyState()
        // What B2C reads from the refresh token itself (the starter pack's RefreshTokenReadAndSetup).
        state.claims["objectId"] = .string(user.oid)
        state.claims["refreshTokenIssuedOnDateTime"] = .dateTime(Date(timeIntervalSince1970: Double(grantedAt)))
        do {
            if effective.relyingParty?.at("Endpoints")?.all("Endpoint").contains(where: { $0["Id"] == "Token" }) == true {
                guard case .sendClaims = try await run.walk(try run.journey(endpoint: "Token"), &state) else {
                    throw CustomPolicyError(code: "AADB2C90250", message: "The policy's Token journey shows a page; a refresh has none.")
                }
            } else {
                let profile = PolicyRun.directoryClaims(user, tenantName: seed.tenant.name)
                for (claim, partner) in [
                    "email": "signInNames.emailAddress", "displayName": "displayName", "givenName": "givenName",
                    "surname": "surname",
                ] {
                    if let v = profile[partner] { state.claims[claim] = v }
                }
                for (k, v) in profile where k.hasPrefix("extension_") { state.claims[k] = v }
            }
        } catch let e as CustomPolicyError {
            throw OAuthFailure(error: "invalid_grant", code: e.code, message: e.message)
        }
        return run.relyingPartyClaims(state.claims)
    }
}
