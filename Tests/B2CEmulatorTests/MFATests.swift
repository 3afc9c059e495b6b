import B2CKit
import Foundation
import Testing

@testable import B2CEmulator

/// Multifactor authentication in user flows, through the pages by B2C's element ids, with the codes read from the outbox
/// and the authenticator's computed from its secret (reference: b2c-journeys.md §1).
@Suite struct MFATests {
    static let bobPhone = "+14255550100"
    static let bobSecret = "JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP"

    static var seed: EmulatorSeed {
        var s = EmulatorSeed.default
        let susi = s.policy(named: "B2C_1_susi")!
        func flow(_ id: String, _ methods: [EmulatorSeed.MFA.Method], _ enforcement: EmulatorSeed.MFA.Enforcement) -> EmulatorSeed.Policy {
            var p = susi
            p.id = id
            p.mfa = .init(methods: methods, enforcement: enforcement)
            return p
        }
        var ropc = s.policy(named: "B2C_1_ROPC_Auth")!
        ropc.id = "B2C_1_ROPC_mfa"
        ropc.mfa = .init(methods: [.email], enforcement: .always)
        s.policies += [
            flow("B2C_1_mfa_email", [.email], .always), flow("B2C_1_mfa_phone", [.phone], .always),
            flow("B2C_1_mfa_totp", [.totp], .always),
            flow("B2C_1_mfa_cond", [.phone], .conditional), ropc,
        ]
        let b = s.users.firstIndex { $0.email == bob.email }!
        s.users[b].phone = bobPhone
        s.users[b].totpSecret = bobSecret
        return s
    }

    /// The journey's transaction id, from the page's hidden field.
    static func tx(_ page: TestResponse) -> String {
        page.body.range(of: "name=\"tx\" value=\"").map { String(page.body[$0.upperBound...].prefix { $0 != "\"" }) } ?? ""
    }

    static func outbox(_ t: TestTenant) async throws -> [JSONValue] {
        try await t.admin(.GET, "/outbox").json["messages"]?.arrayValue ?? []
    }

    @Test func emailCodeThenContinueAndTheSessionIsNotAskedAgain() async throws {
        try await TestTenant.with(seed: Self.seed) { t in
            let b = Browser(t)
            let page = try await b.signIn(policy: "B2C_1_mfa_email", email: alice.email, password: alice.password)
            #expect(page.status == 200 && page.body.contains("data-name=\"SelfAsserted\"") && page.body.contains("id=\"ReadOnlyEmail\""))
            #expect(page.body.contains("id=\"ReadOnlyEmail_ver_but_send\"") && page.body.contains("id=\"cancel\""))
            let sent = try await b.submit(page, form: "emailSendForm", [:])
            let message = try #require(try await Self.outbox(t).first)
            #expect(message["channel"]?.stringValue == "email" && message["to"]?.stringValue == alice.email)
            #expect(message["journey"]?.stringValue == Self.tx(page) && message["purpose"]?.stringValue == "mfa")
            #expect(message["expiresAt"]?.lenientInt == (message["sentAt"]?.lenientInt ?? 0) + 600)
            let code = try #require(message["code"]?.stringValue)
            #expect(code.count == 6 && code.allSatisfy(\.isNumber))
            let wrong = try await b.submit(
                sent, form: "emailVerifyForm", ["ReadOnlyEmail_ver_input": code == "000000" ? "111111" : "000000"])
            #expect(wrong.body.contains("That code is incorrect. Please try again."))
            let verified = try await b.submit(wrong, form: "emailVerifyForm", ["ReadOnlyEmail_ver_input": code])
            #expect(verified.body.contains("E-mail address verified. You can now continue."))
            let done = try await b.submit(verified, form: "attributeVerification", [:])
            #expect(done.redirectParams["code"] != nil, "\(done.location ?? done.body)")
            // The SSO session did MFA: the next authorize answers at once.
            let again = try await b.get(authorizeURL(policy: "B2C_1_mfa_email"))
            #expect(again.status == 302 && again.redirectParams["code"] != nil)
            // A session that did not do MFA is asked (a plain sign-in, then the MFA policy).
            let other = Browser(t)
            _ = try await other.signIn(policy: "B2C_1_susi", email: alice.email, password: alice.password)
            let asked = try await other.get(authorizeURL(policy: "B2C_1_mfa_email"))
            #expect(asked.status == 200 && asked.body.contains("ReadOnlyEmail_ver_but_send"))
            // Five wrong email codes end that sign-in (the self-asserted page's retry cap).
            var retry = try await other.submit(asked, form: "emailSendForm", [:])
            for _ in 1...5 { retry = try await other.submit(retry, form: "emailVerifyForm", ["ReadOnlyEmail_ver_input": "12345x"]) }
            #expect(retry.redirectParams["error_description"]?.hasPrefix("AADB2C90157: ") == true)
            // ...and prompt=none cannot answer a session that did not do MFA.
            let none = try await other.get(authorizeURL(policy: "B2C_1_mfa_email", extra: ["prompt": "none"]))
            #expect(none.redirectParams["error_description"]?.hasPrefix("AADB2C90077") == true)
            // A person marked mfaRequired is asked on a user flow without MFA too, and prompt=none cannot answer for them.
            try t.emulator.store.setMFARequired(oid: alice.oid, true)
            let required = Browser(t)
            let asksMFA = try await required.signIn(policy: "B2C_1_susi", email: alice.email, password: alice.password)
            #expect(asksMFA.status == 200 && asksMFA.body.contains("ReadOnlyEmail_ver_but_send"), "\(asksMFA.status)")
            let silent = try await other.get(authorizeURL(policy: "B2C_1_susi", extra: ["prompt": "none"]))
            #expect(silent.redirectParams["error_description"]?.hasPrefix("AADB2C90077") == true, "\(silent.location ?? silent.body)")
        }
    }

