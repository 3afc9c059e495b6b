import Foundation

/// What an MSAL cache export or import did, for the person running it.
public struct MSALCacheReport: Sendable {
    /// The ids of the accounts exported or imported.
    public var accounts: [String] = []
    /// What was left out or skipped, and why, one line each.
    public var notes: [String] = []
}

/// MSAL's unified token cache (the JSON of msal-python's `SerializableTokenCache`, msal-extensions' persisted cache, and
/// MSAL.NET's serialization): `Account`, `IdToken`, `AccessToken`, `RefreshToken` and `AppMetadata` sections, lower-cased
/// keys, times as epoch strings (reference §7). `environment` is the authority's host name and `realm` the tenant
/// segment of its token endpoint, as msal-python computes them.
package enum MSALCache {
    typealias Report = MSALCacheReport

    static func key(_ parts: [String]) -> String { parts.joined(separator: "-").lowercased() }

    /// The host name MSAL names an authority by (msal-python's `Authority.instance`: no port).
    static func environment(of hostAndPort: String) -> String {
        URL(string: "https://\(hostAndPort)")?.host?.lowercased() ?? hostAndPort.lowercased()
    }
}

extension B2CClient {
    /// This configuration's accounts (of one policy, or one selector) in MSAL's cache format, with their tokens.
    public func exportMSALCache(policyName: String?, selector: String?) throws -> (JSONValue, MSALCacheReport) {
        var accounts = try accountsInScope()
        if let policyName {
            let t = try config.resolve(policy: policyName)
            accounts = accounts.filter { AccountSelection.matches($0, policy: t.name) }
        }
        if let selector { accounts = AccountSelection.filter(accounts, selector: selector) }
        var sections: [String: [String: JSONValue]] = [
            "Account": [:], "IdToken": [:], "AccessToken": [:], "RefreshToken": [:], "AppMetadata": [:],
        ]
        var report = MSALCache.Report()
        let realm = config.tenantSegment.lowercased()
        for a in accounts {
            let env = MSALCache.environment(of: a.environment)
            let client = a.clientID
            guard !a.idToken.isEmpty else {
                report.notes.append("\(a.id): its id token cannot be read (the store's key is missing); left out")
                continue
            }
            sections["Account"]![MSALCache.key([a.id, env, realm])] = [
                "home_account_id": .string(a.id), "environment": .string(env), "realm": .string(realm),
                "local_account_id": .string(a.oid), "username": .string(a.email ?? ""), "authority_type": "MSSTS",
                "account_source": "authorization_code",
            ]
            sections["IdToken"]![MSALCache.key([a.id, env, "idtoken", client, realm, ""])] = [
                "credential_type": "IdToken", "secret": .string(a.idToken), "home_account_id": .string(a.id), "environment": .string(env),
                "realm": .string(realm), "client_id": .string(client),
            ]
            let scopes = (config.apis.first?.scopes ?? []).map { $0.lowercased() }
            if let rt = try store.refreshToken(of: a) {
                let target = (["openid", "offline_access", "profile"] + scopes).sorted().joined(separator: " ")
                sections["RefreshToken"]![MSALCache.key([a.id, env, "refreshtoken", client, "", target])] = [
                    "credential_type": "RefreshToken", "secret": .string(rt), "home_account_id": .string(a.id),
                    "environment": .string(env), "client_id": .string(client), "target": .string(target),
                    "last_modification_time": .string(String(a.updatedAt)),
                ]
            }
            for at in try store.accessTokens(of: a) {
                sections["AccessToken"]![MSALCache.key([a.id, env, "accesstoken", client, realm, at.target])] = [
                    "credential_type": "AccessToken", "secret": .string(at.secret), "home_account_id": .string(a.id),
                    "environment": .string(env), "client_id": .string(client), "target": .string(at.target), "realm": .string(realm),
                    "token_type": "Bearer", "cached_at": .string(String(at.cachedAt)), "expires_on": .string(String(at.expiresOn)),
                    "extended_expires_on": .string(String(at.expiresOn)),
                ]
            }
            sections["AppMetadata"]![MSALCache.key(["appmetadata", env, client])] = [
                "client_id": .string(client), "environment": .string(env),
            ]
            report.accounts.append(a.id)
        }
        return (.object(sections.mapValues { .object($0) }), report)
    }

