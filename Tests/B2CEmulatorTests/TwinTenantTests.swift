import B2CProtocol
import ChildProcess
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

    /// Both sides (of the default twin, or of `seed`) for the length of `body`.
    static func withTwin(
        seed: EmulatorSeed = .defaultTwin, tls: Bool = false, _ body: (TestTenant, TestTenant) async throws -> Void
    ) async throws {
        let (b2c, externalId) = try await TestTenant.twin(seed: seed, tls: tls)
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

    @Test func aSignUpOnTheB2CSideSignsInOnTheExternalIDSide() async throws {
        try await Self.withTwin { b2c, externalId in
            let b = Browser(b2c)
            let pkce = PKCE()
            let form = try await b.follow(try await b.get(authorizeURL(pkce: pkce)), link: "createAccount")
            let verified = try await SignUpTests.verify(b2c, b, form, email: "omar@contoso.com")
            let done = try await b.submit(
                verified, form: "attributeVerification",
                [
                    "email": "omar@contoso.com", "newPassword": "Omar-2026-pw!", "reenterPassword": "Omar-2026-pw!", "displayName": "Omar",
                    "givenName": "Omar", "surname": "Oz",
                ])
            let code = try #require(done.redirectParams["code"], "\(done.location ?? String(done.body.prefix(400)))")
            let old = try claims(
                try await b2c.token("B2C_1_susi", redeemForm(code: code, verifier: pkce.verifier)).json["id_token"]?.stringValue)
            #expect(old["newUser"] == true)
            // The new app signs the person in with the same password, under the same object id.
            let newPKCE = PKCE()
            let e = Browser(externalId)
            let signedIn = try await e.signInOnPage(
                try await e.get(Self.externalAuthorize(pkce: newPKCE)), "omar@contoso.com", "Omar-2026-pw!")
            let new = try claims(try await Self.externalRedeem(externalId, signedIn, pkce: newPKCE)["id_token"]?.stringValue)
            #expect(new["oid"] != nil && new["oid"] == old["oid"] && new["name"] == "Omar", "\(new)")
        }
    }

    /// An app-only token for the hello API (client credentials with the daemon's secret) at a side's token endpoint.
    static func helloAppToken(_ t: TestTenant, _ tokenPath: String, client: String) async throws -> String {
        let r = try await t.request(
            .POST, tokenPath,
            form: [
                "grant_type": "client_credentials", "client_id": client, "client_secret": EmulatorSeed.defaultDaemonSecret,
                "scope": "https://contoso.onmicrosoft.com/helloapi/.default",
            ])
        return try #require(r.json["access_token"]?.stringValue, "\(r.body)")
    }

    /// App roles: the External ID side's app-only token holds them in `roles` (`idtyp: app`), as Entra issues it; the B2C
    /// side's in `scp`, and no B2C token carries Entra's claims. (The seed assigns app roles to apps, not to people.)
    @Test func appRolesAreEntrasRolesOnTheExternalIDSideAndScpOnTheB2CSide() async throws {
        var seed = EmulatorSeed.defaultTwin
        var daemon = try #require(seed.apps.first { $0.clientId == EmulatorSeed.defaultDaemonID })
        daemon.clientId = "7d3a2e4c-1f6b-4a5d-8cae-4b7f3a2d9e10"
        daemon.name = "daemon-external-id"
        seed.twin?.apps.append(daemon)
        try await Self.withTwin(seed: seed) { b2c, externalId in
            let eidToken = try await Self.helloAppToken(externalId, "/contoso.onmicrosoft.com/oauth2/v2.0/token", client: daemon.clientId)
            let eid = try claims(eidToken)
            #expect(eid["roles"] == ["hello.read.all"] && eid["idtyp"] == "app" && eid["scp"] == nil, "\(eid)")
            let b2cToken = try await Self.helloAppToken(
                b2c, "/contoso.onmicrosoft.com/B2C_1_susi/oauth2/v2.0/token", client: EmulatorSeed.defaultDaemonID)
            let old = try claims(b2cToken)
            #expect(old["scp"] == "hello.read.all" && old["roles"] == nil && old["idtyp"] == nil, "\(old)")
            // Each side's API takes its own side's app token, and finds the role.
            for (t, token) in [(externalId, eidToken), (b2c, b2cToken)] {
                let hello = try await t.get("/hello", headers: [("Authorization", "Bearer \(token)")])
                #expect(hello.status == 200 && hello.json["roles"] == ["hello.read.all"], "\(hello.body)")
            }
            // A person's B2C tokens: none of Entra's claims.
            let tokens = try await signInAndRedeem(b2c)
            for token in [tokens["id_token"], tokens["access_token"]] {
                let c = try claims(token?.stringValue)
                #expect(c["ver"] == "1.0" && c["tfp"] == "B2C_1_susi")
                for entraOnly in ["tid", "preferred_username", "idtyp", "roles"] { #expect(c[entraOnly] == nil, "\(entraOnly): \(c)") }
            }
        }
    }

    /// The default twin with `change` made to the user flow both sides share (the External ID side's apps' user flow).
    static func twinWithSharedFlow(_ change: (inout EmulatorSeed.Policy) -> Void) -> EmulatorSeed {
        var seed = EmulatorSeed.defaultTwin
        let susi = seed.policies.firstIndex { $0.id == "B2C_1_susi" }!
        change(&seed.policies[susi])
        return seed
    }

    /// A second factor registered on one side is the person's on the other: the External ID side asks for a code to the
    /// phone registered on the B2C side, and for no number.
    @Test func aPhoneRegisteredOnTheB2CSideIsNotRegisteredAgainOnTheExternalIDSide() async throws {
        let seed = Self.twinWithSharedFlow { $0.mfa = .init(methods: [.phone], enforcement: .always) }
        try await Self.withTwin(seed: seed) { b2c, externalId in
            let b = Browser(b2c)
            let enrol = try await b.signIn(email: alice.email, password: alice.password)
            #expect(enrol.body.contains("id=\"number\""), "the first sign-in registers a phone")
            let sent = try await b.submit(enrol, form: "phoneSendForm", ["countryCode": "+1", "number": "425 555 0123", "channel": "sms"])
            let first = try #require(try await MFATests.outbox(b2c).first)
            let registered = try await b.submit(sent, form: "codeVerification", ["verificationCode": first["code"]?.stringValue ?? ""])
            #expect(registered.redirectParams["code"] != nil, "\(registered.location ?? registered.body)")

            let e = Browser(externalId)
            let pkce = PKCE()
            let asked = try await e.signInOnPage(try await e.get(Self.externalAuthorize(pkce: pkce)), alice.email, alice.password)
            #expect(asked.body.contains("XXXXXXXX0123") && !asked.body.contains("id=\"number\""), "\(asked.body.prefix(600))")
            let resent = try await e.submit(asked, form: "phoneSendForm", ["channel": "sms"])
            let messages = try await MFATests.outbox(externalId)
            let second = try #require(messages.first)
            #expect(messages.count == 2 && second["to"] == "+14255550123", "a second code, to the same phone: \(messages)")
            let done = try await e.submit(resent, form: "codeVerification", ["verificationCode": second["code"]?.stringValue ?? ""])
            #expect(
                try claims(try await Self.externalRedeem(externalId, done, pkce: pkce)["id_token"]?.stringValue)["oid"]
                    == .string(alice.oid))
        }
    }

    /// A person who signed up through a provider on one side is the same object through that provider on the other.
    @Test func aPersonFederatedOnTheB2CSideIsTheSameObjectOnTheExternalIDSide() async throws {
        let seed = Self.twinWithSharedFlow { $0.identityProviders = [.local, .google] }
        try await Self.withTwin(seed: seed) { b2c, externalId in
            let b = Browser(b2c)
            let pkce = PKCE()
            let chosen = try await b.submit(try await b.get(authorizeURL(pkce: pkce)), form: "idp_google", [:])
            let signUp = try await FederationTests.providerPage(b, chosen, email: FederationTests.carol, name: "Carol Gee")
            let done = try await b.submit(signUp, form: "attributeVerification", ["givenName": "Carol", "surname": "Gee"])
            let old = try await FederationTests.redeem(b2c, done, pkce: pkce, policy: "B2C_1_susi")
            #expect(old["idp"] == "google.com" && old["newUser"] == true, "\(old)")

            let e = Browser(externalId)
            let newPKCE = PKCE()
            let again = try await e.submit(try await e.get(Self.externalAuthorize(pkce: newPKCE)), form: "idp_google", [:])
            let back = try await FederationTests.providerPage(e, again, email: FederationTests.carol)
            let new = try claims(try await Self.externalRedeem(externalId, back, pkce: newPKCE)["id_token"]?.stringValue)
            #expect(new["oid"] != nil && new["oid"] == old["oid"], "the same object: \(new)")
            #expect(new["idp"] == "google.com" && new["newUser"] == nil, "a returning person, no sign-up page: \(new)")
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

    /// The built `b2c-emulator serve --twin`: the External ID side on `--twin-port`, each side's client configuration
    /// (`--config-out`, `--twin-config-out`) naming its own host, and each side's discovery document its own issuer.
    @Test func serveTwinListensForBothSidesEachWithItsOwnIssuer() async throws {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let twinPort = try Self.freeLoopbackPort()
        let b2cConfig = dir.appendingPathComponent("b2c.json").path
        let eidConfig = dir.appendingPathComponent("external-id.json").path
        let ready = dir.appendingPathComponent("twin.ready").path
        var env = ProcessInfo.processInfo.environment
        for k in env.keys where k.hasPrefix("B2C_") { env[k] = nil }
        env["B2C_HOME"] = dir.appendingPathComponent("home").path
        let out = try ChildPipe()
        let serving = try ChildProcess(
            JourneyRecorderTests.emulatorBinary,
            [
                "serve", "--twin", "--in-memory", "--port", "0", "--twin-port", "\(twinPort)", "--config-out", b2cConfig,
                "--twin-config-out", eidConfig, "--ready-file", ready,
            ], environment: env, stdout: out.writeEnd.fd)
        out.writeEnd.close()
        drain(out.readEnd) { _ in }
        defer {
            serving.interrupt()
            serving.waitUntilExit()
        }
        let waited = try await runOffThePool(JourneyRecorderTests.emulatorBinary, ["wait", ready], environment: env)
        try #require(waited.status == 0, "\(waited.stderr)")

        func authorityHost(_ config: String) throws -> String {
            try #require(try JSONValue.parse(Data(contentsOf: URL(fileURLWithPath: config)))["authorityHost"]?.stringValue)
        }
        let (b2cBase, eidBase) = (try authorityHost(b2cConfig), try authorityHost(eidConfig))
        #expect(eidBase == "http://127.0.0.1:\(twinPort)" && b2cBase != eidBase, "\(b2cBase) \(eidBase)")
        func issuer(_ discovery: String) async throws -> String? {
            let r = try await runOffThePool(URL(fileURLWithPath: "/usr/bin/curl"), ["-sf", discovery])
            return try JSONValue.parse(Data(r.stdout.utf8))["issuer"]?.stringValue
        }
        let b2cIssuer = try await issuer("\(b2cBase)/contoso.onmicrosoft.com/B2C_1_susi/v2.0/.well-known/openid-configuration")
        let eidIssuer = try await issuer("\(eidBase)/contoso.onmicrosoft.com/v2.0/.well-known/openid-configuration")
        #expect(
            b2cIssuer == "\(b2cBase)/\(tenantID)/v2.0/" && eidIssuer == "\(eidBase)/\(tenantID)/v2.0/",
            "\(b2cIssuer ?? "") \(eidIssuer ?? "")")
    }

    /// A loopback port nothing listens on now (the kernel's pick), for a program that must be given its port.
    static func freeLoopbackPort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
        }
        try #require(fd >= 0 && bound, "no free loopback port: \(String(cString: strerror(errno)))")
        return Int(UInt16(bigEndian: address.sin_port))
    }

    /// msal-python on both sides, PyJWT against each side's keys (Tests/interop/twin_interop.py).
    @Test func msalPythonSignsTheSamePersonInOnBothSides() async throws {
        let out = try await Self.interop("twin_interop.py") { b2c, externalId, ca in [b2c.base, ca, externalId.base] }
        #expect(out["oid"]?.stringValue == alice.oid && out["b2cPolicy"] == "B2C_1_susi" && out["externalIdTid"]?.stringValue == tenantID)
        #expect(out["b2cIssuer"] != out["externalIdIssuer"] && out["b2cSub"] != out["externalIdSub"], "\(out)")
    }

    /// An API configured with both sides' metadata (Tests/interop/twin_api_interop.py: PyJWT, each token checked against
    /// the side its `iss` names) accepts one person's token of either side, and refuses another tenant's — one of the same
    /// tenant id, audience and person, but another issuer and keys.
    @Test func anAPIConfiguredWithBothSidesAcceptsBothAndRefusesAnotherTenant() async throws {
        try await TestTenant.with { other in
            let foreign = try #require(try await signInAndRedeem(other)["access_token"]?.stringValue)
            let out = try await Self.interop("twin_api_interop.py") { b2c, externalId, ca in [b2c.base, ca, externalId.base, foreign] }
            #expect(out["oid"]?.stringValue == alice.oid && out["b2cIssuer"] != out["externalIdIssuer"], "\(out)")
            #expect(out["otherTenant"]?.stringValue?.hasPrefix(other.base) == true, "\(out)")
            #expect(out["otherTenantRefused"]?.stringValue?.contains("not one of the configured issuers") == true, "\(out)")
        }
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
