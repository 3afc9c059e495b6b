import AsyncHTTPClient
import B2CEmulator
import B2CKit
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

func run(_ executable: URL, _ args: [String], environment: [String: String] = [:]) throws -> ProcessResult {
    let p = Process()
    p.executableURL = executable
    p.arguments = args
    p.environment = ProcessInfo.processInfo.environment.merging(environment) { _, new in new }
    let out = Pipe(), err = Pipe()
    p.standardOutput = out
    p.standardError = err
    try p.run()
    let o = out.fileHandleForReading.readDataToEndOfFile()
    let e = err.fileHandleForReading.readDataToEndOfFile()
    p.waitUntilExit()
    return ProcessResult(status: p.terminationStatus, stdout: String(decoding: o, as: UTF8.self), stderr: String(decoding: e, as: UTF8.self))
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
        await first.stop()

        let attrs = try FileManager.default.attributesOfItem(atPath: dir.appendingPathComponent("emulator.sqlite").path)
        #expect((attrs[.posixPermissions] as? Int) == 0o600)
        #expect((try FileManager.default.attributesOfItem(atPath: dir.appendingPathComponent("ca-key.pem").path)[.posixPermissions] as? Int) == 0o600)

        try await TestTenant.with(tls: true, stateDirectory: dir) { second in
            #expect(second.emulator.jwk.kid == kid, "the signing key is kept")
            #expect(try String(contentsOf: dir.appendingPathComponent("ca.pem"), encoding: .utf8) == ca, "the CA is kept")
            #expect(second.emulator.clock.offsetSeconds == 1000, "the clock offset is kept")
            #expect(try await second.admin(.GET, "/users").body.contains("frank@contoso.com"))
            let refreshed = try await second.token("B2C_1_susi", ["grant_type": "refresh_token", "client_id": clientID,
                                                                  "refresh_token": try #require(tokens["refresh_token"]?.stringValue)])
            #expect(refreshed.status == 200, "\(refreshed.body)")
            // An access token issued before the restart still validates at the sample API.
            let hello = try await second.get("/hello", headers: [("Authorization", "Bearer \(try #require(tokens["access_token"]?.stringValue))")])
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
    @Test func serveReportsAndStopsCleanlyOnSIGINT() async throws {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let configOut = dir.appendingPathComponent("policies.json")
        let p = Process()
        p.executableURL = b2cBinary
        p.arguments = ["emulator", "serve", "--tls", "--state", dir.appendingPathComponent("state").path, "--config-out", configOut.path]
        let out = Pipe()
        p.standardOutput = out
        try p.run()
        var line = ""
        while !line.contains("\n") {
            let chunk = out.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            line += String(decoding: chunk, as: UTF8.self)
        }
        #expect(line.hasPrefix("b2c emulator: https://127.0.0.1:"), "\(line)")
        #expect(line.contains("tenant contoso.onmicrosoft.com (\(tenantID))") && line.contains("/_admin (loopback only)"))
        let caPath = try #require(line.range(of: "; CA ").map { String(line[$0.upperBound...]).trimmingCharacters(in: .whitespacesAndNewlines) })
        #expect(caPath == dir.appendingPathComponent("state/ca.pem").path)
        let config = try JSONValue.parse(Data(contentsOf: configOut))
        let base = try #require(config["authorityHost"]?.stringValue)
        #expect(line.contains(base))
        #expect(config["caFile"]?.stringValue == caPath && config["clientId"]?.stringValue == clientID)
        #expect(config["policies"]?.arrayValue?.count == 6)

        // Trust the printed CA and fetch discovery over HTTPS.
        let r = try run(URL(fileURLWithPath: "/usr/bin/curl"), ["-sS", "--cacert", caPath, "\(base)/contoso.onmicrosoft.com/B2C_1_susi/v2.0/.well-known/openid-configuration"])
        #expect(r.status == 0 && r.stdout.contains("\"issuer\":\"\(base)/\(tenantID)/v2.0/\""), "\(r.stderr)")

        kill(p.processIdentifier, SIGINT)
        p.waitUntilExit()
        #expect(p.terminationStatus == 0)
    }

    @Test func badSeedAndBadArgumentsHaveDocumentedExitCodes() throws {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        var seed = EmulatorSeed.default.json.serialized()
        seed = seed.replacingOccurrences(of: "\"bob@contoso.com\"", with: "\"not-an-email\"")
        let seedFile = dir.appendingPathComponent("seed.json")
        try Data(seed.utf8).write(to: seedFile)
        let bad = try run(b2cBinary, ["emulator", "serve", "--seed", seedFile.path])
        #expect(bad.status == 3)
        #expect(bad.stderr.contains("$.users[1].email is not an email address"), "\(bad.stderr)")
        try Data("{\"tenant\": ".utf8).write(to: seedFile)
        let broken = try run(b2cBinary, ["emulator", "serve", "--seed", seedFile.path])
        #expect(broken.status == 3 && broken.stderr.contains("is not valid JSON"), "\(broken.stderr)")
        let missing = try run(b2cBinary, ["emulator", "serve", "--seed", dir.appendingPathComponent("nope.json").path])
        #expect(missing.status == 3 && missing.stderr.contains("cannot read the seed file"))
        let port = try run(b2cBinary, ["emulator", "serve", "--port", "70000"])
        #expect(port.status == 64 && port.stderr.contains("--port"))
        let both = try run(b2cBinary, ["emulator", "serve", "--in-memory", "--state", dir.path])
        #expect(both.status == 64)
        let printed = try run(b2cBinary, ["emulator", "default-seed"])
        #expect(printed.status == 0)
        #expect(try EmulatorSeed.parse(Data(printed.stdout.utf8)) == EmulatorSeed.default)
    }
}

@Suite struct MSALInteropTests {
    /// Real Microsoft `msal` (Python, from PyPI, in a venv the script makes) against the TLS emulator.
    @Test func msalPythonAuthCodeROPCAndRefresh() async throws {
        try await TestTenant.with(tls: true) { t in
            let ca = FileManager.default.temporaryDirectory.appendingPathComponent("b2c-msal-ca-\(UUID().uuidString).pem")
            let pem = try #require(t.server.tls?.caCertificatePEM)
            try Data(pem.utf8).write(to: ca)
            let r = try run(packageRoot.appendingPathComponent("Tests/interop/run-msal.sh"), [t.base, ca.path])
            #expect(r.status == 0, "msal interop failed:\n\(r.stdout)\n\(r.stderr.suffix(3000))")
            let result = try JSONValue.parse(Data((r.stdout.split(separator: "\n").last.map(String.init) ?? "").utf8))
            #expect(result["authCodeAccount"]?.stringValue == "\(alice.oid)-b2c_1_susi.\(tenantID)")
            #expect(result["ropcAccount"]?.stringValue == "\(bob.oid)-b2c_1_ropc_auth.\(tenantID)")
            #expect(result["refreshed"] == true)
            #expect(result["crossPolicyRefresh"] == "AADB2C90088")
            #expect(result["pyjwtVerified"] == 5, "PyJWT verified every id and access token against the policy's JWKS")
        }
    }
}
