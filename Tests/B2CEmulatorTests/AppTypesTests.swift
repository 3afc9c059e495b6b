@testable import B2CEmulator
import B2CKit
import Crypto
import Foundation
import NIOHTTP1
import Testing

let webApp = EmulatorSeed.defaultWebAppID, webSecret = EmulatorSeed.defaultWebAppSecret
let daemon = EmulatorSeed.defaultDaemonID, daemonSecret = EmulatorSeed.defaultDaemonSecret
let spaApp = EmulatorSeed.defaultSPAID
let helloDefault = "https://contoso.onmicrosoft.com/helloapi/.default"

func basic(_ id: String, _ secret: String) -> (String, String) {
    func enc(_ s: String) -> String { FormEncoding.escape(s) }
    return ("Authorization", "Basic " + Data("\(enc(id)):\(enc(secret))".utf8).base64EncodedString())
}

/// Web apps with secrets, daemons, single-page apps, custom policies and key rollover against the default tenant (issue 12).
@Suite struct ConfidentialClientTests {
    /// Signs Alice in for `client` with `redirectURI` and returns the code (and the PKCE it was bound to).
    static func code(
        _ t: TestTenant, client: String, redirectURI: String, responseType: String = "code", pkce: PKCE? = PKCE(),
        policy: String = "B2C_1_susi", scope: String = "openid offline_access \(helloScope)"
    ) async throws -> (TestResponse, PKCE?) {
        let b = Browser(t)
        let page = try await b.get(
            authorizeURL(
                policy: policy, pkce: pkce, redirectURI: redirectURI, scope: scope,
                extra: ["response_type": responseType, "client_info": ""], client: client))
        #expect(page.status == 200, "\(page.body.prefix(300))")
        let r = try await b.submit(page, form: "localAccountForm", ["logonIdentifier": alice.email, "password": alice.password])
        return (r, pkce)
    }

    @Test func aWebAppRedeemsWithItsSecretPostedOrAsBasicCredentials() async throws {
        try await TestTenant.with { t in
            for auth in ["post", "basic"] {
                let (r, pkce) = try await Self.code(t, client: webApp, redirectURI: "http://localhost/signin-oidc")
                let code = try #require(r.redirectParams["code"])
                var form = redeemForm(code: code, verifier: pkce?.verifier, redirectURI: "http://localhost/signin-oidc")
                form["client_id"] = webApp
                var headers: [(String, String)] = []
                if auth == "post" { form["client_secret"] = webSecret } else { headers = [basic(webApp, webSecret)] }
                let tok = try await t.token("B2C_1_susi", form, headers: headers)
                #expect(tok.status == 200, "\(auth): \(tok.body)")
                // Its refresh token needs the secret too.
                let rt = try #require(tok.json["refresh_token"]?.stringValue)
                let bare = try await t.token("B2C_1_susi", ["grant_type": "refresh_token", "client_id": webApp, "refresh_token": rt])
                expectB2CError(bare, error: "invalid_request", code: "AADB2C90079")
                let refreshed = try await t.token(
                    "B2C_1_susi",
                    [
                        "grant_type": "refresh_token", "client_id": webApp, "refresh_token": rt,
                        "client_secret": webSecret,
                    ])
                #expect(refreshed.status == 200, "\(refreshed.body)")
                #expect(
                    tok.json["scope"] == .string(helloScope) && refreshed.json["scope"] == .string(helloScope),
                    "scope echoes the API's scopes")
            }
        }
    }

    @Test func secretRulesGiveB2CsCodes() async throws {
        try await TestTenant.with { t in
            // A web redirect's code without the secret.
            let (r, pkce) = try await Self.code(t, client: webApp, redirectURI: "http://localhost/signin-oidc")
            var form = redeemForm(
                code: try #require(r.redirectParams["code"]), verifier: pkce?.verifier, redirectURI: "http://localhost/signin-oidc")
            form["client_id"] = webApp
            expectB2CError(try await t.token("B2C_1_susi", form), error: "invalid_request", code: "AADB2C90079")
            // A wrong secret (the code above is spent: any grant shows the client check first).
            expectB2CError(
                try await t.token(
                    "B2C_1_susi",
                    [
                        "grant_type": "client_credentials", "client_id": daemon, "client_secret": "nope",
                        "scope": helloDefault,
                    ]), status: 401, error: "invalid_client", code: "AADB2C90081")
            expectB2CError(
                try await t.token(
                    "B2C_1_susi", ["grant_type": "client_credentials", "scope": helloDefault], headers: [basic(daemon, "nope")]),
                status: 401, error: "invalid_client", code: "AADB2C90081")
            // A public client sending a secret.
            expectB2CError(
                try await t.token(
                    "B2C_1_susi",
                    [
                        "grant_type": "refresh_token", "client_id": clientID, "refresh_token": "x",
                        "client_secret": "s",
                    ]), error: "invalid_request", code: "AADB2C90084")
        }
    }

    @Test func anExpiredSecretIsRefused() async throws {
        var seed = EmulatorSeed.default
        let i = try #require(seed.apps.firstIndex { $0.clientId == daemon })
        seed.apps[i].secrets = [
            EmulatorSeed.Secret(value: "old-secret", expiresAt: 1_000_000_000), EmulatorSeed.Secret(value: "new-secret"),
        ]
        try await TestTenant.with(seed: seed) { t in
            let old = try await t.token(
                "B2C_1_susi",
                [
                    "grant_type": "client_credentials", "client_id": daemon, "client_secret": "old-secret",
                    "scope": helloDefault,
                ])
            expectB2CError(old, status: 401, error: "invalid_client", code: "AADB2C90081")
            let new = try await t.token(
                "B2C_1_susi",
                [
                    "grant_type": "client_credentials", "client_id": daemon, "client_secret": "new-secret",
                    "scope": helloDefault,
                ])
            #expect(new.status == 200, "\(new.body)")
        }
    }
}

