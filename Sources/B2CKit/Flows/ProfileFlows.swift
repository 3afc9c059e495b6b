import Foundation

/// What an edit-profile run did: the account of the edit-profile policy, and the person's profile before and after.
public struct ProfileResult: Sendable {
    /// The account the edit-profile policy signed in.
    public var account: Account
    /// The person's profile as stored before the edit; nil when none was stored.
    public var before: Identity?
    /// The person's profile as stored after it.
    public var after: Identity?
}

/// The profile flows (edit profile, password reset) and the person they act on.
struct ProfileFlows: Sendable {
    let config: ClientConfiguration
    let store: TokenStore
    let signIn: InteractiveSignIn

    /// Runs the edit-profile policy for the selected person (login hint, SSO session), stores that policy's account,
    /// and updates the person's profile, which every policy's listing shows.
    func editProfile(selector: String?, policyName: String?, options: InteractiveOptions) async throws -> ProfileResult {
        let person = try selectPerson(selector: selector)
        let policy = try config.policy(policyName, role: .editProfile)
        let before = try store.identity(of: person)
        var opts = options
        opts.loginHint = opts.loginHint ?? person.email
        opts.expectedPerson = person
        let account = try await signIn.authorizeAndRedeem(
            try config.resolve(policy: policy.name), options: opts, deadline: .now + .seconds(options.timeoutSeconds))
        return ProfileResult(account: account, before: before, after: try store.identity(of: account))
    }

    /// Runs the password-reset policy for the selected person. The tenant revokes the person's refresh tokens on a reset,
    /// so their other accounts keep their place in the list but need a new sign-in (`token` says which command).
    func resetPassword(selector: String?, policyName: String?, options: InteractiveOptions) async throws -> (Account, [Account]) {
        let person = try? selectPerson(selector: selector)
        if person == nil, let selector { _ = try selectPerson(selector: selector) }  // an explicit selector must match
        let policy = try config.policy(policyName, role: .resetPassword)
        var opts = options
        opts.loginHint = opts.loginHint ?? person?.email
        let account = try await signIn.authorizeAndRedeem(
            try config.resolve(policy: policy.name), options: opts, deadline: .now + .seconds(options.timeoutSeconds))
        return (account, try store.forgetRevokedGrants(of: account))
    }

    /// The person a command about "me" acts on: `selector` (email, oid, account id, prefix) across every policy,
    /// else the current account of the default sign-in policy, else the only person in the store.
    func selectPerson(selector: String?) throws -> Account {
        let all = try config.scopes.flatMap { try store.accounts(scope: $0) }
        func people(_ list: [Account]) -> [String: [Account]] { Dictionary(grouping: list) { "\($0.tenantID)/\($0.oid)" } }
        if let selector {
            let found = AccountSelection.filter(all, selector: selector)
            if people(found).count == 1 { return preferred(found) }
            if found.isEmpty {
                let signedIn = byPerson(all)
                throw B2CError(
                    .interactionRequired,
                    "no signed-in account matches '\(selector)'" + (signedIn.isEmpty ? "" : "; signed in:\n\(signedIn)"),
                    remedy: config.signInRemedy(policy: try config.defaultPolicy().name, loginHint: selector.contains("@") ? selector : nil)
                )
            }
            throw B2CError(
                .usage, "'\(selector)' matches several people:\n" + byPerson(found), remedy: .choosePerson(ambiguousSelector: true))
        }
        if let p = try? config.resolve(policy: nil), let current = try store.currentAccountID(scope: p.scope, policy: p.name),
            let a = all.first(where: { $0.id == current && $0.environment == p.scope.environment })
        {
            return a
        }
        if people(all).count == 1 { return preferred(all) }
        if all.isEmpty {
            throw B2CError(
                .interactionRequired, "no account is signed in", remedy: config.signInRemedy(policy: try config.defaultPolicy().name))
        }
        throw B2CError(
            .usage, "several people are signed in and none is current:\n" + byPerson(all), remedy: .choosePerson(ambiguousSelector: false))
    }

    /// One line per person: "  alice@contoso.com".
    private func byPerson(_ accounts: [Account]) -> String {
        Dictionary(grouping: accounts) { "\($0.tenantID)/\($0.oid)" }.values.map { "  \($0[0].email ?? $0[0].oid)" }
            .sorted()
            .joined(separator: "\n")
    }

    /// Among one person's accounts, the one of the default sign-in policy if there is one.
    private func preferred(_ accounts: [Account]) -> Account {
        let def = try? config.defaultPolicy().name
        return accounts.first { $0.policy.caseInsensitiveCompare(def ?? "") == .orderedSame } ?? accounts[0]
    }
}

extension TokenStore {
    /// After a password reset: the person's other accounts lose their (revoked) tokens locally too. Returns those accounts.
    @discardableResult
    func forgetRevokedGrants(of account: Account) throws -> [Account] {
        let ids = try dropTokens(scope: account.scope, tenantID: account.tenantID, oid: account.oid, except: account.id)
        return try accounts(scope: account.scope).filter { ids.contains($0.id) }
    }
}
