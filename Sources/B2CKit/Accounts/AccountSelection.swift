import Foundation

/// Which account a command acts on, for one policy (DESIGN §5):
/// exact policy match (account id *and* `tfp`/`acr`), then `--account`, then the policy's current account,
/// then the only account; otherwise an "ambiguous account" error listing the candidates.
public enum AccountSelection {
    /// True when the account belongs to this policy: its id is `<oid>-<policy lower>.<tenant>` and its id token names the policy.
    /// A native-auth account (External ID) has the id `<oid>.<tenant>` and no policy claim; `policy` is the configuration's name.
    public static func matches(_ a: Account, policy: String) -> Bool {
        matches(
            accountID: a.id, oid: a.oid, tenantID: a.tenantID, accountPolicy: a.policy,
            claimPolicy: a.claims["tfp"]?.stringValue ?? a.claims["acr"]?.stringValue,
            hasPolicyClaim: a.claims["tfp"] != nil || a.claims["acr"] != nil, policy: policy)
    }

    /// The same rule on the parts of an account: `claimPolicy` is its id token's `tfp`, else `acr`, as a string (nil
    /// when neither is one); `hasPolicyClaim` says whether either claim is there at all (a native-auth account has none).
    public static func matches(
        accountID: String, oid: String, tenantID: String, accountPolicy: String, claimPolicy: String?,
        hasPolicyClaim: Bool, policy: String
    ) -> Bool {
        if accountID == "\(oid).\(tenantID)".lowercased() {
            return accountPolicy.caseInsensitiveCompare(policy) == .orderedSame && !hasPolicyClaim
        }
        guard accountID == "\(oid)-\(policy.lowercased()).\(tenantID)".lowercased() else { return false }
        return (claimPolicy ?? accountPolicy).caseInsensitiveCompare(policy) == .orderedSame
    }

    /// People and, under each, their accounts (of `policy` when given, chosen by the same rule as `select`), in one
    /// scope or (nil) the whole store.
    public static func list(store: TokenStore, scope: AccountScope?, policy: String?) throws -> [ListedPerson] {
        var people = try store.listing(scope: scope, policy: policy)
        guard let policy else { return people }
        for i in people.indices {
            people[i].accounts.removeAll {
                !matches(
                    accountID: $0.accountID, oid: $0.oid, tenantID: $0.tenantID, accountPolicy: $0.policy, claimPolicy: $0.claimPolicy,
                    hasPolicyClaim: $0.hasPolicyClaim, policy: policy)
            }
        }
        return people.filter { !$0.accounts.isEmpty }
    }

    /// Accounts a selector names: email, oid or account id; else the local part of an email (`alice`); else a prefix of
    /// the account id or oid.
    public static func filter(_ accounts: [Account], selector: String) -> [Account] {
        let s = selector.lowercased()
        let exact = accounts.filter { $0.id == s || $0.oid == s || $0.email?.lowercased() == s }
        if !exact.isEmpty { return exact }
        if !s.contains("@") {
            let local = accounts.filter { $0.email?.lowercased().split(separator: "@", maxSplits: 1).first.map(String.init) == s }
            if !local.isEmpty { return local }
        }
        return accounts.filter { $0.id.hasPrefix(s) || $0.oid.hasPrefix(s) }
    }

    /// "alice@contoso.com (B2C_1_susi)" lines for messages that say who is signed in.
    static func describe(_ list: [Account]) -> String {
        list.map { "  \($0.email ?? $0.oid)  \($0.policy)  \($0.id)" }.joined(separator: "\n")
    }

    /// The account a selection chose, with what to say (and, by its caller, forget) about a current account signed out
    /// elsewhere.
    public struct Result: Sendable {
        /// The account chosen.
        public var account: Account
        /// Said once when the policy's current account was removed by another process.
        public var notice: String?
        /// The policy's current-account choice that names an account no longer there (removed by another process): the
        /// caller forgets it (`forgetSignedOutCurrent`) once it has said so, so that it is said once.
        public var signedOutCurrent: (scope: AccountScope, policy: String)? = nil

        /// Forgets a current-account choice whose account is gone (the one write a selection leads to, made by its caller).
        public func forgetSignedOutCurrent(in store: TokenStore) throws {
            if let stale = signedOutCurrent { try store.clearCurrent(scope: stale.scope, policy: stale.policy) }
        }
    }

    /// Chooses the account of `policy` within `scope` (DESIGN §5). `signIn` is the remedy when nothing is signed in.
    /// Reads only: a current-account choice whose account is gone is reported in the result, not cleared.
    public static func select(
        policy: String, selector: String?, scope: AccountScope, store: TokenStore,
        signIn: (_ loginHint: String?) -> Remedy
    ) throws -> Result {
        // The common cases read one or a few rows, whatever the number of accounts: the current account, or the
        // accounts a selector can name. Everything else (and a narrowed search that finds nothing) reads the policy's
        // accounts; the rules are the same either way.
        if selector == nil, let a = try store.currentAccount(scope: scope, policy: policy), matches(a, policy: policy) {
            return Result(account: a)
        }
        if let selector {
            // SQLite folds and compares ASCII only, and the stored claims escape '"' and '\\': other selectors read every account.
            let narrowable = selector.utf8.allSatisfy { $0 < 0x80 && $0 != UInt8(ascii: "\"") && $0 != UInt8(ascii: "\\") }
            var found: [Account] = []
            if narrowable {
                found = filter(
                    try store.accounts(scope: scope, policy: policy, narrowedTo: selector).filter { matches($0, policy: policy) },
                    selector: selector)
            }
            var all: [Account]?
            if found.isEmpty {
                all = try store.accounts(scope: scope, policy: policy).filter { matches($0, policy: policy) }
                found = filter(all!, selector: selector)
            }
            if found.count == 1 { return Result(account: found[0]) }
            if found.isEmpty {
                let signedIn = all ?? []
                throw B2CError(
                    .interactionRequired,
                    "no account matching '\(selector)' is signed in under \(policy)"
                        + (signedIn.isEmpty ? "" : "; signed in under \(policy):\n\(describe(signedIn))"),
                    remedy: signIn(selector.contains("@") ? selector : "<email>"))
            }
            throw B2CError(
                .usage, "'\(selector)' matches several accounts under \(policy):\n\(describe(found))",
                remedy: .chooseAccount(policy: policy, longerSelector: true))
        }
        let candidates = try store.accounts(scope: scope, policy: policy).filter { matches($0, policy: policy) }
        var notice: String?
        if let current = try store.currentAccountID(scope: scope, policy: policy) {
            if let a = candidates.first(where: { $0.id == current }) { return Result(account: a) }
            notice = "the account \(current) has been signed out"
        }
        if candidates.count == 1 {
            return Result(account: candidates[0], notice: notice, signedOutCurrent: notice == nil ? nil : (scope, policy))
        }
        if candidates.isEmpty {
            throw B2CError(
                .interactionRequired, (notice.map { $0 + "; " } ?? "") + "no account is signed in under \(policy)", remedy: signIn(nil))
        }
        throw B2CError(
            .usage,
            (notice.map { $0 + "; " } ?? "")
                + "several accounts are signed in under \(policy) and none is current:\n\(describe(candidates))",
            remedy: .chooseAccount(policy: policy, longerSelector: false))
    }
}