@Suite struct ClientCredentialsTests {
    @Test func aDaemonGetsAnAppOnlyTokenAtAnyPolicyAndTheSampleAPIAcceptsIt() async throws {
        try await TestTenant.with { t in
            for policy in ["B2C_1_susi", "B2C_1_ROPC_Auth", "B2C_1A_signup_signin"] {
                let r = try await t.token(
                    policy, ["grant_type": "client_credentials", "scope": helloDefault], headers: [basic(daemon, daemonSecret)])
                #expect(r.status == 200, "\(policy): \(r.body)")
                let body = try #require(r.json.objectValue)
                #expect(
                    Set(body.keys) == ["access_token", "token_type", "not_before", "expires_in", "expires_on", "resource"], "\(body.keys)")
                #expect(body["resource"] == .string(EmulatorSeed.defaultHelloAppID))
                let c = try claims(body["access_token"]?.stringValue)
                #expect(c["aud"] == .string(EmulatorSeed.defaultHelloAppID) && c["azp"] == .string(daemon) && c["scp"] == "hello.read.all")
                #expect(
                    c["sub"] == c["oid"] && c["sub"] == "7c2f1d3b-5e1f-4c2a-9b3d-000000000003" && c["tid"] == .string(t.emulator.tenantID))
                #expect(c["ver"] == "2.0" && c["name"] == nil)
                let hello = try await t.get("/hello", headers: [("Authorization", "Bearer \(body["access_token"]?.stringValue ?? "")")])
                #expect(hello.status == 200 && hello.json["application"] == .string(daemon), "\(hello.body)")
            }
        }
    }

    @Test func scopesRolesAndSecretsAreChecked() async throws {
        try await TestTenant.with { t in
            let wrongScope = try await t.token(
                "B2C_1_susi", ["grant_type": "client_credentials", "scope": helloScope], headers: [basic(daemon, daemonSecret)])
            expectB2CError(wrongScope, error: "invalid_scope", code: "AADB2C90012")
            // The web app has a secret but no app role of the API.
            let noRole = try await t.token(
                "B2C_1_susi", ["grant_type": "client_credentials", "scope": helloDefault], headers: [basic(webApp, webSecret)])
            expectB2CError(noRole, error: "unauthorized_client", code: "AADB2C90205")
            let publicClient = try await t.token(
                "B2C_1_susi", ["grant_type": "client_credentials", "client_id": clientID, "scope": helloDefault])
            expectB2CError(publicClient, error: "unauthorized_client", code: "AADB2C90079")
            let noSecret = try await t.token(
                "B2C_1_susi", ["grant_type": "client_credentials", "client_id": daemon, "scope": helloDefault])
            expectB2CError(noSecret, error: "invalid_request", code: "AADB2C90079")
        }
    }
}