    @Test func aPhoneIsRegisteredOnFirstUseThenAskedByTextOrCall() async throws {
        try await TestTenant.with(seed: Self.seed) { t in
            let page = try await Browser(t).signIn(policy: "B2C_1_mfa_phone", email: alice.email, password: alice.password)
            for id in ["countryCode", "number", "sendCode", "verifyPhone", "cancel"] { #expect(page.body.contains("id=\"\(id)\"")) }
            #expect(page.body.contains("data-name=\"Phonefactor\""))
            let b = Browser(t)
            b.cookies = [:]
            let p = try await b.signIn(policy: "B2C_1_mfa_phone", email: alice.email, password: alice.password)
            let bad = try await b.submit(p, form: "phoneSendForm", ["countryCode": "+1", "number": "12", "channel": "sms"])
            #expect(bad.body.contains("The phone number you provided is not valid."))
            let sent = try await b.submit(bad, form: "phoneSendForm", ["countryCode": "+1", "number": "425 555 0123", "channel": "sms"])
            for id in ["verificationCode", "verifyCode", "retryCode"] { #expect(sent.body.contains("id=\"\(id)\"")) }
            let message = try #require(try await Self.outbox(t).first)
            #expect(message["channel"]?.stringValue == "sms" && message["to"]?.stringValue == "+14255550123")
            let done = try await b.submit(sent, form: "codeVerification", ["verificationCode": message["code"]?.stringValue ?? ""])
            #expect(done.redirectParams["code"] != nil, "\(done.location ?? done.body)")
            let state = try await t.admin(.GET, "/users/\(alice.email)/mfa").json
            #expect(state["phone"]?.stringValue == "+14255550123" && state["phoneEnrolled"]?.boolValue == true)
            // Later: the registered number, masked; a call reads the code out.
            let later = try await Browser(t).signIn(policy: "B2C_1_mfa_phone", email: alice.email, password: alice.password)
            #expect(later.body.contains("XXXXXXXX0123") && !later.body.contains("id=\"number\""))
            _ = try await Browser(t).submit(later, form: "phoneSendForm", ["channel": "voice"])
            #expect(try await Self.outbox(t).first?["channel"]?.stringValue == "voice")
        }
    }

    @Test func threeWrongCodesEndTheSignInWith90151AndCancelIs90091() async throws {
        try await TestTenant.with(seed: Self.seed) { t in
            let b = Browser(t)
            var page = try await b.submit(
                try await b.signIn(policy: "B2C_1_mfa_phone", email: bob.email, password: bob.password), form: "phoneSendForm",
                ["channel": "sms"])
            for attempt in 1...3 {
                page = try await b.submit(page, form: "codeVerification", ["verificationCode": "999999"])
                if attempt < 3 { #expect(page.body.contains("does not match our records"), "attempt \(attempt)") }
            }
            #expect(page.redirectParams["error"] == "access_denied")
            #expect(page.redirectParams["error_description"]?.hasPrefix("AADB2C90151: ") == true)
            let events = (try await t.admin(.GET, "/log").json["requests"]?.arrayValue ?? []).filter { $0["endpoint"] == "mfa" }
            #expect(
                events.compactMap { $0["outcome"]?.stringValue } == [
                    "sent sms", "wrong code", "wrong code", "wrong code", "too many wrong codes",
                ],
                "\(events)")
            let c = Browser(t)
            let mfa = try await c.signIn(policy: "B2C_1_mfa_phone", email: bob.email, password: bob.password)
            let cancelled = try await c.follow(mfa, link: "cancel")
            #expect(cancelled.redirectParams["error_description"]?.hasPrefix("AADB2C90091: ") == true)
        }
    }

    @Test func anAuthenticatorIsRegisteredByQRCodeThenItsCodesAreAsked() async throws {
        try await TestTenant.with(seed: Self.seed) { t in
            let b = Browser(t)
            let enrol = try await b.signIn(policy: "B2C_1_mfa_totp", email: alice.email, password: alice.password)
            let secret = try #require(
                enrol.body.range(of: "id=\"secretKey\">").map { String(enrol.body[$0.upperBound...].prefix { $0 != "<" }) })
            #expect(enrol.body.contains("Still having trouble?") && enrol.body.contains("id=\"qrCode\""))
            let qr = try await b.get(
                try #require(
                    enrol.body.range(of: "id=\"qrCode\" src=\"").map {
                        PageParser.unescape(String(enrol.body[$0.upperBound...].prefix { $0 != "\"" }))
                    }))
            #expect(qr.status == 200 && qr.headers.first(name: "content-type") == "image/png" && qr.body.utf8.count > 100)
            let verify = try await b.submit(enrol, form: "attributeVerification", [:])
            #expect(verify.body.contains("id=\"otpCode\""))
            let now = t.emulator.clock.now()
            let done = try await b.submit(verify, form: "attributeVerification", ["otpCode": TOTP.code(secret: secret, at: now) ?? ""])
            #expect(done.redirectParams["code"] != nil, "\(done.location ?? done.body)")
            #expect(try await t.admin(.GET, "/users/\(alice.email)/mfa").json["totpEnrolled"]?.boolValue == true)
            // Bob's authenticator is in the seed: asked for a code at once; three wrong ones end it.
            let c = Browser(t)
            var page = try await c.signIn(policy: "B2C_1_mfa_totp", email: bob.email, password: bob.password)
            #expect(page.body.contains("id=\"otpCode\"") && !page.body.contains("secretKey"))
            for _ in 1...3 { page = try await c.submit(page, form: "attributeVerification", ["otpCode": "12345"]) }
            #expect(page.redirectParams["error_description"]?.hasPrefix("AADB2C90151: ") == true)
            let d = Browser(t)
            let ok = try await d.submit(
                try await d.signIn(policy: "B2C_1_mfa_totp", email: bob.email, password: bob.password), form: "attributeVerification",
                ["otpCode": TOTP.code(secret: Self.bobSecret, at: t.emulator.clock.now()) ?? ""])
            #expect(ok.redirectParams["code"] != nil)
        }
    }

