import AsyncHTTPClient
@testable import B2CEmulator
import B2CKit
import ChildProcess
import Foundation
import NIOCore
import Testing

/// The package root, from this file's path.
let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

/// The built `b2c` binary (`B2C_BINARY` overrides).
var b2cBinary: URL {
    if let p = ProcessInfo.processInfo.environment["B2C_BINARY"] { return URL(fileURLWithPath: p) }
    return packageRoot.appendingPathComponent(".build/debug/b2c")
}

struct ProcessResult { var status: Int32; var stdout: String; var stderr: String }

/// A program run to its end on a thread of its own: a long child (a Python script that first makes its venv) must not hold one of the
/// cooperative pool's few threads, which every in-process tenant of the suite needs to answer its requests.
func runOffThePool(_ executable: URL, _ args: [String], environment: [String: String] = [:]) async throws -> ProcessResult {
    let r = try await ChildProcess.runOffThePool(
        executable, args, environment: ProcessInfo.processInfo.environment.merging(environment) { _, new in new })
    return ProcessResult(status: r.status, stdout: r.output, stderr: r.errors)
}

@Suite struct PersistenceTests {
    @Test func stateSurvivesARestart() async throws {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let first = try await TestTenant.start(tls: true, stateDirectory: dir)
        _ = try await first.admin(.POST, "/users", ["email": "frank@contoso.com", "password": "Frank-2026-pw"])
        let tokens = try await signInAndRedeem(first, email: "frank@contoso.com", password: "Frank-2026-pw")
        try await first.advanceClock(1000)
        let kid = first.emulator.jwk.kid
        let ca = try String(contentsOf: dir.appendingPathComponent("ca.pem"), encoding: .utf8)
        #expect(ca.hasSuffix("-----END CERTIFICATE-----\n"), "a PEM ends with a newline (a cat-built bundle needs it)")
        await first.stop()

        let attrs = try FileManager.default.attributesOfItem(atPath: dir.appendingPathComponent("emulator.sqlite").path)
        #expect((attrs[.posixPermissions] as? Int) == 0o600)
        #expect(
            (try FileManager.default.attributesOfItem(atPath: dir.appendingPathComponent("ca-key.pem").path)[.posixPermissions] as? Int)
                == 0o600)

        try await TestTenant.with(tls: true, stateDirectory: dir) { second in
            #expect(second.emulator.jwk.kid == kid, "the signing key is kept")
            #expect(try String(contentsOf: dir.appendingPathComponent("ca.pem"), encoding: .utf8) == ca, "the CA is kept")
            #expect(second.emulator.clock.offsetSeconds == 1000, "the clock offset is kept")
            #expect(try await second.admin(.GET, "/users").body.contains("frank@contoso.com"))
            let refreshed = try await second.token(
                "B2C_1_susi",
                [
                    "grant_type": "refresh_token", "client_id": clientID,
                    "refresh_token": try #require(tokens["refresh_token"]?.stringValue),
                ])
            #expect(refreshed.status == 200, "\(refreshed.body)")
            // An access token issued before the restart still validates at the sample API.
            let hello = try await second.get(
                "/hello", headers: [("Authorization", "Bearer \(try #require(tokens["access_token"]?.stringValue))")])
            #expect(hello.status == 200, "\(hello.body)")
        }
    }

    @Test func adminIsLoopbackOnly() throws {
        #expect(PeerAddress.isLoopback(ip: "127.0.0.1"))
        #expect(PeerAddress.isLoopback(ip: "127.8.9.10"))
        #expect(PeerAddress.isLoopback(ip: "::1"))
        #expect(PeerAddress.isLoopback(ip: "::ffff:127.0.0.1"))
        #expect(!PeerAddress.isLoopback(ip: "10.0.0.5"))
        #expect(!PeerAddress.isLoopback(ip: "192.168.1.127"))
        #expect(!PeerAddress.isLoopback(ip: "::ffff:10.0.0.1"))
        #expect(!PeerAddress.isLoopback(ip: "fe80::1"))
        #expect(!PeerAddress.isLoopback(ip: ""))
        #expect(!PeerAddress.isLoopback(nil))
        #expect(PeerAddress.isLoopback(try SocketAddress(ipAddress: "127.0.0.1", port: 1)))
        #expect(!PeerAddress.isLoopback(try SocketAddress(ipAddress: "203.0.113.7", port: 1)))
    }
}

