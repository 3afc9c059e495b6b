import B2CProtocol
import Foundation
import Hummingbird

/// Scopes of a request and the tokens issued for them: one place for the claims every endpoint hands out, and the
/// refresh-token rules they share.
struct TokenIssuer: TenantPart {
    let seed: EmulatorSeed
    let store: EmulatorStore
    let clock: EmulatorClock
    let keys: SigningKeys

    /// Authorization codes live 10 minutes (not configurable in B2C).
    static let codeLifetime = 600

    /// `https://host/<tenant id>/v2.0/`, or the `tfp` form when the policy uses it.
    func issuer(origin: String, policy: EmulatorSeed.Policy?) -> String {
        if let policy, policy.issuerPattern == "tfp" {
            return "\(origin)/tfp/\(tenantID)/\(policy.lowercasedID)/v2.0/"
        }
        return "\(origin)/\(tenantID)/v2.0/"
    }

    // MARK: scopes

    struct Scopes {
        var openid = false, offlineAccess = false, profile = false, email = false
        /// The one resource the request names: an API (appId, short names, full URIs) or the app itself.
        var resourceAppId: String?
        var shortScopes: [String] = []
        var fullScopes: [String] = []

        var serializedForStorage: String {
            (["openid", "offline_access"].filter { ($0 == "openid" && openid) || ($0 == "offline_access" && offlineAccess) } + fullScopes)
                .joined(separator: " ")
        }
    }

    func resolveScopes(_ raw: String?, app: EmulatorSeed.App) throws(OAuthFailure) -> Scopes {
        guard let raw, !raw.trimmingCharacters(in: .whitespaces).isEmpty else {
            throw OAuthFailure(error: "invalid_request", code: "AADB2C90010", message: "The request does not contain a scope parameter.")
        }
        var s = Scopes()
        for item in raw.split(whereSeparator: { $0 == " " || $0 == "+" }).map(String.init) {
            switch item.lowercased() {
            case "openid": s.openid = true
            case "offline_access": s.offlineAccess = true
            case "profile": s.profile = true
            case "email": s.email = true
            default:
                let appId: String
                var short: String?
                if item.caseInsensitiveCompare(app.clientId) == .orderedSame {
                    appId = app.clientId
                } else if let api = seed.apis.first(where: { item.hasPrefix($0.identifierUri + "/") }),
                    case let name = String(item.dropFirst(api.identifierUri.count + 1)), api.scopes.contains(name)
                {
                    guard app.apiPermissions.contains(item) else {
                        throw OAuthFailure(
                            error: "invalid_scope", code: "AADB2C90012",
                            message:
                                "The scope '\(item)' provided in request is not supported. The application '\(app.clientId)' has no "
                                + "permission for it."
                        )
                    }
                    appId = api.appId
                    short = name
                } else {
                    throw OAuthFailure(
                        error: "invalid_scope", code: "AADB2C90012", message: "The scope '\(item)' provided in request is not supported.")
                }
                if let existing = s.resourceAppId, existing != appId {
                    throw OAuthFailure(
                        error: "invalid_request", code: "AADB2C90146",
                        message:
                            "The scope '\(raw)' provided in request specifies more than one resource for an access token, which is not "
                            + "supported."
                    )
                }
                s.resourceAppId = appId
                if let short, !s.shortScopes.contains(short) { s.shortScopes.append(short); s.fullScopes.append(item) }
                if short == nil, !s.fullScopes.contains(app.clientId) { s.fullScopes.append(app.clientId) }
            }
        }
        return s
    }

    // MARK: token issuance

    struct Issued {
        var body: JSONValue
        var refreshToken: String?
    }

