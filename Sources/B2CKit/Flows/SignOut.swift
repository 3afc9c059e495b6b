import Foundation

/// Signing out locally: forgetting accounts and app tokens of this configuration's scopes (or, in shared-device mode,
/// the whole store).
struct SignOut: Sendable {
    let config: ClientConfiguration
    let store: TokenStore

    /// Forgets accounts locally. In shared-device mode every account on this device goes (the whole store) and the
    /// browser session must end too; a named account must still exist. Returns what was removed and what else to do.
    /// `apps` forgets only the app's own tokens; `all` forgets them too. The person's own sign-out also forgets the
    /// policies' current-account choices it emptied: the next command has nothing to tell them.
    func run(policyName: String?, selector: String?, all: Bool, apps: Bool = false) throws -> SignOutOutcome {
        if apps {
            let n = try config.scopes.reduce(0) { $0 + (try store.removeAppTokens(scope: $1)) }
            return SignOutOutcome(removed: [], sharedDevice: false, removedAppTokens: n)
        }
        if config.sharedDevice {
            if !all && (policyName != nil || selector != nil) {
                _ = try accountsToSignOut(policyName: policyName, selector: selector, all: false)
            }
            return SignOutOutcome(
                removed: try store.removeAll(scope: nil, forgetCurrent: true), sharedDevice: true,
                removedAppTokens: try store.removeAppTokens(scope: nil))
        }
        let removed = try store.remove(
            try accountsToSignOut(policyName: policyName, selector: selector, all: all), forgetCurrent: true)
        let appTokens = all ? try config.scopes.reduce(0) { $0 + (try store.removeAppTokens(scope: $1)) } : 0
        return SignOutOutcome(removed: removed, sharedDevice: false, removedAppTokens: appTokens)
    }

    /// The accounts a sign-out names, within this configuration's scopes.
    private func accountsToSignOut(policyName: String?, selector: String?, all: Bool) throws -> [Account] {
        if all { return try accountsInScope() }
        if let policyName {
            let p = try config.resolve(policy: policyName)
            return [
                try AccountSelection.select(policy: p.name, selector: selector, scope: p.scope, store: store) {
                    config.signInRemedy(policy: p.name, loginHint: $0)
                }.account
            ]
        }
        guard let selector else {
            throw B2CError(.usage, "say which account to sign out", remedy: .nameAccount)
        }
        let matches = AccountSelection.filter(try accountsInScope(), selector: selector)
        if matches.isEmpty {
            throw B2CError(.failed, "no signed-in account matches '\(selector)'; nothing was signed out", remedy: .listAccounts)
        }
        // A person selector (email or oid) signs the person out of every policy.
        return matches
    }

    private func accountsInScope() throws -> [Account] { try config.scopes.flatMap { try store.accounts(scope: $0) } }
}

/// Ending the B2C browser session through a policy's end_session endpoint.
struct BrowserSignOut: Flow {
    let context: FlowContext
    let ui: InteractionUI

    /// Ends the B2C browser session through a policy's end_session endpoint: opens it in the browser with the loopback
    /// listener as post_logout_redirect_uri and waits for the browser to come back. Returns false when it does not.
    func run(policyName: String?, timeoutSeconds: Int = 120) async throws -> Bool {
        // Native-auth and ROPC accounts have no browser session; the default sign-in policy's endpoint ends the tenant's.
        let resolved: ResolvedPolicy
        if config.externalIdAuthority != nil {
            resolved = try config.resolve(policy: nil)
        } else {
            var policy = policyName.flatMap { config.policy(named: $0) }
            if policy == nil || policy?.role == .ropc { policy = try config.defaultPolicy() }
            resolved = try config.resolve(policy: policy!.name)
        }
        let meta = try await metadata.metadata(for: resolved.authority, now: clock())
        guard let endSession = meta.endSessionEndpoint else {
            throw B2CError(.network, "\(resolved.name)'s discovery document has no end_session_endpoint; the browser session was not ended")
        }
        try metadata.checkKnown(endSession, what: "end-session endpoint")
        let request = EndSessionRequest()
        let listener = try await LoopbackListener.start(
            port: 0, path: config.redirectURI.path, expectedState: request.state, acceptsBareState: true,
            redirectHost: config.redirectURI.host)
        defer { Task { await listener.stop() } }
        let url = request.url(endpoint: endSession, redirectURI: AuthorizeRequest.loopbackURI(config.redirectURI, port: listener.port))
        await ui.present(url: url, purpose: "end the browser session (\(resolved.name))")
        ui.progress("Waiting for the browser to end the session (timeout \(timeoutSeconds) s)…")
        return await listener.waitForRedirect(until: .now + .seconds(timeoutSeconds)) != nil
    }
}

/// What a sign-out did.
public struct SignOutOutcome: Sendable {
    /// The accounts forgotten.
    public var removed: [Account]
    /// Shared-device mode: everything went, and the browser session must end too.
    public var sharedDevice: Bool
    /// How many of the app's own tokens were forgotten.
    public var removedAppTokens = 0
    /// Whether the caller must end the browser session too (shared-device mode).
    public var endBrowserSession: Bool { sharedDevice }
}
