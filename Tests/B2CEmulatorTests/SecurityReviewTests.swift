import B2CKit
import Crypto
import Foundation
import Testing

@testable import B2CEmulator

/// The fourth security review's findings on the tenant's journeys (docs/security.md): each test is the attack, which
/// succeeded before its fix.
@Suite struct SecurityReviewTests {
    /// A quote followed by a combining mark: one Swift `Character`, which an escaper walking `Character`s wrote raw.
    static let breakout = "x\"\u{301} autofocus onfocus=fetch('/_admin/seed') x=\""

    /// Whether `body` holds `needle` as bytes (grapheme-blind, as a browser's tokenizer reads it).
    static func holds(_ body: String, _ needle: String) -> Bool {
        let b = Array(body.utf8), n = Array(needle.utf8)
        guard n.count <= b.count else { return false }
        return (0...(b.count - n.count)).contains { Array(b[$0..<($0 + n.count)]) == n }
    }

    // MARK: finding 1 — reflected script, the pages' policy and the admin surface

    @Test(arguments: ["authorize", "mock provider"])
    func aQuoteWithACombiningMarkStaysInsideItsAttribute(_ page: String) async throws {
        try await TestTenant.with { t in
            let path =
                page == "authorize"
                ? authorizeURL(policy: "B2C_1_susi", redirectURI: "http://localhost", extra: ["login_hint": Self.breakout])
                : "/_idp/google/authorize?" + FormEncoding.encode([
                    ("redirect_uri", t.base + "/contoso.onmicrosoft.com/oauth2/authresp"), ("state", "s"),
                    ("login_hint", Self.breakout),
                ])
            let r = try await t.get(path)
            // (The needles are built outside #expect: its expansion cannot carry a combining mark after a quote.)
            let raw = "\"" + "\u{301} autofocus"
            let escaped = "&quot;" + "\u{301} autofocus onfocus=fetch(&#39;/_admin/seed&#39;)"
            let endedTheAttribute = Self.holds(r.body, raw)
            let stayedInside = Self.holds(r.body, escaped)
            #expect(r.status == 200, "\(r.body.prefix(300))")
            #expect(!endedTheAttribute, "the quote ended the attribute")
            #expect(stayedInside, "\(r.body)")
        }
    }

    @Test func htmlEscapingIsPerScalar() {
        let mark = "\u{301}"
        for (input, expected) in [
            ("\"" + mark, "&quot;" + mark), ("<\u{338}", "&lt;\u{338}"), ("'\u{20DD}", "&#39;\u{20DD}"), ("&" + mark, "&amp;" + mark),
            (">" + mark, "&gt;" + mark), ("Zoë 東京", "Zoë 東京"),
        ] {
            let same = Array(HTML.escape(input).unicodeScalars) == Array(expected.unicodeScalars)
            #expect(same, "\(input.unicodeScalars.map { String($0.value, radix: 16) })")
        }
    }

