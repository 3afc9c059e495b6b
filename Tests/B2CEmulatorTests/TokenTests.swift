import B2CEmulator
import B2CKit
import Foundation
import Testing

private func refreshForm(_ rt: String?, client: String = clientID) -> [String: String] {
    [
        "grant_type": "refresh_token", "client_id": client, "refresh_token": rt ?? "", "scope": "openid offline_access \(helloScope)",
        "client_info": "1",
    ]
}

/// The default tenant plus a second public client app.
private func seedWithSecondApp() -> (EmulatorSeed, EmulatorSeed.App) {
    var seed = EmulatorSeed.default
    var other = seed.apps[0]
    other.clientId = "99999999-0000-4000-8000-000000000099"
    seed.apps.append(other)
    return (seed, other)
}

@Suite struct TokenTests {
    @Test func codeIsSingleUseAndBoundToVerifierPolicyRedirectAndClient() async throws {
        let (seed, other) = seedWithSecondApp()
        try await TestTenant.with(seed: seed) { t in
            let b = Browser(t)
            _ = try await b.signIn(email: alice.email, password: alice.password)
            func freshCode(_ pkce: PKCE = PKCE()) async throws -> String {
                try #require(try await b.get(authorizeURL(pkce: pkce)).redirectParams["code"])
            }
            let pkce = PKCE()
            var code = try await freshCode(pkce)
            expectB2CError(
                try await t.token("B2C_1_susi", redeemForm(code: code, verifier: PKCE().verifier)), error: "invalid_grant",
                code: "AADB2C90182")
            code = try await freshCode(pkce)
            expectB2CError(
                try await t.token("B2C_1_susi", redeemForm(code: code, verifier: nil)), error: "invalid_request", code: "AADB2C90183")
            code = try await freshCode(pkce)
            expectB2CError(
                try await t.token("B2C_1_susi", redeemForm(code: code, verifier: "short")), error: "invalid_request", code: "AADB2C90183")
            code = try await freshCode(pkce)
            expectB2CError(
                try await t.token("B2C_1_edit_profile", redeemForm(code: code, verifier: pkce.verifier)), error: "invalid_grant",
                code: "AADB2C90088")
            code = try await freshCode(pkce)
            expectB2CError(
                try await t.token("B2C_1_susi", redeemForm(code: code, verifier: pkce.verifier, redirectURI: appRedirect)),
                error: "invalid_grant", code: "AADB2C90006")
            code = try await freshCode(pkce)
            var form = redeemForm(code: code, verifier: pkce.verifier)
            form["client_id"] = other.clientId
            expectB2CError(try await t.token("B2C_1_susi", form), error: "invalid_grant", code: "AADB2C90279")
            // Good redemption, then a replay is refused and revokes what the first one issued.
            code = try await freshCode(pkce)
            let ok = try await t.token("B2C_1_susi", redeemForm(code: code, verifier: pkce.verifier))
            #expect(ok.status == 200)
            expectB2CError(
                try await t.token("B2C_1_susi", redeemForm(code: code, verifier: pkce.verifier)), error: "invalid_grant",
                code: "AADB2C90129")
            expectB2CError(
                try await t.token("B2C_1_susi", refreshForm(ok.json["refresh_token"]?.stringValue)), error: "invalid_grant",
                code: "AADB2C90129")
            // Ten minutes.
            code = try await freshCode(pkce)
            try await t.advanceClock(601)
            expectB2CError(
                try await t.token("B2C_1_susi", redeemForm(code: code, verifier: pkce.verifier)), error: "invalid_grant",
                code: "AADB2C90080")
            // Garbage and missing codes.
            expectB2CError(
                try await t.token("B2C_1_susi", redeemForm(code: "garbage", verifier: pkce.verifier)), error: "invalid_grant",
                code: "AADB2C90090")
            expectB2CError(
                try await t.token("B2C_1_susi", redeemForm(code: "", verifier: pkce.verifier)), error: "invalid_request",
                code: "AADB2C90083")
        }
    }

