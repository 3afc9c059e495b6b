import Crypto
import Foundation

public struct SilentResult: Sendable {
    public var account: Account
    public var accessToken: AccessToken
    public var fromCache: Bool
    public var notice: String?
}

extension B2CClient {
    /// Cache hit with at least `minValid` seconds left, else a refresh with the account's own refresh token
    /// (single-flight across processes), else "interaction required". Only accounts and tokens of this configuration's
    /// scope are considered, and a cached token that does not belong to it is never served.
    public func acquireTokenSilently(
        policyName: String?, selector: String?, scopes: [String], minValid: Int,
        forceRefresh: Bool
    ) async throws -> SilentResult {
        let policy = try target(policyName)
        let selection = try AccountSelection.select(policy: policy.name, selector: selector, scope: policy.scope, store: store) {
            signInRemedy(policy: policy.name, loginHint: $0)
        }
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
        let lock = try refreshLock(for: account)
        defer { withExtendedLifetime(lock) {} }
        let cachedNow = try servable(store.accessToken(of: account, target: target), of: account)
        // A forced refresh still serves a token another process refreshed while this one waited for the lock (cached since
        // `started`), but never one cached "in the future": that is a clock that went back, not a refresh.
        let refreshedMeanwhile = cachedNow.map { $0.cachedAt > started && $0.cachedAt <= clock() } ?? false
        if let at = cachedNow, at.expiresOn - clock() >= minValid, !forceRefresh || refreshedMeanwhile {
            return SilentResult(account: account, accessToken: at, fromCache: true, notice: selection.notice)
        }
        let signIn = signInRemedy(policy: policy.name, loginHint: AccountSelection.email(account))
        guard let rt = try store.refreshToken(of: account) else {
            throw B2CError(.interactionRequired, "the account \(account.id) has no refresh token for \(policy.name)", remedy: signIn)
        }
        do {
            return try await refresh(account, with: rt, target: policy, resource: resource, notice: selection.notice)
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

    /// A refused refresh in one or two words, from the tenant's code (reference: B2C's invalid_grant codes).
    static func refusal(_ code: String?) -> String {
        switch code {
        case "AADB2C90129": "revoked"
        case "AADB2C90080": "expired"
        case "AADB2C90128": "account deleted"
        case "AADB2C90088": "other policy"
        case "AADB2C90090": "not valid"
        case "AADB2C90077", "interaction_required", "login_required", "consent_required": "sign-in needed"
        default: "refused"
        }
    }

    /// The cross-process lock that makes an account's refresh single-flight.
    private func refreshLock(for account: Account) throws -> FileLock {
        try storeLock("\(account.environment) \(account.clientID) \(account.id)")
    }

    /// A lock file under the store's `locks/` directory, named by a hash of `key`.
    func storeLock(_ key: String) throws -> FileLock {
        let lockDir = store.directory.appendingPathComponent("locks")
        try? FileManager.default.createDirectory(at: lockDir, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let lockName = Base64URL.encode(Data(SHA256.hash(data: Data(key.utf8)))).prefix(32)
        // Bounded by the HTTP timeout: a holder that is stopped or stuck is named instead of waited on forever.
        do {
            return try FileLock(
                path: lockDir.appendingPathComponent("\(lockName).lock").path, timeoutSeconds: Double(transport.timeoutSeconds))
        } catch let e as LockTimeout {
            throw B2CError(.network, e.description)
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
        _ account: Account, with refreshToken: String, target policy: Target, resource: [String],
        notice: String?
    ) async throws -> SilentResult {
        let signIn = signInRemedy(policy: policy.name, loginHint: AccountSelection.email(account))
        let meta = try await metadata.metadata(for: policy.authority, now: clock())
        let grant = TokenGrant.refreshToken(clientID: config.clientID, refreshToken: refreshToken, scope: ScopeSet.userRequest(resource))
        let response: TokenResponse
        do {
            response = try await tokenRequest(meta.tokenEndpoint, grant, policy: policy.name, loginHint: AccountSelection.email(account))
        } catch let e as B2CError where e.kind == .interactionRequired {
            // Said by `accounts` until a refresh or sign-in works: the token is still held, but the tenant refused it.
            try? store.recordRefreshRefusal(of: account, Self.refusal(e.tenantCode))
            throw e
        }
        var set = try await tokenSet(
            response, authority: policy.authority, metadata: meta, nonce: nil, requestedResource: resource, now: clock(),
            previous: account)
        guard set.account.id == account.id else {
            throw B2CError(
                .failed, "the refresh for \(account.id) returned tokens for another account (\(set.account.id)); nothing was stored")
        }
        try checkOwnership(set, authority: policy.authority)
        if set.refreshToken == nil { set.refreshToken = refreshToken }
        // Only if the account is still there: a sign-out by another process during the refresh wins.
        guard try store.save(set, makeCurrent: false, now: clock(), onlyIfPresent: true) else {
            throw B2CError(
                .interactionRequired, "the account \(account.id) was signed out while its token was being refreshed; nothing was stored",
                remedy: signIn)
        }
        guard let at = set.accessToken else {
            throw B2CError(
                .failed, "the refresh returned no access token for \(resource.isEmpty ? "(no scopes)" : resource.joined(separator: " "))")
        }
        return SilentResult(account: set.account, accessToken: at, fromCache: false, notice: notice)
    }
}