@Suite struct SinglePageAppTests {
    @Test func theTokenEndpointAnswersCORSForRegisteredSPAOriginsOnly() async throws {
        try await TestTenant.with { t in
            let path = "/contoso.onmicrosoft.com/b2c_1_susi/oauth2/v2.0/token"
            let ok = try await t.request(
                .OPTIONS, path,
                headers: [
                    ("Origin", "http://localhost:3000"), ("Access-Control-Request-Method", "POST"),
                    ("Access-Control-Request-Headers", "content-type,x-client-sku"),
                ])
            #expect(ok.headers.first(name: "access-control-allow-origin") == "http://localhost:3000")
            #expect(ok.headers.first(name: "access-control-allow-headers") == "content-type,x-client-sku")
            let other = try await t.request(
                .OPTIONS, path, headers: [("Origin", "http://localhost:4000"), ("Access-Control-Request-Method", "POST")])
            #expect(other.headers.first(name: "access-control-allow-origin") == nil)
            // The SPA's code flow, redeemed cross-origin: the answer carries its origin.
            let (r, pkce) = try await ConfidentialClientTests.code(t, client: spaApp, redirectURI: "http://localhost:3000")
            var form = redeemForm(
                code: try #require(r.redirectParams["code"]), verifier: pkce?.verifier, redirectURI: "http://localhost:3000")
            form["client_id"] = spaApp
            let tok = try await t.token("B2C_1_susi", form, headers: [("Origin", "http://localhost:3000")])
            #expect(tok.status == 200 && tok.headers.first(name: "access-control-allow-origin") == "http://localhost:3000", "\(tok.body)")
            // The public client's answer to the same origin does not (not its origin).
            let refresh = try await t.token(
                "B2C_1_susi", ["grant_type": "refresh_token", "client_id": clientID, "refresh_token": "x"],
                headers: [("Origin", "http://localhost:3000")])
            #expect(refresh.headers.first(name: "access-control-allow-origin") == nil)
            // Discovery and JWKS stay open to any origin.
            #expect(
                try await t.get("/contoso.onmicrosoft.com/b2c_1_susi/discovery/v2.0/keys").headers.first(
                    name: "access-control-allow-origin") == "*")
        }
    }

