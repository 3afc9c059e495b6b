import B2CKit
import Foundation
import Testing

@testable import B2CEmulator

/// Sign-up as B2C's user flows do it (reference: b2c-journeys.md §3): the email verified with a code from the outbox
/// before the account is made, B2C's widget ids, and the user flow's attributes — built-in and `extension_<Name>` —
/// collected, checked and carried in the tokens.
@Suite struct SignUpTests {
    /// "Send verification code", then the code from the outbox, on the sign-up page `form`; returns the page saying the
    /// address is verified.
    static func verify(_ t: TestTenant, _ b: Browser, _ form: TestResponse, email: String) async throws -> TestResponse {
        let sent = try await b.submit(form, form: "attributeVerification", ["email": email, "step": "send"])
        #expect(sent.body.contains("id=\"email_ver_input\"") && sent.body.contains("id=\"email_ver_but_resend\""))
        let messages = try await t.admin(.GET, "/outbox").json["messages"]?.arrayValue ?? []
        let message = try #require(messages.first { $0["to"]?.stringValue == email && $0["purpose"]?.stringValue == "signup" })
        let verified = try await b.submit(
            sent, form: "attributeVerification", ["email": email, "step": "verify", "email_ver_input": message["code"]?.stringValue ?? ""])
        #expect(verified.body.contains("id=\"email_success\"") && verified.body.contains("id=\"email_ver_but_edit\""))
        return verified
    }

    static var seed: EmulatorSeed {
        var s = EmulatorSeed.default
        var p = s.policy(named: "B2C_1_susi")!
        p.id = "B2C_1_loyalty"
        p.attributes = [
            .init(name: "givenName", required: true, label: "Given Name"), .init(name: "city", label: "City"),
            .init(name: "extension_LoyaltyId", required: true, label: "Loyalty number"),
            .init(name: "extension_Newsletter", kind: .boolean, label: "Send me news"),
            .init(name: "extension_Age", kind: .int, label: "Age"),
        ]
        var quick = s.policy(named: "B2C_1_susi")!
        quick.id = "B2C_1_unverified"
        quick.emailVerification = .off
        var edit = s.policy(named: "B2C_1_edit_profile")!
        edit.id = "B2C_1_edit_loyalty"
        edit.attributes = [
            .init(name: "extension_LoyaltyId", required: true, label: "Loyalty number"),
            .init(name: "extension_Newsletter", kind: .boolean, label: "Send me news"),
        ]
        var narrow = s.policy(named: "B2C_1_susi")!
        narrow.id = "B2C_1_narrow"
        narrow.applicationClaims = ["extension_LoyaltyId"]
        var control = s.policy(named: "B2C_1_susi")!
        control.id = "B2C_1_display_control"
        control.emailVerification = .displayControl
        s.policies += [p, quick, edit, narrow, control]
        return s
    }

    static let codeLifetime = SecondFactorStep.mfaCodeLifetime

    static func signUpPage(_ b: Browser, policy: String, pkce: PKCE = PKCE()) async throws -> TestResponse {
        let page = try await b.get(authorizeURL(policy: policy, pkce: pkce))
        return try await b.follow(page, link: "createAccount")
    }

