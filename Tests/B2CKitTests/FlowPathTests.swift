import B2CEmulator
import Foundation
import NIOConcurrencyHelpers
import Testing

@testable import B2CKit

/// Each flow type's three ways out, in process against the in-memory tenant: it succeeds (and stores what it should), the
/// tenant or the configuration refuses it (a typed error, nothing stored), or it needs a person (interaction required).
/// Where the other tests already hold a path, it is named here rather than run twice:
///
/// - SilentToken: success, refusal and interaction required in FlowTests.silentToken (cached, refreshed; revoked, another
///   policy's token; expired), and `noAccountNeedsASignIn`.
/// - InteractiveSignIn: FlowTests.browserSignIn; cancel (AADB2C90091) in FlowTests.cancelled; "forgot password"
///   (AADB2C90118) in FlowTests.forgotPasswordDetour.
/// - PasswordSignIn: `aPasswordSignInStoresTheCurrentAccount`; a wrong password (AADB2C90225) in FlowTests.wrongPassword.
/// - NativeSignIn, NativeSignUp, NativeReset: NativeFlowTests (a second factor is its interaction).
/// - DeviceCodeSignIn: `aDeviceCodeIsTypedAtThePageAndTheAccountStored`, `aB2CConfigurationHasNoDeviceCode`,
///   `aSlowDownAddsFiveSecondsToEveryLaterPoll`; a code declined or expired in EndToEndTests' DeviceCodeSignInTests.
/// - ProfileFlows: FlowTests.editProfile and FlowTests.resetPassword; `editingTheProfileOfNobodyNeedsASignIn`.
/// - SignOut, BrowserSignOut: FlowTests.signOut and FlowTests.browserSignOut; `signingOutAnUnknownAccountSaysSo`.
/// - AppOnlyToken: FlowTests.appToken; `aWrongSecretIsRefusedAndNothingStored` (no person: nothing to interact with).
@Suite("Every flow's paths, in process")
struct FlowPathTests {
    @Test func aPasswordSignInStoresTheCurrentAccount() async throws {
        try await LocalTenant.with { t in
            let account = try await t.signInWithPassword()
            #expect(account.policy == "B2C_1_ROPC_Auth" && account.email == alice.email)
            let selected = try t.withClientSync { try $0.selectedAccount(policy: "B2C_1_ROPC_Auth", selector: nil) }
            #expect(selected.account.id == account.id)
            #expect(try t.grants("password") == 1)
        }
    }

    @Test func noAccountNeedsASignIn() async throws {
        try await LocalTenant.with { t in
            let e = try await #require(throws: B2CError.self) { try await t.silently() }
            #expect(e.kind == .interactionRequired)
            #expect(e.remedy == .signIn(policy: "B2C_1_ROPC_Auth", method: .password, loginHint: nil), "\(e)")
        }
    }

    @Test func aDeviceCodeIsTypedAtThePageAndTheAccountStored() async throws {
        try await LocalTenant.with(seed: .defaultExternalID) { t in
            let browser = try ScriptedBrowser(caFile: nil)
            let shown = NIOLockedValueBox<DeviceCodePrompt?>(nil)
            let walked = NIOLockedValueBox<String?>(nil)
            let account = try await t.withClient { c in
                try await c.signInWithDeviceCode(scopes: t.helloScopes) { prompt in
                    shown.withLockedValue { $0 = prompt }
                    var who = alice
                    who.deviceCode = prompt.userCode
                    Task {
                        do { _ = try await browser.run(URL(string: prompt.verificationURI)!, as: who) } catch {
                            walked.withLockedValue { $0 = "\(error)" }
                        }
                    }
                }
            }
            await browser.shutdown()
            #expect(walked.withLockedValue { $0 } == nil)
            let prompt = try #require(shown.withLockedValue { $0 })
            #expect(prompt.verificationURI.hasPrefix(t.server.baseURL) && prompt.message.contains(prompt.userCode))
            #expect(account.email == alice.email && account.policy == t.config.externalIdAuthority?.policy)
            #expect(try t.grants("urn:ietf:params:oauth:grant-type:device_code") >= 1)
        }
    }