    /// Every page forbids inline script but the tenant's own auto-submit, which its hash names.
    @Test func thePagesRunNoScriptButTheTenantsOwnAutoSubmit() async throws {
        try await TestTenant.with { t in
            let page = try await t.get(authorizeURL(policy: "B2C_1_susi"))
            let idp = try await t.get(
                "/_idp/google/authorize?"
                    + FormEncoding.encode(["redirect_uri": t.base + "/contoso.onmicrosoft.com/oauth2/authresp", "state": "s"]))
            let b = Browser(t)
            let post = try await b.signIn(email: alice.email, password: alice.password, extra: ["response_mode": "form_post"])
            for r in [page, idp, post] {
                let policy = try #require(r.headers.first(name: "content-security-policy"), "\(r.body.prefix(200))")
                #expect(policy.contains("script-src 'sha256-") && !policy.contains("unsafe-inline") && policy.contains("object-src 'none'"))
                #expect(policy.contains("base-uri 'none'") && policy.contains("frame-ancestors 'none'"))
            }
            // The form_post answer's one script is the one the policy names.
            let script = try #require(
                post.body.range(of: "<script>").map { String(post.body[$0.upperBound...].prefix { $0 != "<" }) })
            let hash = Data(SHA256.hash(data: Data(script.utf8))).base64EncodedString()
            #expect(post.headers.first(name: "content-security-policy")?.contains("'sha256-\(hash)'") == true)
        }
    }

    /// A script on the tenant's own pages is same-origin: the admin surface answers no browser request at all.
    @Test(arguments: [
        [("Sec-Fetch-Site", "same-origin")], [("Sec-Fetch-Site", "same-site")], [("Origin", "SELF")],
        [("Sec-Fetch-Site", "same-origin"), ("Origin", "SELF")],
    ])
    func theAdminSurfaceAnswersNoPageItsOwnIncluded(_ headers: [(String, String)]) async throws {
        try await TestTenant.with { t in
            let sent = headers.map { ($0.0, $0.1 == "SELF" ? t.base : $0.1) }
            let read = try await t.request(.GET, "/_admin/seed", headers: sent)
            #expect(read.status == 403 && !read.body.contains("password"), "\(read.body.prefix(200))")
            #expect(read.json["message"]?.stringValue?.contains("does not answer web pages") == true)
            let users = try await t.admin(.GET, "/users").json["users"]?.arrayValue?.count
            let write = try await t.request(
                .POST, "/_admin/users", json: ["email": "mallory@contoso.com", "password": "Mallory-2026!"], headers: sent)
            #expect(write.status == 403)
            #expect(try await t.admin(.GET, "/users").json["users"]?.arrayValue?.count == users)
        }
    }

    @Test func theAdminSurfaceStillAnswersTestsAndATypedURL() async throws {
        try await TestTenant.with { t in
            let test = try await t.get("/_admin/seed")
            let typed = try await t.get("/_admin/outbox", headers: [("Sec-Fetch-Site", "none")])
            #expect(test.status == 200 && typed.status == 200)
        }
    }

    // MARK: finding 5 — a page layout's script

    /// With JavaScript off, what the regular expressions let through cannot run: the page's policy allows no inline
    /// script, no event handler and no `javascript:` URL. With JavaScript enabled (a contract layout), the layout's do.
    @Test(arguments: [false, true])
    func aLayoutsScriptRunsOnlyWhereThePolicyEnablesJavaScript(_ javascript: Bool) async throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("b2c-layout-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let layout = dir.appendingPathComponent("unified.html")
        try Data(
            """
            <!DOCTYPE html><html><head><title>Contoso</title></head><body>
            <img src="x"/onerror="document.title='pwned'">
            <a href="jav&#x61;script:document.title='pwned'">help</a>
            <svg><a xlink:href="javascript&colon;document.title='pwned'"><text>x</text></a></svg>
            <div id="api"></div></body></html>
            """.utf8
        ).write(to: layout)
        var seed = EmulatorSeed.default
        let i = seed.policies.firstIndex { $0.id == "B2C_1_susi" }!
        seed.policies[i].pageLayouts.javascript = javascript
        seed.policies[i].pageLayouts.pages[.unifiedssp] = .init(
            loadUri: layout.path, dataUri: "urn:com:microsoft:aad:b2c:elements:contract:unifiedssp:2.1.5")
        try await TestTenant.with(seed: seed) { t in
            let page = try await t.get(authorizeURL(policy: "B2C_1_susi"))
            #expect(page.status == 200 && page.body.contains("id=\"localAccountForm\""), "\(page.body.prefix(300))")
            let policy = try #require(page.headers.first(name: "content-security-policy"))
            #expect(policy.contains("script-src") == !javascript, "\(policy)")
            #expect(!policy.contains("unsafe-inline") || javascript)
            #expect(policy.contains("object-src 'none'") && policy.contains("base-uri 'none'"))
        }
    }

    // MARK: finding 2 — which provider may answer

    static func mockCode(_ t: TestTenant, state: String, provider: String = "google", email: String) async throws -> TestResponse {
        let b = Browser(t)
        let idp = try await b.get(
            "/_idp/\(provider)/authorize?"
                + FormEncoding.encode(["redirect_uri": t.base + "/contoso.onmicrosoft.com/oauth2/authresp", "state": state]))
        return try await b.submit(idp, form: "idpSignIn", ["email": email, "name": "Mallory"])
    }

    /// A sign-in that sent nobody to a provider takes no provider's answer: a local-accounts-only policy signed up a Google
    /// person, and a known `sub` signed in as that person.
    @Test(arguments: ["B2C_1_susi", "B2C_1_signin"])
    func aProviderAnswersOnlyASignInSentToIt(_ policy: String) async throws {
        try await TestTenant.with { t in
            let b = Browser(t)
            let page = try await b.get(authorizeURL(policy: policy))
            let tx = MFATests.tx(page)
            #expect(!tx.isEmpty)
            let answer = try await Self.mockCode(t, state: tx, email: "mallory@gmail.com")
            let landed = try await b.submit(answer, form: "hiddenform", [:])
            #expect(!landed.body.contains("Signed in with Google as"), "a social sign-up page at \(policy)")
            #expect(landed.redirectParams["code"] == nil)
            #expect(landed.body.contains("AADB2C90273"), "\(landed.status) \(landed.body.prefix(400))")
            let users = try await t.admin(.GET, "/users").json["users"]?.arrayValue ?? []
            #expect(!users.contains { $0["email"] == "mallory@gmail.com" })
        }
    }

    /// The provider chosen is the one that must answer: a Facebook code for a sign-in sent to Google is refused.
    @Test func anotherProvidersCodeIsRefused() async throws {
        try await TestTenant.with { t in
            let b = Browser(t)
            let page = try await b.get(authorizeURL(policy: FederationTests.policy))
            let chosen = try await b.submit(page, form: "idp_google", [:])
            let location = try #require(chosen.location)
            let state = try #require(URLComponents(string: location)?.queryItems?.first { $0.name == "state" }?.value)
            let forged = try await Self.mockCode(t, state: state, provider: "facebook", email: "mallory@example.com")
            let landed = try await b.submit(forged, form: "hiddenform", [:])
            #expect(landed.body.contains("AADB2C90273") && !landed.body.contains("Signed in with"), "\(landed.body.prefix(400))")
        }
    }

    /// A sign-in-only user flow signs nobody up: a new person from the provider gets B2C's AADB2C99002; a known one
    /// signs in.
    @Test func aSignInOnlyFlowSignsNoNewPersonUp() async throws {
        var seed = EmulatorSeed.default
        var flow = seed.policy(named: "B2C_1_signin")!
        flow.id = "B2C_1_signin_social"
        flow.identityProviders = [.local, .google]
        seed.policies.append(flow)
        try await TestTenant.with(seed: seed) { t in
            let b = Browser(t)
            let page = try await b.get(authorizeURL(policy: flow.id))
            let chosen = try await b.submit(page, form: "idp_google", [:])
            let back = try await FederationTests.providerPage(b, chosen, email: "newcomer@gmail.com", name: "New Comer")
            #expect(back.redirectParams["error"] == "access_denied", "\(back.status) \(back.body.prefix(300))")
            #expect(back.redirectParams["error_description"]?.hasPrefix("AADB2C99002: ") == true)
            // Carol signed up at the sign-up-or-sign-in flow; the sign-in flow lets her in.
            let c = Browser(t)
            let susi = try await c.submit(try await c.get(authorizeURL(policy: FederationTests.policy)), form: "idp_google", [:])
            let signup = try await FederationTests.providerPage(c, susi, email: FederationTests.carol, name: "Carol Gee")
            _ = try await c.submit(signup, form: "attributeVerification", ["givenName": "Carol", "surname": "Gee"])
            let d = Browser(t)
            let again = try await d.submit(try await d.get(authorizeURL(policy: flow.id)), form: "idp_google", [:])
            let signedIn = try await FederationTests.providerPage(d, again, email: FederationTests.carol)
            #expect(signedIn.redirectParams["code"] != nil, "\(signedIn.status) \(signedIn.body.prefix(300))")
        }
    }

    // MARK: finding 3 — native authentication's second factor

    static func externalID(method: EmulatorSeed.SignInMethod, mfa: EmulatorSeed.MFA? = nil) -> EmulatorSeed {
        var seed = EmulatorSeed.defaultExternalID
        let i = seed.policies.firstIndex { $0.id == "B2C_1_susi" }!
        seed.policies[i].signInMethod = method
        seed.policies[i].mfa = mfa
        let a = seed.users.firstIndex { $0.email == alice.email }!
        seed.users[a].mfaRequired = true
        return seed
    }

    /// Alice must do MFA; an emailed code is a first factor, so it cannot end her sign-in.
    @Test func aCodeSignInOfAnMFAUserStillAsksTheSecondFactor() async throws {
        try await TestTenant.with(seed: Self.externalID(method: .emailOtp, mfa: .init(methods: [.email, .phone], enforcement: .off))) {
            t in
            let caps = "mfa_required registration_required"
            let start = try await t.native(
                "oauth2/v2.0/initiate", ["username": alice.email, "challenge_type": "oob password redirect", "capabilities": caps])
            let ch = try await t.native(
                "oauth2/v2.0/challenge", ["challenge_type": "oob password redirect", "continuation_token": start.continuation])
            #expect(ch.json["challenge_type"] == "oob", "an email-OTP flow signs in by code: \(ch.body)")
            let code = try await t.latestCode(to: alice.email)
            let tokens = try await t.native(
                "oauth2/v2.0/token",
                ["grant_type": "oob", "oob": code, "continuation_token": ch.continuation, "scope": "openid offline_access"])
            #expect(tokens.json["access_token"] == nil && tokens.json["id_token"] == nil, "tokens after one emailed code")
            #expect(tokens.json["suberror"] == "registration_required", "\(tokens.body)")
            // Email was the first factor: it is not offered as the second.
            let methods = try await t.native("register/v1.0/introspect", ["continuation_token": tokens.continuation])
            let channels = methods.json["methods"]?.arrayValue?.compactMap { $0["challenge_channel"]?.stringValue }
            #expect(channels == ["sms"], "\(methods.body)")
        }
    }

    /// An "Email with password" user flow offers no emailed code to a password account, whatever the client announces.
    @Test func aPasswordFlowOffersNoCodeSignIn() async throws {
        try await TestTenant.with(seed: Self.externalID(method: .emailPassword)) { t in
            let start = try await t.native("oauth2/v2.0/initiate", ["username": bob.email, "challenge_type": "oob redirect"])
            let ch = try await t.native(
                "oauth2/v2.0/challenge", ["challenge_type": "oob redirect", "continuation_token": start.continuation])
            #expect(ch.json["challenge_type"] == "redirect", "\(ch.body)")
            #expect(try await t.admin(.GET, "/outbox").json["messages"]?.arrayValue?.isEmpty == true, "a code was sent")
        }
    }

    // MARK: findings 6 and 7 — resends and reused authenticator codes

    /// Wrong codes count per journey: a resend between tries does not give five more.
    @Test func aResendDoesNotResetTheWrongCodes() async throws {
        try await TestTenant.with(seed: MFATests.seed) { t in
            let b = Browser(t)
            let page = try await b.signIn(policy: "B2C_1_mfa_email", email: alice.email, password: alice.password)
            var sent = try await b.submit(page, form: "emailSendForm", [:])
            var tries = 0
            while tries < 12 {
                tries += 1
                let answer = try await b.submit(sent, form: "emailVerifyForm", ["ReadOnlyEmail_ver_input": "000001"])
                if answer.redirectParams["error"] != nil {
                    #expect(answer.redirectParams["error_description"]?.hasPrefix("AADB2C90157: ") == true)
                    break
                }
                sent = try await b.submit(answer, form: "emailSendForm", [:])  // a new code, the same tries
            }
            #expect(tries == SecondFactorStep.emailStrikes, "\(tries) wrong codes went through")
        }
    }

    /// A journey sends at most six codes: the seventh ends it.
    @Test func resendsAreCapped() async throws {
        try await TestTenant.with(seed: MFATests.seed) { t in
            let b = Browser(t)
            var page = try await b.signIn(policy: "B2C_1_mfa_email", email: alice.email, password: alice.password)
            var sends = 0
            while sends < 20, page.redirectParams["error"] == nil {
                sends += 1
                page = try await b.submit(page, form: "emailSendForm", [:])
            }
            #expect(sends == SecondFactorStep.maxCodesSent + 1)
            #expect(page.redirectParams["error_description"]?.hasPrefix("AADB2C90157: ") == true)
            #expect(try await MFATests.outbox(t).count == SecondFactorStep.maxCodesSent)
        }
    }

    /// RFC 6238 §5.2: an authenticator code is taken once; the next step's code is taken.
    @Test func anAuthenticatorCodeIsTakenOnce() async throws {
        try await TestTenant.with(seed: MFATests.seed) { t in
            /// Bob's sign-in with the code of `step` (nil: the step of the tenant's clock when the page asks), and that step.
            func signIn(step exactly: Int? = nil) async throws -> (TestResponse, Int) {
                let b = Browser(t)
                let page = try await b.signIn(policy: "B2C_1_mfa_totp", email: bob.email, password: bob.password)
                let step = exactly ?? t.emulator.clock.now() / TOTP.period
                let code = try #require(TOTP.code(secret: MFATests.bobSecret, at: step * TOTP.period))
                return (try await b.submit(page, form: "attributeVerification", ["otpCode": code]), step)
            }
            let (first, step) = try await signIn()
            #expect(first.redirectParams["code"] != nil, "\(first.status) \(first.body.prefix(300))")
            let (replayed, _) = try await signIn(step: step)
            #expect(replayed.redirectParams["code"] == nil && replayed.status == 200, "the same code signed in twice")
            let (next, _) = try await signIn(step: step + 1)
            #expect(next.redirectParams["code"] != nil, "the next step's code is taken")
        }
    }

    // MARK: finding 11 — Microsoft Graph's permissions

    /// Every app gets Graph's User.Read; User.ReadWrite only where its registration names it.
    @Test func userReadWriteOnlyForAnAppThatNamesIt() async throws {
        try await TestTenant.with(seed: .defaultExternalID) { t in
            let pkce = PKCE()
            let scope = "openid offline_access https://graph.microsoft.com/User.ReadWrite"
            let refused = try await Browser(t).get(authorizeURL(pkce: pkce, scope: scope))
            #expect(
                refused.redirectParams["error"] == "invalid_scope",
                "\(refused.status) \(refused.location ?? refused.body.prefix(200).description)")
            let reader = try await GraphTests.graphToken(t, scope: "User.Read")
            let patch = try await t.request(
                .PATCH, "/graph/v1.0/me", json: ["displayName": "Mallory"], headers: [("Authorization", "Bearer \(reader)")])
            #expect(patch.status == 403 && patch.json["error"]?["code"] == "Authorization_RequestDenied", "\(patch.body)")
        }
        var seed = EmulatorSeed.defaultExternalID
        seed.apps[0].apiPermissions.append("https://graph.microsoft.com/User.ReadWrite")
        try await TestTenant.with(seed: seed) { t in
            let writer = try await GraphTests.graphToken(t, scope: "https://graph.microsoft.com/User.ReadWrite")
            let patch = try await t.request(
                .PATCH, "/graph/v1.0/me", json: ["displayName": "Alice W."], headers: [("Authorization", "Bearer \(writer)")])
            #expect(patch.status == 204, "\(patch.body)")
        }
    }
}
