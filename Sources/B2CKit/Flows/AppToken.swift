import Foundation

public struct AppTokenResult: Sendable {
    public var token: AppToken
    public var fromCache: Bool
    /// Said once on stderr: the token was not kept (no key for the store in this session).
    public var notice: String?
}

extension B2CClient {
    /// The resource of an app-only request: `--scope` (which must be `<App ID URI>/.default`), else the named (or first)
    /// API's App ID URI with `/.default`, taken from its first scope.
    public func appResource(api: String?, scope: String?) throws -> String {
        if let scope {
            guard scope.hasSuffix("/.default"), scope.count > "/.default".count else {
                throw B2CError(
                    .usage,
                    "the scope \(scope) cannot be asked for in an app-only token: it takes one '<App ID URI>/.default' "
                        + "(such as https://contoso.onmicrosoft.com/api/.default)", remedy: .nameAppResource)
            }
            return scope
        }
        let chosen: ClientConfiguration.API
        if let api {
            guard let a = config.api(named: api) else {
                throw B2CError(
                    .configuration, "no API named '\(api)' in \(config.source) (known: \(config.apis.map(\.name).joined(separator: ", ")))")
            }
            chosen = a
        } else {
            guard let a = config.apis.first else {
                throw B2CError(.configuration, "\(config.source) names no API", remedy: .nameAppResource)
            }
            chosen = a
        }
        guard let first = chosen.scopes.first, let slash = first.lastIndex(of: "/"), first.contains("://") else {
            throw B2CError(
                .configuration,
                "the scopes of the API '\(chosen.name)' are not full URIs, so its App ID URI is unknown", remedy: .nameAppResource)
        }
        return String(first[..<slash]) + "/.default"
    }

    /// The policy whose token endpoint app-only requests go to: the one named, else the configuration's
    /// `clientCredentials` policy, else the default sign-in policy (B2C serves them at any policy); External ID: its
    /// policy-less authority.
    public func appTarget(_ name: String?) throws -> Target {
        if name == nil, let p = config.policies(role: .clientCredentials).first { return try target(p.name) }
        return try target(name)
    }

    /// An app-only token (client credentials with the app's secret): the cached one with at least `minValid` seconds left,
    /// else a new one, one request at a time per app and resource across processes.
    public func acquireAppToken(resource: String, policyName: String?, minValid: Int, forceRefresh: Bool) async throws -> AppTokenResult {
        let target = try appTarget(policyName)
        do { try store.prepareForTokens() } catch let e as StoreError where e.isMissingKey {
            // An app token can be fetched again with the secret at any time: without a key it is fetched and not kept.
            let token = try await fetchAppToken(target, resource: resource)
            return AppTokenResult(
                token: token, fromCache: false,
                notice: "the app token was not cached: this session has no key for the token store, so each command asks the "
                    + "tenant again. To cache it, give the job a key: export B2C_STORE_KEY=$(openssl rand -base64 32)")
        }
        if !forceRefresh, let t = try store.appToken(scope: target.scope, resource: resource), t.expiresOn - clock() >= minValid {
            return AppTokenResult(token: t, fromCache: true)
        }
        let started = clock()
        let lock = try appTokenLock(target.scope, resource: resource)
        defer { withExtendedLifetime(lock) {} }
        if let t = try store.appToken(scope: target.scope, resource: resource), t.expiresOn - clock() >= minValid,
            !forceRefresh || t.cachedAt > started
        {
            return AppTokenResult(token: t, fromCache: true)
        }
        let token = try await fetchAppToken(target, resource: resource)
        try store.saveAppToken(token)
        return AppTokenResult(token: token, fromCache: false)
    }

    /// A new app token from the tenant (client credentials), checked to be this app's; not stored.
    private func fetchAppToken(_ target: Target, resource: String) async throws -> AppToken {
        // The secret is needed now: a missing one is said before anything goes over the network (it is read once and kept).
        _ = try secrets.secret(for: config)
        let meta = try await metadata.metadata(for: target.authority, now: clock())
        let response = try await tokenRequest(
            meta.tokenEndpoint, .clientCredentials(clientID: config.clientID, scope: resource), policy: target.name, loginHint: nil)
        let now = clock()
        guard let secret = response.accessToken, let expiry = response.accessTokenExpiry(now: now) else {
            throw B2CError(.network, "the token endpoint's answer to client credentials has no access token or no lifetime")
        }
        let claims = JWT.payload(of: secret)
        let tenant = (claims?["tid"]?.stringValue ?? config.tenantID ?? "").lowercased()
        if let problem = TokenOwnership.problem(accessToken: secret, config: config, tenantID: tenant) {
            throw B2CError(
                .failed,
                "the tenant answered \(target.authority.hostAndPort) with an app token that is not this app's: \(problem); "
                    + "nothing was stored")
        }
        let token = AppToken(
            environment: target.scope.environment, clientID: config.clientID, resource: resource.lowercased(), tenantID: tenant,
            policy: target.name, secret: secret, expiresOn: expiry, cachedAt: now)
        return token
    }

    private func appTokenLock(_ scope: AccountScope, resource: String) throws -> FileLock {
        try storeLock("app \(scope.environment) \(scope.clientID) \(resource.lowercased())")
    }
}
