@testable import B2CEmulator
import Foundation
import NIOConcurrencyHelpers
import Testing

@testable import B2CKit

/// The person at the terminal of a native-auth sign-in: a password, or codes read from the tenant's outbox (or typed
/// wrong on purpose).
struct ScriptedPrompter: NativePrompter {
    let tenant: LocalTenant
    let password: String
    /// Codes to type, in order; "OUTBOX" types the one the tenant sent last.
    let codes: [String]
    let notices = NIOLockedValueBox<[String]>([])

    func password(for username: String) async throws -> String { password }

    func code(sentTo label: String, length: Int?, attempt: Int, attemptsLeft: Int) async throws -> String? {
        let typed = codes[min(attempt - 1, codes.count - 1)]
        guard typed == "OUTBOX" else { return typed }
        return try tenant.emulator.store.outbox.messages(to: alice.email).first?.code
    }

    func codeResent(to label: String, length: Int?) {}
    func notice(_ text: String) { notices.withLockedValue { $0.append(text) } }
}

@Suite("Native auth, in process")
struct NativeFlowTests {
    struct Case: Sendable, CustomTestStringConvertible {
        var name: String
        var username = alice.email
        var mode = NativeMode.password
        var password = alice.password
        var codes = ["OUTBOX"]
        /// nil: signed in; else the kind and the tenant's code the refusal carries.
        var refused: (B2CError.Kind, String)?
        var testDescription: String { name }
    }

    static let cases: [Case] = [
        Case(name: "email and password sign in under the tenant's one name"),
        Case(name: "email and a one-time code from the outbox", mode: .otp),
        Case(name: "a wrong password (50126)", password: "nope", refused: (.interactionRequired, "50126")),
        Case(name: "an unknown person (user_not_found)", username: "nobody@contoso.com", refused: (.interactionRequired, "user_not_found")),
        Case(name: "three wrong codes stop the sign-in", mode: .otp, codes: ["000000"], refused: (.interactionRequired, "-")),
    ]

    @Test(arguments: cases)
    func nativeSignIn(_ c: Case) async throws {
        // Code sign-in needs a user flow of "Email one-time passcode"; the default is "Email with password".
        var seed = EmulatorSeed.defaultExternalID
        if c.mode == .otp { seed.policies[seed.policies.firstIndex { $0.id == "B2C_1_susi" }!].signInMethod = .emailOtp }
        try await LocalTenant.with(seed: seed) { t in
            let prompter = ScriptedPrompter(tenant: t, password: c.password, codes: c.codes)
            do {
                let account = try await t.withClient {
                    try await $0.signInNative(username: c.username, mode: c.mode, scopes: t.helloScopes, prompter: prompter)
                }
                #expect(c.refused == nil, "signed in, but \(String(describing: c.refused)) was expected")
                #expect(account.id == "\(account.oid).\(t.emulator.tenantID)")
            } catch let e as B2CError {
                let expected = try #require(c.refused, "refused: \(e)")
                #expect(e.kind == expected.0 && (e.tenantCode ?? "-") == expected.1, "\(e)")
                #expect(try t.withClientSync { try $0.accountsInScope() }.isEmpty)
            }
        }
    }
}

/// The person at the terminal of a sign-up, a reset or a second factor: new passwords in turn (the next after each
/// refusal), attribute values in turn, a method by channel, a target to register, and codes from the tenant's outbox.
final class JourneyPrompter: NativePrompter, @unchecked Sendable {
    let tenant: LocalTenant
    let codeTo: String
    var passwords: [String]
    var attributeValues: [String: [String]]
    let channel: String
    let target: String?
    private(set) var refusals: [String] = []
    private(set) var offered: [NativeMethod] = []

    init(
        tenant: LocalTenant, codeTo: String, passwords: [String] = [], attributes: [String: [String]] = [:], channel: String = "email",
        target: String? = nil
    ) {
        self.tenant = tenant; self.codeTo = codeTo; self.passwords = passwords; self.attributeValues = attributes
        self.channel = channel; self.target = target
    }