@Suite(.serialized) struct CLITests {
    /// Starts `b2c emulator serve ARGS` and returns it with its first line (the base URL line).
    static func serve(_ args: [String]) async throws -> (ChildProcess, String) {
        try await ChildProcess.startServing(b2cBinary, ["emulator", "serve"] + args)
    }

    /// `--config-out FILE --app NAME`: a web app's settings (Microsoft.Identity.Web's section and plain values), with its
    /// secret, in a file only its owner reads; the API base URL answers.
    @Test func configOutWritesAConfidentialAppsSettings() async throws {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let out = dir.appendingPathComponent("appsettings.json")
        let (p, line) = try await Self.serve(["--config-out", out.path, "--app", "web-app"])
        defer { kill(p.processIdentifier, SIGINT); p.waitUntilExit() }
        let base = try #require(line.split(separator: " ").dropFirst(2).first.map(String.init), "\(line)")
        let settings = try JSONValue.parse(Data(contentsOf: out))
        let azure = settings["AzureAdB2C"]
        #expect(
            azure?["Instance"]?.stringValue == base && azure?["Domain"] == "contoso.onmicrosoft.com"
                && azure?["TenantId"]?.stringValue == tenantID)
        #expect(azure?["ClientId"]?.stringValue == webApp && azure?["ClientSecret"]?.stringValue == webSecret)
        #expect(azure?["SignUpSignInPolicyId"] == "B2C_1_susi" && azure?["CallbackPath"] == "/signin-oidc", "\(settings)")
        let plain = settings["b2cEmulator"]
        #expect(plain?["tokenEndpoint"]?.stringValue == "\(base)/contoso.onmicrosoft.com/b2c_1_susi/oauth2/v2.0/token")
        #expect(plain?["clientSecret"]?.stringValue == webSecret && plain?["scopes"] == .array([.string(helloScope)]))
        let attributes = try FileManager.default.attributesOfItem(atPath: out.path)
        #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600, "a file with a secret is the owner's only")
        let apiBase = try #require(plain?["apis"]?.arrayValue?.first?["baseUrl"]?.stringValue)
        let api = try await runOffThePool(URL(fileURLWithPath: "/usr/bin/curl"), ["-s", "-o", "/dev/null", "-w", "%{http_code}", apiBase])
        #expect(api.stdout == "401", "the API base URL answers (without a token: 401)")
        // The daemon's settings name the API's .default scope; an unknown app lists the apps.
        let daemonOut = dir.appendingPathComponent("daemon.json")
        let (d, _) = try await Self.serve(["--config-out", daemonOut.path, "--app", daemon])
        defer { kill(d.processIdentifier, SIGINT); d.waitUntilExit() }
        #expect(try JSONValue.parse(Data(contentsOf: daemonOut))["b2cEmulator"]?["scopes"] == .array([.string(helloDefault)]))
        // --client: a policies.json for another app (the daemon gets its API's .default scope).
        let clientOut = dir.appendingPathComponent("ci.json")
        let (c, _) = try await Self.serve(["--config-out", clientOut.path, "--client", "daemon"])
        defer { kill(c.processIdentifier, SIGINT); c.waitUntilExit() }
        let ci = try ClientConfiguration.load(path: clientOut.path)
        #expect(ci.clientID == daemon && ci.apis.first?.scopes == [helloDefault] && !ci.confidential)
        let unknown = try await runOffThePool(
            b2cBinary, ["emulator", "serve", "--config-out", dir.appendingPathComponent("x.json").path, "--app", "nosuch"])
        #expect(
            unknown.status == 3 && unknown.stderr.contains("no app 'nosuch'") && unknown.stderr.contains("web-app"), "\(unknown.stderr)")
        #expect(!FileManager.default.fileExists(atPath: dir.appendingPathComponent("x.json").path))
    }

    @Test func serveReportsAndStopsCleanlyOnSIGINT() async throws {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let configOut = dir.appendingPathComponent("policies.json")
        let (p, line) = try await Self.serve(["--tls", "--state", dir.appendingPathComponent("state").path, "--config-out", configOut.path])
        #expect(line.hasPrefix("b2c emulator: https://127.0.0.1:"), "\(line)")
        #expect(line.contains("tenant contoso.onmicrosoft.com (\(tenantID))") && line.contains("/_admin (loopback only)"))
        let caPath = try #require(
            line.range(of: "; CA ").map { String(line[$0.upperBound...]).trimmingCharacters(in: .whitespacesAndNewlines) })
        #expect(caPath == dir.appendingPathComponent("state/ca.pem").path)
        let config = try JSONValue.parse(Data(contentsOf: configOut))
        let base = try #require(config["authorityHost"]?.stringValue)
        #expect(line.contains(base))
        #expect(config["caFile"]?.stringValue == caPath && config["clientId"]?.stringValue == clientID)
        #expect(config["policies"]?.arrayValue?.count == 8)

        // Trust the printed CA and fetch discovery over HTTPS.
        let r = try await runOffThePool(
            URL(fileURLWithPath: "/usr/bin/curl"),
            ["-sS", "--cacert", caPath, "\(base)/contoso.onmicrosoft.com/B2C_1_susi/v2.0/.well-known/openid-configuration"])
        #expect(r.status == 0 && r.stdout.contains("\"issuer\":\"\(base)/\(tenantID)/v2.0/\""), "\(r.stderr)")

        kill(p.processIdentifier, SIGINT)
        p.waitUntilExit()
        #expect(p.terminationStatus == 0)
    }

    @Test func badSeedAndBadArgumentsHaveDocumentedExitCodes() async throws {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        var seed = EmulatorSeed.default.json.serialized()
        seed = seed.replacingOccurrences(of: "\"bob@contoso.com\"", with: "\"not-an-email\"")
        let seedFile = dir.appendingPathComponent("seed.json")
        try Data(seed.utf8).write(to: seedFile)
        let bad = try await runOffThePool(b2cBinary, ["emulator", "serve", "--seed", seedFile.path])
        #expect(bad.status == 3)
        #expect(bad.stderr.contains("$.users[1].email is not an email address"), "\(bad.stderr)")
        try Data("{\"tenant\": ".utf8).write(to: seedFile)
        let broken = try await runOffThePool(b2cBinary, ["emulator", "serve", "--seed", seedFile.path])
        #expect(broken.status == 3 && broken.stderr.contains("is not valid JSON"), "\(broken.stderr)")
        let missing = try await runOffThePool(b2cBinary, ["emulator", "serve", "--seed", dir.appendingPathComponent("nope.json").path])
        #expect(
            missing.status == 3 && missing.stderr.contains("the seed file") && missing.stderr.contains("nope.json"), "\(missing.stderr)")
        let port = try await runOffThePool(b2cBinary, ["emulator", "serve", "--port", "70000"])
        #expect(port.status == 64 && port.stderr.contains("--port"))
        let both = try await runOffThePool(b2cBinary, ["emulator", "serve", "--in-memory", "--state", dir.path])
        #expect(both.status == 64)
        // --external-id counts before the seed is checked: External ID's extensions need no "tenantType" in the file.
        var external = EmulatorSeed.default
        external.tenant.externalId = true
        external.authenticationExtensions = [
            .init(event: .onTokenIssuanceStart, url: "http://127.0.0.1:9/x", appId: clientID, claims: ["loyaltyTier"], timeoutMs: 1000)
        ]
        let withoutType = external.json.serialized().replacingOccurrences(
            of: "\"tenantType\":\"externalId\"", with: "\"tenantType\":\"b2c\"")
        #expect(withoutType.contains("\"tenantType\":\"b2c\""))
        try Data(withoutType.utf8).write(to: seedFile)
        let refused = try await runOffThePool(b2cBinary, ["emulator", "serve", "--seed", seedFile.path, "--port", "0"])
        #expect(refused.status == 3 && refused.stderr.contains("authenticationExtensions"), "\(refused.stderr)")
        let (served, line) = try await Self.serve(["--seed", seedFile.path, "--external-id", "--port", "0"])
        served.interrupt()
        served.waitUntilExit()
        #expect(line.hasPrefix("b2c emulator: http"), "\(line)")
        let printed = try await runOffThePool(b2cBinary, ["emulator", "default-seed"])
        #expect(printed.status == 0)
        #expect(try EmulatorSeed.parse(Data(printed.stdout.utf8)) == EmulatorSeed.default)
    }
}

