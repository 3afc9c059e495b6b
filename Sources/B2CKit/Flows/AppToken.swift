import Foundation

/// The app's own token, whether it came from the cache, and a notice to show once.
public struct AppTokenResult: Sendable {
    /// The app token.
    public var token: AppToken
    /// Whether it came from the store rather than the token endpoint.
    public var fromCache: Bool
    /// Said once on stderr: the token was not kept (no key for the store in this session).
    public var notice: String?
}

/// App-only tokens (client credentials with the app's secret), cached per app and resource.
struct AppOnlyToken: Flow {
    let context: FlowContext

    /// An app-only token (client credentials with the app's secret): the cached one with at least `minValid` seconds left,
    /// else a new one, one request at a time per app and resource across processes.
    func run(resource: String, policyName: String?, minValid: Int, forceRefresh: Bool) async throws -> AppTokenResult {
        let resolved = try config.appPolicy(policyName)
        return try await run(resource: resource, resolved: resolved, minValid: minValid, forceRefresh: forceRefresh) {
            try await metadata.metadata(for: resolved.authority, now: clock()).tokenEndpoint
        }
    }

    /// The same at `resolved` (a policy, or Graph's tenant authority), whose token endpoint `tokenEndpoint` gives.
    func run(
        resource: String, resolved: ResolvedPolicy, minValid: Int, forceRefresh: Bool, tokenEndpoint: () async throws -> URL
    ) async throws -> AppTokenResult {
        // The secret is needed: a missing one is said before anything goes over the network (it is read once and kept).
        func fresh() async throws -> AppToken {
            _ = try endpoint.credentials.secret()
            return try await fetchAppToken(resolved, resource: resource, at: try await tokenEndpoint())
        }
        do { try store.prepareForTokens() } catch let e as B2CError where e.isMissingStoreKey {
            // An app token can be fetched again with the secret at any time: without a key it is fetched and not kept.
            let token = try await fresh()
            return AppTokenResult(
                token: token, fromCache: false,
                notice: "the app token was not cached: this session has no key for the token store, so each command asks the "
                    + "tenant again. To cache it, give the job a key: export B2C_STORE_KEY=$(openssl rand -base64 32)")
        }
        if !forceRefresh, let t = try store.appToken(scope: resolved.scope, resource: resource), t.expiresOn - clock() >= minValid {
            return AppTokenResult(token: t, fromCache: true)
        }
        let started = clock()
        let lock = try store.appTokenLock(scope: resolved.scope, resource: resource, timeoutSeconds: lockTimeoutSeconds)
        defer { withExtendedLifetime(lock) {} }
        if let t = try store.appToken(scope: resolved.scope, resource: resource), t.expiresOn - clock() >= minValid,
            !forceRefresh || t.cachedAt > started
        {
            return AppTokenResult(token: t, fromCache: true)
        }
        let token = try await fresh()
        try store.saveAppToken(token)
        return AppTokenResult(token: token, fromCache: false)
    }

    /// A new app token from the tenant (client credentials), checked to be this app's; not stored.
    private func fetchAppToken(_ resolved: ResolvedPolicy, resource: String, at tokenEndpoint: URL) async throws -> AppToken {
        let response = try await endpoint.redeem(
            .clientCredentials(clientID: config.clientID, scope: resource), at: tokenEndpoint, config: config, policy: resolved.name,
            loginHint: nil)
        let now = clock()
        guard let secret = response.accessToken, let expiry = response.accessTokenExpiry(now: now) else {
            throw B2CError(.network, "the token endpoint's answer to client credentials has no access token or no lifetime")
        }
        let claims = JWT.payload(of: secret)
        let tenant = (claims?["tid"]?.stringValue ?? config.tenantID ?? "").lowercased()
        if let problem = TokenOwnership.problem(accessToken: secret, config: config, tenantID: tenant) {
            throw B2CError(
                .failed,
                "the tenant answered \(resolved.authority.hostAndPort) with an app token that is not this app's: \(problem); "
                    + "nothing was stored")
        }
        let token = AppToken(
            environment: resolved.scope.environment, clientID: config.clientID, resource: resource.lowercased(), tenantID: tenant,
            policy: resolved.name, secret: secret, expiresOn: expiry, cachedAt: now)
        return token
    }
}
