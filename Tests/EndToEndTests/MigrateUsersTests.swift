@testable import B2CEmulator
import B2CKit
import Foundation
import TestSupport
import Testing

/// `b2c migrate users` (docs/migration.md): the built b2c copies a B2C tenant's people to a new External ID tenant through
/// both tenants' Graph, as each tenant's user-admin app — a dry run first, then the copy, marked for just-in-time
/// migration; a second run changes nothing; a person the target cannot take is a failed line, the others are done.
@Suite struct MigrateUsersTests {
    @Test func peopleAreCopiedMarkedAndACopyRunsAgainSafely() async throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("b2c-migrate-users-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let old = try await LocalTenantServer.start(tls: true, tlsDirectory: dir.appendingPathComponent("old-ca"))
        var seed = EmulatorSeed.defaultExternalID
        seed.users = []
        let new = try await LocalTenantServer.start(seed: seed, tls: true, tlsDirectory: dir.appendingPathComponent("new-ca"))
        do {
            try await check(dir: dir, old: old, new: new)
        } catch {
            await new.stop()
            await old.stop()
            throw error
        }
        await new.stop()
        await old.stop()
    }

    private func check(dir: URL, old: LocalTenantServer, new: LocalTenantServer) async throws {
        var configs: [String] = []
        for (name, side) in [("old", old), ("new", new)] {
            let app = try #require(side.emulator.app(named: "user-admin"))
            let path = dir.appendingPathComponent("\(name).json").path
            let ca = try #require(side.tls).caPath.path
            try Data(side.emulator.clientConfiguration(baseURL: side.baseURL, caFile: ca, app: app).serialized().utf8)
                .write(to: URL(fileURLWithPath: path))
            configs.append(path)
        }
        let storeKey = Data((0..<32).map { _ in UInt8.random(in: 0...255) }).base64EncodedString()
        func b2c(_ args: [String], stdin: String? = nil) async throws -> Run {
            var env = ProcessInfo.processInfo.environment
            for k in env.keys where k.hasPrefix("B2C_") { env[k] = nil }
            env["B2C_HOME"] = dir.appendingPathComponent("home").path
            env["XDG_CONFIG_HOME"] = dir.appendingPathComponent("config").path
            env["B2C_STORE_KEY"] = storeKey
            env["B2C_CLIENT_SECRET"] = EmulatorSeed.defaultUserAdminSecret  // the default tenants' user-admin apps share it
            return try await run(b2cBinary, args, environment: env, stdin: stdin)
        }
        let migrate = ["migrate", "users", "--from", configs[0], "--to", configs[1], "-o", "json"]
        // A person with a user name on the B2C side: External ID's local accounts sign in with an address.
        let carol = try await b2c(
            [
                "users", "create", "--username", "carol", "--display-name", "Carol", "--password-stdin",
                "--config", configs[0],
            ], stdin: "Carol-2026-pass!\n")
        #expect(carol.status == 0, "\(carol.stderr)")

        let dry = try await b2c(migrate + ["--dry-run"])
        let planned = dry.json.arrayValue ?? []
        #expect(dry.status == 0 && planned.filter { $0["outcome"] == "would create" }.count == planned.count, "\(dry.stdout)")
        #expect(planned.contains { $0["signInName"]?.stringValue == alice.email }, "\(dry.stdout)")
        #expect(try new.emulator.store.user(email: alice.email) == nil, "a dry run changes nothing")

        let copied = try await b2c(migrate)
        let lines = copied.json.arrayValue ?? []
        func outcome(_ name: String) -> String? { lines.first { $0["signInName"]?.stringValue == name }?["outcome"]?.stringValue }
        #expect(copied.status == 1 && copied.stderr.contains("1 person was not copied"), "\(copied.stdout)\n\(copied.stderr)")
        #expect(outcome(alice.email) == "created" && outcome(bob.email) == "created" && outcome("carol") == "failed", "\(copied.stdout)")
        let moved = try #require(try new.emulator.store.user(email: alice.email))
        #expect(moved.oid != alice.oid && moved.displayName == "Alice Example", "a new object in the new tenant")
        #expect(moved.attributes.contains { $0.key.hasSuffix("_toBeMigrated") && $0.value == .bool(true) }, "\(moved.attributes)")
        // Nobody knows the copy's password: the legacy one is not it (the OnPasswordSubmit function moves it).
        guard case .wrongPassword = try new.emulator.store.passwordCheck(email: alice.email, password: alice.password) else {
            Issue.record("the copy took the legacy password")
            return
        }
        #expect(!copied.stdout.contains("password") && !copied.stderr.contains("password"), "no password shown")

        let again = try await b2c(migrate)
        #expect(again.json.arrayValue?.filter { $0["outcome"] == "exists" }.count == 2, "\(again.stdout)")
        #expect(again.stderr.contains("0 created, 2 already there"), "\(again.stderr)")
    }
}
