import Foundation

/// Resource owner password credentials against a policy of role `ropc` (B2C's only non-browser flow).
struct PasswordSignIn: Flow {
    let context: FlowContext

    /// Signs `username` in at the named ropc policy (or the configuration's first) and stores the account.
    func run(policyName: String?, username: String, password: String, scopes: [String]) async throws -> Account {
        try store.prepareForTokens()
        let policy = try config.passwordPolicy(policyName)
        let authority = config.authority(for: policy)
        let meta = try await metadata.metadata(for: authority, now: clock())
        let grant = TokenGrant.password(
            clientID: config.clientID, username: username, password: password, scope: ScopeSet.userRequest(scopes))
        let response = try await endpoint.redeem(grant, at: meta.tokenEndpoint, config: config, policy: policy.name, loginHint: username)
        let set = try await tokenSets.tokenSet(
            response, authority: authority, metadata: meta, nonce: nil, requestedResource: scopes, now: clock())
        try store.save(set, makeCurrent: true, now: clock())
        return set.account
    }
}