    func password(for username: String) async throws -> String { passwords.removeFirst() }
    func code(sentTo label: String, length: Int?, attempt: Int, attemptsLeft: Int) async throws -> String? {
        try tenant.emulator.store.outbox.messages(to: codeTo).first?.code
    }
    func codeResent(to label: String, length: Int?) {}
    func notice(_ text: String) {}
    func newPassword(for username: String, problem: String?) async throws -> String {
        if let problem { refusals.append(problem) }
        return passwords.removeFirst()
    }
    func attribute(_ attribute: NativeAttribute, problem: String?) async throws -> String {
        let short = attribute.name.hasPrefix("extension_") ? "extension_" + attribute.name.split(separator: "_").last! : attribute.name
        return attributeValues[short]!.removeFirst()
    }
    func chooseMethod(_ methods: [NativeMethod], registering: Bool) async throws -> NativeMethod {
        offered = methods
        return try #require(methods.first { $0.channel == channel })
    }
    func registrationTarget(for method: NativeMethod) async throws -> String { try #require(target) }
}

@Suite("Native sign-up, reset and second factor, in process")
struct NativeJourneyFlowTests {
    static func seed(mfa: EmulatorSeed.MFA? = nil) -> EmulatorSeed {
        var seed = EmulatorSeed.defaultExternalID
        let i = seed.policies.firstIndex { $0.id == "B2C_1_susi" }!
        seed.policies[i].attributes = [.init(name: "extension_age", kind: .int, required: true, label: "Age")]
        seed.policies[i].mfa = mfa
        return seed
    }

    @Test func signUpAsksAgainForARefusedPasswordAndEveryRequiredAttribute() async throws {
        try await LocalTenant.with(seed: Self.seed()) { t in
            let p = JourneyPrompter(
                tenant: t, codeTo: "ivy@contoso.com", passwords: ["weakweak", "Ivy-2026-pass!"], attributes: ["extension_age": ["41"]])
            let account = try await t.withClient {
                try await $0.signUpNative(
                    username: "ivy@contoso.com", mode: .auto, attributes: ["displayName": "Ivy"], scopes: t.helloScopes, prompter: p)
            }
            #expect(p.refusals.count == 1 && p.refusals[0].contains("password_too_weak"), "\(p.refusals)")
            #expect(account.id.hasSuffix(".\(t.emulator.tenantID)"))
            let user = try #require(try t.emulator.store.user(email: "ivy@contoso.com"))
            #expect(user.displayName == "Ivy" && user.attributes["extension_age"] == JSONValue(41))
            // The address is taken now: the refusal says sign in, with its tenant code.
            do {
                _ = try await t.withClient {
                    try await $0.signUpNative(username: "ivy@contoso.com", mode: .auto, attributes: [:], scopes: [], prompter: p)
                }
                Issue.record("signed up twice")
            } catch let e as B2CError {
                #expect(e.tenantCode == "user_already_exists" && e.kind == .failed, "\(e)")
            }
        }
    }

    @Test func resetThenSignedInWithTheNewPassword() async throws {
        try await LocalTenant.with(seed: Self.seed()) { t in
            let p = JourneyPrompter(tenant: t, codeTo: alice.email, passwords: [alice.password, "Alice-new-2026!"])
            let account = try await t.withClient {
                try await $0.resetPasswordNative(username: alice.email, scopes: t.helloScopes, prompter: p)
            }
            #expect(p.refusals.count == 1 && p.refusals[0].contains("password_recently_used"), "\(p.refusals)")
            #expect(account.oid == "0a11ce00-5eed-4a11-8000-00000000a11c")
            #expect(try t.emulator.store.checkPassword(email: alice.email, password: "Alice-new-2026!") != nil)
        }
    }

    @Test func secondFactorByEmailAndRegistrationOfAPhone() async throws {
        try await LocalTenant.with(seed: Self.seed(mfa: .init(methods: [.email, .phone], enforcement: .always))) { t in
            let p = JourneyPrompter(tenant: t, codeTo: alice.email, passwords: [alice.password])
            _ = try await t.withClient { try await $0.signInNative(username: alice.email, mode: .password, scopes: [], prompter: p) }
            #expect(p.offered.map(\.channel) == ["email"])
            try t.emulator.store.resetMFA(oid: "0a11ce00-5eed-4a11-8000-00000000a11c")
            let phone = "+14255550123"
            let r = JourneyPrompter(tenant: t, codeTo: phone, passwords: [alice.password], channel: "sms", target: phone)
            _ = try await t.withClient { try await $0.signInNative(username: alice.email, mode: .password, scopes: [], prompter: r) }
            #expect(r.offered.map(\.channel) == ["email", "sms"])
            #expect(try t.emulator.store.mfaState(oid: "0a11ce00-5eed-4a11-8000-00000000a11c").phone == phone)
        }
    }
}
