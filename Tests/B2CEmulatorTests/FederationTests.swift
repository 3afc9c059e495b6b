import B2CKit
import Foundation
import Testing

@testable import B2CEmulator

/// Federated sign-in through the tenant's mock providers, by B2C's element ids (reference: b2c-journeys.md §2).
@Suite struct FederationTests {
    static let policy = "B2C_1_susi_social"
    static let carol = "carol@gmail.com"

    /// The redirect answer's tokens (after the code is redeemed).
    static func redeem(_ t: TestTenant, _ answer: TestResponse, pkce: PKCE, policy: String = policy) async throws -> [String: JSONValue] {
        let code = try #require(answer.redirectParams["code"], "no code in \(answer.location ?? answer.body.prefix(400).description)")
        let tok = try await t.token(policy, redeemForm(code: code, verifier: pkce.verifier))
        #expect(tok.status == 200, "\(tok.body)")
        return try claims(tok.json["id_token"]?.stringValue)
    }

    /// Follows the mock provider's pages with a person typed on its page; returns the page after the tenant's authresp.
    static func providerPage(_ b: Browser, _ page: TestResponse, email: String, name: String? = nil) async throws -> TestResponse {
        let idp = try await b.get(try #require(page.location, "not sent to the provider: \(page.status)"))
        #expect(idp.status == 200 && idp.body.contains("id=\"idpSignIn\""))
        let answer = try await b.submit(idp, form: "idpSignIn", ["email": email, "name": name ?? ""])
        return try await b.submit(answer, form: "hiddenform", [:])
    }

    @Test func theUnifiedPageShowsOneButtonPerProviderWithB2CsIds() async throws {
        try await TestTenant.with { t in
            let page = try await Browser(t).get(authorizeURL(policy: Self.policy))
            #expect(page.body.contains("data-name=\"Unified\"") && page.body.contains("class=\"social\""))
            for id in ["GoogleExchange", "FacebookExchange", "MicrosoftAccountExchange", "AppleExchange"] {
                #expect(page.body.contains("class=\"accountButton") && page.body.contains("id=\"\(id)\""), "\(id)")
            }
            #expect(page.body.contains("id=\"localAccountForm\""), "local accounts stay")
            let plain = try await Browser(t).get(authorizeURL(policy: "B2C_1_susi"))
            #expect(!plain.body.contains("accountButton"))
        }
    }

    @Test func aFirstTimePersonSignsUpPrefilledAndAReturningOneGoesStraightOn() async throws {
        try await TestTenant.with { t in
            let b = Browser(t)
            let pkce = PKCE()
            let page = try await b.get(authorizeURL(policy: Self.policy, pkce: pkce))
            let chosen = try await b.submit(page, form: "idp_google", [:])
            #expect(chosen.status == 302 && chosen.location?.contains("/_idp/google/authorize?") == true)
            #expect(
                chosen.location?.contains("redirect_uri=\(FormEncoding.escape(t.base + "/contoso.onmicrosoft.com/oauth2/authresp"))")
                    == true)
            let signup = try await Self.providerPage(b, chosen, email: Self.carol, name: "Carol Gee")
            #expect(signup.body.contains("Signed in with Google as") && signup.body.contains("value=\"Carol Gee\""))
            let done = try await b.submit(signup, form: "attributeVerification", ["givenName": "Carol", "surname": "Gee"])
            let first = try await Self.redeem(t, done, pkce: pkce)
            #expect(first["idp"] == "google.com" && first["newUser"] == true && first["emails"] == [.string(Self.carol)])
            #expect(first["given_name"] == "Carol" && first["tfp"] == .string(Self.policy))
            // Returning (a fresh browser): the provider answers, no sign-up page, the same person, not new.
            let c = Browser(t)
            let pkce2 = PKCE()
            let again = try await c.submit(try await c.get(authorizeURL(policy: Self.policy, pkce: pkce2)), form: "idp_google", [:])
            let back = try await Self.providerPage(c, again, email: Self.carol)
            let second = try await Self.redeem(t, back, pkce: pkce2)
            #expect(second["oid"] == first["oid"] && second["newUser"] == nil && second["idp"] == "google.com")
            let users = try await t.admin(.GET, "/users").json["users"]?.arrayValue ?? []
            #expect(users.contains { $0["email"] == .string(Self.carol) && $0["identityProvider"] == "google.com" })
        }
    }

