import B2CEmulator
import Foundation
import Testing

@testable import B2CKit

/// Each flow's rules, run in-process against the in-memory tenant over loopback HTTP.
@Suite("Flows, in process")
struct FlowTests {
    /// What a silent request should come to.
    enum Outcome: Sendable, Equatable {
        case cached
        case refreshed
        /// Refused: the kind, the tenant's code, and what `accounts` then says of the refresh token.
        case refused(B2CError.Kind, code: String, refusal: String)
    }

    struct SilentCase: Sendable, CustomTestStringConvertible {
        var name: String
        var minValid = 300
        var forceRefresh = false
        var before: @Sendable (LocalTenant, Account) async throws -> Void = { _, _ in }
        var expected: Outcome
        var testDescription: String { name }
    }

    static let silentCases: [SilentCase] = [
        SilentCase(name: "a fresh token comes from the cache", expected: .cached),
        SilentCase(name: "a token with less time left than asked is refreshed", minValid: 7200, expected: .refreshed),
        SilentCase(name: "a forced refresh asks the tenant", forceRefresh: true, expected: .refreshed),
        SilentCase(name: "an hour later the token is refreshed", before: { t, _ in try t.advance(3700) }, expected: .refreshed),
        SilentCase(
            name: "a revoked grant needs a sign-in (AADB2C90129)", forceRefresh: true,
            before: { t, a in _ = try t.emulator.store.revokeGrants(oid: a.oid, now: t.emulator.clock.now()) },
            expected: .refused(.interactionRequired, code: "AADB2C90129", refusal: "revoked")),
        SilentCase(
            name: "a refresh token of another policy is refused (AADB2C90088)", forceRefresh: true,
            before: { t, a in try await t.swapInRefreshTokenOfAnotherPolicy(for: a) },
            expected: .refused(.interactionRequired, code: "AADB2C90088", refusal: "other policy")),
        SilentCase(
            name: "a refresh token past its lifetime needs a sign-in (AADB2C90080)", before: { t, _ in try t.advance(15 * 86_400) },
            expected: .refused(.interactionRequired, code: "AADB2C90080", refusal: "expired")),
    ]

    @Test(arguments: silentCases)
    func silentToken(_ c: SilentCase) async throws {
        try await LocalTenant.with { t in
            let account = try await t.signInWithPassword()
            try await c.before(t, account)
            let refreshesBefore = try t.grants("refresh_token")
            let outcome: Outcome
            do {
                let r = try await t.withClient {
                    try await $0.acquireTokenSilently(
                        policyName: "B2C_1_ROPC_Auth", selector: nil, scopes: t.helloScopes, minValid: c.minValid,
                        forceRefresh: c.forceRefresh)
                }
                #expect(r.account.id == account.id)
                outcome = r.fromCache ? .cached : .refreshed
            } catch let e as B2CError {
                let listed = try t.withClientSync { try $0.listAccounts(policy: "B2C_1_ROPC_Auth") }
                outcome = .refused(e.kind, code: e.tenantCode ?? "-", refusal: listed.first?.accounts.first?.refreshRefused ?? "-")
                #expect(e.remedy == .signIn(policy: "B2C_1_ROPC_Auth", method: .password, loginHint: alice.email))
            }
            #expect(outcome == c.expected)
            #expect(try t.grants("refresh_token") - refreshesBefore == (c.expected == .cached ? 0 : 1))
        }
    }

    @Test("two callers whose token expired cause one refresh, and both get its token")
    func twoCallersOneRefresh() async throws {
        try await LocalTenant.with { t in
            try await t.signInWithPassword()
            try t.advance(3700)
            let before = try t.grants("refresh_token")
            let (one, two) = try await (t.silently(), t.silently())
            #expect(try t.grants("refresh_token") - before == 1)
            #expect(one.accessToken.secret == two.accessToken.secret)
            #expect([one.fromCache, two.fromCache].sorted { !$0 && $1 } == [false, true])
        }
    }

    @Test("the client's clock a little off the tenant's still signs in, and expiry is on the client's clock", arguments: [-120, 120])
    func clockSkew(_ seconds: Int) async throws {
        try await LocalTenant.with { t in
            t.clientOffset.withLockedValue { $0 = seconds }
            let before = t.clock()
            try await t.signInWithPassword()
            let after = t.clock()
            let r = try await t.silently()
            #expect(r.fromCache)
            // now + expires_in on the client's clock (as MSAL does), not the tenant's `exp`.
            #expect((before + 3600...after + 3600).contains(r.accessToken.expiresOn))
        }
    }

