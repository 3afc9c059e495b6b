import Foundation

/// Which account a command acts on, for one policy (DESIGN §5):
/// exact policy match (account id *and* `tfp`/`acr`), then `--account`, then the policy's current account,
/// then the only account; otherwise an "ambiguous account" error listing the candidates.
public enum AccountSelection {
    /// True when the account belongs to this policy: its id is `<oid>-<policy lower>.<tenant>` and its id token names the policy.
    /// A native-auth account (External ID) has the id `<oid>.<tenant>` and no policy claim; `policy` is the configuration's name.
    public static func matches(_ a: Account, policy: String) -> Bool {
        if a.id == "\(a.oid).\(a.tenantID)".lowercased() {
            return a.policy.caseInsensitiveCompare(policy) == .orderedSame && a.claims["tfp"] == nil && a.claims["acr"] == nil
        }
        guard a.id == "\(a.oid)-\(policy.lowercased()).\(a.tenantID)".lowercased() else { return false }
        let claim = a.claims["tfp"]?.stringValue ?? a.claims["acr"]?.stringValue ?? a.policy
        return claim.caseInsensitiveCompare(policy) == .orderedSame
    }

    public static func email(_ a: Account) -> String? {
        a.claims["emails"]?.arrayValue?.first?.stringValue ?? a.claims["email"]?.stringValue ?? a.claims["preferred_username"]?.stringValue
    }

    /// Accounts a selector names: email, oid, account id, or a unique prefix of the account id or oid.
    public static func filter(_ accounts: [Account], selector: String) -> [Account] {
        let s = selector.lowercased()
        let exact = accounts.filter { $0.id == s || $0.oid == s || email($0)?.lowercased() == s }
        if !exact.isEmpty { return exact }
        return accounts.filter { $0.id.hasPrefix(s) || $0.oid.hasPrefix(s) }
    }

    public struct Result: Sendable {
        public var account: Account
        /// Said once when the policy's current account was removed by another process.
        public var notice: String?
    }

    public static func select(policy: String, selector: String?, store: TokenStore, signInCommand: String) throws -> Result {
        let candidates = try store.accounts(policy: policy).filter { matches($0, policy: policy) }
        func describe(_ list: [Account]) -> String {
            list.map { "  \($0.id)  \(email($0) ?? "")" }.joined(separator: "\n")
        }
        if let selector {
            let found = filter(candidates, selector: selector)
            if found.count == 1 { return Result(account: found[0]) }
            if found.isEmpty {
                throw B2CError(.interactionRequired, "no account matching '\(selector)' is signed in under \(policy)",
                               fix: "\(signInCommand) --login-hint \(selector.contains("@") ? selector : "<email>")")
            }
            throw B2CError(.usage, "'\(selector)' matches several accounts under \(policy):\n\(describe(found))\nGive a longer --account (email, oid or account id).")
        }
        var notice: String?
        if let current = try store.currentAccountID(policy: policy) {
            if let a = candidates.first(where: { $0.id == current }) { return Result(account: a) }
            notice = "the account \(current) has been signed out"
            try store.clearCurrent(policy: policy)
        }
        if candidates.count == 1 { return Result(account: candidates[0], notice: notice) }
        if candidates.isEmpty {
            throw B2CError(.interactionRequired, (notice.map { $0 + "; " } ?? "") + "no account is signed in under \(policy)", fix: signInCommand)
        }
        throw B2CError(.usage, (notice.map { $0 + "; " } ?? "") + "several accounts are signed in under \(policy) and none is current:\n\(describe(candidates))\nChoose one with --account, or make one current with `b2c switch --policy \(policy) --account <account>`.")
    }
}
