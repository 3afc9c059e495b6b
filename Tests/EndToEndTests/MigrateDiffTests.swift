@testable import B2CEmulator
import B2CKit
import Foundation
import TestSupport
import Testing

/// `b2c migrate diff` (docs/migration.md): the built b2c against a twin tenant's two sides, one person signed in on each
/// through the scripted browser, compared in a table and in JSON; another person on one side is a difference (exit 6).
@Suite struct MigrateDiffTests {
    typealias Person = (email: String, password: String, oid: String)

    /// A TLS twin, each side's client configuration as a file and as a profile (`old-b2c`, `new-eeid`), one store for the
    /// b2c processes, and the scripted browser signing people in; stopped (and awaited) however `body` ends.
    final class Twin: Sendable {
        let dir: URL
        let sides: (b2c: LocalTenantServer, externalId: LocalTenantServer)
        let ca: String
        let storeKey = Data((0..<32).map { _ in UInt8.random(in: 0...255) }).base64EncodedString()
        var b2cConfig: String { dir.appendingPathComponent("b2c.json").path }
        var externalIdConfig: String { dir.appendingPathComponent("external-id.json").path }
        var profiles: URL { dir.appendingPathComponent("config/b2c/profiles") }

        private init(dir: URL, sides: (b2c: LocalTenantServer, externalId: LocalTenantServer)) throws {
            self.dir = dir
            self.sides = sides
            ca = try #require(sides.b2c.tls).caPath.path
            try FileManager.default.createDirectory(at: profiles, withIntermediateDirectories: true)
            for (side, files) in [
                (sides.b2c, [b2cConfig, profiles.appendingPathComponent("old-b2c.json").path]),
                (sides.externalId, [externalIdConfig, profiles.appendingPathComponent("new-eeid.json").path]),
            ] {
                let config = Data(side.emulator.clientConfiguration(baseURL: side.baseURL, caFile: ca).serialized().utf8)
                for file in files { try config.write(to: URL(fileURLWithPath: file)) }
            }
        }

        static func with(_ body: (Twin) async throws -> Void) async throws {
            let dir = FileManager.default.temporaryDirectory.appendingPathComponent("b2c-migrate-\(UUID().uuidString)")
            let state = dir.appendingPathComponent("state")
            try FileManager.default.createDirectory(at: state, withIntermediateDirectories: true)
            let sides = try await LocalTenantServer.twin(tls: true, tlsDirectory: state)
            func stop() async {
                await sides.externalId.stop()
                await sides.b2c.stop()
                try? FileManager.default.removeItem(at: dir)
            }
            do { try await body(try Twin(dir: dir, sides: sides)) } catch {
                await stop()
                throw error
            }
            await stop()
        }

        /// `b2c signin ARGS` as `who`, which must succeed.
        func signIn(_ args: [String], as who: Person = alice, sourceLocation: SourceLocation = #_sourceLocation) async throws {
            let r = try await b2c(["signin"] + args, as: who)
            #expect(r.status == 0, "b2c signin \(args.joined(separator: " ")): \(r.stderr)", sourceLocation: sourceLocation)
        }

        /// The built b2c, as `who` in the scripted browser should it sign in.
        func b2c(_ args: [String], as who: Person = alice) async throws -> Run {
            var env = ProcessInfo.processInfo.environment
            for k in env.keys where k.hasPrefix("B2C_") { env[k] = nil }
            env["B2C_HOME"] = dir.appendingPathComponent("home").path
            env["XDG_CONFIG_HOME"] = dir.appendingPathComponent("config").path
            env["BROWSER"] = agent.path
            env["B2C_AGENT_CA"] = ca
            env["B2C_AGENT_JAR"] = dir.appendingPathComponent("jar-\(who.oid).json").path
            env["B2C_AGENT_EMAIL"] = who.email
            env["B2C_AGENT_PASSWORD"] = who.password
            env["B2C_STORE_KEY"] = storeKey
            return try await run(b2cBinary, args, environment: env)
        }
    }