    @Test func refreshRotatesAndIsBoundToPolicyAndClient() async throws {
        let (seed, other) = seedWithSecondApp()
        try await TestTenant.with(seed: seed) { t in
            let first = try await signInAndRedeem(t)
            let rt1 = try #require(first["refresh_token"]?.stringValue)
            let r = try await t.token("B2C_1_susi", refreshForm(rt1))
            #expect(r.status == 200, "\(r.body)")
            let rt2 = try #require(r.json["refresh_token"]?.stringValue)
            #expect(rt2 != rt1)
            #expect(r.json["access_token"]?.stringValue != first["access_token"]?.stringValue)
            #expect(try ClientInfo.decode(try #require(r.json["client_info"]?.stringValue)).uid == "\(alice.oid)-b2c_1_susi")
            #expect(try await t.token("B2C_1_susi", refreshForm(rt2)).status == 200)
            // Another policy: AADB2C90088. Another client: AADB2C90279.
            expectB2CError(try await t.token("B2C_1_edit_profile", refreshForm(rt2)), error: "invalid_grant", code: "AADB2C90088")
            expectB2CError(
                try await t.token("B2C_1_susi", refreshForm(rt2, client: other.clientId)), error: "invalid_grant", code: "AADB2C90279")
            expectB2CError(try await t.token("B2C_1_susi", refreshForm("not-a-token")), error: "invalid_grant", code: "AADB2C90090")
            expectB2CError(try await t.token("B2C_1_susi", refreshForm(nil)), error: "invalid_request", code: "AADB2C90083")
            // The ?p= form of the token endpoint is the same endpoint.
            let q = try await t.post("/contoso.onmicrosoft.com/oauth2/v2.0/token?p=B2C_1_susi", refreshForm(rt2))
            #expect(q.status == 200)
            // A refresh token is a JWE of the grant (B2C's are JWEs): five parts, no encrypted key, opaque to the client.
            let parts = try #require(q.json["refresh_token"]?.stringValue).split(separator: ".", omittingEmptySubsequences: false)
            #expect(parts.count == 5 && parts[1].isEmpty)
            let header = try JSONValue.parse(try #require(Base64URL.decode(parts[0])))
            #expect(header["alg"]?.stringValue == "dir" && header["enc"]?.stringValue == "A256GCM")
            // Admin revocation: the person's one grant, every token of it (the first as the last).
            let revoked = try await t.admin(.POST, "/users/\(alice.email)/revoke")
            #expect(revoked.status == 200 && revoked.json["revokedGrants"] == 1, "\(revoked.body)")
            for token in [rt1, rt2, q.json["refresh_token"]?.stringValue] {
                expectB2CError(try await t.token("B2C_1_susi", refreshForm(token)), error: "invalid_grant", code: "AADB2C90129")
            }
        }
    }

    @Test func refreshTokenLifetimeAndSlidingWindow() async throws {
        var seed = EmulatorSeed.default
        seed.policies[0].refreshTokenLifetime = 3600
        seed.policies[0].slidingWindow = 7200
        try await TestTenant.with(seed: seed) { t in
            var rt = try #require(try await signInAndRedeem(t)["refresh_token"]?.stringValue)
            // Each refresh within an hour works, until the window of two hours since sign-in closes.
            for _ in 0..<2 {
                try await t.advanceClock(3000)
                let r = try await t.token("B2C_1_susi", refreshForm(rt))
                #expect(r.status == 200, "\(r.body)")
                rt = try #require(r.json["refresh_token"]?.stringValue)
            }
            try await t.advanceClock(1300)  // 7300 s after sign-in; this token is only 1300 s old
            let d = expectB2CError(try await t.token("B2C_1_susi", refreshForm(rt)), error: "invalid_grant", code: "AADB2C90080")
            #expect(d.contains("Grant issued time"))
            // A token past its own lifetime.
            let fresh = try #require(try await signInAndRedeem(t)["refresh_token"]?.stringValue)
            try await t.advanceClock(3601)
            expectB2CError(try await t.token("B2C_1_susi", refreshForm(fresh)), error: "invalid_grant", code: "AADB2C90080")
        }
    }

    @Test func deletedUserGrantIsAADB2C90128() async throws {
        try await TestTenant.with { t in
            let rt = try #require(try await signInAndRedeem(t, email: bob.email, password: bob.password)["refresh_token"]?.stringValue)
            #expect(try await t.admin(.DELETE, "/users/\(bob.email)").status == 204)
            expectB2CError(try await t.token("B2C_1_susi", refreshForm(rt)), error: "invalid_grant", code: "AADB2C90128")
        }
    }

    @Test func ropcOnlyOnTheROPCPolicy() async throws {
        var seed = EmulatorSeed.default
        seed.policies[4].numbersAsStrings = true
        try await TestTenant.with(seed: seed) { t in
            let form = [
                "grant_type": "password", "client_id": clientID, "username": alice.email, "password": alice.password,
                "scope": "openid offline_access \(helloScope)", "client_info": "1",
            ]
            let ok = try await t.token("B2C_1_ROPC_Auth", form)
            #expect(ok.status == 200)
            #expect(ok.json["expires_in"] == "3600", "legacy string numbers when the policy says so")
            #expect(ok.json["refresh_token_expires_in"] == "1209600")
            #expect(try claims(ok.json["id_token"]?.stringValue)["tfp"] == "B2C_1_ROPC_Auth")
            var bad = form
            bad["password"] = "wrong"
            expectB2CError(try await t.token("B2C_1_ROPC_Auth", bad), error: "access_denied", code: "AADB2C90225")
            bad["username"] = "nobody@contoso.com"
            expectB2CError(try await t.token("B2C_1_ROPC_Auth", bad), error: "access_denied", code: "AADB2C90225")
            expectB2CError(try await t.token("B2C_1_susi", form), error: "unauthorized_client", code: "AADB2C90224")
            var missing = form
            missing["username"] = nil
            expectB2CError(try await t.token("B2C_1_ROPC_Auth", missing), error: "invalid_request", code: "AADB2C90083")
            // The ROPC refresh token works on the ROPC policy only.
            let rt = ok.json["refresh_token"]?.stringValue
            #expect(try await t.token("B2C_1_ROPC_Auth", refreshForm(rt)).status == 200)
            expectB2CError(try await t.token("B2C_1_susi", refreshForm(rt)), error: "invalid_grant", code: "AADB2C90088")
        }
    }

    @Test func malformedTokenRequests() async throws {
        try await TestTenant.with { t in
            let path = "/contoso.onmicrosoft.com/B2C_1_susi/oauth2/v2.0/token"
            expectB2CError(try await t.token("B2C_1_susi", ["client_id": clientID]), error: "invalid_request", code: "AADB2C90083")
            expectB2CError(
                try await t.token("B2C_1_susi", ["client_id": clientID, "grant_type": "urn:ietf:params:oauth:grant-type:jwt-bearer"]),
                error: "unsupported_grant_type", code: "AADB2C90086")
            expectB2CError(try await t.token("B2C_1_susi", ["grant_type": "refresh_token"]), error: "invalid_request", code: "AADB2C90083")
            expectB2CError(
                try await t.token("B2C_1_susi", ["grant_type": "refresh_token", "client_id": "nope"]), error: "invalid_client",
                code: "AADB2C90018")
            expectB2CError(
                try await t.token("B2C_1_susi", ["grant_type": "refresh_token", "client_id": clientID, "client_secret": "s"]),
                error: "invalid_request", code: "AADB2C90084")
            expectB2CError(
                try await t.request(.POST, path, json: ["grant_type": "password"]), error: "invalid_request", code: "AADB2C90083")
            expectB2CError(try await t.get(path), status: 405, error: "invalid_request", code: "AADB2C90083")
            expectB2CError(
                try await t.request(.POST, path, body: "grant_type=%zz", headers: [("Content-Type", "application/x-www-form-urlencoded")]),
                error: "invalid_request", code: "AADB2C90083")
            // A form is parsed from the body's bytes: a byte that is not UTF-8 is named as such; raw UTF-8 is read as text.
            let form = [("Content-Type", "application/x-www-form-urlencoded")]
            let notUTF8 = try await t.request(.POST, path, bytes: Array("grant_type=refresh_token&client_id=".utf8) + [0xFF], headers: form)
            expectB2CError(notUTF8, error: "invalid_request", code: "AADB2C90083")
            #expect(notUTF8.json["error_description"]?.stringValue?.contains("The request body is not UTF-8.") == true, "\(notUTF8.body)")
            let rawUTF8 = try await t.request(.POST, path, bytes: Array("grant_type=refresh_token&client_id=é".utf8), headers: form)
            expectB2CError(rawUTF8, error: "invalid_client", code: "AADB2C90018")
            let big = String(repeating: "a", count: 200_000)
            let huge = try await t.request(.POST, path, body: "x=" + big, headers: [("Content-Type", "application/x-www-form-urlencoded")])
            #expect(huge.status == 413)
            #expect(huge.json["error_description"]?.stringValue?.hasPrefix("AADB2C90083") == true)
            let badQuery = try await t.get("/contoso.onmicrosoft.com/B2C_1_susi/oauth2/v2.0/authorize?client_id=%G1")
            #expect(badQuery.status == 400)
        }
    }

    @Test func randomRequestsNeverCrashOrAnswer500() async throws {
        try await TestTenant.with { t in
            let paths = [
                "/", "/contoso.onmicrosoft.com", "/tfp", "/tfp/contoso.onmicrosoft.com", "/contoso.onmicrosoft.com/B2C_1_susi",
                "/contoso.onmicrosoft.com/B2C_1_susi/oauth2/v2.0/token", "/contoso.onmicrosoft.com/B2C_1_susi/oauth2/v2.0/authorize",
                "/contoso.onmicrosoft.com/oauth2/v2.0/initiate", "/contoso.onmicrosoft.com/oauth2/v2.0/challenge",
                "/contoso.onmicrosoft.com/oauth2/v2.0/token", "/contoso.onmicrosoft.com/B2C_1_susi/emulator/signin",
                "/contoso.onmicrosoft.com/B2C_1_reset/emulator/resetverify", "/hello", "/_admin/users", "/_admin/clock",
                "/_admin/faults", "/contoso.onmicrosoft.com/B2C_1_susi/oauth2/v2.0/logout",
            ]
            let keys = [
                "client_id", "grant_type", "code", "refresh_token", "scope", "redirect_uri", "tx", "username", "password",
                "continuation_token", "challenge_type", "response_type", "p", "oob", "logonIdentifier",
            ]
            var rng = SystemRandomNumberGenerator()
            for i in 0..<300 {
                var form: [String: String] = [:]
                for _ in 0..<Int.random(in: 0...5, using: &rng) {
                    form[keys.randomElement(using: &rng)!] = [
                        clientID, "", "x", "authorization_code", "refresh_token", "password", "oob redirect",
                        String(repeating: "é", count: 50), "%", "B2C_1_susi",
                    ].randomElement(using: &rng)!
                }
                let path = paths.randomElement(using: &rng)!
                let r = i % 2 == 0 ? try await t.post(path, form) : try await t.get(path + "?" + FormEncoding.encode(form))
                #expect(r.status < 500, "\(path) \(form) → \(r.status) \(r.body.prefix(200))")
            }
        }
    }
}
