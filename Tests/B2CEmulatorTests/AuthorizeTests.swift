import B2CEmulator
import B2CKit
import Foundation
import Testing

@Suite struct AuthorizeTests {
    @Test(arguments: [false, true]) func authCodeWithPKCEThroughTheSignInPage(tls: Bool) async throws {
        try await TestTenant.with(tls: tls) { t in
            let browser = Browser(t)
            let pkce = PKCE()
            let page = try await browser.get(authorizeURL(pkce: pkce, extra: ["login_hint": alice.email]))
            #expect(page.status == 200)
            for id in ["logonIdentifier", "password", "next", "forgotPassword", "createAccount", "cancel"] {
                #expect(page.body.contains("id=\"\(id)\""), "sign-in page lacks #\(id)")
            }
            #expect(page.form("localAccountForm")?.fields["logonIdentifier"] == alice.email, "login_hint pre-fills the form")
            let r = try await browser.submit(page, form: "localAccountForm", ["logonIdentifier": alice.email, "password": alice.password])
            #expect(r.status == 302)
            #expect(r.location?.hasPrefix(redirect + "?") == true)
            #expect(r.redirectParams["state"] == "st-123")
            let code = try #require(r.redirectParams["code"])
            let info = try ClientInfo.decode(try #require(r.redirectParams["client_info"]))
            #expect(info.uid == "\(alice.oid)-b2c_1_susi")

            let tok = try await t.token("B2C_1_susi", redeemForm(code: code, verifier: pkce.verifier))
            #expect(tok.status == 200, "\(tok.body)")
            let body = tok.json
            for field in [
                "access_token", "id_token", "token_type", "not_before", "expires_in", "expires_on", "resource",
                "id_token_expires_in", "profile_info", "scope", "refresh_token", "refresh_token_expires_in", "client_info",
            ] {
                #expect(body[field] != nil, "token response lacks \(field)")
            }
            #expect(body["expires_in"] == 3600)
            #expect(body["resource"]?.stringValue == EmulatorSeed.defaultHelloAppID)
            #expect(body["scope"]?.stringValue == helloScope)
            let ci = try ClientInfo.decode(try #require(body["client_info"]?.stringValue))
            #expect(ci.homeAccountID == "\(alice.oid)-b2c_1_susi.\(tenantID)")
            #expect(tok.headers.first(name: "cache-control") == "no-store")

            let keys = try JWKSet.parse(Data(try await t.get("/contoso.onmicrosoft.com/b2c_1_susi/discovery/v2.0/keys").body.utf8))
            let id = try JWT.decode(try #require(body["id_token"]?.stringValue))
            try id.verifySignature(with: keys)
            #expect(id.header["typ"] == "JWT" && id.header["alg"] == "RS256" && id.kid == keys.keys[0].kid)
            try id.validateClaims(issuers: ["\(t.base)/\(tenantID)/v2.0/"], audience: clientID, now: Int(Date().timeIntervalSince1970))
            #expect(id.claims["tfp"] == "B2C_1_susi")
            #expect(id.claims["nonce"] == "n-456")
            #expect(id.claims["emails"] == [.string(alice.email)])
            #expect(id.claims["oid"]?.stringValue == alice.oid && id.claims["sub"]?.stringValue == alice.oid)
            #expect(id.claims["ver"] == "1.0")
            #expect(id.claims["name"] == "Alice Example" && id.claims["given_name"] == "Alice" && id.claims["family_name"] == "Example")
            #expect(id.claims["newUser"] == nil)
            let at = try JWT.decode(try #require(body["access_token"]?.stringValue))
            try at.verifySignature(with: keys)
            #expect(at.claims["aud"]?.stringValue == EmulatorSeed.defaultHelloAppID)
            #expect(at.claims["scp"] == "demo.read")
            #expect(at.claims["azp"]?.stringValue == clientID)
            #expect(at.claims["tfp"] == "B2C_1_susi")
        }
    }

    @Test func responseModesFragmentAndFormPostAndPlainPKCE() async throws {
        var seed = EmulatorSeed.default
        seed.apps[0].allowImplicitFlow = true
        try await TestTenant.with(seed: seed) { t in
            // form_post: an auto-submitting form with a visible Continue button.
            let b = Browser(t)
            let fp = try await b.signIn(email: alice.email, password: alice.password, extra: ["response_mode": "form_post"])
            #expect(fp.status == 200)
            let form = try #require(fp.form("hiddenform"))
            #expect(form.action == redirect)
            #expect(form.fields["code"] != nil && form.fields["state"] == "st-123")
            // fragment, with SSO (no form).
            let frag = try await b.get(authorizeURL(extra: ["response_mode": "fragment"]))
            #expect(frag.status == 302)
            #expect(frag.location?.contains("#code=") == true || frag.location?.contains("#") == true)
            #expect(frag.redirectParams["code"] != nil)
            // implicit id_token token in the fragment.
            let implicit = try await b.get(authorizeURL(pkce: nil, extra: ["response_type": "id_token token"]))
            #expect(implicit.redirectParams["id_token"] != nil && implicit.redirectParams["access_token"] != nil)
            // PKCE plain.
            let verifier = Random.token(bytes: 40)
            let plain = try await b.get(authorizeURL(pkce: nil, extra: ["code_challenge": verifier]))
            let code = try #require(plain.redirectParams["code"])
            let tok = try await t.token("B2C_1_susi", redeemForm(code: code, verifier: verifier))
            #expect(tok.status == 200, "\(tok.body)")
        }
    }

    @Test func ssoSessionPromptLoginAndPromptNone() async throws {
        try await TestTenant.with { t in
            let b = Browser(t)
            // No session: prompt=none fails with AADB2C90077.
            let none = try await b.get(authorizeURL(extra: ["prompt": "none"]))
            #expect(none.redirectParams["error"] == "interaction_required")
            #expect(none.redirectParams["error_description"]?.hasPrefix("AADB2C90077") == true)
            #expect(none.redirectParams["state"] == "st-123")
            _ = try await b.signIn(email: alice.email, password: alice.password)
            // Second authorize in the same browser: no form.
            let again = try await b.get(authorizeURL())
            #expect(again.status == 302 && again.redirectParams["code"] != nil)
            // prompt=none now works.
            let silent = try await b.get(authorizeURL(extra: ["prompt": "none"]))
            #expect(silent.redirectParams["code"] != nil)
            // prompt=login forces the form.
            let login = try await b.get(authorizeURL(extra: ["prompt": "login"]))
            #expect(login.status == 200 && login.form("localAccountForm") != nil)
            // A login_hint for someone else also shows the form.
            let other = try await b.get(authorizeURL(extra: ["login_hint": bob.email]))
            #expect(other.status == 200 && other.form("localAccountForm") != nil)
            // Another browser has no session.
            let fresh = try await Browser(t).get(authorizeURL())
            #expect(fresh.status == 200)
        }
    }

    @Test func wrongPasswordAndUnknownUserStayOnThePage() async throws {
        try await TestTenant.with { t in
            let b = Browser(t)
            let wrong = try await b.signIn(email: alice.email, password: "nope")
            #expect(wrong.status == 200)
            #expect(wrong.body.contains("Your password is incorrect."))
            #expect(wrong.form("localAccountForm")?.fields["logonIdentifier"] == alice.email)
            let unknown = try await b.submit(wrong, form: "localAccountForm", ["logonIdentifier": "nobody@contoso.com", "password": "x"])
            #expect(unknown.body.contains("find your account"))
            let ok = try await b.submit(unknown, form: "localAccountForm", ["logonIdentifier": alice.email, "password": alice.password])
            #expect(ok.redirectParams["code"] != nil)
        }
    }

    @Test func forgotPasswordAndCancelReturnB2CErrors() async throws {
        try await TestTenant.with { t in
            let b = Browser(t)
            let page = try await b.get(authorizeURL())
            let forgot = try await b.follow(page, link: "forgotPassword")
            #expect(forgot.redirectParams["error"] == "access_denied")
            #expect(forgot.redirectParams["error_description"]?.hasPrefix("AADB2C90118: The user has forgotten their password.") == true)
            #expect(forgot.redirectParams["state"] == "st-123")
            let page2 = try await b.get(authorizeURL(state: "s2"))
            let cancel = try await b.follow(page2, link: "cancel")
            #expect(cancel.redirectParams["error"] == "access_denied")
            #expect(
                cancel.redirectParams["error_description"]?.hasPrefix(
                    "AADB2C90091: The user has cancelled entering self-asserted information.") == true)
            #expect(cancel.redirectParams["state"] == "s2")
            // The transaction is spent: the page cannot be reused.
            let reused = try await b.submit(page2, form: "localAccountForm", ["logonIdentifier": alice.email, "password": alice.password])
            #expect(reused.status == 400 && reused.body.contains("expired"))
        }
    }

    @Test func signUpCreatesTheUserAndMarksNewUser() async throws {
        try await TestTenant.with { t in
            let b = Browser(t)
            let page = try await b.get(authorizeURL())
            let form = try await b.follow(page, link: "createAccount")
            for id in [
                "email", "email_ver_but_send", "newPassword", "reenterPassword", "displayName", "givenName", "surname", "continue",
                "cancel",
            ] {
                #expect(form.body.contains("id=\"\(id)\""), "sign-up page lacks #\(id)")
            }
            let signup = try await SignUpTests.verify(t, b, form, email: "carol@contoso.com")
            let weak = try await b.submit(
                signup, form: "attributeVerification",
                ["email": "carol@contoso.com", "newPassword": "short", "reenterPassword": "short"])
            #expect(weak.status == 200 && weak.body.contains("between 8 and 64"))
            let mismatch = try await b.submit(
                weak, form: "attributeVerification",
                ["email": "carol@contoso.com", "newPassword": "Carol-2026-pw", "reenterPassword": "Carol-2026-px"])
            #expect(mismatch.body.contains("do not match"))
            let done = try await b.submit(
                mismatch, form: "attributeVerification",
                [
                    "email": "carol@contoso.com", "newPassword": "Carol-2026-pw", "reenterPassword": "Carol-2026-pw",
                    "displayName": "Carol C", "givenName": "Carol", "surname": "Sample",
                ])
            #expect(done.redirectParams["code"] != nil, "\(done.status) \(done.body.prefix(500))")
            // Signed up and signed in: the same browser now has a session for the new account.
            let pair = PKCE()
            let sso = try await b.get(authorizeURL(pkce: pair))
            let tok = try await t.token("B2C_1_susi", redeemForm(code: try #require(sso.redirectParams["code"]), verifier: pair.verifier))
            let c = try claims(tok.json["id_token"]?.stringValue)
            #expect(c["emails"] == ["carol@contoso.com"] && c["name"] == "Carol C")
            let users = try await t.admin(.GET, "/users")
            #expect(users.body.contains("carol@contoso.com"))
        }
    }

    @Test func newUserClaimOnTheFirstToken() async throws {
        try await TestTenant.with { t in
            let b = Browser(t)
            let pkce = PKCE()
            let page = try await b.get(authorizeURL(pkce: pkce))
            let form = try await b.follow(page, link: "createAccount")
            let signup = try await SignUpTests.verify(t, b, form, email: "dave@contoso.com")
            let done = try await b.submit(
                signup, form: "attributeVerification",
                [
                    "email": "dave@contoso.com", "newPassword": "Dave-2026-pw", "reenterPassword": "Dave-2026-pw",
                    "givenName": "Dave", "surname": "D",
                ])
            let tok = try await t.token("B2C_1_susi", redeemForm(code: try #require(done.redirectParams["code"]), verifier: pkce.verifier))
            #expect(try claims(tok.json["id_token"]?.stringValue)["newUser"] == true)
            #expect(try claims(tok.json["id_token"]?.stringValue)["name"] == "Dave D")
        }
    }

    @Test func editProfileUsesTheSessionAndChangesLaterTokens() async throws {
        try await TestTenant.with { t in
            let b = Browser(t)
            let first = try await signInAndRedeem(t, b)
            let pkce = PKCE()
            let page = try await b.get(authorizeURL(policy: "B2C_1_edit_profile", pkce: pkce, extra: ["login_hint": alice.email]))
            #expect(
                page.status == 200 && page.body.contains("Edit your profile") && page.form("localAccountForm") == nil, "SSO skips sign-in")
            let cancelled = try await b.follow(page, link: "cancel")
            #expect(cancelled.redirectParams["error_description"]?.hasPrefix("AADB2C90091") == true)
            let page2 = try await b.get(authorizeURL(policy: "B2C_1_edit_profile", pkce: pkce))
            let done = try await b.submit(
                page2, form: "attributeVerification", ["displayName": "Alice Renamed", "givenName": "Alicia", "surname": "Example"])
            let tok = try await t.token(
                "B2C_1_edit_profile", redeemForm(code: try #require(done.redirectParams["code"]), verifier: pkce.verifier))
            let c = try claims(tok.json["id_token"]?.stringValue)
            #expect(c["name"] == "Alice Renamed" && c["given_name"] == "Alicia" && c["tfp"] == "B2C_1_edit_profile")
            #expect(try ClientInfo.decode(try #require(tok.json["client_info"]?.stringValue)).uid == "\(alice.oid)-b2c_1_edit_profile")
            // The sign-up/sign-in policy's refresh token now yields the new name too.
            let refreshed = try await t.token(
                "B2C_1_susi",
                [
                    "grant_type": "refresh_token", "client_id": clientID,
                    "refresh_token": try #require(first["refresh_token"]?.stringValue),
                    "scope": "openid offline_access \(helloScope)",
                ])
            #expect(try claims(refreshed.json["id_token"]?.stringValue)["name"] == "Alice Renamed")
            // Without a session, edit profile asks to sign in first.
            let anon = Browser(t)
            let signin = try await anon.get(authorizeURL(policy: "B2C_1_edit_profile"))
            let profile = try await anon.submit(signin, form: "localAccountForm", ["logonIdentifier": bob.email, "password": bob.password])
            #expect(profile.body.contains("Edit your profile") && profile.body.contains(bob.email))
        }
    }

    @Test func resetPasswordWithEmailedCodeRevokesOldGrants() async throws {
        try await TestTenant.with { t in
            let old = try await signInAndRedeem(t, email: bob.email, password: bob.password)
            let b = Browser(t)
            let pkce = PKCE()
            let page = try await b.get(authorizeURL(policy: "B2C_1_reset", pkce: pkce))
            let unknown = try await b.submit(page, form: "attributeVerification", ["email": "ghost@contoso.com"])
            #expect(unknown.body.contains("could not be found"))
            let verify = try await b.submit(unknown, form: "attributeVerification", ["email": bob.email])
            #expect(verify.body.contains("verificationCode"))
            let code = try await t.latestCode(to: bob.email)
            #expect(code.count == 6)
            let wrong = try await b.submit(
                verify, form: "attributeVerification",
                [
                    "verificationCode": "000000" == code ? "111111" : "000000", "newPassword": "Bob-new-2026!",
                    "reenterPassword": "Bob-new-2026!",
                ])
            #expect(wrong.body.contains("does not match our records"))
            let done = try await b.submit(
                wrong, form: "attributeVerification",
                ["verificationCode": code, "newPassword": "Bob-new-2026!", "reenterPassword": "Bob-new-2026!"])
            let authCode = try #require(done.redirectParams["code"], "\(done.body.prefix(400))")
            let tok = try await t.token("B2C_1_reset", redeemForm(code: authCode, verifier: pkce.verifier))
            #expect(try claims(tok.json["id_token"]?.stringValue)["tfp"] == "B2C_1_reset")
            // The refresh token from before the reset is revoked.
            let stale = try await t.token(
                "B2C_1_susi",
                [
                    "grant_type": "refresh_token", "client_id": clientID,
                    "refresh_token": try #require(old["refresh_token"]?.stringValue),
                ])
            expectB2CError(stale, error: "invalid_grant", code: "AADB2C90129")
            // The new password works, the old one does not.
            let newLogin = try await t.token(
                "B2C_1_ROPC_Auth",
                [
                    "grant_type": "password", "client_id": clientID, "username": bob.email,
                    "password": "Bob-new-2026!", "scope": "openid",
                ])
            #expect(newLogin.status == 200)
            let oldLogin = try await t.token(
                "B2C_1_ROPC_Auth",
                [
                    "grant_type": "password", "client_id": clientID, "username": bob.email,
                    "password": bob.password, "scope": "openid",
                ])
            expectB2CError(oldLogin, error: "access_denied", code: "AADB2C90225")
        }
    }

    @Test func invalidAuthorizeRequestsAreShownOrRedirectedAsB2CDoes() async throws {
        try await TestTenant.with { t in
            // No safe redirect: error pages, never a Location.
            let pages: [(String, String)] = [
                ("/contoso.onmicrosoft.com/B2C_1_susi/oauth2/v2.0/authorize?response_type=code&redirect_uri=\(redirect)", "AADB2C90008"),
                (authorizeURL().replacingOccurrences(of: clientID, with: "00000000-0000-0000-0000-000000000000"), "AADB2C90018"),
                (authorizeURL(redirectURI: "https://evil.example/cb"), "AADB2C90006"),
                (authorizeURL(redirectURI: "http://localhost:8400/other"), "AADB2C90006"),
                (authorizeURL(redirectURI: ""), "AADB2C90006"),
            ]
            for (url, code) in pages {
                let r = try await t.get(url)
                #expect(r.status == 400 && r.location == nil && r.body.contains(code), "\(url) → \(r.status) \(r.location ?? "")")
            }
            // Loopback on any port and 127.0.0.1 are accepted for http://localhost.
            #expect(try await t.get(authorizeURL(redirectURI: appRedirect)).status == 200)
            // Redirected errors, with state.
            let redirected: [([String: String], String, String)] = [
                (["response_type": "bogus"], "unsupported_response_type", "AADB2C90013"),
                (["response_type": "id_token"], "unauthorized_client", "AADB2C90057"),
                (["response_mode": "carrier_pigeon"], "invalid_request", "AADB2C90014"),
                (["prompt": "sometimes"], "invalid_request", "AADB2C90043"),
                (["scope": ""], "invalid_request", "AADB2C90010"),
                (["scope": "openid https://contoso.onmicrosoft.com/helloapi/demo.delete"], "invalid_scope", "AADB2C90012"),
                (["scope": "openid \(helloScope) \(clientID)"], "invalid_request", "AADB2C90146"),
                (["scope": "offline_access"], "invalid_request", "AADB2C90115"),
                (["code_challenge_method": "S512"], "invalid_request", "AADB2C90184"),
                (["code_challenge": "too-short"], "invalid_request", "AADB2C90183"),
                (["max_age": "soon"], "invalid_request", "AADB2C90120"),
            ]
            for (extra, error, code) in redirected {
                let r = try await t.get(authorizeURL(extra: extra))
                #expect(r.status == 302, "\(extra)")
                #expect(r.redirectParams["error"] == error, "\(extra): \(r.redirectParams)")
                #expect(r.redirectParams["error_description"]?.hasPrefix(code + ":") == true, "\(extra): \(r.redirectParams)")
                #expect(r.redirectParams["state"] == "st-123")
            }
            let ropc = try await t.get(authorizeURL(policy: "B2C_1_ROPC_Auth"))
            #expect(ropc.redirectParams["error"] == "invalid_request")
        }
    }

    @Test func logoutEndsTheSessionAndRedirectsWithState() async throws {
        try await TestTenant.with { t in
            let b = Browser(t)
            _ = try await b.signIn(email: alice.email, password: alice.password)
            #expect(try await b.get(authorizeURL()).status == 302)
            let out = try await b.get(
                "/contoso.onmicrosoft.com/B2C_1_susi/oauth2/v2.0/logout?post_logout_redirect_uri=\(FormEncoding.escape(appRedirect))&"
                    + "state=bye"
            )
            #expect(out.status == 302)
            #expect(out.location == appRedirect + "?state=bye")
            #expect(b.cookies.isEmpty)
            // The next sign-in shows the form again, even with the old cookie replayed.
            #expect(try await b.get(authorizeURL()).status == 200)
            let bad = try await t.get(
                "/contoso.onmicrosoft.com/B2C_1_susi/oauth2/v2.0/logout?post_logout_redirect_uri=https://evil.example/")
            #expect(bad.status == 400 && bad.location == nil)
            let plain = try await t.get("/contoso.onmicrosoft.com/B2C_1_susi/oauth2/v2.0/logout")
            #expect(plain.status == 200 && plain.body.contains("signed out"))
        }
    }
}