    /// `idp_access_token` only where the user flow's application claims name it; a mock provider's is made up.
    @Test func theProvidersAccessTokenOnlyWhenTheApplicationClaimsAskForIt() async throws {
        var seed = EmulatorSeed.default
        var p = seed.policy(named: Self.policy)!
        p.id = "B2C_1_social_token"
        p.applicationClaims = ["idp_access_token"]
        seed.policies.append(p)
        try await TestTenant.with(seed: seed) { t in
            for (policy, wanted) in [("B2C_1_social_token", true), (Self.policy, false)] {
                _ = try await t.admin(.POST, "/idp/facebook/next", ["sub": "fb-9", "email": "eve@example.com", "name": "Eve"])
                let b = Browser(t)
                let pkce = PKCE()
                let start = try await b.get(authorizeURL(policy: policy, pkce: pkce, extra: ["domain_hint": "facebook.com"]))
                var page = try await b.submit(try await b.get(try #require(start.location)), form: "hiddenform", [:])
                if page.form("attributeVerification") != nil { page = try await b.submit(page, form: "attributeVerification", [:]) }
                let token = try await Self.redeem(t, page, pkce: pkce, policy: policy)["idp_access_token"]
                #expect(
                    wanted ? token?.stringValue?.hasPrefix("mock-facebook-") == true : token == nil,
                    "\(policy): \(String(describing: token))")
            }
        }
    }

    @Test func domainHintSkipsThePageAndAQueuedAnswerComesAtOnce() async throws {
        try await TestTenant.with { t in
            let queued = try await t.admin(.POST, "/idp/facebook/next", ["sub": "fb-1", "email": "dan@example.com", "name": "Dan"])
            #expect(queued.status == 201)
            let b = Browser(t)
            let pkce = PKCE()
            let start = try await b.get(authorizeURL(policy: Self.policy, pkce: pkce, extra: ["domain_hint": "facebook.com"]))
            #expect(start.status == 302 && start.location?.contains("/_idp/facebook/authorize?") == true)
            let answered = try await b.get(try #require(start.location))
            #expect(answered.body.contains("name=\"hiddenform\""), "answered at once, no page")
            let signup = try await b.submit(answered, form: "hiddenform", [:])
            let done = try await b.submit(signup, form: "attributeVerification", [:])
            #expect(try await Self.redeem(t, done, pkce: pkce)["idp"] == "facebook.com")
            #expect(try await t.admin(.GET, "/idp/facebook/next").json["next"] == .null, "an answer is used once")
            let log = try await t.admin(.GET, "/log").json["requests"]?.arrayValue ?? []
            #expect(log.contains { $0["endpoint"] == "idp" && $0["grantType"] == "facebook" && $0["outcome"] == "ok" })
            // An unknown hint shows the page.
            let unknown = try await Browser(t).get(authorizeURL(policy: Self.policy, extra: ["domain_hint": "example.org"]))
            #expect(unknown.status == 200 && unknown.body.contains("GoogleExchange"))
        }
    }

    @Test func cancelAtTheProviderIs90273ToTheApp() async throws {
        try await TestTenant.with { t in
            _ = try await t.admin(.POST, "/idp/google/next", ["error": "access_denied", "errorDescription": "Permissions error"])
            let b = Browser(t)
            let chosen = try await b.submit(try await b.get(authorizeURL(policy: Self.policy)), form: "idp_google", [:])
            let answered = try await b.get(try #require(chosen.location))
            let back = try await b.submit(answered, form: "hiddenform", [:])
            #expect(back.redirectParams["error"] == "access_denied")
            #expect(
                back.redirectParams["error_description"]?.hasPrefix(
                    "AADB2C90273: An invalid response was received : 'Error: access_denied,Error Description: Permissions error'") == true)
            // The provider's own Cancel button does the same.
            let c = Browser(t)
            let again = try await c.submit(try await c.get(authorizeURL(policy: Self.policy)), form: "idp_google", [:])
            let page = try await c.get(try #require(again.location))
            let cancelled = try await c.submit(try await c.submit(page, form: "idpCancel", [:]), form: "hiddenform", [:])
            #expect(cancelled.redirectParams["error_description"]?.hasPrefix("AADB2C90273") == true)
        }
    }

    @Test func theProviderAnswersOnlyThisTenantsAuthresp() async throws {
        try await TestTenant.with { t in
            let r = try await t.get("/_idp/google/authorize?redirect_uri=https%3A%2F%2Fevil.example%2Foauth2%2Fauthresp&state=x")
            #expect(r.status == 400)
            #expect(try await t.admin(.POST, "/idp/local/next", ["email": "a@b.c"]).status == 404)
        }
    }

    @Test func theSeedSaysWhatIsWrongWithProviders() throws {
        func parse(_ providers: String, kind: String = "signUpSignIn") -> String? {
            do { _ = try parsePolicySeed("\"identityProviders\": \(providers)", kind: kind) } catch { return "\(error)" }
            return nil
        }
        #expect(parse(#"["google", "local"]"#) == nil)
        #expect(parse(#"["myspace"]"#)?.contains("$.policies[0].identityProviders[0]") == true)
        #expect(parse(#"[{"type": "saml", "id": "S"}]"#)?.contains("$.policies[0].identityProviders[0].metadata") == true)
        #expect(parse(#"[{"type": "oidc"}]"#)?.contains("$.policies[0].identityProviders[0].id") == true)
        #expect(parse(#"[]"#)?.contains("at least one") == true)
        #expect(parse(#"["google"]"#, kind: "editProfile")?.contains("not editProfile") == true)
    }

    /// The tenant an OpenID Connect test federates with: one person (Uma, unknown to the first tenant) and a web app that
    /// may answer to any loopback tenant's `authresp`.
    static var upstreamSeed: EmulatorSeed {
        var seed = EmulatorSeed.default
        seed.users = [
            .init(
                oid: "0c0c0000-5eed-4c0c-8000-000000000c0c", email: "uma@upstream.test", password: "Uma-dev-2026!", displayName: "Uma Up",
                givenName: "Uma", surname: "Up")
        ]
        let app = seed.apps.firstIndex { $0.clientId == EmulatorSeed.defaultWebAppID }!
        seed.apps[app].redirects.append(.init(uri: "http://127.0.0.1/contoso.onmicrosoft.com/oauth2/authresp", type: .web))
        return seed
    }

    /// A generic OpenID Connect provider: the tenant is a real relying party of another tenant (code flow, PKCE, its id
    /// token checked against its JWKS). First time: the social sign-up page, `newUser`, `idp` = the provider's issuer;
    /// the second time the same person goes straight on.
    @Test func anOpenIDConnectProviderIsAnotherTenant() async throws {
        let upstreamSeed = Self.upstreamSeed
        try await TestTenant.with(seed: upstreamSeed) { upstream in
            var seed = EmulatorSeed.default
            var p = seed.policy(named: "B2C_1_susi")!
            p.id = "B2C_1_oidc"
            p.applicationClaims = ["idp_access_token"]
            p.oidcProviders = [
                .init(
                    id: "Upstream", name: "Upstream tenant",
                    discovery: upstream.base + "/contoso.onmicrosoft.com/B2C_1_susi/v2.0/.well-known/openid-configuration",
                    clientId: EmulatorSeed.defaultWebAppID, clientSecret: EmulatorSeed.defaultWebAppSecret,
                    scope: "openid https://contoso.onmicrosoft.com/helloapi/demo.read", domainHint: "upstream.test")
            ]
            seed.policies.append(p)
            try await TestTenant.with(seed: seed) { t in
                let page = try await t.get(authorizeURL(policy: "B2C_1_oidc"))
                #expect(page.body.contains("id=\"UpstreamExchange\"") && page.body.contains(">Upstream tenant</button>"))
                var uma = ScriptedBrowser.Persona(email: "uma@upstream.test", password: "Uma-dev-2026!")
                uma.idp = "Upstream"
                let pkce = PKCE()
                let code = try await scriptedCode(t.base + authorizeURL(policy: "B2C_1_oidc", pkce: pkce), as: uma)
                let c = try claims(
                    try await t.token("B2C_1_oidc", redeemForm(code: code, verifier: pkce.verifier)).json["id_token"]?.stringValue)
                #expect(c["idp"] == .string(upstream.base + "/\(tenantID)/v2.0/"), "\(c)")
                #expect(c["newUser"] == true && c["emails"] == ["uma@upstream.test"] && c["name"] == "Uma Up")
                // The application claims ask for the provider's access token: the upstream tenant's own token.
                let passed = try #require(c["idp_access_token"]?.stringValue.flatMap(JWT.payload(of:)), "\(c)")
                #expect(passed["iss"] == .string(upstream.base + "/\(tenantID)/v2.0/") && passed["sub"] != nil)
                // The upstream tenant saw a PKCE code flow from the web app.
                #expect(
                    try upstream.emulator.store.requests.entries().contains {
                        $0.grantType == "authorization_code" && $0.clientId == EmulatorSeed.defaultWebAppID
                    })
                // Returning, by domain_hint, in a new browser: no page of this tenant is shown, and no newUser.
                let pkce2 = PKCE()
                let code2 = try await scriptedCode(
                    t.base + authorizeURL(policy: "B2C_1_oidc", pkce: pkce2, extra: ["domain_hint": "upstream.test"]), as: uma)
                let c2 = try claims(
                    try await t.token("B2C_1_oidc", redeemForm(code: code2, verifier: pkce2.verifier)).json["id_token"]?.stringValue)
                #expect(c2["newUser"] == nil && c2["oid"] == c["oid"])
                // A forged code for a pending sign-in: the provider's token endpoint refuses it, and so does the tenant.
                let b = Browser(t)
                let chosen = try await b.submit(try await b.get(authorizeURL(policy: "B2C_1_oidc")), form: "idp_Upstream", [:])
                #expect(chosen.location?.hasPrefix(upstream.base + "/contoso.onmicrosoft.com/b2c_1_susi/oauth2/v2.0/authorize?") == true)
                #expect(chosen.redirectParams["code_challenge_method"] == "S256" && chosen.redirectParams["nonce"] != nil)
                let forged = try await b.tenant.post(
                    "/contoso.onmicrosoft.com/oauth2/authresp", ["state": chosen.redirectParams["state"] ?? "", "code": "forged"])
                #expect(forged.body.contains("AADB2C90273") && forged.body.contains("refused the code"), "\(forged.body.prefix(400))")
            }
        }
    }

    /// A provider whose certificate a private CA signed (here a `--tls` tenant): trusted with the provider's `caFile`,
    /// refused without it.
    @Test func aProviderWithAPrivateCAIsTrustedThroughItsCAFile() async throws {
        let upstreamSeed = Self.upstreamSeed
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("b2c-oidc-ca-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: dir) }
        try await TestTenant.with(tls: true, seed: upstreamSeed, stateDirectory: dir) { upstream in
            let ca = dir.appendingPathComponent("ca.pem").path
            var seed = EmulatorSeed.default
            for (id, caFile) in [("B2C_1_trusting", Optional(ca)), ("B2C_1_untrusting", nil)] {
                var p = seed.policy(named: "B2C_1_susi")!
                p.id = id
                p.identityProviders = []
                p.oidcProviders = [
                    .init(
                        id: "Upstream", name: "Upstream tenant",
                        discovery: upstream.base + "/contoso.onmicrosoft.com/B2C_1_susi/v2.0/.well-known/openid-configuration",
                        clientId: EmulatorSeed.defaultWebAppID, clientSecret: EmulatorSeed.defaultWebAppSecret, caFile: caFile)
                ]
                seed.policies.append(p)
            }
            try await TestTenant.with(seed: seed) { t in
                let b = Browser(t)
                let refused = try await b.submit(try await b.get(authorizeURL(policy: "B2C_1_untrusting")), form: "idp_Upstream", [:])
                #expect(
                    refused.body.contains("AADB2C90273") && refused.body.contains("could not be reached"), "\(refused.body.prefix(300))")
                var uma = ScriptedBrowser.Persona(email: "uma@upstream.test", password: "Uma-dev-2026!")
                uma.idp = "Upstream"
                let pkce = PKCE()
                let code = try await scriptedCode(t.base + authorizeURL(policy: "B2C_1_trusting", pkce: pkce), as: uma, caFile: ca)
                let c = try claims(
                    try await t.token("B2C_1_trusting", redeemForm(code: code, verifier: pkce.verifier)).json["id_token"]?.stringValue)
                #expect(c["idp"] == .string(upstream.base + "/\(tenantID)/v2.0/"), "\(c)")
            }
        }
    }

    @Test func aProviderThatCannotBeReachedIsSaidOnThePage() async throws {
        var seed = EmulatorSeed.default
        var p = seed.policy(named: "B2C_1_susi")!
        p.id = "B2C_1_oidc"
        p.oidcProviders = [.init(id: "Gone", name: "Gone", discovery: "http://127.0.0.1:9/.well-known/openid-configuration", clientId: "x")]
        seed.policies.append(p)
        try await TestTenant.with(seed: seed) { t in
            let b = Browser(t)
            let page = try await b.get(authorizeURL(policy: "B2C_1_oidc"))
            let r = try await b.submit(page, form: "idp_Gone", [:])
            #expect(r.body.contains("AADB2C90273") && r.body.contains("could not be reached"), "\(r.body.prefix(500))")
        }
    }

    @Test func theSeedReadsOpenIDConnectProviders() throws {
        func parse(_ providers: String) throws -> EmulatorSeed.Policy {
            try parsePolicySeed("\"identityProviders\": \(providers)")
        }
        let p = try parse(
            #"["local", {"type": "oidc", "id": "Corp", "discovery": "https://idp.example/.well-known/openid-configuration", "#
                + #""clientId": "c1"}]"#
        )
        #expect(
            p.identityProviders == [.local] && p.oidcProviders.first?.exchangeID == "CorpExchange" && p.oidcProviders.first?.name == "Corp")
        var whole = EmulatorSeed.default
        whole.policies.append(p)
        let reread = try EmulatorSeed.parse(Data(whole.json.serialized().utf8))
        #expect(reread.policy(named: "B2C_1_x")?.oidcProviders == p.oidcProviders, "the seed round-trips")
        #expect(throws: JSONPathError.self) { try parse(#"[{"type": "saml", "id": "S"}]"#) }
        #expect(throws: JSONPathError.self) { try parse(#"[{"type": "oidc", "id": "C", "discovery": "ftp://x", "clientId": "c"}]"#) }
        #expect(throws: JSONPathError.self) { try parse(#"[{"type": "oidc", "id": "C", "discovery": "https://x/"}]"#) }
    }
}
