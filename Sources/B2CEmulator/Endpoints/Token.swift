import B2CProtocol
import Foundation
import Hummingbird

/// The token endpoint of a policy: authorization code (with PKCE), refresh token and ROPC grants for public clients.
struct TokenEndpoint: TenantPart {
    let seed: EmulatorSeed
    let store: EmulatorStore
    let clock: EmulatorClock
    let issuer: TokenIssuer

    private func missing(_ name: String) -> OAuthFailure {
        OAuthFailure(error: "invalid_request", code: "AADB2C90083", message: "The request is missing required parameter: \(name).")
    }

    /// Common checks of a token request: POST, form body, a registered public client.
    func tokenClient(_ req: Request) async throws -> ([String: String], EmulatorSeed.App) {
        guard req.method == .post else {
            throw OAuthFailure(error: "invalid_request", code: "AADB2C90083", message: "The token endpoint accepts only POST.", status: 405)
        }
        var request = req
        var form = try await request.formParameters()
        for (k, v) in try req.queryParameters() where form[k] == nil && k != "p" { form[k] = v }
        guard let clientId = form["client_id"], !clientId.isEmpty else { throw missing("client_id") }
        guard let app = seed.app(clientId: clientId) else {
            throw OAuthFailure(
                error: "invalid_client", code: "AADB2C90018",
                message: "The client ID '\(clientId)' specified in the request is not registered in tenant '\(tenantName)'.")
        }
        if form["client_secret"] != nil || req.headers[.authorization]?.lowercased().hasPrefix("basic ") == true {
            throw OAuthFailure(
                error: "invalid_request", code: "AADB2C90084",
                message: "Public clients should not send a client_secret when redeeming a publicly acquired grant.")
        }
        return (form, app)
    }

    func token(
        _ req: Request, _ context: EmulatorRequestContext, authority: AuthorityRef, policy: EmulatorSeed.Policy
    ) async throws
        -> Response
    {
        let (form, app) = try await tokenClient(req)
        let grantType = form["grant_type"] ?? ""
        var entry = EmulatorStore.LogEntry(
            at: clock.now(), endpoint: "token", grantType: grantType, policy: policy.lowercasedID,
            clientId: app.clientId, oid: nil, outcome: "ok")
        do {
            let out: Response
            switch grantType {
            case "authorization_code": out = try redeemCode(form, app: app, policy: policy, origin: context.origin, log: &entry)
            case "refresh_token": out = try redeemRefreshToken(form, app: app, policy: policy, origin: context.origin, log: &entry)
            case "password": out = try passwordGrant(form, app: app, policy: policy, origin: context.origin, log: &entry)
            case "": throw missing("grant_type")
            default:
                throw OAuthFailure(
                    error: "unsupported_grant_type", code: "AADB2C90086",
                    message: "The supplied grant_type [\(grantType)] is not supported.")
            }
            store.log(entry)
            return out
        } catch let f as OAuthFailure {
            entry.outcome = f.code
            store.log(entry)
            throw f
        }
    }

    /// Long on purpose: B2C checks a code redemption in a fixed order, each failure with its own code; the order reads here.
    private func redeemCode(
        _ form: [String: String], app: EmulatorSeed.App, policy: EmulatorSeed.Policy, origin: String,
        log: inout EmulatorStore.LogEntry
    ) throws -> Response {
        guard let code = form["code"], !code.isEmpty else { throw missing("code") }
        let now = clock.now()
        let record: EmulatorStore.CodeRecord
        switch try store.redeemCode(code, now: now) {
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
        if let challenge = record.challenge {
            guard let verifier = form["code_verifier"], !verifier.isEmpty else {
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
                    error: "invalid_grant", code: "AADB2C90182",
                    message: "The supplied code_verifier does not match associated code_challenge.")
            }
        } else if form["code_verifier"] != nil {
            throw OAuthFailure(
                error: "invalid_grant", code: "AADB2C90182",
                message: "A code_verifier was sent but the authorization request had no code_challenge.")
        }
        guard let user = try store.user(oid: record.oid) else {
            throw OAuthFailure(
                error: "invalid_grant", code: "AADB2C90128",
                message: "The account associated with this grant no longer exists. Please reauthenticate and try again.")
        }
        // The token request may narrow the scopes; without a scope parameter the authorize request's scopes apply.
        let scopes = try issuer.resolveScopes(form["scope"].flatMap { $0.isEmpty ? nil : $0 } ?? record.scopes, app: app)
        var authorized = try issuer.resolveScopes(record.scopes, app: app)
        authorized.resourceAppId = scopes.resourceAppId ?? authorized.resourceAppId
        authorized.shortScopes = scopes.resourceAppId != nil ? scopes.shortScopes : authorized.shortScopes
        authorized.fullScopes = scopes.resourceAppId != nil ? scopes.fullScopes : authorized.fullScopes
        authorized.offlineAccess = authorized.offlineAccess || scopes.offlineAccess
        let issued = try issuer.issue(
            user: user, policy: policy, app: app, scopes: authorized, nonce: record.nonce, authTime: record.authTime,
            newUser: record.newUser, origin: origin, clientInfo: TokenIssuer.wantsClientInfo(form),
            grant: (record.grantId, now))
        return issuer.tokenResponse(issued)
    }

    private func redeemRefreshToken(
        _ form: [String: String], app: EmulatorSeed.App, policy: EmulatorSeed.Policy, origin: String,
        log: inout EmulatorStore.LogEntry
    ) throws -> Response {
        guard let token = form["refresh_token"], !token.isEmpty else { throw missing("refresh_token") }
        let (record, user) = try issuer.checkRefreshToken(token, app: app, policy: policy)
        log.oid = user.oid
        let scopes = try issuer.resolveScopes(form["scope"].flatMap { $0.isEmpty ? nil : $0 } ?? record.scopes, app: app)
        return try issuer.refreshed(token, record: record, user: user, policy: policy, app: app, scopes: scopes, form: form, origin: origin)
    }

    private func passwordGrant(
        _ form: [String: String], app: EmulatorSeed.App, policy: EmulatorSeed.Policy, origin: String,
        log: inout EmulatorStore.LogEntry
    ) throws -> Response {
        guard policy.kind == .ropc else {
            throw OAuthFailure(
                error: "unauthorized_client", code: "AADB2C90224",
                message:
                    "Resource owner flow has not been enabled for the application. The policy '\(policy.id)' is not a resource owner "
                    + "password credentials (ROPC) policy."
            )
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
        let issued = try issuer.issue(
            user: user, policy: policy, app: app, scopes: scopes, nonce: nil, authTime: now, newUser: false,
            origin: origin, clientInfo: TokenIssuer.wantsClientInfo(form), grant: nil)
        return issuer.tokenResponse(issued)
    }
}