    /// Signs the id and access tokens for `user` and stores a refresh token when `offline_access` was asked for.
    /// `policy` nil means a native-authentication (External ID) sign-in.
    /// Long on purpose: every claim of every token kind is decided in this one place.
    func issue(
        user: EmulatorStore.UserRecord, policy: EmulatorSeed.Policy?, app: EmulatorSeed.App, scopes: Scopes, nonce: String?,
        authTime: Int, newUser: Bool, origin: String, clientInfo: Bool, grant: (id: String, issuedAt: Int)?,
        rotating oldRefreshToken: String? = nil, includeIDToken: Bool = true
    ) throws -> Issued {
        let now = clock.now()
        let iss = issuer(origin: origin, policy: policy)
        let atLifetime = policy?.accessTokenLifetime ?? 3600
        let idLifetime = policy?.idTokenLifetime ?? 3600
        var common: [String: JSONValue] = [
            "iss": .string(iss), "iat": JSONValue(now), "nbf": JSONValue(now), "sub": .string(user.oid), "oid": .string(user.oid),
            "name": .string(user.displayName), "given_name": .string(user.givenName), "family_name": .string(user.surname),
            "auth_time": JSONValue(authTime),
        ]
        if let policy {
            common["ver"] = "1.0"
            common[policy.policyClaim] = .string(policy.policyClaim == "acr" ? policy.lowercasedID : policy.id)
            common["emails"] = [.string(user.email)]
        } else {
            common["ver"] = "2.0"
            common["tid"] = .string(tenantID)
            common["preferred_username"] = .string(user.email)
            common["email"] = .string(user.email)
        }
        if newUser { common["newUser"] = true }
        if let nonce { common["nonce"] = .string(nonce) }

        var idToken: String?
        if scopes.openid && includeIDToken {
            var c = common
            c["aud"] = .string(app.clientId)
            c["exp"] = JSONValue(now + idLifetime)
            idToken = try JWT.sign(claims: .object(c), kid: keys.jwk.kid, key: keys.key)
        }
        var accessToken: String?
        if let resource = scopes.resourceAppId {
            var c = common
            c["aud"] = .string(resource)
            c["azp"] = .string(app.clientId)
            c["exp"] = JSONValue(now + atLifetime)
            if !scopes.shortScopes.isEmpty { c["scp"] = .string(scopes.shortScopes.joined(separator: " ")) }
            accessToken = try JWT.sign(claims: .object(c), kid: keys.jwk.kid, key: keys.key)
        }

        let asNumber: (Int) -> JSONValue = { n in (policy?.numbersAsStrings ?? false) ? .string(String(n)) : JSONValue(n) }
        var body: [String: JSONValue] = ["token_type": "Bearer", "not_before": asNumber(now)]
        if let idToken {
            body["id_token"] = .string(idToken)
            body["id_token_expires_in"] = asNumber(idLifetime)
            let profile: JSONValue = [
                "ver": "1.0", "tid": .string(tenantID), "sub": nil, "name": .string(user.displayName),
                "preferred_username": nil, "idp": "LocalAccount",
            ]
            body["profile_info"] = .string(Base64URL.encode(profile.serialized()))
        }
        if let accessToken, let resource = scopes.resourceAppId {
            body["access_token"] = .string(accessToken)
            body["expires_in"] = asNumber(atLifetime)
            body["expires_on"] = asNumber(now + atLifetime)
            body["resource"] = .string(resource)
            body["scope"] = .string(scopes.fullScopes.joined(separator: " "))
        } else {
            body["scope"] = .string(["openid", scopes.offlineAccess ? "offline_access" : nil].compactMap { $0 }.joined(separator: " "))
        }
        var refreshToken: String?
        if scopes.offlineAccess {
            let rtLifetime = policy?.refreshTokenLifetime ?? 1_209_600
            let token = Random.token(bytes: 48)
            let g = grant ?? (id: UUID().uuidString.lowercased(), issuedAt: now)
            try store.saveRefreshToken(
                token,
                .init(
                    grantId: g.id, clientId: app.clientId, policy: policy?.lowercasedID ?? "",
                    oid: user.oid, scopes: scopes.serializedForStorage, authTime: authTime,
                    issuedAt: now, grantIssuedAt: g.issuedAt, rotatedAt: nil, revoked: false),
                rotating: oldRefreshToken, now: now)
            body["refresh_token"] = .string(token)
            body["refresh_token_expires_in"] = asNumber(rtLifetime)
            refreshToken = token
        }
        if clientInfo {
            let uid = policy.map { "\(user.oid)-\($0.lowercasedID)" } ?? user.oid
            body["client_info"] = .string(ClientInfo(uid: uid, utid: tenantID).encoded)
        }
        return Issued(body: .object(body), refreshToken: refreshToken)
    }