    @Test func spaRulesPKCEWebCodesAndTwentyFourHourRefreshTokens() async throws {
        try await TestTenant.with { t in
            // Without PKCE: AADB2C99059, sent back to the SPA.
            let page = try await Browser(t).get(authorizeURL(pkce: nil, redirectURI: "http://localhost:3000", client: spaApp))
            #expect(
                B2CErrorDescription.parse(page.redirectParams["error_description"] ?? "").code == "AADB2C99059", "\(page.location ?? "")")
            // A web code redeemed from a browser (cross-origin), even with the secret: AADB2C90079.
            let (web, webPKCE) = try await ConfidentialClientTests.code(t, client: webApp, redirectURI: "http://localhost/signin-oidc")
            var webForm = redeemForm(
                code: try #require(web.redirectParams["code"]), verifier: webPKCE?.verifier, redirectURI: "http://localhost/signin-oidc")
            webForm["client_id"] = webApp
            webForm["client_secret"] = webSecret
            expectB2CError(
                try await t.token("B2C_1_susi", webForm, headers: [("Origin", "http://localhost:3000")]), error: "invalid_request",
                code: "AADB2C90079")
            // A SPA's refresh token: 24 hours from the sign-in, whatever the policy says, and rotation does not extend it.
            let (r, pkce) = try await ConfidentialClientTests.code(t, client: spaApp, redirectURI: "http://localhost:3000")
            var form = redeemForm(
                code: try #require(r.redirectParams["code"]), verifier: pkce?.verifier, redirectURI: "http://localhost:3000")
            form["client_id"] = spaApp
            let tok = try await t.token("B2C_1_susi", form, headers: [("Origin", "http://localhost:3000")])
            #expect(tok.json["refresh_token_expires_in"]?.lenientInt == 86_400, "\(tok.body)")
            try await t.advanceClock(20 * 3600)
            let rotated = try await t.token(
                "B2C_1_susi",
                [
                    "grant_type": "refresh_token", "client_id": spaApp,
                    "refresh_token": tok.json["refresh_token"]?.stringValue ?? "",
                ])
            // (The 24 hours run from the sign-in on the wall clock too, so a second or two may have passed.)
            let left = rotated.json["refresh_token_expires_in"]?.lenientInt ?? 0
            #expect(rotated.status == 200 && (4 * 3600 - 60...4 * 3600).contains(left), "\(rotated.body)")
            try await t.advanceClock(4 * 3600 + 1)
            let expired = try await t.token(
                "B2C_1_susi",
                [
                    "grant_type": "refresh_token", "client_id": spaApp,
                    "refresh_token": rotated.json["refresh_token"]?.stringValue ?? "",
                ])
            expectB2CError(expired, error: "invalid_grant", code: "AADB2C90080")
        }
    }
}

@Suite struct CustomPolicyAndKeyTests {
    @Test func customPoliciesSignWithTheirOwnKeyAndEmitTheStarterPackClaims() async throws {
        try await TestTenant.with { t in
            let tokens = try await signInAndRedeem(t, policy: "B2C_1A_signup_signin")
            let id = try claims(tokens["id_token"]?.stringValue)
            #expect(id["acr"] == "b2c_1a_signup_signin" && id["tfp"] == nil, "\(id)")
            #expect(id["email"] == .string(alice.email) && id["emails"] == nil && id["oid"] == nil && id["sub"] == .string(alice.oid))
            #expect(id["tid"] == .string(t.emulator.tenantID))
            let custom = try JWKSet.parse(
                Data(try await t.get("/contoso.onmicrosoft.com/b2c_1a_signup_signin/discovery/v2.0/keys").body.utf8))
            let userFlow = try JWKSet.parse(Data(try await t.get("/contoso.onmicrosoft.com/b2c_1_susi/discovery/v2.0/keys").body.utf8))
            let idToken = try #require(tokens["id_token"]?.stringValue)
            let kid = try #require(try JWT.decode(idToken).kid)
            #expect(custom.key(kid: kid) != nil && userFlow.key(kid: kid) == nil, "the custom key is published by custom policies only")
            #expect(Set(custom.keys.map(\.kid)).isDisjoint(with: userFlow.keys.map(\.kid)))
            let at = try #require(tokens["access_token"]?.stringValue)
            #expect(throws: JWTError.unknownKey(kid: kid)) { try JWT.decode(at).verifySignature(with: userFlow) }
            try JWT.decode(at).verifySignature(with: custom)
            // The sample API takes both kinds; userinfo answers for the custom policy only.
            #expect(try await t.get("/hello", headers: [("Authorization", "Bearer \(at)")]).status == 200)
            // …each checked with its own policy type's keys: a custom-key token that claims a user flow is refused.
            var claimsOfAT = try JWT.decode(at).claims
            claimsOfAT["acr"] = nil
            claimsOfAT["tfp"] = "B2C_1_susi"
            let customKey = try t.emulator.keys.current(.custom)
            let mixed = try JWT.sign(claims: .object(claimsOfAT), kid: customKey.kid, key: customKey.key)
            #expect(try await t.get("/hello", headers: [("Authorization", "Bearer \(mixed)")]).status == 401)
            let info = try await t.get(
                "/contoso.onmicrosoft.com/B2C_1A_signup_signin/openid/v2.0/userinfo", headers: [("Authorization", "Bearer \(at)")])
            #expect(
                info.status == 200 && info.json["email"] == .string(alice.email) && info.json["sub"] == .string(alice.oid), "\(info.body)")
            let discovery = try await t.get("/contoso.onmicrosoft.com/B2C_1A_signup_signin/v2.0/.well-known/openid-configuration")
            #expect(discovery.json["userinfo_endpoint"]?.stringValue?.hasSuffix("/b2c_1a_signup_signin/openid/v2.0/userinfo") == true)
            let flowInfo = try await t.get(
                "/contoso.onmicrosoft.com/B2C_1_susi/openid/v2.0/userinfo", headers: [("Authorization", "Bearer \(at)")])
            #expect(flowInfo.status == 404)
            #expect(try await t.get("/contoso.onmicrosoft.com/B2C_1A_signup_signin/openid/v2.0/userinfo").status == 401)
        }
    }