    @Test func anUnverifiedEmailIsRefusedAndAWrongCodeSaysSo() async throws {
        try await TestTenant.with { t in
            let b = Browser(t)
            let form = try await Self.signUpPage(b, policy: "B2C_1_susi")
            #expect(form.body.contains("id=\"email_ver_but_send\"") && !form.body.contains("id=\"email_ver_input\""))
            let fields = ["email": "erin@contoso.com", "newPassword": "Erin-2026-pw", "reenterPassword": "Erin-2026-pw", "step": "create"]
            let refused = try await b.submit(form, form: "attributeVerification", fields)
            #expect(refused.status == 200 && refused.body.contains("Claim not verified: Email Address"))
            let sent = try await b.submit(refused, form: "attributeVerification", ["email": "erin@contoso.com", "step": "send"])
            let wrong = try await b.submit(
                sent, form: "attributeVerification", ["email": "erin@contoso.com", "step": "verify", "email_ver_input": "000000"])
            #expect(wrong.body.contains("That code is incorrect."))
            // Verified for one address, then another typed in: that one is not verified.
            let verified = try await Self.verify(t, b, wrong, email: "erin@contoso.com")
            var other = fields
            other["email"] = "mallory@contoso.com"
            let swapped = try await b.submit(verified, form: "attributeVerification", other)
            #expect(swapped.body.contains("Claim not verified"))
            let users = try await t.admin(.GET, "/users")
            #expect(!users.body.contains("erin@contoso.com") && !users.body.contains("mallory@contoso.com"), "nothing created")
            // "Change e-mail" starts over.
            let edited = try await b.submit(verified, form: "attributeVerification", ["email": "erin@contoso.com", "step": "edit"])
            #expect(edited.body.contains("id=\"email_ver_but_send\""))
        }
    }

    @Test func anExpiredCodeAsksForANewOne() async throws {
        try await TestTenant.with { t in
            let b = Browser(t)
            let form = try await Self.signUpPage(b, policy: "B2C_1_susi")
            let sent = try await b.submit(form, form: "attributeVerification", ["email": "fay@contoso.com", "step": "send"])
            let code = try #require((try await t.admin(.GET, "/outbox").json["messages"]?.arrayValue)?.first?["code"]?.stringValue)
            try await t.advanceClock(Self.codeLifetime + 60)
            let late = try await b.submit(
                sent, form: "attributeVerification", ["email": "fay@contoso.com", "step": "verify", "email_ver_input": code])
            #expect(late.body.contains("That code is expired."))
        }
    }

    @Test func anExistingAccountIsRefusedAfterVerification() async throws {
        try await TestTenant.with { t in
            let b = Browser(t)
            let verified = try await Self.verify(t, b, try await Self.signUpPage(b, policy: "B2C_1_susi"), email: alice.email)
            let taken = try await b.submit(
                verified, form: "attributeVerification",
                ["email": alice.email, "newPassword": "Alice-2026-new", "reenterPassword": "Alice-2026-new", "step": "create"])
            #expect(taken.body.contains("already exists"))
        }
    }

