import B2CKit
import Foundation
import Testing

@Suite struct AuthorityTests {
    @Test(arguments: [
        (
            "https://contoso.b2clogin.com/contoso.onmicrosoft.com/B2C_1_susi", "contoso.onmicrosoft.com", "B2C_1_susi",
            ClientConfiguration.AuthorityForm.path
        ),
        ("https://contoso.b2clogin.com/tfp/contoso.onmicrosoft.com/B2C_1_susi/", "contoso.onmicrosoft.com", "B2C_1_susi", .tfp),
        (
            "https://contoso.b2clogin.com/8f2c6d4e-1a3b-4c5d-9e7f-0a1b2c3d4e5f/b2c_1_signin", "8f2c6d4e-1a3b-4c5d-9e7f-0a1b2c3d4e5f",
            "b2c_1_signin", .path
        ),
        (
            "https://login.contoso.com/contoso.onmicrosoft.com/B2C_1A_signup_signin", "contoso.onmicrosoft.com", "B2C_1A_signup_signin",
            .path
        ),
        (
            "https://contoso.b2clogin.com/contoso.onmicrosoft.com/oauth2/v2.0/authorize?p=B2C_1_susi", "contoso.onmicrosoft.com",
            "B2C_1_susi", .query
        ),
        (
            "https://contoso.b2clogin.com/contoso.onmicrosoft.com/v2.0/.well-known/openid-configuration?p=B2C_1_susi",
            "contoso.onmicrosoft.com", "B2C_1_susi", .query
        ),
        ("http://127.0.0.1:8443/contoso.onmicrosoft.com/B2C_1_susi", "contoso.onmicrosoft.com", "B2C_1_susi", .path),
    ])
    func parsesEveryForm(_ text: String, _ tenant: String, _ policy: String, _ form: ClientConfiguration.AuthorityForm) throws {
        let a = try Authority.parse(text)
        #expect(a.tenant == tenant && a.policy == policy && a.form == form)
        // And builds the discovery URL in the same form.
        let again = try Authority.parse(a.url.absoluteString)
        #expect(again == a)
        #expect(a.discoveryURL.absoluteString.contains("v2.0/.well-known/openid-configuration"))
    }

    @Test(arguments: [
        "http://contoso.b2clogin.com/contoso.onmicrosoft.com/B2C_1_susi", "https://contoso.b2clogin.com/", "not a url",
        "https://contoso.b2clogin.com/contoso.onmicrosoft.com", "ftp://x/y/z",
    ])
    func refusesBadAuthorities(_ text: String) {
        #expect(throws: AuthorityError.self) { try Authority.parse(text) }
    }

    @Test func buildsEachFormFromConfiguration() throws {
        for (form, expected) in [
            ("path", "https://h.example/contoso.onmicrosoft.com/B2C_1_susi/v2.0/.well-known/openid-configuration"),
            ("tfp", "https://h.example/tfp/contoso.onmicrosoft.com/B2C_1_susi/v2.0/.well-known/openid-configuration"),
            ("query", "https://h.example/contoso.onmicrosoft.com/v2.0/.well-known/openid-configuration?p=b2c_1_susi"),
        ] {
            let json = """
                {"tenant": {"name": "contoso.onmicrosoft.com"}, "authorityHost": "https://h.example", "authorityForm": "\(form)",
                 "clientId": "3f6b8c9d-2e1a-4b7c-8d9e-0f1a2b3c4d5e", "knownAuthorities": ["h.example"],
                 "policies": [{"name": "B2C_1_susi", "role": "signUpSignIn"}]}
                """
            let c = try ClientConfiguration.parse(Data(json.utf8))
            #expect(c.authority(for: c.policies[0]).discoveryURL.absoluteString == expected)
        }
    }
}

