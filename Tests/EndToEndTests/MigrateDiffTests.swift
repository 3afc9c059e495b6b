@testable import B2CEmulator
import B2CKit
import Foundation
import TestSupport
import Testing

/// `b2c migrate diff` (docs/migration.md): the built b2c against a twin tenant's two sides, one person signed in on each
/// through the scripted browser, compared in a table and in JSON; another person on one side is a difference (exit 6).
@Suite struct MigrateDiffTests {
    @Test func onePersonOnBothSidesPassesAndAnotherPersonDiffers() async throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("b2c-migrate-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: dir) }
        let state = dir.appendingPathComponent("state")
        try FileManager.default.createDirectory(at: state, withIntermediateDirectories: true)
        let (old, new) = try await LocalTenantServer.twin(tls: true, tlsDirectory: state)
        let sides = (b2c: old.emulator, externalId: new.emulator)
        let tls = try #require(old.tls)
        defer {
            Task {
                await old.stop(); await new.stop()
            }
        }
        let b2cConfig = dir.appendingPathComponent("b2c.json").path
        let eidConfig = dir.appendingPathComponent("external-id.json").path
        try Data(sides.b2c.clientConfiguration(baseURL: old.baseURL, caFile: tls.caPath.path).serialized().utf8)
            .write(to: URL(fileURLWithPath: b2cConfig))
        try Data(sides.externalId.clientConfiguration(baseURL: new.baseURL, caFile: tls.caPath.path).serialized().utf8)
            .write(to: URL(fileURLWithPath: eidConfig))
        let key = Data((0..<32).map { _ in UInt8.random(in: 0...255) }).base64EncodedString()
        func environment(_ who: (email: String, password: String, oid: String)) -> [String: String] {
            var env = ProcessInfo.processInfo.environment
            for k in env.keys where k.hasPrefix("B2C_") { env[k] = nil }
            env["B2C_HOME"] = dir.appendingPathComponent("home").path
            env["BROWSER"] = agent.path
            env["B2C_AGENT_CA"] = tls.caPath.path
            env["B2C_AGENT_JAR"] = dir.appendingPathComponent("jar-\(who.oid).json").path
            env["B2C_AGENT_EMAIL"] = who.email
            env["B2C_AGENT_PASSWORD"] = who.password
            env["B2C_STORE_KEY"] = key
            return env
        }
        func b2c(_ args: [String], as who: (email: String, password: String, oid: String) = alice) async throws -> Run {
            try await run(b2cBinary, args, environment: environment(who))
        }

        // Nobody signed in yet: the side is named, and the sign-in to run names its configuration.
        let early = try await b2c(["migrate", "diff", "--from", b2cConfig, "--to", eidConfig])
        #expect(early.status == 4 && early.stderr.contains("the B2C side") && early.stderr.contains("b2c signin --config \(b2cConfig)"))

        #expect(try await b2c(["signin", "--config", b2cConfig]).status == 0)
        #expect(try await b2c(["signin", "--config", eidConfig]).status == 0)
        let table = try await b2c(["migrate", "diff", "--from", b2cConfig, "--to", eidConfig, "--api", "hello", "-o", "table"])
        #expect(table.status == 0, "\(table.stdout)\(table.stderr)")
        for text in ["B2C CLAIM", "emails[0]", "only-b2c", "key people by oid", "The API answers the same."] {
            #expect(table.stdout.contains(text), "\(text): \(table.stdout)")
        }
        let json = try await b2c(["migrate", "diff", "--from", b2cConfig, "--to", eidConfig, "-o", "json"]).json
        let lines = json["claims"]?.arrayValue ?? []
        func line(_ claim: String) -> JSONValue? { lines.first { $0["b2cClaim"]?.stringValue == claim } }
        #expect(json["breaks"] == false)
        #expect(line("oid")?["verdict"] == "same" && line("oid")?["b2cValue"]?.stringValue == alice.oid)
        #expect(line("sub")?["verdict"] == "expected" && line("iss")?["verdict"] == "expected")
        #expect(line("tfp")?["verdict"] == "only-b2c" && line("tfp")?["breaks"] == false)
        #expect(line("emails[0]")?["externalIdClaim"] == "email" && line("emails[0]")?["verdict"] == "same")

        // Bob on the External ID side: not the same person, and the API says another name.
        #expect(try await b2c(["signin", "--config", eidConfig], as: bob).status == 0)
        let other = try await b2c(
            ["migrate", "diff", "--from", b2cConfig, "--to", eidConfig, "--to-account", bob.email, "--api", "hello", "-o", "json"])
        #expect(other.status == 6 && other.stderr.contains("differs"), "\(other.stderr)")
        let otherLines = other.json["claims"]?.arrayValue ?? []
        #expect(otherLines.contains { $0["b2cClaim"] == "oid" && $0["verdict"] == "differs" && $0["breaks"] == true })
        #expect(otherLines.contains { $0["b2cClaim"] == "emails[0]" && $0["verdict"] == "differs" })
        #expect(other.json["api"]?["differing"]?.arrayValue?.first?["name"] == "name", "\(other.stdout)")
        let otherTable = try await b2c(["migrate", "diff", "--from", b2cConfig, "--to", eidConfig, "--to-account", bob.email])
        #expect(otherTable.status == 6 && otherTable.stdout.contains("not of the same person"), "\(otherTable.stdout)")
        // A side that names nothing: a configuration error, before anything is sent.
        let missing = try await b2c(["migrate", "diff", "--from", dir.appendingPathComponent("nope.json").path, "--to", eidConfig])
        #expect(missing.status == 3 && missing.stderr.contains("names no file"), "\(missing.stderr)")
    }
}