    @Test func conditionalAsksOnlyRiskySignInsAndBlocksRiskyOnesWithoutAMethod() async throws {
        try await TestTenant.with(seed: Self.seed) { t in
            let quiet = try await Browser(t).signIn(policy: "B2C_1_mfa_cond", email: bob.email, password: bob.password)
            #expect(quiet.status == 302 && quiet.redirectParams["code"] != nil, "enrolled, not risky: no second factor")
            _ = try await t.admin(.POST, "/users/\(bob.email)/mfa", ["risky": true])
            let risky = try await Browser(t).signIn(policy: "B2C_1_mfa_cond", email: bob.email, password: bob.password)
            #expect(risky.status == 200 && risky.body.contains("data-name=\"Phonefactor\""))
            _ = try await t.admin(.POST, "/users/\(alice.email)/mfa", ["risky": true])
            let blocked = try await Browser(t).signIn(policy: "B2C_1_mfa_cond", email: alice.email, password: alice.password)
            #expect(blocked.status == 403 && blocked.body.contains("Your sign-in was blocked"))
            // Not risky and not registered: registration is offered, as B2C prompts it.
            _ = try await t.admin(.POST, "/users/\(alice.email)/mfa", ["risky": false])
            let offered = try await Browser(t).signIn(policy: "B2C_1_mfa_cond", email: alice.email, password: alice.password)
            #expect(offered.status == 200 && offered.body.contains("id=\"number\""))
        }
    }

