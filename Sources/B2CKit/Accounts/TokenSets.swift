import Foundation

/// Makes the set a flow stores from a token response: the id token validated, the account and person it names, the access
/// token under the scopes granted; and refuses tokens that are not this configuration's.
struct TokenSetBuilder: Sendable {
    let config: ClientConfiguration
    let metadata: MetadataProvider

    /// Turns a token response into the set we store, after validating the id token; a set that is not this
    /// configuration's is refused (`checkOwnership`).
    func tokenSet(
        _ r: TokenResponse, authority: Authority, metadata m: OpenIDMetadata, nonce: String?, requestedResource: [String],
        now: Int, previous: Account? = nil
    ) async throws -> TokenSet {
        var account: Account
        var claims: [String: JSONValue]
        if let idToken = r.idToken {
            let jwt = try await metadata.validateIDToken(idToken, authority: authority, metadata: m, nonce: nonce, now: now)
            claims = jwt.claims
            let oid = (jwt.string("oid") ?? jwt.string("sub") ?? "").lowercased()
            let tenant: String
            let id: String
            if let ci = r.clientInfo {
                tenant = ci.utid.lowercased()
                id = ci.homeAccountID
            } else {
                // Fallback without client_info: oid + policy + tenant GUID from the issuer.
                tenant = (URL(string: m.issuer)?.pathComponents.first { UUID(uuidString: $0) != nil } ?? config.tenantID ?? "").lowercased()
                id = "\(oid)-\(authority.policy.lowercased()).\(tenant)"
            }
            guard !oid.isEmpty, !tenant.isEmpty else {
                throw B2CError(.failed, "the id token names no user (oid/sub) or tenant; nothing was stored")
            }
            account = Account(
                id: id, environment: authority.hostAndPort, tenantID: tenant, oid: oid, policy: authority.policy,
                authority: authority.url.absoluteString, clientID: config.clientID, idToken: idToken, claims: .object(claims),
                updatedAt: now)
        } else if let previous {
            account = previous
            claims = previous.claims.objectValue ?? [:]
        } else {
            throw B2CError(.failed, "the token response has no id token; ask for the openid scope")
        }
        account.updatedAt = now
        let identity = Identity(
            tenantID: account.tenantID, oid: account.oid, name: claims["name"]?.stringValue,
            givenName: claims["given_name"]?.stringValue, familyName: claims["family_name"]?.stringValue,
            email: account.email)
        var at: AccessToken?
        if let token = r.accessToken, let expiry = r.accessTokenExpiry(now: now) {
            let granted = (r.scope ?? "").split(separator: " ").map(String.init).filter { !ScopeSet.reserved.contains($0.lowercased()) }
            let target = AccessToken.target(granted.isEmpty ? requestedResource : granted)
            at = AccessToken(accountID: account.id, target: target, secret: token, expiresOn: expiry, cachedAt: now)
        }
        let set = TokenSet(identity: identity, account: account, accessToken: at, refreshToken: r.refreshToken)
        try checkOwnership(set, authority: authority)
        return set
    }

    /// Refuses a token set that does not belong to this configuration: an id token or access token whose issuer is not
    /// on a known host or names another tenant, or that was issued to another app (`azp`, else `aud`). Tokens that are
    /// not JWTs cannot be read and are left to the tenant.
    func checkOwnership(_ set: TokenSet, authority: Authority) throws {
        if let token = set.accessToken?.secret,
            let problem = TokenOwnership.problem(accessToken: token, config: config, tenantID: set.account.tenantID)
        {
            throw B2CError(
                .failed,
                "the tenant answered \(authority.hostAndPort) with an access token that is not this configuration's: \(problem); nothing "
                    + "was stored"
            )
        }
    }
}
