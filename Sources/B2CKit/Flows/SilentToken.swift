import Crypto
import Foundation

/// A token for a person: the account it is for, the token, whether it came from the cache, and a notice to show once
/// (the policy's current account was signed out elsewhere; a refresh failed and a still-valid token was served).
public struct SilentResult: Sendable {
    /// The account the token is for.
    public var account: Account
    /// The access token, with its scopes and expiry.
    public var accessToken: AccessToken
    /// Whether it was served from the store without a refresh.
    public var fromCache: Bool
    /// Said once: the current account was signed out elsewhere, or a refresh failed and a cached token was served.
    public var notice: String?
}

/// The silent flow: a cached access token with enough time left, else a refresh with the account's own refresh token
/// (single-flight across processes), else "interaction required". Only accounts and tokens of this configuration's
/// scope are considered, and a cached token that does not belong to it is never served.
struct SilentToken: Flow {
    let context: FlowContext

    func run(policyName: String?, selector: String?, scopes: [String], minValid: Int, forceRefresh: Bool) async throws -> SilentResult {
        let policy = try config.resolve(policy: policyName)
        let selection = try AccountSelection.select(policy: policy.name, selector: selector, scope: policy.scope, store: store) {
            config.signInRemedy(policy: policy.name, loginHint: $0)
        }
        try selection.forgetSignedOutCurrent(in: store)
        let account = selection.account
        let resource = scopes
        let target = AccessToken.target(resource)
        if !forceRefresh, let at = try servable(store.accessToken(of: account, target: target), of: account),
            at.expiresOn - clock() >= minValid
        {
            return SilentResult(account: account, accessToken: at, fromCache: true, notice: selection.notice)
        }
        // One refresh per account at a time, across processes: lock, re-read, refresh only if still needed.
        let started = clock()
        let lock = try store.refreshLock(for: account, timeoutSeconds: lockTimeoutSeconds)
        defer { withExtendedLifetime(lock) {} }
        let cachedNow = try servable(store.accessToken(of: account, target: target), of: account)
        // A forced refresh still serves a token another process refreshed while this one waited for the lock (cached since
        // `started`), but never one cached "in the future": that is a clock that went back, not a refresh.
        let refreshedMeanwhile = cachedNow.map { $0.cachedAt > started && $0.cachedAt <= clock() } ?? false
        if let at = cachedNow, at.expiresOn - clock() >= minValid, !forceRefresh || refreshedMeanwhile {
            return SilentResult(account: account, accessToken: at, fromCache: true, notice: selection.notice)
        }
        let signIn = config.signInRemedy(policy: policy.name, loginHint: account.email)
        guard let rt = try store.refreshToken(of: account) else {
            throw B2CError(.interactionRequired, "the account \(account.id) has no refresh token for \(policy.name)", remedy: signIn)
        }
        do {
            return try await refresh(account, with: rt, at: policy, resource: resource, notice: selection.notice)
        } catch let e as B2CError where e.kind == .network && !forceRefresh {
            // The network failed but a token that is still valid is better than nothing (not when a refresh was demanded).
            if let at = cachedNow, at.expiresOn > clock() {
                return SilentResult(
                    account: account, accessToken: at, fromCache: true,
                    notice: [
                        selection.notice, "refresh failed (\(e.message)); serving the cached token, valid for \(at.expiresOn - clock()) s",
                    ]
                    .compactMap { $0 }.joined(separator: "; "))
            }
            throw e
        }
    }

    /// A cached token, unless it does not belong to this configuration (then it is dropped and never served).
    private func servable(_ token: AccessToken?, of account: Account) throws -> AccessToken? {
        guard let token else { return nil }
        guard TokenOwnership.problem(accessToken: token.secret, config: config, tenantID: account.tenantID) == nil else {
            try store.removeAccessToken(of: account, target: token.target)
            return nil
        }
        return token
    }

    /// One refresh with the account's own refresh token at its own policy; the rotated set is stored only if the account
    /// is still there.
    private func refresh(
        _ account: Account, with refreshToken: String, at policy: ResolvedPolicy, resource: [String], notice: String?
    ) async throws -> SilentResult {
        let email = account.email
        let meta = try await metadata.metadata(for: policy.authority, now: clock())
        let grant = TokenGrant.refreshToken(clientID: config.clientID, refreshToken: refreshToken, scope: ScopeSet.userRequest(resource))
        let response: TokenResponse
        do {
            response = try await endpoint.redeem(grant, at: meta.tokenEndpoint, config: config, policy: policy.name, loginHint: email)
        } catch let e as B2CError where e.kind == .interactionRequired || TenantCodes.isAccountState(e.tenantCode) {
            // Said by `accounts` until a refresh or sign-in works: the token is still held, but the tenant refused it (a
            // disabled account's too: enabled again, the same token works).
            try? store.recordRefreshRefusal(of: account, TenantCodes.meaning(ofRefusal: e.tenantCode))
            throw e
        }
        var set = try await tokenSets.tokenSet(
            response, authority: policy.authority, metadata: meta, nonce: nil, requestedResource: resource, now: clock(),
            previous: account)
        guard set.account.id == account.id else {
            throw B2CError(
                .failed, "the refresh for \(account.id) returned tokens for another account (\(set.account.id)); nothing was stored")
        }
        if set.refreshToken == nil { set.refreshToken = refreshToken }
        // Only if the account is still there: a sign-out by another process during the refresh wins.
        guard try store.save(set, makeCurrent: false, now: clock(), onlyIfPresent: true) else {
            throw B2CError(
                .interactionRequired, "the account \(account.id) was signed out while its token was being refreshed; nothing was stored",
                remedy: config.signInRemedy(policy: policy.name, loginHint: email))
        }
        guard let at = set.accessToken else {
            throw B2CError(
                .failed, "the refresh returned no access token for \(resource.isEmpty ? "(no scopes)" : resource.joined(separator: " "))")
        }
        return SilentResult(account: set.account, accessToken: at, fromCache: false, notice: notice)
    }
}
