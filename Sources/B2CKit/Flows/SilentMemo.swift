import Synchronization

/// What this client's silent token answered lately, kept in memory: the same question (policy, account, scopes) gets the
/// same cached token again without reading or decrypting the store, while the store's generation has not moved (no
/// account or current account changed, here or in another process: a sign-in, refresh, switch or sign-out moves it)
/// and the token still has the margin asked for. Only quiet cache hits are kept; a forced refresh never reads it.
final class SilentMemo: Sendable {
    struct Entry {
        var generation: Int
        var result: SilentResult
    }

    private let entries = Mutex<[String: Entry]>([:])
    /// Enough for the questions one program asks; past it the memo starts over.
    static let capacity = 64

    static func key(policy: String?, selector: String?, scopes: [String]) -> String {
        ([policy ?? "", selector ?? ""] + scopes).joined(separator: "\0")
    }

    /// The answer kept for `key`, if it still holds.
    func answer(_ key: String, store: TokenStore, now: Int, minValid: Int) -> SilentResult? {
        guard let entry = entries.withLock({ $0[key] }), entry.result.accessToken.expiresOn - now >= minValid,
            (try? store.generation()) == entry.generation
        else { return nil }
        return entry.result
    }

    /// Keeps a quiet cache hit, under the generation read before it was answered.
    func remember(_ key: String, _ result: SilentResult, generation: Int) {
        guard result.fromCache, result.notice == nil else { return }
        entries.withLock {
            if $0.count >= Self.capacity { $0.removeAll() }
            $0[key] = Entry(generation: generation, result: result)
        }
    }
}