/// Third-party Python clients (from PyPI, in a venv `Tests/interop/run.sh` makes) against the TLS emulator.
@Suite(.serialized) struct PythonInteropTests {
    /// Runs one script of `Tests/interop/` against a fresh TLS tenant and returns its last line as JSON.
    static func interop(
        _ script: String, _ extra: [String] = [], seed: EmulatorSeed = .default, customPolicies: URL? = nil
    ) async throws -> JSONValue {
        var output = JSONValue.null
        try await TestTenant.with(tls: true, seed: seed) { t in
            if let customPolicies { try t.emulator.customPolicies.load(directory: customPolicies) }
            let ca = FileManager.default.temporaryDirectory.appendingPathComponent("b2c-interop-ca-\(UUID().uuidString).pem")
            defer { try? FileManager.default.removeItem(at: ca) }
            try Data(try #require(t.server.tls?.caCertificatePEM).utf8).write(to: ca)
            let r = try await runOffThePool(packageRoot.appendingPathComponent("Tests/interop/run.sh"), [script, t.base, ca.path] + extra)
            #expect(r.status == 0, "\(script) failed:\n\(r.stdout)\n\(r.stderr.suffix(3000))")
            output = try JSONValue.parse(Data((r.stdout.split(separator: "\n").last.map(String.init) ?? "{}").utf8))
        }
        return output
    }

    /// Real Microsoft `msal` public client: auth code + PKCE, ROPC, refresh, one refresh token per policy.
    @Test func msalPythonAuthCodeROPCAndRefresh() async throws {
        let result = try await Self.interop("msal_interop.py")
        #expect(result["authCodeAccount"]?.stringValue == "\(alice.oid)-b2c_1_susi.\(tenantID)")
        #expect(result["ropcAccount"]?.stringValue == "\(bob.oid)-b2c_1_ropc_auth.\(tenantID)")
        #expect(result["refreshed"] == true)
        #expect(result["crossPolicyRefresh"] == "AADB2C90088")
        #expect(result["pyjwtVerified"] == 5, "PyJWT verified every id and access token against the policy's JWKS")
    }

    /// msal's own interactive flow (its loopback listener, Python's `webbrowser` with the scripted agent as `$BROWSER`)
    /// through the default tenant's MFA user flow: the password, then the emailed code; PyJWT verifies the tokens.
    @Test func msalPythonInteractiveSignInWithMFA() async throws {
        let build =
            ProcessInfo.processInfo.environment["B2C_BUILD_DIR"].map { URL(fileURLWithPath: $0) }
            ?? packageRoot.appendingPathComponent(".build/debug")
        let result = try await Self.interop("msal_mfa_interactive.py", [build.appendingPathComponent("b2c-test-agent").path])
        #expect(result["account"]?.stringValue == "\(alice.oid)-b2c_1_susi_mfa.\(tenantID)")
        #expect(result["tfp"] == "B2C_1_susi_mfa" && result["mfaCodes"] == 1)
    }

    /// msal's interactive flow and a refresh against a custom policy (Examples/custom-policies): the XML's journey, its
    /// Token journey on the refresh, PyJWT on the custom policy's keys.
    @Test func msalPythonAgainstACustomPolicy() async throws {
        let build =
            ProcessInfo.processInfo.environment["B2C_BUILD_DIR"].map { URL(fileURLWithPath: $0) }
            ?? packageRoot.appendingPathComponent(".build/debug")
        let result = try await Self.interop(
            "msal_custom_policy.py", [build.appendingPathComponent("b2c-test-agent").path], customPolicies: CustomPolicyTests.examples)
        #expect(result["account"]?.stringValue == "\(alice.oid)-b2c_1a_signup_signin.\(tenantID)")
        #expect(result["acr"] == "b2c_1a_signup_signin" && result["refreshedSub"]?.stringValue == alice.oid)
    }

    /// The same against Microsoft's starter packs, when `B2C_STARTER_PACKS` names a folder holding them with their
    /// placeholders filled (docs/emulator.md, "Custom policies"; the project does not ship Microsoft's files, so CI skips it).
    @Test(.enabled(if: ProcessInfo.processInfo.environment["B2C_STARTER_PACKS"] != nil))
    func msalPythonAgainstTheStarterPacks() async throws {
        let packs = URL(fileURLWithPath: ProcessInfo.processInfo.environment["B2C_STARTER_PACKS"] ?? "")
        let build =
            ProcessInfo.processInfo.environment["B2C_BUILD_DIR"].map { URL(fileURLWithPath: $0) }
            ?? packageRoot.appendingPathComponent(".build/debug")
        for pack in ["LocalAccounts", "SocialAndLocalAccounts", "SocialAndLocalAccountsWithMfa"] {
            let result = try await Self.interop(
                "msal_custom_policy.py", [build.appendingPathComponent("b2c-test-agent").path, "--starter-pack"],
                customPolicies: packs.appendingPathComponent(pack))
            #expect(result["account"]?.stringValue == "\(alice.oid)-b2c_1a_signup_signin.\(tenantID)", "\(pack): \(result)")
            #expect(result["refreshedSub"]?.stringValue == alice.oid, "\(pack)")
        }
    }

    /// msal's `ConfidentialClientApplication`: a daemon's client credentials (cached), a web app's code and refresh with
    /// its secret, a custom policy's own key.
    @Test func msalPythonConfidentialClients() async throws {
        let result = try await Self.interop("confidential_interop.py")
        #expect(result["clientCredentialsCached"] == true)
        #expect(result["appTokenRoles"] == .array(["hello.read.all"]))
        #expect(result["wrongSecret"]?.stringValue == "AADB2C90081")
        #expect(result["webAccount"]?.stringValue == "\(alice.oid)-b2c_1_susi.\(tenantID)")
        #expect(result["customKeyUnknownToUserFlows"] == true)
        #expect(result["pyjwtVerified"] == 7, "PyJWT verified every token kind against its policy's JWKS")
    }

    /// msal-python with an External ID tenant's `oidc_authority`: Entra-shaped app-only tokens (PyJWT verifies `roles`),
    /// and a Graph `User.Read` token that a plain `requests` call to `/me` carries.
    @Test func msalPythonOnAnExternalIDTenant() async throws {
        var seed = EmulatorSeed.default
        seed.tenant.externalId = true
        let result = try await Self.interop("externalid_interop.py", seed: seed)
        #expect(result["appRoles"] == ["hello.read.all"] && result["graphScope"] == "User.Read", "\(result)")
        #expect(result["me"] == .string(alice.email) && result["idTokenOid"] == .string(alice.oid))
    }

    /// Authlib validates hybrid and implicit answers (c_hash, at_hash) and redeems with client_secret_basic.
    @Test func authlibValidatesHybridAndImplicitAnswers() async throws {
        let result = try await Self.interop("oidc_interop.py")
        #expect(result["hybridRejectsTamperedCode"]?.stringValue?.contains("c_hash") == true, "\(result)")
        #expect(result["implicitRejectsTamperedToken"]?.stringValue?.contains("at_hash") == true, "\(result)")
        #expect(result["basicRedeemedAndRefreshed"] == true)
        #expect(result["implicitFields"] == .array(["access_token", "expires_in", "id_token", "scope", "state", "token_type"]))
    }
}