    /// Imports the accounts of an MSAL cache that belong to this configuration: its client id, its authority's host, and
    /// a home account id `<oid>-<policy>.<tenant>` of a configured policy (External ID and native auth: `<oid>.<tenant>`).
    /// Everything else is skipped with a note. Each id token must be signed with its policy's keys (its lifetime is not
    /// checked: cached id tokens are usually expired) and name the person and policy of its home account id; an account
    /// already in the store keeps its refresh token unless `replace` (the report says which were kept).
    public func importMSALCache(_ data: Data, replace: Bool = false) async throws -> MSALCacheReport {
        let root: JSONValue
        do { root = try JSONValue.parse(data) } catch { throw B2CError(.failed, "the file is not JSON (an MSAL token cache is): \(error)") }
        guard case .object = root, root["Account"] != nil || root["RefreshToken"] != nil else {
            throw B2CError(.failed, "the file is JSON but not an MSAL token cache (no Account or RefreshToken section)")
        }
        try store.prepareForTokens()
        var report = MSALCache.Report()
        let env = MSALCache.environment(of: Authority.hostAndPort(of: config.authorityHost))
        for (_, account) in root["Account"]?.objectValue ?? [:] {
            guard let id = account["home_account_id"]?.stringValue?.lowercased() else { continue }
            do {
                guard let (set, authority) = try importedSet(id, account: account, root: root, environment: env) else { continue }
                try await checkImportedSignature(set.account.idToken, policy: set.account.policy, authority: authority)
                let scope = set.account.scope
                if !replace, let existing = try store.accounts(scope: scope).first(where: { $0.id == set.account.id }),
                    try store.refreshToken(of: existing) != nil
                {
                    report.notes.append("\(id): already in the store with its own refresh token; kept (replace it explicitly)")
                    continue
                }
                try store.save(set, makeCurrent: try store.currentAccountID(scope: scope, policy: set.account.policy) == nil, now: clock())
                report.accounts.append(set.account.id)
            } catch let e as B2CError {
                report.notes.append("\(id): \(e.message); skipped")
            }
        }
        return report
    }

    /// The id token's signature against its policy's key set (refetched once for an unknown key); a forged or unsigned
    /// (`alg: none`) token is refused.
    private func checkImportedSignature(_ idToken: String, policy: String, authority: Authority) async throws {
        let jwt: JWT
        do { jwt = try JWT.decode(idToken) } catch { throw B2CError(.failed, "its id token cannot be read (\(error))") }
        let meta = try await metadata.metadata(for: authority, now: clock())
        do { try await metadata.verifySignature(idToken, decoded: jwt, metadata: meta, now: clock()) } catch let e as JWTError {
            throw B2CError(.failed, "its id token is not signed by \(policy)'s keys (\(e)); a cache entry anyone could have written")
        }
    }