    @Test func aB2CConfigurationHasNoDeviceCode() async throws {
        try await LocalTenant.with { t in
            let e = try await #require(throws: B2CError.self) {
                try await t.withClient { try await $0.signInWithDeviceCode(scopes: t.helloScopes) { _ in } }
            }
            #expect(e.kind == .usage && e.message.contains("AADB2C90086"))
            #expect(try t.grants("urn:ietf:params:oauth:grant-type:device_code") == 0)
        }
    }

    /// RFC 8628 §3.5: after `slow_down` the device waits five seconds more, for that poll and every later one. Each wait
    /// moves both clocks instead of sleeping, except the second: its poll comes too soon, and the tenant says `slow_down`.
    /// The fourth is Ctrl-C.
    @Test func aSlowDownAddsFiveSecondsToEveryLaterPoll() async throws {
        try await LocalTenant.with(seed: .defaultExternalID) { t in
            let waits = NIOLockedValueBox<[Int]>([])
            let e = try await #require(throws: B2CError.self) {
                try await t.withClient { c in
                    let flow = DeviceCodeSignIn(context: c.context) { seconds in
                        let count = waits.withLockedValue {
                            $0.append(seconds)
                            return $0.count
                        }
                        if count == 4 { throw CancellationError() }
                        if count != 2 { try t.advance(seconds) }
                    }
                    return try await flow.run(scopes: t.helloScopes) { _ in }
                }
            }
            #expect(waits.withLockedValue { $0 } == [5, 5, 10, 10])
            #expect(e.kind == .cancelled, "\(e)")
        }
    }

    @Test func editingTheProfileOfNobodyNeedsASignIn() async throws {
        try await LocalTenant.with { t in
            let ui = try t.browser(alice)
            let e = try await #require(throws: B2CError.self) {
                try await t.withClient {
                    try await $0.editProfile(selector: nil, policyName: nil, options: InteractiveOptions(timeoutSeconds: 20), ui: ui)
                }
            }
            #expect(e.kind == .interactionRequired, "\(e)")
            #expect(e.remedy != nil)
        }
    }

    @Test func signingOutAnUnknownAccountSaysSo() async throws {
        try await LocalTenant.with { t in
            try await t.signInWithPassword()
            let e = try #require(throws: B2CError.self) {
                try t.withClientSync { try $0.signOut(policyName: nil, selector: "nobody@contoso.com", all: false) }
            }
            #expect(e.message.contains("nobody@contoso.com"), "\(e)")
            #expect(try t.withClientSync { try $0.accountsInScope() }.count == 1, "nothing was forgotten")
        }
    }

    @Test func aWrongSecretIsRefusedAndNothingStored() async throws {
        try await LocalTenant.with { t in
            let daemon = try #require(t.emulator.seed.apps.first { !$0.applicationPermissions.isEmpty })
            let config = try ClientConfiguration.parse(
                Data(t.emulator.clientConfiguration(baseURL: t.server.baseURL, caFile: nil, app: daemon).serialized().utf8))
            let store = try TokenStore(directory: t.home, keys: .ephemeral(t.key))
            let client = try B2CClient(
                config: config, store: store, secrets: ClientSecretSource(environment: ["B2C_CLIENT_SECRET": "not-the-secret"]))
            let e = try await #require(throws: B2CError.self) {
                try await client.acquireAppToken(resource: try config.appResource(api: nil, scope: nil), policyName: nil)
            }
            await client.shutdown()
            #expect(e.kind == .configuration && e.tenantCode == "AADB2C90081", "\(e)")
            #expect(try store.appTokens(scope: nil).isEmpty)
        }
    }
}
