import B2CProtocol
import Foundation
import Testing

@testable import B2CEmulator

/// A twin tenant (docs/migration.md): one directory served as a B2C tenant and as its External ID side at once, with High
/// Scale Compatibility's rules — the same person under the same object id on both, each side its own issuer, keys,
/// subject and app registrations.
@Suite struct TwinTenantTests {
    static let externalClient = EmulatorSeed.defaultTwinClientID

    /// The External ID side's authorize URL: no policy in it.
    static func externalAuthorize(client: String = externalClient, pkce: PKCE) -> String {
        authorizeURL(policy: "_", pkce: pkce, client: client)
            .replacingOccurrences(of: "/contoso.onmicrosoft.com/_/", with: "/contoso.onmicrosoft.com/")
    }

    /// Redeems a code on the External ID side for its public client.
    static func externalRedeem(_ t: TestTenant, _ answer: TestResponse, pkce: PKCE) async throws -> JSONValue {
        let code = try #require(answer.redirectParams["code"], "no code: \(answer.location ?? String(answer.body.prefix(400)))")
        var form = redeemForm(code: code, verifier: pkce.verifier)
        form["client_id"] = externalClient
        let tokens = try await t.request(.POST, "/contoso.onmicrosoft.com/oauth2/v2.0/token", form: form)
        #expect(tokens.status == 200, "\(tokens.body)")
        return tokens.json
    }

    /// Both sides for the length of `body`.
    static func withTwin(tls: Bool = false, _ body: (TestTenant, TestTenant) async throws -> Void) async throws {
        let (b2c, externalId) = try await TestTenant.twin(tls: tls)
        do { try await body(b2c, externalId) } catch {
            await externalId.stop()
            await b2c.stop()
            throw error
        }
        await externalId.stop()
        await b2c.stop()
    }