    @Test func knobsFixTheCodeAndMakeAPhoneUnreachableOrThrottled() async throws {
        try await TestTenant.with(seed: Self.seed) { t in
            _ = try await t.admin(.POST, "/mfa", ["fixedCode": "123456"])
            let b = Browser(t)
            let sent = try await b.submit(
                try await b.signIn(policy: "B2C_1_mfa_phone", email: bob.email, password: bob.password), form: "phoneSendForm",
                ["channel": "sms"])
            #expect(try await Self.outbox(t).first?["code"]?.stringValue == "123456")
            #expect(try await b.submit(sent, form: "codeVerification", ["verificationCode": "123456"]).redirectParams["code"] != nil)
            _ = try await t.admin(.POST, "/mfa", ["unreachable": [.string(Self.bobPhone)]])
            let c = Browser(t)
            let unreachable = try await c.submit(
                try await c.signIn(policy: "B2C_1_mfa_phone", email: bob.email, password: bob.password), form: "phoneSendForm",
                ["channel": "sms"])
            #expect(unreachable.body.contains("The phone number you provided is unreachable."))
            _ = try await t.admin(.POST, "/mfa", ["throttled": true])
            let throttled = try await c.submit(unreachable, form: "phoneSendForm", ["channel": "sms"])
            #expect(throttled.body.contains("You hit the limit on the number of verification attempts."))
            #expect(try await t.admin(.POST, "/mfa", ["fixedCode": "12"]).status == 400)
        }
    }

    @Test func ropcAtAPolicyThatAlwaysAsksForMFAIsRefused() async throws {
        try await TestTenant.with(seed: Self.seed) { t in
            let r = try await t.token(
                "B2C_1_ROPC_mfa",
                [
                    "grant_type": "password", "client_id": clientID, "username": alice.email, "password": alice.password,
                    "scope": "openid \(helloScope)",
                ])
            expectB2CError(r, error: "invalid_grant", code: "AADB2C90224")
        }
    }

    @Test func theSeedSaysWhatIsWrongWithMFASettings() throws {
        func parse(_ policy: String, users: String = "[]") -> Error? {
            let json = """
                {"tenant": {"name": "contoso.onmicrosoft.com", "id": "\(tenantID)"}, "policies": [\(policy)],
                 "apps": [{"clientId": "\(clientID)", "redirectUris": ["http://localhost"]}], "users": \(users)}
                """
            do { _ = try EmulatorSeed.parse(Data(json.utf8)) } catch { return error }
            return nil
        }
        #expect(
            parse(#"{"id": "B2C_1_x", "kind": "signUpSignIn", "mfa": {"methods": ["email", "totp"], "enforcement": "conditional"}}"#) == nil
        )
        #expect(
            "\(parse(#"{"id": "B2C_1_x", "kind": "signUpSignIn", "mfa": {"methods": ["fax"]}}"#)!)".contains("$.policies[0].mfa.methods[0]")
        )
        #expect("\(parse(#"{"id": "B2C_1_x", "kind": "editProfile", "mfa": {"methods": ["email"]}}"#)!)".contains("$.policies[0].mfa"))
        #expect(
            "\(parse(#"{"id": "B2C_1_x", "kind": "signIn", "mfa": {"methods": ["email"], "enforcement": "maybe"}}"#)!)".contains(
                "enforcement"))
        let users = #"[{"email": "a@b.com", "password": "x", "phone": "4255550100"}]"#
        #expect("\(parse(#"{"id": "B2C_1_x", "kind": "signIn"}"#, users: users)!)".contains("$.users[0].phone"))
    }
}
