import B2CEmulator
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
        return try tenant.emulator.store.outbox(to: alice.email).first?.code
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
        try await LocalTenant.with(seed: .defaultExternalID) { t in
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
