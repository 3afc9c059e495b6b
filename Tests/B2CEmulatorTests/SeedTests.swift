@testable import B2CEmulator
import B2CKit
import Crypto
import Foundation
import Testing

/// The seed's app types, secrets and app roles (issue 12): both redirect shapes, first-wave seeds, and errors with JSON paths.
@Suite struct SeedTests {
    /// The default seed as JSON, changed by `edit` (a first-wave seed is the default with the new keys taken out).
    static func seedJSON(_ edit: (inout [String: JSONValue]) -> Void) throws -> Data {
        var root = try JSONValue.parse(Data(EmulatorSeed.default.json.serialized().utf8)).objectValue ?? [:]
        edit(&root)
        return Data(JSONValue.object(root).serialized().utf8)
    }

    static func expectPathError(_ data: Data, path: String, mentioning words: String, sourceLocation: SourceLocation = #_sourceLocation) {
        do {
            _ = try EmulatorSeed.parse(data)
            Issue.record("a bad seed was accepted (expected an error at \(path))", sourceLocation: sourceLocation)
        } catch let e as JSONPathError {
            #expect(e.path == path && e.message.contains(words), "\(e)", sourceLocation: sourceLocation)
        } catch {
            Issue.record("\(error)", sourceLocation: sourceLocation)
        }
    }

    @Test func theDefaultSeedRoundTripsWithEveryAppType() throws {
        let seed = try EmulatorSeed.parse(Data(EmulatorSeed.default.json.serialized().utf8))
        #expect(seed == EmulatorSeed.default)
        let types = Set(seed.apps.flatMap { $0.redirects.map(\.type) })
        #expect(types == [.publicClient, .web, .spa])
        #expect(seed.policies.contains { $0.type == .custom && $0.id == "B2C_1A_signup_signin" })
        #expect(seed.apis.first?.applicationRoles == ["https://contoso.onmicrosoft.com/helloapi/hello.read.all"])
    }

    /// The seed's types are `Codable` through the same declarations: Foundation's coders read and write what `parse` and
    /// `json` do, a refusal names its JSON path through them too, and a seed with every optional part round-trips.
    @Test func theSeedIsCodableThroughItsFieldDeclarations() throws {
        let encoded = try JSONEncoder().encode(EmulatorSeed.default)
        #expect(try JSONDecoder().decode(EmulatorSeed.self, from: encoded) == EmulatorSeed.default)
        let fax = try Self.seedJSON { root in
            var policies = root["policies"]?.arrayValue ?? []
            var susi = policies[0].objectValue ?? [:]
            susi["mfa"] = ["methods": ["email", "fax"]]
            policies[0] = .object(susi)
            root["policies"] = .array(policies)
        }
        let refusal = #expect(throws: JSONPathError.self) { try JSONDecoder().decode(EmulatorSeed.self, from: fax) }
        #expect(refusal.map { "\($0)" } == "$.policies[0].mfa.methods[1] is 'fax'; expected email, phone or totp")

        let rich = try Self.seedJSON { root in
            var policies = root["policies"]?.arrayValue ?? []
            var susi = policies[0].objectValue ?? [:]
            susi["identityProviders"] = [
                "local", "google",
                [
                    "type": "oidc", "id": "corp", "discovery": "https://idp.example/.well-known/openid-configuration", "clientId": "c1",
                    "clientSecret": "s", "domainHint": "corp.example",
                ],
                ["type": "saml", "id": "adfs", "name": "ADFS", "metadata": "https://adfs.example/metadata.xml"],
            ]
            susi["session"] = ["lifetimeMinutes": 60, "timeout": "absolute", "sso": "policy"]
            susi["kmsi"] = ["days": 7]
            susi["emailVerification"] = "displayControl"
            susi["attributes"] = ["displayName", "city", ["name": "extension_LoyaltyId", "type": "Int", "required": true]]
            susi["applicationClaims"] = ["city"]
            susi["apiConnectors"] = [
                "preTokenIssuance": ["url": "http://127.0.0.1:9/y", "auth": ["type": "bearer", "token": "t"], "timeoutSeconds": 5]
            ]
            susi["pageLayouts"] = ["unifiedssp": "classic", "javascript": true]
            susi["languages"] = [
                "default": "fr", "enabled": ["fr", "en"],
                "overrides": ["fr": ["LocalizedStrings": [["StringId": "heading", "Value": "Bonjour", "Override": true]]]],
            ]
            susi["forcedPasswordReset"] = true
            policies[0] = .object(susi)
            root["policies"] = .array(policies)
        }
        let seed = try EmulatorSeed.parse(rich)
        let susi = try #require(seed.policies.first)
        #expect(susi.oidcProviders.first?.name == "corp" && susi.samlProviders.first?.name == "ADFS" && susi.session.kmsiDays == 7)
        #expect(susi.languages.overrides["fr"]?["heading"] == "Bonjour" && susi.forcedPasswordReset)
        #expect(try EmulatorSeed.parse(Data(seed.json.serialized().utf8)) == seed, "every part is written as it is read")
    }

