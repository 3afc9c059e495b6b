import Foundation

extension B2CClient {
    /// Resource owner password credentials against a policy of role `ropc` (B2C's only non-browser flow).
    public func signInWithPassword(policyName: String, username: String, password: String, scopes: [String]) async throws -> Account {
        try store.prepareForTokens()
        let policy = try passwordPolicy(policyName)
        let authority = config.authority(for: policy)
        let meta = try await metadata.metadata(for: authority, now: clock())
        let grant = TokenGrant.password(
            clientID: config.clientID, username: username, password: password, scope: ScopeSet.userRequest(scopes))
        let response = try await tokenRequest(meta.tokenEndpoint, grant, policy: policy.name, loginHint: username)
        let set = try await tokenSet(response, authority: authority, metadata: meta, nonce: nil, requestedResource: scopes, now: clock())
        try checkOwnership(set, authority: authority)
        try store.save(set, makeCurrent: true, now: clock())
        return set.account
    }

    /// The policy a password sign-in uses: the one named, which must have role ropc, else the configuration's first ropc policy.
    public func passwordPolicy(_ name: String?) throws -> ClientConfiguration.Policy {
        let ropc = config.policies(role: .ropc)
        guard let name else {
            guard let first = ropc.first else {
                throw B2CError(
                    .configuration,
                    "a password sign-in needs a policy of role ropc, and \(config.source) has none; "
                        + "sign in in the browser, or with native auth")
            }
            return first
        }
        let policy = try self.policy(name)
        guard policy.role == .ropc else {
            throw B2CError(
                .usage,
                "a password sign-in needs a policy of role ropc; \(policy.name) has role \(policy.role.rawValue)"
                    + (ropc.isEmpty ? " and \(config.source) has none" : " (use \(ropc.map(\.name).joined(separator: " or ")))"))
        }
        return policy
    }
}