    @Test func onePersonOnBothSidesPassesAndAnotherPersonDiffers() async throws {
        try await Twin.with { w in
            let (b2cConfig, eidConfig) = (w.b2cConfig, w.externalIdConfig)
            // Nobody signed in yet: the side is named, and the sign-in to run names its configuration.
            let early = try await w.b2c(["migrate", "diff", "--from", b2cConfig, "--to", eidConfig])
            #expect(
                early.status == 4 && early.stderr.contains("the B2C side") && early.stderr.contains("b2c signin --config \(b2cConfig)"))

            try await w.signIn(["--config", b2cConfig])
            try await w.signIn(["--config", eidConfig])
            let table = try await w.b2c(["migrate", "diff", "--from", b2cConfig, "--to", eidConfig, "--api", "hello", "-o", "table"])
            #expect(table.status == 0, "\(table.stdout)\(table.stderr)")
            for text in ["B2C CLAIM", "emails[0]", "only-b2c", "key people by oid", "The API answers the same."] {
                #expect(table.stdout.contains(text), "\(text): \(table.stdout)")
            }
            let json = try await w.b2c(["migrate", "diff", "--from", b2cConfig, "--to", eidConfig, "-o", "json"]).json
            let lines = json["claims"]?.arrayValue ?? []
            func line(_ claim: String) -> JSONValue? { lines.first { $0["b2cClaim"]?.stringValue == claim } }
            #expect(json["breaks"] == false)
            #expect(line("oid")?["verdict"] == "same" && line("oid")?["b2cValue"]?.stringValue == alice.oid)
            #expect(line("sub")?["verdict"] == "expected" && line("iss")?["verdict"] == "expected")
            #expect(line("tfp")?["verdict"] == "only-b2c" && line("tfp")?["breaks"] == false)
            #expect(line("emails[0]")?["externalIdClaim"] == "email" && line("emails[0]")?["verdict"] == "same")

            // Bob on the External ID side: not the same person, and the API says another name.
            try await w.signIn(["--config", eidConfig], as: bob)
            let other = try await w.b2c(
                ["migrate", "diff", "--from", b2cConfig, "--to", eidConfig, "--to-account", bob.email, "--api", "hello", "-o", "json"])
            #expect(other.status == 6 && other.stderr.contains("differs"), "\(other.stderr)")
            let otherLines = other.json["claims"]?.arrayValue ?? []
            #expect(otherLines.contains { $0["b2cClaim"] == "oid" && $0["verdict"] == "differs" && $0["breaks"] == true })
            #expect(otherLines.contains { $0["b2cClaim"] == "emails[0]" && $0["verdict"] == "differs" })
            #expect(other.json["api"]?["differing"]?.arrayValue?.first?["name"] == "name", "\(other.stdout)")
            let otherTable = try await w.b2c(["migrate", "diff", "--from", b2cConfig, "--to", eidConfig, "--to-account", bob.email])
            #expect(otherTable.status == 6 && otherTable.stdout.contains("not of the same person"), "\(otherTable.stdout)")
            // A side that names nothing: a configuration error, before anything is sent.
            let missing = try await w.b2c(["migrate", "diff", "--from", w.dir.appendingPathComponent("nope.json").path, "--to", eidConfig])
            #expect(missing.status == 3 && missing.stderr.contains("names no file"), "\(missing.stderr)")
        }
    }

    /// `--from` and `--to` name profiles as well as files: the same comparison, and a sign-in to run that names the profile.
    @Test func profilesNameTheTwoSides() async throws {
        try await Twin.with { w in
            try await w.signIn(["--profile", "old-b2c"])
            let early = try await w.b2c(["migrate", "diff", "--from", "old-b2c", "--to", "new-eeid"])
            #expect(early.status == 4, "\(early.stdout)\(early.stderr)")
            #expect(
                early.stderr.contains("the External ID side (--to new-eeid)") && early.stderr.contains("b2c signin --profile new-eeid"),
                "\(early.stderr)")

            try await w.signIn(["--profile", "new-eeid"])
            let diff = try await w.b2c(["migrate", "diff", "--from", "old-b2c", "--to", "new-eeid", "--api", "hello", "-o", "json"])
            #expect(diff.status == 0 && diff.json["breaks"] == false, "\(diff.stdout)\(diff.stderr)")
            let oid = diff.json["claims"]?.arrayValue?.first { $0["b2cClaim"] == "oid" }
            #expect(oid?["verdict"] == "same" && oid?["externalIdValue"]?.stringValue == alice.oid, "\(diff.stdout)")
            #expect(diff.json["api"]?["b2cStatus"] == 200 && diff.json["api"]?["externalIdStatus"] == 200, "\(diff.stdout)")
            // A profile that does not exist: a configuration error naming the ones that do.
            let unknown = try await w.b2c(["migrate", "diff", "--from", "old-b2c", "--to", "prod-eeid"])
            #expect(unknown.status == 3 && unknown.stderr.contains("new-eeid"), "\(unknown.stderr)")
        }
    }
}