    @Test func rotatedKeysSignFromThenOnAndStayPublishedUntilRetired() async throws {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        var oldKid = "", newKid = ""
        try await TestTenant.with(stateDirectory: dir) { t in
            let before = try await signInAndRedeem(t)
            let beforeToken = try #require(before["access_token"]?.stringValue)
            oldKid = try #require(try JWT.decode(beforeToken).kid)
            let rotated = try await t.admin(.POST, "/keys/rotate", ["policyType": "userFlow"])
            #expect(rotated.status == 201)
            newKid = try #require(rotated.json["kid"]?.stringValue)
            let after = try await signInAndRedeem(t)
            let afterToken = try #require(after["access_token"]?.stringValue)
            #expect(try JWT.decode(afterToken).kid == newKid)
            let jwks = try JWKSet.parse(Data(try await t.get("/contoso.onmicrosoft.com/b2c_1_susi/discovery/v2.0/keys").body.utf8))
            #expect(jwks.keys.map(\.kid) == [newKid, oldKid], "the current key first, the old one still published")
            #expect(
                try await t.get("/hello", headers: [("Authorization", "Bearer \(before["access_token"]?.stringValue ?? "")")]).status == 200
            )
        }
        // Keys persist with the state; retiring unpublishes the old one.
        try await TestTenant.with(stateDirectory: dir) { t in
            #expect(t.emulator.jwk.kid == newKid)
            let retired = try await t.admin(.POST, "/keys/retire", [:])
            #expect(retired.json["retired"] == .array([.string(oldKid)]), "\(retired.body)")
            let jwks = try JWKSet.parse(Data(try await t.get("/contoso.onmicrosoft.com/b2c_1_susi/discovery/v2.0/keys").body.utf8))
            #expect(jwks.keys.map(\.kid) == [newKid])
            expectAdminError(try await t.admin(.POST, "/keys/rotate", ["policyType": "both"]), status: 400)
        }
    }

    func expectAdminError(_ r: TestResponse, status: Int, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(r.status == status && r.json["message"] != nil, "\(r.body)", sourceLocation: sourceLocation)
    }
}

@Suite struct FrontChannelTests {
    static func leftHalf(_ s: String) -> String { Base64URL.encode(Data(SHA256.hash(data: Data(s.utf8)).prefix(16))) }

    @Test func hybridAndImplicitAnswersCarryExactlyB2CsFieldsAndTheirHashes() async throws {
        try await TestTenant.with { t in
            let (hybrid, _) = try await ConfidentialClientTests.code(
                t, client: webApp, redirectURI: "http://localhost/signin-oidc",
                responseType: "code id_token", pkce: nil)
            let fragment = hybrid.redirectParams
            #expect(Set(fragment.keys) == ["code", "id_token", "state"], "\(fragment.keys)")
            let id = try claims(fragment["id_token"])
            #expect(id["c_hash"] == .string(Self.leftHalf(fragment["code"] ?? "")) && id["at_hash"] == nil, "\(id)")
            let (implicit, _) = try await ConfidentialClientTests.code(
                t, client: webApp, redirectURI: "http://localhost/signin-oidc",
                responseType: "id_token token", pkce: nil, scope: "openid \(helloScope)")
            let params = implicit.redirectParams
            #expect(Set(params.keys) == ["access_token", "token_type", "expires_in", "scope", "id_token", "state"], "\(params.keys)")
            #expect(try claims(params["id_token"])["at_hash"] == .string(Self.leftHalf(params["access_token"] ?? "")))
            // From the token endpoint too: an id token beside an access token carries at_hash; `scope` echoes the API only.
            let tokens = try await signInAndRedeem(t)
            #expect(
                try claims(tokens["id_token"]?.stringValue)["at_hash"] == .string(Self.leftHalf(tokens["access_token"]?.stringValue ?? "")))
            #expect(tokens["scope"] == .string(helloScope), "\(tokens)")
        }
    }
}
