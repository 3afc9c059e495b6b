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

    /// The policy tokens are issued under: none in an External ID tenant (v2.0 claims, refresh tokens bound to no policy,
    /// so the browser's and native authentication's refresh tokens are one kind), else the policy itself.
    func bound(_ policy: EmulatorSeed.Policy?) -> EmulatorSeed.Policy? { seed.tenant.externalId ? nil : policy }

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
        guard let raw, !raw.isBlank else {
            throw OAuthFailure(error: "invalid_request", code: "AADB2C90010", message: "The request does not contain a scope parameter.")
        }
        var s = Scopes()
        // (Split on the bytes: a split on characters walks grapheme clusters, which a list of scopes has no use for.)
        for part in raw.utf8.split(whereSeparator: { $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "+") }) {
            let item = String(Substring(part))
            switch item.lowercased() {
            case "openid": s.openid = true
            case "offline_access": s.offlineAccess = true
            case "profile": s.profile = true
            case "email": s.email = true
            default:
                let appId: String
                var short: String?
                if item.equalsIgnoringCase(app.clientId) {
                    appId = app.clientId
                } else if seed.tenant.externalId, let name = GraphEndpoint.scope(item) {
                    // Microsoft Graph's delegated User.Read is granted to every app registration; User.ReadWrite only to an
                    // app whose registration names it (Entra's consent: customers cannot grant it themselves).
                    guard name == "User.Read" || GraphEndpoint.granted(name, to: app) else {
                        throw OAuthFailure(
                            error: "invalid_scope", code: "AADB2C90012",
                            message:
                                "The scope '\(item)' provided in request is not supported. The application '\(app.clientId)' has no "
                                + "permission for it (its registration names Microsoft Graph's User.Read only)."
                        )
                    }
                    appId = GraphEndpoint.appId
                    short = name
                } else if let (api, name) = Self.apiScope(item, of: seed.apis), api.scopes.contains(name) {
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

    /// The API whose App ID URI prefixes a scope (`<App ID URI>/<name>`), and the name. ASCII scopes and URIs (all there
    /// are in practice) are matched on their bytes; others as `String.hasPrefix` decides, which counts canonically
    /// equivalent characters as equal (a refresh grant spent more on `String.count` and `dropFirst` here than on its form).
    static func apiScope(_ item: String, of apis: [EmulatorSeed.API]) -> (EmulatorSeed.API, String)? {
        let ascii = item.utf8.allSatisfy { $0 < 0x80 }
        for api in apis {
            let uri = api.identifierUri.utf8
            if ascii && uri.allSatisfy({ $0 < 0x80 }) {
                let bytes = item.utf8
                guard bytes.count > uri.count, bytes.starts(with: uri),
                    bytes[bytes.index(bytes.startIndex, offsetBy: uri.count)] == UInt8(ascii: "/")
                else { continue }
                return (api, String(Substring(bytes.dropFirst(uri.count + 1))))
            }
            if item.hasPrefix(api.identifierUri + "/") { return (api, String(item.dropFirst(api.identifierUri.count + 1))) }
        }
        return nil
    }

    // MARK: token issuance

    struct Issued {
        var body: JSONValue
        var refreshToken: String?
        var idToken: String?
        var accessToken: String?
    }

    /// Signs the id and access tokens for `user` and seals a refresh token when `offline_access` was asked for (a sign-in's
    /// grant recorded).
    /// `policy` nil means a native-authentication (External ID) sign-in.
    /// Long on purpose: every claim of every token kind is decided in this one place.
    /// Who a user token goes to: a public client, a confidential one (its refresh tokens need its secret), a single-page
    /// app (its refresh tokens live 24 hours from the sign-in).
    struct ClientKind: Sendable {
        var confidential = false
        var spa = false
        static let publicClient = ClientKind()
    }

    /// Claims no API connector may set: they say who issued the token, to whom, for whom and when.
    static let protocolClaims: Set<String> = [
        "iss", "sub", "aud", "exp", "nbf", "iat", "oid", "tid", "tfp", "acr", "ver", "nonce", "auth_time", "azp", "scp", "roles",
        "idp", "emails", "c_hash", "at_hash", "newUser", "idtyp", "appid", "azpacr", "uti", "sid",
    ]

    /// The id token, access token and refresh token of one issuance, and the body that carries them.
    func issue(_ r: Issuance) async throws -> Issued {
        let (user, app, scopes, code) = (r.user, r.app, r.scopes, r.code)
        if AccountRule.disabled(user) { throw AccountRule.refusal() }
        let policy = bound(r.policy)
        let now = clock.now()
        let atLifetime = policy?.accessTokenLifetime ?? 3600
        let idLifetime = policy?.idTokenLifetime ?? 3600
        let common = commonClaims(r, policy: policy, now: now)
        let signer = try keys.current(policy?.type ?? .userFlow)
        var accessToken: String?
        if let resource = scopes.resourceAppId {
            var c = common
            c["aud"] = .string(resource)
            c["azp"] = .string(app.clientId)
            c["exp"] = JSONValue(now + atLifetime)
            if !scopes.shortScopes.isEmpty { c["scp"] = .string(scopes.shortScopes.joined(separator: " ")) }
            accessToken = try await signer.batchedSign(.object(c))
        }
        var idToken: String?
        if scopes.openid && r.includeIDToken {
            var c = common
            c["aud"] = .string(app.clientId)
            c["exp"] = JSONValue(now + idLifetime)
            if let accessToken { c["at_hash"] = .string(Self.leftHalfHash(accessToken)) }
            if let code { c["c_hash"] = .string(Self.leftHalfHash(code)) }
            idToken = try await signer.batchedSign(.object(c))
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
        body["scope"] = .string(Self.scopeEcho(scopes, app: app))
        if let accessToken, let resource = scopes.resourceAppId {
            body["access_token"] = .string(accessToken)
            body["expires_in"] = asNumber(atLifetime)
            body["expires_on"] = asNumber(now + atLifetime)
            body["resource"] = .string(resource)
        }
        var refreshToken: String?
        if scopes.offlineAccess {
            let (record, lifetime) = newRefreshRecord(r, policy: policy, now: now)
            // A sign-in records its grant; a refresh continues one that is recorded, and writes nothing.
            if !r.refresh { try store.saveGrant(record) }
            let token = store.refreshToken(record)
            body["refresh_token"] = .string(token)
            refreshToken = token
            body["refresh_token_expires_in"] = asNumber(lifetime)
        }
        if r.clientInfo {
            let uid = policy.map { "\(user.oid)-\($0.lowercasedID)" } ?? user.oid
            body["client_info"] = .string(ClientInfo(uid: uid, utid: tenantID).encoded)
        }
        return Issued(body: .object(body), refreshToken: refreshToken, idToken: idToken, accessToken: accessToken)
    }

    /// The claims both tokens carry: the person's, the connectors' and extensions' (never a protocol claim), and, for a
    /// custom policy, only what its relying party names beside the protocol's own.
    private func commonClaims(_ r: Issuance, policy: EmulatorSeed.Policy?, now: Int) -> [String: JSONValue] {
        let user = r.user
        var common = userClaims(user, policy: policy, authTime: r.authTime, newUser: r.newUser, nonce: r.nonce, origin: r.origin, now: now)
        // Entra's `sub` (External ID, no policy) is pairwise: the same person has another one at each app; `oid` is the same.
        if policy == nil { common["sub"] = .string(Self.pairwiseSubject(tenantID: tenantID, clientId: r.app.clientId, oid: user.oid)) }
        if let token = r.idpAccessToken, policy?.applicationClaims?.contains("idp_access_token") == true {
            common["idp_access_token"] = .string(token)
        }
        if policy?.runsCustomPolicy == true {
            // A custom policy's tokens carry what its relying party names (`sub` and `tid` too), and the protocol's own.
            common = common.filter { ["iss", "iat", "nbf", "auth_time", "ver", "nonce", "tfp", "acr"].contains($0.key) }
            for (name, value) in r.extraClaims where !["iss", "aud", "exp", "nbf", "iat", "nonce"].contains(name) { common[name] = value }
        } else {
            for (name, value) in r.extraClaims where !Self.protocolClaims.contains(name) { common[name] = value }
        }
        return common
    }

    /// The record of a new refresh token of the grant (a new grant on a sign-in), and its lifetime: a SPA's ends 24 hours
    /// after the sign-in, others last the policy's lifetime.
    private func newRefreshRecord(_ r: Issuance, policy: EmulatorSeed.Policy?, now: Int) -> (EmulatorStore.RefreshRecord, Int) {
        let g = r.grant ?? (id: UUID().uuidString.lowercased(), issuedAt: now)
        let record = EmulatorStore.RefreshRecord(
            grantId: g.id, clientId: r.app.clientId, policy: policy?.lowercasedID ?? "", oid: r.user.oid,
            scopes: r.scopes.serializedForStorage, authTime: r.authTime, issuedAt: now, grantIssuedAt: g.issuedAt,
            confidential: r.client.confidential, spa: r.client.spa)
        let lifetime = r.client.spa ? max(0, g.issuedAt + Self.spaRefreshLifetime - now) : (policy?.refreshTokenLifetime ?? 1_209_600)
        return (record, lifetime)
    }

    /// Entra's pairwise subject of a person at an app: 43 characters of base64url, stable for the tenant, app and person.
    static func pairwiseSubject(tenantID: String, clientId: String, oid: String) -> String {
        Base64URL.encode(EmulatorStore.sha256("pairwise:\(tenantID):\(clientId.lowercased()):\(oid)"))
    }

    /// SPA refresh tokens live 24 hours from the sign-in, not sliding, whatever the policy says (reference §4.4).
    static let spaRefreshLifetime = 86_400

    /// The claims of a person's tokens: a user flow's (`emails`, `oid`, `tfp`), a custom policy's starter pack (one
    /// `email`, `sub` = object id and no `oid`, `tid`, a lower-case `acr`), or native auth's (v2.0, `tid`, `preferred_username`).
    func userClaims(
        _ user: EmulatorStore.UserRecord, policy: EmulatorSeed.Policy?, authTime: Int, newUser: Bool, nonce: String?, origin: String,
        now: Int
    ) -> [String: JSONValue] {
        var c: [String: JSONValue] = [
            "iss": .string(issuer(origin: origin, policy: policy)), "iat": JSONValue(now), "nbf": JSONValue(now), "sub": .string(user.oid),
            "name": .string(user.displayName), "given_name": .string(user.givenName), "family_name": .string(user.surname),
            "auth_time": JSONValue(authTime),
        ]
        switch policy?.type {
        case .userFlow?:
            c["ver"] = "1.0"
            c["oid"] = .string(user.oid)
            c["emails"] = [.string(user.email)]
        case .custom?:
            c["ver"] = "1.0"
            c["email"] = .string(user.email)
            c["tid"] = .string(tenantID)
        case nil:
            c["ver"] = "2.0"
            c["oid"] = .string(user.oid)
            c["tid"] = .string(tenantID)
            c["preferred_username"] = .string(user.email)
            c["email"] = .string(user.email)
        }
        if let (name, value) = policy?.policyClaimEntry { c[name] = .string(value) }
        if newUser { c["newUser"] = true }
        if let idp = user.idp { c["idp"] = .string(idp) }
        for (name, value) in user.attributes where c[name] == nil && policy?.applicationClaims?.contains(name) ?? true { c[name] = value }
        if let nonce { c["nonce"] = .string(nonce) }
        return c
    }

    /// What `scope` says in a token answer: the API's scopes only when an API was asked for (as a real capture shows,
    /// reference §4.2), the client id with `offline_access` when the app asked for itself (the documented example), else
    /// `openid` and `offline_access`. The emulator's reading of what B2C does; strict clients compare it with their request.
    static func scopeEcho(_ scopes: Scopes, app: EmulatorSeed.App) -> String {
        guard scopes.resourceAppId != nil else {
            return ["openid", scopes.offlineAccess ? "offline_access" : nil].compactMap { $0 }.joined(separator: " ")
        }
        if scopes.resourceAppId == app.clientId && scopes.offlineAccess {
            return (scopes.fullScopes + ["offline_access"]).joined(separator: " ")
        }
        return scopes.fullScopes.joined(separator: " ")
    }

    /// OIDC Core §3.3.2.11: base64url of the left half of the SHA-256 of the ASCII value (`c_hash`, `at_hash`).
    static func leftHalfHash(_ value: String) -> String {
        Base64URL.encode(EmulatorStore.sha256(value).prefix(16))
    }

    /// A refresh: always an id token and a new refresh token of the same grant (rotation), as B2C does. Nothing is written:
    /// the grant is recorded, the new token sealed.
    func refreshed(
        _ record: EmulatorStore.RefreshRecord, user: EmulatorStore.UserRecord, policy: EmulatorSeed.Policy?, app: EmulatorSeed.App,
        scopes: Scopes, form: [String: String], origin: String, extraClaims: [String: JSONValue] = [:]
    ) async throws -> Response {
        var scopes = scopes
        scopes.openid = true
        scopes.offlineAccess = true
        return tokenResponse(
            try await issue(
                Issuance(
                    user: user, policy: bound(policy), app: app, scopes: scopes, authTime: record.authTime, origin: origin,
                    clientInfo: Self.wantsClientInfo(form), grant: (record.grantId, record.grantIssuedAt), refresh: true,
                    client: ClientKind(confidential: record.confidential, spa: record.spa), extraClaims: extraClaims)))
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
        let policy = bound(policy)
        guard let (record, user) = try store.refreshTokenAndUser(token) else {
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
        // A single-page app's grant ends 24 hours after the sign-in; rotation does not extend it.
        let lifetime = record.spa ? Self.spaRefreshLifetime : policy?.refreshTokenLifetime ?? 1_209_600
        let sliding: Int? = record.spa ? Self.spaRefreshLifetime : policy == nil ? 7_776_000 : policy!.slidingWindow
        if now >= record.issuedAt + lifetime || (sliding.map { now >= record.grantIssuedAt + $0 } ?? false) {
            let expiry = min(record.issuedAt + lifetime, sliding.map { record.grantIssuedAt + $0 } ?? Int.max)
            throw OAuthFailure(
                error: "invalid_grant", code: "AADB2C90080",
                message:
                    "The provided grant has expired. Please re-authenticate and try again. Current time: \(now), Grant issued time: "
                    + "\(record.grantIssuedAt), Grant expiration time: \(expiry)"
            )
        }
        guard let user else {
            throw OAuthFailure(
                error: "invalid_grant", code: "AADB2C90128",
                message: "The account associated with this grant no longer exists. Please reauthenticate and try again.")
        }
        // A custom policy's refresh is revoked by its own Token journey (the starter pack's
        // AssertRefreshTokenIssuedLaterThanValidFromDate), as in B2C; a user flow's, here.
        let validFromChecked = policy?.runsCustomPolicy != true
        if record.revoked || (validFromChecked && record.issuedAt < user.tokensValidFrom) {
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

extension TokenIssuer {
    /// An app-only token (client credentials): `aud` the API, `azp` the client, `sub` and `oid` the app's service principal,
    /// `scp` the granted app roles, `tid`, `ver` 2.0; the policy claim of the policy in the path when the tenant's knob says so.
    /// The answer has no id token, refresh token or `scope` (reference §13.2).
    func appToken(
        app: EmulatorSeed.App, api: EmulatorSeed.API, roles: [String], policy: EmulatorSeed.Policy, origin: String
    ) async throws -> Response {
        let now = clock.now()
        let lifetime = policy.accessTokenLifetime
        var c: [String: JSONValue] = [
            "iss": .string(issuer(origin: origin, policy: bound(policy))), "iat": JSONValue(now), "nbf": JSONValue(now),
            "exp": JSONValue(now + lifetime),
            "aud": .string(api.appId), "azp": .string(app.clientId), "azpacr": "1", "sub": .string(app.servicePrincipalId),
            "oid": .string(app.servicePrincipalId), "tid": .string(tenantID), "ver": "2.0",
        ]
        // Application permissions: Entra (an External ID tenant) puts them in `roles` and marks the token `idtyp: app`; B2C's
        // client credentials put them in `scp` (reference §13.2).
        if seed.tenant.externalId {
            c["roles"] = JSONValue(roles)
            c["idtyp"] = "app"
        } else {
            c["scp"] = .string(roles.joined(separator: " "))
        }
        if seed.tenant.appTokenPolicyClaim && !seed.tenant.externalId, let (name, value) = policy.policyClaimEntry {
            c[name] = .string(value)
        }
        let signer = try keys.current(policy.type)
        let token = try await signer.batchedSign(.object(c))
        let asNumber: (Int) -> JSONValue = { n in policy.numbersAsStrings ? .string(String(n)) : JSONValue(n) }
        return tokenResponse(
            Issued(
                body: [
                    "access_token": .string(token), "token_type": "Bearer", "not_before": asNumber(now), "expires_in": asNumber(lifetime),
                    "expires_on": asNumber(now + lifetime), "resource": .string(api.appId),
                ], accessToken: token))
    }
}

/// What one issuance is for: the person, the policy (nil: native auth), the app and scopes, and the sign-in or grant it
/// continues. Defaults are a first sign-in of a public client with nothing to rotate.
struct Issuance {
    var user: EmulatorStore.UserRecord
    var policy: EmulatorSeed.Policy?
    var app: EmulatorSeed.App
    var scopes: TokenIssuer.Scopes
    var nonce: String? = nil
    var authTime: Int
    var newUser = false
    /// The origin the request came to (the issuer's host unless `--public-url` names one).
    var origin: String
    /// The app asked for `client_info`.
    var clientInfo = false
    /// The grant a refresh token continues (its id and first issue); nil: a new grant.
    var grant: (id: String, issuedAt: Int)? = nil
    /// A refresh grant: the grant is recorded already.
    var refresh = false
    var includeIDToken = true
    /// The authorization code issued beside (hybrid answers carry its `c_hash`).
    var code: String? = nil
    var client: TokenIssuer.ClientKind = .publicClient
    /// A federated sign-in's provider access token (`idp_access_token`, when the user flow's application claims name it).
    var idpAccessToken: String? = nil
    /// Claims an API connector returned before the token ("Continue"), as token claim names.
    var extraClaims: [String: JSONValue] = [:]
}