    @Test func aFirstWaveSeedStillParses() throws {
        let data = try Self.seedJSON { root in
            root["tenant"] = ["name": "contoso.onmicrosoft.com", "id": .string(EmulatorSeed.defaultTenantID)]
            let publicApp = root["apps"]?.arrayValue?.first?.objectValue ?? [:]
            root["apps"] = [.object(publicApp.filter { !["secrets", "applicationPermissions", "servicePrincipalId"].contains($0.key) })]
            root["apis"] = .array((root["apis"]?.arrayValue ?? []).map { .object(($0.objectValue ?? [:]).filter { $0.key != "appRoles" }) })
            root["policies"] = .array(
                (root["policies"]?.arrayValue ?? []).compactMap { p in
                    guard p["type"] != "custom" else { return nil }
                    return .object((p.objectValue ?? [:]).filter { $0.key != "type" })
                })
        }
        let seed = try EmulatorSeed.parse(data)
        let app = try #require(seed.apps.first)
        #expect(app.redirects == [.init(uri: "http://localhost", type: .publicClient)] && app.secrets.isEmpty)
        let again = try EmulatorSeed.parse(data)
        #expect(UUID(uuidString: app.servicePrincipalId) != nil && app.servicePrincipalId == again.apps[0].servicePrincipalId)
        #expect(seed.policies.allSatisfy { $0.type == .userFlow } && seed.tenant.appTokenPolicyClaim)
    }

    @Test func redirectsSecretsAndRolesAreCheckedWithTheirJSONPaths() throws {
        func withApp(_ change: @escaping (inout [String: JSONValue]) -> Void) throws -> Data {
            try Self.seedJSON { root in
                var apps = root["apps"]?.arrayValue ?? []
                var web = apps[1].objectValue ?? [:]
                change(&web)
                apps[1] = .object(web)
                root["apps"] = .array(apps)
            }
        }
        Self.expectPathError(
            try withApp { $0["redirectUris"] = [["uri": "http://localhost/signin-oidc", "kind": "web"]] },
            path: "$.apps[1].redirectUris[0].kind", mentioning: "not a known key")
        Self.expectPathError(
            try withApp { $0["redirectUris"] = [["uri": "http://localhost/x", "type": "native"]] },
            path: "$.apps[1].redirectUris[0].type", mentioning: "publicClient, web or spa")
        Self.expectPathError(
            try withApp { $0["redirectUris"] = [["uri": "http://app.example/cb", "type": "spa"]] },
            path: "$.apps[1].redirectUris[0]", mentioning: "https")
        Self.expectPathError(try withApp { $0["redirectUris"] = [42] }, path: "$.apps[1].redirectUris[0]", mentioning: "URI or an object")
        Self.expectPathError(try withApp { $0["secrets"] = [["hash": "md5:abc"]] }, path: "$.apps[1].secrets[0]", mentioning: "sha256:")
        Self.expectPathError(
            try withApp { $0["secrets"] = [["value": "s", "expires": "next week"]] },
            path: "$.apps[1].secrets[0].expires", mentioning: "ISO 8601")
        Self.expectPathError(
            try withApp { $0["applicationPermissions"] = ["https://contoso.onmicrosoft.com/helloapi/demo.read"] },
            path: "$.apps[1].applicationPermissions[0]", mentioning: "Application app role")
        let badRole = try Self.seedJSON { root in
            var api = root["apis"]?.arrayValue?.first?.objectValue ?? [:]
            api["appRoles"] = [["value": "x", "allowedMemberTypes": ["Robot"]]]
            root["apis"] = [.object(api)]
        }
        Self.expectPathError(badRole, path: "$.apis[0].appRoles[0].allowedMemberTypes[0]", mentioning: "Application or User")
        let badType = try Self.seedJSON { root in
            var policies = root["policies"]?.arrayValue ?? []
            var p = policies[0].objectValue ?? [:]
            p["type"] = "builtIn"
            policies[0] = .object(p)
            root["policies"] = .array(policies)
        }
        Self.expectPathError(badType, path: "$.policies[0].type", mentioning: "userFlow or custom")
    }

    /// A secret seeded as a hash works like its value (and the hash itself is not a secret that works).
    @Test func hashedAndExpiringSecretsAtTheTokenEndpoint() async throws {
        let value = "hashed-secret-value"
        let hash = "sha256:" + Base64URL.encode(Data(SHA256.hash(data: Data(value.utf8))))
        var seed = EmulatorSeed.default
        let i = try #require(seed.apps.firstIndex { $0.clientId == daemon })
        seed.apps[i].secrets = [.init(hash: hash, expiresAt: nil)]
        let parsed = try EmulatorSeed.parse(Data(seed.json.serialized().utf8))
        #expect(parsed.apps[i].secrets == [.init(hash: hash, expiresAt: nil)], "a hash is kept as a hash")
        try await TestTenant.with(seed: parsed) { t in
            let form = ["grant_type": "client_credentials", "client_id": daemon, "scope": helloDefault]
            #expect(try await t.token("B2C_1_susi", form.merging(["client_secret": value]) { $1 }).status == 200)
            expectB2CError(
                try await t.token("B2C_1_susi", form.merging(["client_secret": hash]) { $1 }), status: 401,
                error: "invalid_client", code: "AADB2C90081")
        }
    }
}