    @Test func theUserFlowsAttributesAreCollectedCheckedAndInTheTokens() async throws {
        try await TestTenant.with(seed: Self.seed) { t in
            let b = Browser(t)
            let pkce = PKCE()
            let form = try await Self.signUpPage(b, policy: "B2C_1_loyalty", pkce: pkce)
            for id in ["givenName", "city", "extension_LoyaltyId", "extension_Newsletter", "extension_Age"] {
                #expect(form.body.contains("id=\"\(id)\""), "the claim id is the element id: \(id)")
            }
            #expect(!form.body.contains("id=\"surname\""), "only the user flow's attributes")
            let verified = try await Self.verify(t, b, form, email: "gus@contoso.com")
            var fields = ["email": "gus@contoso.com", "newPassword": "Gus-2026-pw!", "reenterPassword": "Gus-2026-pw!", "step": "create"]
            fields["givenName"] = "Gus"
            let missing = try await b.submit(verified, form: "attributeVerification", fields)
            #expect(missing.body.contains("Loyalty number: This information is required."))
            fields["extension_LoyaltyId"] = "L-4242"
            fields["extension_Age"] = "forty"
            let notANumber = try await b.submit(missing, form: "attributeVerification", fields)
            #expect(notANumber.body.contains("Age: One or more fields"))
            fields["extension_Age"] = "41"
            fields["extension_Newsletter"] = "true"
            fields["city"] = "Lyon"
            let done = try await b.submit(notANumber, form: "attributeVerification", fields)
            let code = try #require(done.redirectParams["code"], "\(done.body.prefix(400))")
            let tok = try await t.token("B2C_1_loyalty", redeemForm(code: code, verifier: pkce.verifier))
            let c = try claims(tok.json["id_token"]?.stringValue)
            #expect(c["extension_LoyaltyId"] == "L-4242" && c["extension_Age"] == 41 && c["extension_Newsletter"] == true)
            #expect(c["city"] == "Lyon" && c["given_name"] == "Gus" && c["newUser"] == true)
            // Later sign-ins carry them too: they are the account's, not the sign-up's.
            let later = PKCE()
            let again = try await Browser(t).signIn(
                policy: "B2C_1_loyalty", email: "gus@contoso.com", password: "Gus-2026-pw!", pkce: later)
            let tok2 = try await t.token(
                "B2C_1_loyalty", redeemForm(code: try #require(again.redirectParams["code"]), verifier: later.verifier))
            let c2 = try claims(tok2.json["id_token"]?.stringValue)
            #expect(c2["extension_LoyaltyId"] == "L-4242" && c2["newUser"] == nil)
            // A user flow whose application claims name one attribute carries that one only.
            let narrow = PKCE()
            let other = try await Browser(t).signIn(
                policy: "B2C_1_narrow", email: "gus@contoso.com", password: "Gus-2026-pw!", pkce: narrow)
            let tok3 = try await t.token(
                "B2C_1_narrow", redeemForm(code: try #require(other.redirectParams["code"]), verifier: narrow.verifier))
            let c3 = try claims(tok3.json["id_token"]?.stringValue)
            #expect(c3["extension_LoyaltyId"] == "L-4242" && c3["city"] == nil && c3["extension_Age"] == nil)
        }
    }

    @Test func theProfilePageEditsTheUserFlowsAttributes() async throws {
        try await TestTenant.with(seed: Self.seed) { t in
            let b = Browser(t)
            _ = try await b.signIn(email: alice.email, password: alice.password)
            let page = try await b.get(authorizeURL(policy: "B2C_1_edit_loyalty"))
            #expect(
                page.body.contains("id=\"extension_LoyaltyId\"") && page.body.contains("id=\"displayName\""), "\(page.body.prefix(300))")
            let missing = try await b.submit(page, form: "attributeVerification", [:])
            #expect(missing.body.contains("Loyalty number: This information is required."))
            let pkce = PKCE()
            let again = try await b.get(authorizeURL(policy: "B2C_1_edit_loyalty", pkce: pkce))
            let done = try await b.submit(
                again, form: "attributeVerification", ["extension_LoyaltyId": "L-9", "extension_Newsletter": "true"])
            let tok = try await t.token(
                "B2C_1_edit_loyalty",
                redeemForm(code: try #require(done.redirectParams["code"], "\(done.body.prefix(300))"), verifier: pkce.verifier))
            let c = try claims(tok.json["id_token"]?.stringValue)
            #expect(c["extension_LoyaltyId"] == "L-9" && c["extension_Newsletter"] == true && c["name"] == "Alice Example")
            // The next visit shows what is stored.
            let shown = try await b.get(authorizeURL(policy: "B2C_1_edit_loyalty"))
            #expect(shown.body.contains("value=\"L-9\"") && shown.body.contains("value=\"true\" checked>"))
        }
    }

    @Test func theDisplayControlVariantUsesItsOwnIds() async throws {
        try await TestTenant.with(seed: Self.seed) { t in
            let b = Browser(t)
            let form = try await Self.signUpPage(b, policy: "B2C_1_display_control")
            #expect(form.body.contains("id=\"emailVerificationControl_but_send_code\"") && !form.body.contains("email_ver_but_send"))
            let sent = try await b.submit(form, form: "attributeVerification", ["email": "ivy@contoso.com", "step": "send"])
            #expect(
                sent.body.contains("id=\"verificationCode\"") && sent.body.contains("id=\"emailVerificationControl_but_send_new_code\""))
            let code = try #require((try await t.admin(.GET, "/outbox").json["messages"]?.arrayValue)?.first?["code"]?.stringValue)
            let wrong = try await b.submit(
                sent, form: "attributeVerification", ["email": "ivy@contoso.com", "step": "verify", "verificationCode": "000000"])
            #expect(wrong.body.contains("That code is incorrect."))
            let verified = try await b.submit(
                wrong, form: "attributeVerification", ["email": "ivy@contoso.com", "step": "verify", "verificationCode": code])
            #expect(
                verified.body.contains("id=\"emailVerificationControl_success_message\"")
                    && verified.body.contains("id=\"emailVerificationControl_but_change_claims\""))
            let done = try await b.submit(
                verified, form: "attributeVerification",
                ["email": "ivy@contoso.com", "newPassword": "Ivy-2026-pw!", "reenterPassword": "Ivy-2026-pw!", "step": "create"])
            #expect(done.redirectParams["code"] != nil, "\(done.body.prefix(400))")
        }
    }

    /// The scripted browser (the demo's and `b2c-emulator browser`'s) signs up through either widget.
    @Test(arguments: ["B2C_1_susi", "B2C_1_display_control"])
    func theScriptedBrowserSignsUpThroughEitherWidget(_ policy: String) async throws {
        try await TestTenant.with(seed: Self.seed) { t in
            var jo = ScriptedBrowser.Persona(email: "jo@contoso.com", password: "Jo-2026-pw!x", action: .signup)
            jo.givenName = "Jo"
            _ = try await scriptedCode(t.base + authorizeURL(policy: policy), as: jo)
            let users = try await t.admin(.GET, "/users")
            #expect(users.body.contains("jo@contoso.com"))
        }
    }

    @Test func aUserFlowWithoutVerificationCreatesAtOnce() async throws {
        try await TestTenant.with(seed: Self.seed) { t in
            let b = Browser(t)
            let form = try await Self.signUpPage(b, policy: "B2C_1_unverified")
            #expect(!form.body.contains("email_ver_but_send"))
            let done = try await b.submit(
                form, form: "attributeVerification",
                ["email": "hal@contoso.com", "newPassword": "Hal-2026-pw!", "reenterPassword": "Hal-2026-pw!", "step": "create"])
            #expect(done.redirectParams["code"] != nil, "\(done.body.prefix(400))")
        }
    }

    @Test func theSeedReadsAttributes() throws {
        func parse(_ extra: String) throws -> EmulatorSeed.Policy {
            try parsePolicySeed(extra.hasPrefix(", ") ? String(extra.dropFirst(2)) : extra)
        }
        let p = try parse(
            #", "emailVerification": false, "attributes": ["city", {"name": "extension_Tier", "type": "Int", "required": true}]"#)
        #expect(p.emailVerification == .off && p.attributes.map(\.name) == ["city", "extension_Tier"])
        #expect(try parse(#", "emailVerification": "displayControl""#).emailVerification == .displayControl)
        #expect(try parse("").emailVerification == .classic)
        #expect(throws: JSONPathError.self) { try parse(#", "emailVerification": "sms""#) }
        #expect(p.attributes[1].kind == .int && p.attributes[1].required && p.attributes[1].label == "Tier")
        #expect(try parse("").attributes == EmulatorSeed.Attribute.defaults && parse("").applicationClaims == nil)
        #expect(try parse(#", "applicationClaims": ["city"]"#).applicationClaims == ["city"])
        #expect(throws: JSONPathError.self) { try parse(#", "applicationClaims": "city""#) }
        #expect(throws: JSONPathError.self) { try parse(#", "attributes": ["shoeSize"]"#) }
        #expect(throws: JSONPathError.self) { try parse(#", "attributes": [{"name": "extension_X", "type": "Float"}]"#) }
        #expect(throws: JSONPathError.self) { try parse(#", "attributes": [{"name": "city", "type": "Int"}]"#) }
    }
}