    /// One cache account as a token set of this configuration, or nil (with a note thrown) when it is another's.
    private func importedSet(
        _ id: String, account: JSONValue, root: JSONValue, environment env: String
    ) throws -> (TokenSet, Authority)? {
        func entries(_ section: String) -> [JSONValue] {
            (root[section]?.objectValue ?? [:]).values.filter {
                $0["home_account_id"]?.stringValue?.lowercased() == id && $0["client_id"]?.stringValue?.lowercased() == config.clientID
                    && MSALCache.environment(of: $0["environment"]?.stringValue ?? "") == env
            }
        }
        guard MSALCache.environment(of: account["environment"]?.stringValue ?? "") == env else {
            throw B2CError(.failed, "it belongs to \(account["environment"]?.stringValue ?? "another host"), not \(env)")
        }
        let destination = try importDestination(id)
        guard let idToken = entries("IdToken").first?["secret"]?.stringValue, let claims = JWT.payload(of: idToken) else {
            throw B2CError(.failed, "it has no id token for the client \(config.clientID)")
        }
        guard claims["aud"]?.stringValue?.lowercased() == config.clientID else {
            throw B2CError(.failed, "its id token is for another app")
        }
        if let problem = TokenOwnership.issuerProblem(claims["iss"]?.stringValue, config: config, tenantID: destination.tenant) {
            throw B2CError(.failed, "its id token is not this configuration's: \(problem)")
        }
        let oid = destination.oid
        // The claims must name the person and policy of the home account id they are filed under.
        guard (claims["oid"] ?? claims["sub"])?.stringValue?.lowercased() == oid.lowercased() else {
            throw B2CError(.failed, "its id token names another person (oid/sub is not \(oid))")
        }
        if !destination.authority.native, let claimed = (claims["tfp"] ?? claims["acr"])?.stringValue,
            claimed.caseInsensitiveCompare(destination.name) != .orderedSame
        {
            throw B2CError(.failed, "its id token is of the policy \(claimed), not \(destination.name)")
        } else if !destination.authority.native && claims["tfp"] == nil && claims["acr"] == nil {
            throw B2CError(.failed, "its id token names no policy (tfp/acr)")
        }
        var a = Account(
            id: id, environment: destination.authority.hostAndPort, tenantID: destination.tenant, oid: oid, policy: destination.name,
            authority: destination.authority.url.absoluteString, clientID: config.clientID, idToken: idToken, claims: .object(claims),
            updatedAt: clock())
        a.updatedAt = clock()
        let identity = Identity(
            tenantID: destination.tenant, oid: oid, name: claims["name"]?.stringValue, givenName: claims["given_name"]?.stringValue,
            familyName: claims["family_name"]?.stringValue, email: a.email)
        let rt = entries("RefreshToken").first?["secret"]?.stringValue
        let at = entries("AccessToken").compactMap { e -> AccessToken? in
            guard let secret = e["secret"]?.stringValue, let expires = e["expires_on"]?.lenientInt, expires > clock() else { return nil }
            guard TokenOwnership.problem(accessToken: secret, config: config, tenantID: destination.tenant) == nil else { return nil }
            let scopes = (e["target"]?.stringValue ?? "").split(separator: " ").map(String.init).filter {
                !ScopeSet.reserved.contains($0.lowercased())
            }
            return AccessToken(
                accountID: id, target: AccessToken.target(scopes), secret: secret, expiresOn: expires,
                cachedAt: e["cached_at"]?.lenientInt ?? clock())
        }.max { $0.expiresOn < $1.expiresOn }
        guard rt != nil || at != nil else { throw B2CError(.failed, "it has neither a refresh token nor a usable access token") }
        return (TokenSet(identity: identity, account: a, accessToken: at, refreshToken: rt), destination.authority)
    }

    /// Which of this configuration's policies (or its External ID authority) a home account id names:
    /// `<oid>-<policy>.<tenant>` (B2C) or `<oid>.<tenant>`.
    private func importDestination(_ id: String) throws -> (name: String, authority: Authority, oid: String, tenant: String) {
        guard let dot = id.lastIndex(of: ".") else { throw B2CError(.failed, "its home account id is not <oid>-<policy>.<tenant>") }
        let tenant = String(id[id.index(after: dot)...]), head = String(id[..<dot])
        if UUID(uuidString: head) != nil {
            guard let external = config.externalIdAuthority ?? config.nativeAuthority else {
                throw B2CError(
                    .failed, "it is an External ID account (<oid>.<tenant>), and this configuration has no External ID authority")
            }
            return (external.policy, external, head, tenant)
        }
        let oid = String(head.prefix(36)), policy = String(head.dropFirst(37))
        guard UUID(uuidString: oid) != nil, head.count > 37, let p = config.policy(named: policy) else {
            throw B2CError(.failed, "its policy '\(policy)' is not in \(config.source)")
        }
        if let configured = config.tenantID, configured != tenant {
            throw B2CError(.failed, "it is of the tenant \(tenant), not \(configured)")
        }
        return (p.name, config.authority(for: p), oid, tenant)
    }
}