    @Test("a wrong password is refused with the tenant's code and nothing is stored (AADB2C90225)")
    func wrongPassword() async throws {
        try await LocalTenant.with { t in
            let e = try await #require(throws: B2CError.self) {
                try await t.signInWithPassword(.init(email: alice.email, password: "not-her-password"))
            }
            #expect(e.kind == .interactionRequired && e.tenantCode == "AADB2C90225")
            #expect(e.remedy == .retryPasswordOrBrowser(policy: "B2C_1_susi"))
            #expect(try t.withClientSync { try $0.accountsInScope() }.isEmpty)
        }
    }

    @Test("a browser sign-in stores the account as its policy's current one")
    func browserSignIn() async throws {
        try await LocalTenant.with { t in
            let ui = try t.browser(alice)
            let account = try await t.withClient {
                try await $0.signInInteractively(policyName: nil, options: InteractiveOptions(timeoutSeconds: 20), ui: ui)
            }
            #expect(ui.failure.withLockedValue { $0 } == nil)
            #expect(account.policy == "B2C_1_susi" && account.id.hasSuffix("-b2c_1_susi.\(t.emulator.tenantID)"))
            let selected = try t.withClientSync { try $0.selectedAccount(policy: nil, selector: nil) }
            #expect(selected.account.id == account.id && selected.person?.name == "Alice Example")
        }
    }

    @Test("'Forgot your password?' (AADB2C90118) runs the reset policy and resumes the sign-in with the new password")
    func forgotPasswordDetour() async throws {
        try await LocalTenant.with { t in
            var forgetful = alice
            forgetful.action = .forgot
            forgetful.newPassword = "Alice-new-2026!"
            let ui = try t.browser(forgetful)
            let account = try await t.withClient {
                try await $0.signInInteractively(policyName: "B2C_1_susi", options: InteractiveOptions(timeoutSeconds: 30), ui: ui)
            }
            #expect(account.policy == "B2C_1_susi")
            #expect(t.progress.withLockedValue { $0 }.contains { $0.hasPrefix("Password reset requested: running B2C_1_reset") })
            #expect(try t.grants("authorization_code") == 2)
            try await t.signInWithPassword(.init(email: alice.email, password: "Alice-new-2026!"))
        }
    }

    @Test("cancel on the page (AADB2C90091) is a cancellation and stores nothing")
    func cancelled() async throws {
        try await LocalTenant.with { t in
            var quitter = alice
            quitter.action = .cancel
            let ui = try t.browser(quitter)
            let e = try await #require(throws: B2CError.self) {
                try await t.withClient {
                    try await $0.signInInteractively(policyName: nil, options: InteractiveOptions(timeoutSeconds: 20), ui: ui)
                }
            }
            #expect(e.kind == .cancelled && e.tenantCode == "AADB2C90091")
            #expect(try t.withClientSync { try $0.accountsInScope() }.isEmpty)
        }
    }

    @Test("edit profile acts on the selected person and keeps their account id")
    func editProfile() async throws {
        try await LocalTenant.with { t in
            let signedIn = try await t.signInWithPassword()
            var renamed = alice
            renamed.displayName = "Alice Renamed"
            let ui = try t.browser(renamed)
            let r = try await t.withClient {
                try await $0.editProfile(selector: alice.email, policyName: nil, options: InteractiveOptions(timeoutSeconds: 20), ui: ui)
            }
            #expect(r.account.oid == signedIn.oid && r.account.policy == "B2C_1_edit_profile")
            #expect(r.before?.name == "Alice Example" && r.after?.name == "Alice Renamed")
        }
    }

    @Test("a password reset signs the person in with the new password and drops the tokens of their other accounts")
    func resetPassword() async throws {
        try await LocalTenant.with { t in
            let ropc = try await t.signInWithPassword()
            var resetting = alice
            resetting.newPassword = "Alice-reset-2026!"
            let ui = try t.browser(resetting)
            let (account, others) = try await t.withClient {
                try await $0.resetPassword(selector: alice.email, policyName: nil, options: InteractiveOptions(timeoutSeconds: 20), ui: ui)
            }
            #expect(account.policy == "B2C_1_reset" && account.oid == ropc.oid)
            #expect(others.map(\.id) == [ropc.id], "the ROPC account keeps its place but not its revoked tokens")
            let e = try await #require(throws: B2CError.self) { try await t.silently() }
            #expect(e.kind == .interactionRequired)
            try await t.signInWithPassword(.init(email: alice.email, password: "Alice-reset-2026!"))
        }
    }

    @Test("ending the browser session: the tenant's session is gone, the next sign-in shows the page")
    func browserSignOut() async throws {
        try await LocalTenant.with { t in
            let ui = try t.browser(alice)
            try await t.withClient {
                _ = try await $0.signInInteractively(policyName: nil, options: InteractiveOptions(timeoutSeconds: 20), ui: ui)
            }
            #expect(try t.emulator.store.ssoSessions.all().count == 1)
            let ended = try await t.withClient { try await $0.endBrowserSession(policyName: "B2C_1_ROPC_Auth", ui: ui, timeoutSeconds: 20) }
            #expect(ended, "an ROPC policy has no browser session: the default policy's end_session ends the tenant's")
            #expect(try t.emulator.store.ssoSessions.all().isEmpty)
        }
    }

    @Test("sign-out forgets the person's accounts; the next silent request needs a sign-in")
    func signOut() async throws {
        try await LocalTenant.with { t in
            try await t.signInWithPassword()
            let outcome = try t.withClientSync { try $0.signOut(policyName: nil, selector: alice.email, all: false) }
            #expect(outcome.removed.map(\.policy) == ["B2C_1_ROPC_Auth"])
            let e = try await #require(throws: B2CError.self) { try await t.silently() }
            #expect(e.kind == .interactionRequired && e.tenantCode == nil)
        }
    }

    @Test("an app token is fetched once with the secret, then served from the cache")
    func appToken() async throws {
        try await LocalTenant.with { t in
            let daemon = try #require(t.emulator.seed.apps.first { !$0.applicationPermissions.isEmpty })
            let config = try ClientConfiguration.parse(
                Data(t.emulator.clientConfiguration(baseURL: t.server.baseURL, caFile: nil, app: daemon).serialized().utf8))
            let secret = EmulatorSeed.defaultDaemonSecret
            let client = try B2CClient(
                config: config, store: try TokenStore(directory: t.home, keys: .ephemeral(t.key)),
                secrets: ClientSecretSource(environment: ["B2C_CLIENT_SECRET": secret]))
            defer { Task { await client.shutdown() } }
            let resource = try config.appResource(api: nil, scope: nil)
            let first = try await client.acquireAppToken(resource: resource, policyName: nil)
            let second = try await client.acquireAppToken(resource: resource, policyName: nil)
            #expect(!first.fromCache && second.fromCache && first.token.secret == second.token.secret)
            #expect(try t.grants("client_credentials") == 1)
        }
    }

    @Test("call-api with a browser at hand signs the person in when the call needs it, then calls")
    func callAPISignsInWhenNeeded() async throws {
        try await LocalTenant.with { t in
            let ui = try t.browser(alice)
            let r = try await t.withClient { try await $0.callAPI(APICallRequest(url: "/hello", api: nil), ui: ui) }
            #expect(r.status == 200)
            #expect(try JSONValue.parse(r.body)["name"]?.stringValue == "Alice Example")
            #expect(t.progress.withLockedValue { $0 }.contains { $0.hasSuffix("signing in in the browser") })
            var other = APICallRequest(url: "/hello", api: nil)
            other.policy = "B2C_1_signin"
            let without = try await #require(throws: B2CError.self) { try await t.withClient { try await $0.callAPI(other) } }
            #expect(without.kind == .interactionRequired)
        }
    }
}

