import Crypto
import Foundation

/// The store's cross-process locks: a refresh (or an app token's fetch) is single-flight across processes. A flow takes
/// the lock, reads the store again, and asks the tenant only if the token is still needed.
extension TokenStore {
    /// Held while one account's refresh runs.
    func refreshLock(for account: Account, timeoutSeconds: Int) throws -> FileLock {
        try lock("\(account.environment) \(account.clientID) \(account.id)", timeoutSeconds: timeoutSeconds)
    }

    /// Held while one app token (per scope and resource) is fetched.
    func appTokenLock(scope: AccountScope, resource: String, timeoutSeconds: Int) throws -> FileLock {
        try lock("app \(scope.environment) \(scope.clientID) \(resource.lowercased())", timeoutSeconds: timeoutSeconds)
    }

    /// A lock file under the store's `locks/` directory, named by a hash of `key`. Bounded by `timeoutSeconds` (the HTTP
    /// timeout): a holder that is stopped or stuck is named instead of waited on forever.
    private func lock(_ key: String, timeoutSeconds: Int) throws -> FileLock {
        let lockDir = directory.appendingPathComponent("locks")
        // mkdir(2) itself: the store's directory exists, and an existing `locks/` (EEXIST) is the usual answer. Foundation's
        // createDirectory walked the path and its attributes first, a share of every refresh (bench/README.md, item 3).
        _ = mkdir(lockDir.path, 0o700)
        let lockName = Base64URL.encode(Data(SHA256.hash(data: Data(key.utf8)))).prefix(32)
        do {
            return try FileLock(path: lockDir.appendingPathComponent("\(lockName).lock").path, timeoutSeconds: Double(timeoutSeconds))
        } catch let e as LockTimeout {
            throw B2CError(.network, e.description)
        }
    }
}
