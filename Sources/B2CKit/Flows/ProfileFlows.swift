import Foundation

/// The profile flows (edit profile, password reset) and the person they act on.
extension B2CClient {
    /// The person a command about "me" acts on: `--account` (email, oid, account id, prefix) across every policy,
    /// else the current account of the default sign-in policy, else the only person in the store.
    public func selectPerson(selector: String?) throws -> Account {
        let all = try accountsInScope()
        func people(_ list: [Account]) -> [String: [Account]] { Dictionary(grouping: list) { "\($0.tenantID)/\($0.oid)" } }
        if let selector {
            let found = AccountSelection.filter(all, selector: selector)
            let byPerson = people(found)
            if byPerson.count == 1 { return preferred(found) }
            if found.isEmpty {
                let signedIn = self.byPerson(all)
                throw B2CError(
                    .interactionRequired,
                    "no signed-in account matches '\(selector)'" + (signedIn.isEmpty ? "" : "; signed in:\n\(signedIn)"),
                    remedy: signInRemedy(policy: try defaultPolicy().name, loginHint: selector.contains("@") ? selector : nil))
            }
            throw B2CError(
                .usage, "'\(selector)' matches several people:\n" + self.byPerson(found), remedy: .choosePerson(ambiguousSelector: true))
        }
        if let p = try? target(nil), let current = try store.currentAccountID(scope: p.scope, policy: p.name),
            let a = all.first(where: { $0.id == current && $0.environment == p.scope.environment })
        {
            return a
        }
        if people(all).count == 1 { return preferred(all) }
        if all.isEmpty {
            throw B2CError(.interactionRequired, "no account is signed in", remedy: signInRemedy(policy: try defaultPolicy().name))
        }
        throw B2CError(
            .usage, "several people are signed in and none is current:\n" + byPerson(all), remedy: .choosePerson(ambiguousSelector: false))
    }

    /// One line per person: "  alice@contoso.com".
    private func byPerson(_ accounts: [Account]) -> String {
        Dictionary(grouping: accounts) { "\($0.tenantID)/\($0.oid)" }.values.map { "  \(AccountSelection.email($0[0]) ?? $0[0].oid)" }
            .sorted()
            .joined(separator: "\n")
    }

    /// Among one person's accounts, the one of the default sign-in policy if there is one.
    private func preferred(_ accounts: [Account]) -> Account {
        let def = try? defaultPolicy().name
        return accounts.first { $0.policy.caseInsensitiveCompare(def ?? "") == .orderedSame } ?? accounts[0]
    }

    public struct ProfileResult: Sendable {
        public var account: Account
        public var before: Identity?
        public var after: Identity?
    }

    /// Runs the edit-profile policy for the selected person (login hint, SSO session), stores that policy's account,
    /// and updates the person's profile, which every policy's listing shows.
    public func editProfile(
        selector: String?, policyName: String?, options: InteractiveOptions, ui: InteractionUI
    ) async throws -> ProfileResult {
        let person = try selectPerson(selector: selector)
        let policy = try flowPolicy(policyName, role: .editProfile)
        let before = try store.identity(of: person)
        var opts = options
        opts.loginHint = opts.loginHint ?? AccountSelection.email(person)
        opts.expectedPerson = person
        let account = try await authorizeAndRedeem(
            try target(policy.name), options: opts, deadline: .now + .seconds(options.timeoutSeconds), ui: ui)
        return ProfileResult(account: account, before: before, after: try store.identity(of: account))
    }

    /// Runs the password-reset policy for the selected person. The tenant revokes the person's refresh tokens on a reset,
    /// so their other accounts keep their place in the list but need a new sign-in (`token` says which command).
    public func resetPassword(
        selector: String?, policyName: String?, options: InteractiveOptions, ui: InteractionUI
    ) async throws -> (Account, [Account]) {
        let person = try? selectPerson(selector: selector)
        if person == nil, let selector { _ = try selectPerson(selector: selector) }  // an explicit selector must match
        let policy = try flowPolicy(policyName, role: .resetPassword)
        var opts = options
        opts.loginHint = opts.loginHint ?? person.flatMap(AccountSelection.email)
        let account = try await authorizeAndRedeem(
            try target(policy.name), options: opts, deadline: .now + .seconds(options.timeoutSeconds), ui: ui)
        return (account, try forgetRevokedGrants(of: account))
    }

    /// After a reset: the person's other accounts lose their (revoked) tokens locally too.
    @discardableResult
    func forgetRevokedGrants(of account: Account) throws -> [Account] {
        let ids = try store.dropTokens(scope: account.scope, tenantID: account.tenantID, oid: account.oid, except: account.id)
        return try store.accounts(scope: account.scope).filter { ids.contains($0.id) }
    }

    func flowPolicy(_ name: String?, role: ClientConfiguration.Role) throws -> ClientConfiguration.Policy {
        if let name {
            let p = try policy(name)
            guard p.role == role else {
                throw B2CError(.usage, "\(p.name) has role \(p.role.rawValue) in \(config.source), not \(role.rawValue)")
            }
            return p
        }
        guard let p = config.policies(role: role).first else {
            throw B2CError(.configuration, "\(config.source) has no policy of role \(role.rawValue); add one to \"policies\"")
        }
        return p
    }
}