extension LocalTenant {
    func silently() async throws -> SilentResult {
        try await withClient {
            try await $0.acquireTokenSilently(policyName: "B2C_1_ROPC_Auth", selector: nil, scopes: helloScopes)
        }
    }

    func withClientSync<T>(_ body: (B2CClient) throws -> T) throws -> T {
        let c = try client()
        defer { Task { await c.shutdown() } }
        return try body(c)
    }

    /// Puts a refresh token that B2C_1_susi issued (to the same person, in the browser) into the ROPC account, as a client
    /// that mixes policies up would.
    func swapInRefreshTokenOfAnotherPolicy(for account: Account) async throws {
        let ui = try browser(alice)
        let susi = try await withClient {
            try await $0.signInInteractively(policyName: "B2C_1_susi", options: InteractiveOptions(timeoutSeconds: 20), ui: ui)
        }
        let store = try TokenStore(directory: home, keys: .ephemeral(key))
        let rt = try #require(try store.refreshToken(of: susi))
        let person = try #require(try store.identity(of: account))
        try store.save(TokenSet(identity: person, account: account, refreshToken: rt), makeCurrent: false, now: clock())
    }

    func clock() -> Int { Int(Date().timeIntervalSince1970) + clientOffset.withLockedValue { $0 } }
}

@Suite("The silent token's memory of its answers")
struct SilentMemoTests {
    @Test func aRepeatedCacheHitIsRememberedUntilTheStoreChanges() async throws {
        try await LocalTenant.with { t in
            let account = try await t.signInWithPassword()
            let policy = account.policy
            let kept = try t.client()
            let first = try await kept.acquireTokenSilently(policyName: policy, selector: nil, scopes: t.helloScopes)
            #expect(first.fromCache)
            // The same question again: the same token, not a refresh (the tenant saw one grant: the sign-in).
            let again = try await kept.acquireTokenSilently(policyName: policy, selector: nil, scopes: t.helloScopes)
            #expect(again.accessToken.secret == first.accessToken.secret && again.fromCache)
            // A margin the token does not have: not remembered, refreshed.
            let longer = try await kept.acquireTokenSilently(policyName: policy, selector: nil, scopes: t.helloScopes, minValid: 7200)
            #expect(!longer.fromCache)
            // Another process (another client) signs the person out: this client's memory does not outlive it.
            _ = try await t.withClient { try $0.signOut(policyName: policy, selector: nil, all: false) }
            do {
                _ = try await kept.acquireTokenSilently(policyName: policy, selector: nil, scopes: t.helloScopes)
                Issue.record("a token was served after the sign-out")
            } catch let e as B2CError {
                #expect(e.kind == .interactionRequired, "\(e)")
            }
            await kept.shutdown()
        }
    }
}
