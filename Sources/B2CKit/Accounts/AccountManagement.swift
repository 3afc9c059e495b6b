import Foundation

/// Reading and choosing accounts within the configuration's scopes: the listing, `switch`, and the selected account with
/// its person.
extension B2CClient {
    /// People and their accounts in this configuration's scopes, of one policy (or the native-auth name) when given.
    public func listAccounts(policy: String?) throws -> [ListedPerson] {
        guard let policy else { return try config.scopes.flatMap { try AccountSelection.list(store: store, scope: $0, policy: nil) } }
        let t = try config.resolve(policy: policy)
        return try AccountSelection.list(store: store, scope: t.scope, policy: t.name)
    }

    /// This configuration's app-only tokens (the app's own, per resource): listed as an application, not a person.
    public func listApplications() throws -> [AppToken] {
        try config.scopes.flatMap { try store.appTokens(scope: $0) }
    }

    /// The selected account of a policy and its person, with the notice to show once when the current account was
    /// signed out elsewhere (said once: that choice is then forgotten).
    public func selectedAccount(policy: String?, selector: String?) throws -> (account: Account, person: Identity?, notice: String?) {
        let t = try config.resolve(policy: policy)
        let sel = try AccountSelection.select(policy: t.name, selector: selector, scope: t.scope, store: store) {
            config.signInRemedy(policy: t.name, loginHint: $0)
        }
        try sel.forgetSignedOutCurrent(in: store)
        return (sel.account, try store.identity(of: sel.account), sel.notice)
    }

    /// Makes an account the current one of its policy (by the same selection rules as every command).
    public func switchAccount(policy: String?, selector: String) throws -> Account {
        let account = try selectedAccount(policy: policy, selector: selector).account
        try store.setCurrent(account)
        return account
    }

    /// Every account of this configuration's scopes.
    public func accountsInScope() throws -> [Account] { try config.scopes.flatMap { try store.accounts(scope: $0) } }

    /// Where the store is.
    public var storePath: String { store.path }
    /// How the store keeps tokens (encrypted or plaintext, the key's source).
    public func storageStatus() throws -> StorageStatus { try store.storageStatus() }

    /// The accounts a password reset left without tokens, with the command-neutral remedy for each.
    public func signInRemedies(for accounts: [Account]) -> [Remedy] {
        accounts.map { config.signInRemedy(policy: $0.policy, loginHint: $0.email) }
    }
}

/// The whole store, without a configuration: what `accounts`, `signout --all` and `device` act on when no
/// configuration is found, grouped by scope (authority host and client id).
public struct StoreOverview: Sendable {
    /// The store listed and acted on.
    public let store: TokenStore

    /// An overview of `store`, whatever configurations wrote to it.
    public init(store: TokenStore) { self.store = store }

    /// Every scope's people, in scope order.
    public func people(policy: String?) throws -> [(scope: AccountScope, people: [ListedPerson])] {
        let all = try AccountSelection.list(store: store, scope: nil, policy: policy)
        var groups: [(scope: AccountScope, people: [ListedPerson])] = []
        for person in all {
            let scope = AccountScope(environment: person.environment, clientID: person.clientID)
            if groups.last?.scope == scope { groups[groups.count - 1].people.append(person) } else { groups.append((scope, [person])) }
        }
        return groups
    }

    /// Every app-only token of the store (listed by scope; their secrets are never shown).
    public func applications() throws -> [AppToken] { try store.appTokens(scope: nil) }

    /// Where the store is.
    public var path: String { store.path }
    /// How the store keeps tokens (encrypted or plaintext, the key's source).
    public func storageStatus() throws -> StorageStatus { try store.storageStatus() }

    /// Every account of the store, of every scope.
    public func accounts() throws -> [Account] { try store.accounts(scope: nil) }

    /// Every account and every app token of the store.
    public func signOutEverything() throws -> (accounts: [Account], appTokens: Int) {
        (try store.removeAll(scope: nil), try store.removeAppTokens(scope: nil))
    }
}