@Suite struct ConfigurationTests {
    @Test func theExampleConfigurationIsValid() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let c = try ClientConfiguration.load(path: root.appendingPathComponent("policies.example.json").path)
        #expect(c.policies(role: .signUpSignIn).count == 1 && c.apis.count >= 1 && c.nativeAuth != nil)
    }

    /// The second wave's keys: app identity, External ID, and their errors with JSON paths.
    @Test func appIdentityAndExternalIDKeys() throws {
        func parse(
            _ extra: String, policies: String = #""policies": [{"name": "B2C_1_susi", "role": "signUpSignIn"}],"#,
            host: String = "https://contoso.b2clogin.com"
        ) throws -> ClientConfiguration {
            let known = URL(string: host)!.host!
            let json = """
                {"tenant": {"name": "contoso.onmicrosoft.com"}, "authorityHost": "\(host)",
                    "clientId": "3f6b8c9d-2e1a-4b7c-8d9e-0f1a2b3c4d5e",
                 "knownAuthorities": ["\(known)"], \(policies) \(extra) "redirectUri": "http://localhost"}
                """
            return try ClientConfiguration.parse(Data(json.utf8), source: "/etc/b2c/policies.json")
        }
        let web = try parse(#""confidential": true, "clientAuthMethod": "client_secret_basic", "clientSecretFile": "web.secret","#)
        #expect(web.confidential && web.clientAuthMethod == .basic && web.clientSecretFile == "/etc/b2c/web.secret")
        #expect(try parse("").confidential == false && (try parse("")).clientAuthMethod == .post && (try parse("")).tenantType == .b2c)
        let external = try parse("", policies: "", host: "https://contoso.ciamlogin.com")
        #expect(external.tenantType == .externalId && external.policies.isEmpty)
        #expect(
            external.externalIdAuthority?.discoveryURL.absoluteString
                == "https://contoso.ciamlogin.com/contoso.onmicrosoft.com/v2.0/.well-known/openid-configuration")
        #expect(try parse(#""tenantType": "externalId","#, policies: "").externalIdAuthority != nil)
        #expect(
            try parse(
                #""policies": [{"name": "B2C_1_cc", "role": "clientCredentials"}, {"name": "B2C_1_susi", "role": "signUpSignIn"}],"#,
                policies: ""
            ).policies(role: .clientCredentials).count == 1)
        for (extra, policies, host, path) in [
            (#""clientAuthMethod": "private_key_jwt","#, nil, nil, "$.clientAuthMethod"),
            (#""tenantType": "aad","#, nil, nil, "$.tenantType"),
            (#""clientSecretFile": "","#, nil, nil, "$.clientSecretFile"),
            ("", #""policies": [{"name": "B2C_1_susi", "role": "signUpSignIn"}],"#, "https://contoso.ciamlogin.com", "$.policies"),
            // A host that a percent escape makes (a space here) is no host name: refused, not built into URLs.
            ("", nil, "https://b2c%20x.example", "$.authorityHost"),
        ] {
            do {
                _ = try parse(
                    extra, policies: policies ?? #""policies": [{"name": "B2C_1_susi", "role": "signUpSignIn"}],"#,
                    host: host ?? "https://contoso.b2clogin.com")
                Issue.record("accepted \(extra) \(policies ?? "")")
            } catch let e as JSONPathError {
                #expect(e.path == path, "\(e)")
            }
        }
    }

    @Test func lookupOrder() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("b2c-cfg-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir.appendingPathComponent("xdg/b2c"), withIntermediateDirectories: true)
        let xdg = dir.appendingPathComponent("xdg/b2c/policies.json").path
        try Data("{}".utf8).write(to: URL(fileURLWithPath: xdg))
        #expect(try ClientConfiguration.locate(explicit: "/x.json", environment: ["B2C_CONFIG": "/y.json"]).path == "/x.json")
        #expect(
            try ClientConfiguration.locate(explicit: nil, environment: ["B2C_CONFIG": "/y.json"], currentDirectory: dir.path).path
                == "/y.json")
        #expect(
            try ClientConfiguration.locate(
                explicit: nil, environment: ["XDG_CONFIG_HOME": dir.appendingPathComponent("xdg").path],
                currentDirectory: dir.path
            ).path == xdg)
        try Data("{}".utf8).write(to: dir.appendingPathComponent("policies.json"))
        #expect(
            try ClientConfiguration.locate(
                explicit: nil, environment: ["XDG_CONFIG_HOME": dir.appendingPathComponent("xdg").path],
                currentDirectory: dir.path
            ).path == dir.appendingPathComponent("policies.json").path)
        let none = try ClientConfiguration.locate(explicit: nil, environment: ["HOME": "/nonexistent"], currentDirectory: "/nonexistent")
        #expect(none.path == nil && none.searched.count == 2)
        // Profiles: --profile before B2C_CONFIG, B2C_PROFILE after it; a missing one lists those there are.
        let profiles = dir.appendingPathComponent("xdg/b2c/profiles")
        try FileManager.default.createDirectory(at: profiles, withIntermediateDirectories: true)
        try Data("{}".utf8).write(to: profiles.appendingPathComponent("dev.json"))
        let env = ["XDG_CONFIG_HOME": dir.appendingPathComponent("xdg").path, "B2C_CONFIG": "/y.json", "B2C_PROFILE": "dev"]
        #expect(
            try ClientConfiguration.locate(explicit: nil, profile: "dev", environment: env).path
                == profiles.appendingPathComponent("dev.json").path)
        #expect(try ClientConfiguration.locate(explicit: nil, environment: env).path == "/y.json")
        #expect(
            try ClientConfiguration.locate(explicit: nil, environment: env.merging(["B2C_CONFIG": ""]) { $1 }, currentDirectory: dir.path)
                .path
                == profiles.appendingPathComponent("dev.json").path)
        #expect { try ClientConfiguration.locate(explicit: nil, profile: "prod", environment: env) } throws: { e in
            (e as? B2CError).map { $0.kind == .configuration && $0.message.contains("profiles: dev") } == true
        }
    }
}