    /// A refresh: always an id token and a new refresh token of the same grant (rotation), as B2C does.
    func refreshed(
        _ token: String, record: EmulatorStore.RefreshRecord, user: EmulatorStore.UserRecord, policy: EmulatorSeed.Policy?,
        app: EmulatorSeed.App, scopes: Scopes, form: [String: String], origin: String
    ) throws -> Response {
        var scopes = scopes
        scopes.openid = true
        scopes.offlineAccess = true
        let issued = try issue(
            user: user, policy: policy, app: app, scopes: scopes, nonce: nil, authTime: record.authTime, newUser: false,
            origin: origin, clientInfo: Self.wantsClientInfo(form), grant: (record.grantId, record.grantIssuedAt), rotating: token)
        return tokenResponse(issued)
    }

    static func wantsClientInfo(_ form: [String: String]) -> Bool {
        ["1", "true"].contains(form["client_info"]?.lowercased() ?? "")
    }

    /// Checks a refresh token against B2C's rules, in B2C's order. `policy` nil = native authentication.
    func checkRefreshToken(
        _ token: String, app: EmulatorSeed.App, policy: EmulatorSeed.Policy?
    ) throws
        -> (EmulatorStore.RefreshRecord, EmulatorStore.UserRecord)
    {
        guard let record = try store.refreshToken(token) else {
            throw OAuthFailure(error: "invalid_grant", code: "AADB2C90090", message: "The provided JWE token is not valid.")
        }
        guard record.clientId == app.clientId else {
            throw OAuthFailure(
                error: "invalid_grant", code: "AADB2C90279",
                message: "The provided client id '\(app.clientId)' does not match the client id that issued the grant.")
        }
        let expected = policy?.lowercasedID ?? ""
        guard record.policy == expected else {
            throw OAuthFailure(
                error: "invalid_grant", code: "AADB2C90088",
                message:
                    "The provided grant has not been issued for this endpoint. Actual Value : "
                    + "\(expected.isEmpty ? "(native authentication)" : expected) and Expected Value : "
                    + "\(record.policy.isEmpty ? "(native authentication)" : record.policy)"
            )
        }
        let now = clock.now()
        let lifetime = policy?.refreshTokenLifetime ?? 1_209_600
        let sliding = policy == nil ? 7_776_000 : policy!.slidingWindow
        if now >= record.issuedAt + lifetime || (sliding.map { now >= record.grantIssuedAt + $0 } ?? false) {
            let expiry = min(record.issuedAt + lifetime, sliding.map { record.grantIssuedAt + $0 } ?? Int.max)
            throw OAuthFailure(
                error: "invalid_grant", code: "AADB2C90080",
                message:
                    "The provided grant has expired. Please re-authenticate and try again. Current time: \(now), Grant issued time: "
                    + "\(record.grantIssuedAt), Grant expiration time: \(expiry)"
            )
        }
        guard let user = try store.user(oid: record.oid) else {
            throw OAuthFailure(
                error: "invalid_grant", code: "AADB2C90128",
                message: "The account associated with this grant no longer exists. Please reauthenticate and try again.")
        }
        if record.revoked || record.issuedAt < user.tokensValidFrom {
            throw OAuthFailure(
                error: "invalid_grant", code: "AADB2C90129",
                message: "The provided grant has been revoked. Please reauthenticate and try again.")
        }
        return (record, user)
    }

    func tokenResponse(_ issued: Issued) -> Response {
        .json(issued.body, headers: [("Cache-Control", "no-store"), ("Pragma", "no-cache")])
    }
}