    @Test func onePersonHasOneObjectIdAndEachSidesIssuerKeysAndSubject() async throws {
        try await Self.withTwin { b2c, externalId in
            let b2cDiscovery = try await b2c.get("/contoso.onmicrosoft.com/B2C_1_susi/v2.0/.well-known/openid-configuration").json
            let eidDiscovery = try await externalId.get("/contoso.onmicrosoft.com/v2.0/.well-known/openid-configuration").json
            let b2cIssuer = try #require(b2cDiscovery["issuer"]?.stringValue)
            let eidIssuer = try #require(eidDiscovery["issuer"]?.stringValue)
            #expect(b2cIssuer != eidIssuer && b2cIssuer.hasPrefix(b2c.base) && eidIssuer.hasPrefix(externalId.base))
            let b2cKeys = try JWKSet.parse(Data(try await b2c.get(try #require(b2cDiscovery["jwks_uri"]?.stringValue)).body.utf8))
            let eidKeys = try JWKSet.parse(Data(try await externalId.get(try #require(eidDiscovery["jwks_uri"]?.stringValue)).body.utf8))
            #expect(Set(b2cKeys.keys.map(\.kid)).isDisjoint(with: eidKeys.keys.map(\.kid)), "each side signs with keys of its own")

            let old = try claims(try await signInAndRedeem(b2c)["id_token"]?.stringValue)
            let pkce = PKCE()
            let b = Browser(externalId)
            let signedIn = try await b.signInOnPage(try await b.get(Self.externalAuthorize(pkce: pkce)), alice.email, alice.password)
            let tokens = try await Self.externalRedeem(externalId, signedIn, pkce: pkce)
            let new = try claims(tokens["id_token"]?.stringValue)
            #expect(old["oid"]?.stringValue == alice.oid && new["oid"]?.stringValue == alice.oid, "the same object id on both sides")
            #expect(old["iss"]?.stringValue == b2cIssuer && new["iss"]?.stringValue == eidIssuer)
            #expect(old["sub"]?.stringValue == alice.oid, "B2C's sub is the object id")
            let pairwise = try #require(new["sub"]?.stringValue)
            #expect(pairwise != alice.oid && pairwise.count == 43, "Entra's sub is pairwise: \(pairwise)")
            #expect(old["tfp"] == "B2C_1_susi" && old["emails"] == [.string(alice.email)] && old["tid"] == nil)
            #expect(new["tfp"] == nil && new["tid"]?.stringValue == tenantID && new["preferred_username"]?.stringValue == alice.email)
            // Each side's token verifies against its own keys only.
            let idToken = try #require(tokens["id_token"]?.stringValue)
            #expect(throws: Never.self) { try JWT.decode(idToken).verifySignature(with: eidKeys) }
            #expect(throws: (any Error).self) { try JWT.decode(idToken).verifySignature(with: b2cKeys) }
        }
    }

    @Test func anAppRegisteredOnOneSideIsRefusedOnTheOther() async throws {
        try await Self.withTwin { b2c, externalId in
            let page = try await Browser(externalId).get(Self.externalAuthorize(client: clientID, pkce: PKCE()))
            #expect(page.body.contains("AADSTS700016") && page.body.contains("cannot be reused for External ID endpoints"), "\(page.body)")
            let refused = try await b2c.token(
                "B2C_1_ROPC_Auth",
                [
                    "grant_type": "password", "client_id": Self.externalClient, "username": alice.email, "password": alice.password,
                    "scope": "openid \(Self.externalClient)",
                ])
            let description = expectB2CError(refused, error: "invalid_client", code: "AADB2C90018")
            #expect(description.contains("External ID endpoints"), "\(description)")
            // Each side's own app is served.
            let signedIn = try await Browser(externalId).signInOnPage(
                try await Browser(externalId).get(Self.externalAuthorize(pkce: PKCE())), alice.email, alice.password)
            #expect(signedIn.redirectParams["code"] != nil)
        }
    }

    @Test func aSignUpOnTheExternalIDSideSignsInOnTheB2CSide() async throws {
        try await Self.withTwin { b2c, externalId in
            let b = Browser(externalId)
            let pkce = PKCE()
            let form = try await b.follow(try await b.get(Self.externalAuthorize(pkce: pkce)), link: "createAccount")
            let verified = try await SignUpTests.verify(externalId, b, form, email: "nina@contoso.com")
            let done = try await b.submit(
                verified, form: "attributeVerification",
                [
                    "email": "nina@contoso.com", "newPassword": "Nina-2026-pw!", "reenterPassword": "Nina-2026-pw!", "displayName": "Nina",
                    "givenName": "Nina", "surname": "Ng",
                ])
            let new = try claims(try await Self.externalRedeem(externalId, done, pkce: pkce)["id_token"]?.stringValue)
            let oid = try #require(new["oid"]?.stringValue)
            // The old app signs the new person in with the same password, under the same object id.
            let old = try await b2c.token(
                "B2C_1_ROPC_Auth",
                [
                    "grant_type": "password", "client_id": clientID, "username": "nina@contoso.com", "password": "Nina-2026-pw!",
                    "scope": "openid \(clientID)",
                ])
            #expect(old.status == 200, "\(old.body)")
            #expect(try claims(old.json["id_token"]?.stringValue)["oid"]?.stringValue == oid)
        }
    }

    @Test func theTwinSeedReadsAndWritesAndRefusesAnAppOnBothSides() throws {
        let seed = EmulatorSeed.defaultTwin
        #expect(try EmulatorSeed.parse(Data(seed.json.serialized().utf8)) == seed)
        var json = seed.json
        var twin = json["twin"]?.objectValue ?? [:]
        var apps = twin["apps"]?.arrayValue ?? []
        apps.append(seed.apps[0].json)
        twin["apps"] = .array(apps)
        json = .object((json.objectValue ?? [:]).merging(["twin": .object(twin)]) { _, new in new })
        #expect {
            try EmulatorSeed.parse(Data(json.serialized().utf8))
        } throws: { error in
            let e = error as? JSONPathError
            return e?.path == "$.twin.apps[3].clientId" && e?.message.contains("serves one side") == true
        }
        var external = seed.json.objectValue ?? [:]
        external["tenant"] = .object((seed.json["tenant"]?.objectValue ?? [:]).merging(["tenantType": "externalId"]) { _, new in new })
        #expect(throws: JSONPathError.self) { try EmulatorSeed.parse(Data(JSONValue.object(external).serialized().utf8)) }
    }

    /// msal-python on both sides, PyJWT against each side's keys (Tests/interop/twin_interop.py).
    @Test func msalPythonSignsTheSamePersonInOnBothSides() async throws {
        let out = try await Self.interop("twin_interop.py") { b2c, externalId, ca in [b2c.base, ca, externalId.base] }
        #expect(out["oid"]?.stringValue == alice.oid && out["b2cPolicy"] == "B2C_1_susi" && out["externalIdTid"]?.stringValue == tenantID)
        #expect(out["b2cIssuer"] != out["externalIdIssuer"] && out["b2cSub"] != out["externalIdSub"], "\(out)")
    }

    /// A script of Tests/interop run against a TLS twin (both sides under one CA): its arguments from the sides and the
    /// CA file's path; its last line of output, as JSON.
    static func interop(_ script: String, arguments: (TestTenant, TestTenant, String) -> [String]) async throws -> JSONValue {
        var out = JSONValue.null
        try await withTwin(tls: true) { b2c, externalId in
            let ca = temporaryDirectory().appendingPathComponent("ca.pem")
            try Data(try #require(b2c.server.tls?.caCertificatePEM).utf8).write(to: ca)
            let r = try await runOffThePool(
                packageRoot.appendingPathComponent("Tests/interop/run.sh"), [script] + arguments(b2c, externalId, ca.path))
            #expect(r.status == 0, "\(script) failed:\n\(r.stdout)\n\(r.stderr.suffix(3000))")
            out = try JSONValue.parse(Data((r.stdout.split(separator: "\n").last.map(String.init) ?? "{}").utf8))
        }
        return out
    }
}

extension Browser {
    /// The sign-in page's form submitted with these credentials.
    func signInOnPage(_ page: TestResponse, _ email: String, _ password: String) async throws -> TestResponse {
        #expect(page.status == 200, "authorize: \(page.status) \(page.body.prefix(300))")
        return try await submit(page, form: "localAccountForm", ["logonIdentifier": email, "password": password])
    }
}