@Suite struct TokenResponseTests {
    @Test func numbersMayBeStrings() throws {
        let r = try TokenResponse.parse(
            Data(
                (#"{"access_token":"a","id_token":"i","token_type":"Bearer","expires_in":"3600","expires_on":"1700003600","#
                    + #""not_before":"1700000000","refresh_token":"r"}"#).utf8))
        #expect(r.expiresIn == 3600 && r.expiresOn == 1_700_003_600 && r.notBefore == 1_700_000_000)
        #expect(r.accessTokenExpiry(now: 100) == 3700)
        let n = try TokenResponse.parse(Data(#"{"access_token":"a","expires_in":60}"#.utf8))
        #expect(n.expiresIn == 60)
    }

    @Test(arguments: [
        #"not json"#, #"[]"#, #"{"expires_in": 5}"#, #"{"access_token": 5}"#, #"{"access_token":"a","expires_in":"soon"}"#,
        #"{"access_token":"a","token_type":"MAC"}"#, #"{"access_token":"a","client_info":"!!"}"#,
    ])
    func malformedResponsesAreProtocolErrors(_ body: String) {
        #expect(throws: ProtocolError.self) { try TokenResponse.parse(Data(body.utf8)) }
    }

    @Test func oauthErrorsCarryTheB2CCode() {
        let e = OAuthError.parse(
            status: 400,
            Data(
                (#"{"error":"invalid_grant","error_description":"AADB2C90080: The provided grant has expired.\r\nCorrelation ID: "#
                    + #"x\r\nTimestamp: y\r\n"}"#).utf8))
        #expect(e?.code == "AADB2C90080" && e?.needsInteraction == true)
        #expect(e?.description == "invalid_grant AADB2C90080: The provided grant has expired.")
        #expect(OAuthError.parse(status: 500, Data("<html>".utf8)) == nil)
    }
}
