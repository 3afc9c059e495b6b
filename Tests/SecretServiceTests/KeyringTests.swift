import Foundation
import Glibc
import Testing
@testable import SecretService

/// Against a real gnome-keyring-daemon on a real session bus (set up by
/// run-tests.sh). Serialized: the lock and stop tests change shared state.
@Suite(
    "Real gnome-keyring", .serialized,
    .enabled(if: keyringSessionAvailable, "needs run-tests.sh: a D-Bus session with an unlocked gnome-keyring"))
struct KeyringTests {
    let store = SecretServiceKeyStore()
    let password = ProcessInfo.processInfo.environment["SECRETSERVICE_TEST_PASSWORD"] ?? "testpass"

    /// Fresh attributes per test, shaped like the real tool's.
    private func attributes(_ test: String) -> [String: String] {
        ["application": "b2c", "store": "/tmp/b2c-test/\(test)-\(UUID().uuidString.prefix(8))"]
    }

    /// 32 random bytes, forced to contain a NUL and a non-UTF-8 byte.
    private func randomKey() -> Data {
        var key = Data((0..<32).map { _ in UInt8.random(in: 0...255) })
        key[0] = 0
        key[1] = 0xFF
        return key
    }

    private func client() throws -> SecretServiceClient {
        try SecretServiceClient(
            address: try #require(BusAddress.sessionBus(environment: ProcessInfo.processInfo.environment)),
            timeout: .seconds(2))
    }

    @Test("write then read returns the same bytes; a missing item reads as nil")
    func roundTrip() throws {
        let attrs = attributes("roundtrip")
        let key = randomKey()
        try store.write(key, label: "b2c test key", attributes: attrs)
        #expect(try store.read(attributes: attrs) == key)
        #expect(try store.read(attributes: attributes("missing")) == nil)
        try store.delete(attributes: attrs)
    }

    @Test("libsecret's secret-tool reads what we wrote")
    func secretToolReadsOurs() throws {
        let tool = try #require(which("secret-tool"), "secret-tool (libsecret-tools) is not installed")
        let attrs = attributes("tool-reads")
        let key = randomKey()
        try store.write(key, label: "b2c test key", attributes: attrs)
        let result = try run([tool, "lookup", "application", "b2c", "store", attrs["store"]!])
        #expect(result.status == 0)
        #expect(result.stdout == key)
        try store.delete(attributes: attrs)
    }

    @Test("we read what secret-tool stored")
    func weReadSecretTools() throws {
        let tool = try #require(which("secret-tool"), "secret-tool (libsecret-tools) is not installed")
        let attrs = attributes("we-read")
        let result = try run(
            [tool, "store", "--label=stored by secret-tool", "application", "b2c", "store", attrs["store"]!],
            stdin: Data("from secret-tool".utf8))
        #expect(result.status == 0)
        #expect(try store.read(attributes: attrs) == Data("from secret-tool".utf8))
        try store.delete(attributes: attrs)
        #expect(try run([tool, "lookup", "application", "b2c", "store", attrs["store"]!]).status != 0)
    }

    @Test("writing again with the same attributes replaces, leaving one item")
    func replace() throws {
        let attrs = attributes("replace")
        let (first, second) = (randomKey(), randomKey())
        try store.write(first, label: "b2c test key", attributes: attrs)
        try store.write(second, label: "b2c test key (new)", attributes: attrs)
        #expect(try store.read(attributes: attrs) == second)
        #expect(try client().items(matching: attrs, all: true).count == 1)
        try store.delete(attributes: attrs)
    }

    @Test("delete removes the item; deleting nothing is fine")
    func delete() throws {
        let attrs = attributes("delete")
        try store.write(randomKey(), label: "b2c test key", attributes: attrs)
        try store.delete(attributes: attrs)
        #expect(try store.read(attributes: attrs) == nil)
        try store.delete(attributes: attrs)
    }

    @Test("a locked keyring reports locked (needs a prompt) instead of waiting")
    func lockedKeyring() throws {
        let attrs = attributes("locked")
        try store.write(randomKey(), label: "b2c test key", attributes: attrs)
        let admin = try client()
        let collection = try admin.defaultCollection()
        _ = try admin.bus.call(
            destination: SecretServiceClient.busName, path: SecretServiceClient.servicePath,
            interface: "org.freedesktop.Secret.Service", member: "Lock", [.objectPaths([collection])])
        defer { unlockWithPassword(admin, collection) }

        let (ms, error) = milliseconds { _ = try store.read(attributes: attrs) }
        #expect(error as? SecretServiceError == .locked)
        #expect(ms < 1000)
        #expect(throws: SecretServiceError.locked) { try store.write(Data([1]), label: "x", attributes: attrs) }
        #expect(throws: SecretServiceError.locked) { try store.delete(attributes: attrs) }
        print("locked: \(error.map { "\($0)" } ?? "-") after \(Int(ms)) ms")
    }

    /// Unlocks without a prompter through gnome-keyring's private interface
    /// (test-only; the product never types passwords).
    private func unlockWithPassword(_ admin: SecretServiceClient, _ collection: String) {
        let master = DBusValue.structure([.objectPath(admin.session), .bytes(Data()), .bytes(Data(password.utf8)), .string("text/plain")])
        do {
            _ = try admin.bus.call(
                destination: SecretServiceClient.busName, path: SecretServiceClient.servicePath,
                interface: "org.gnome.keyring.InternalUnsupportedGuiltRiddenInterface",
                member: "UnlockWithMasterPassword", [.objectPath(collection), master])
        } catch {
            Issue.record("could not unlock the test keyring again: \(error)")
        }
    }

    @Test("the keyring unlocks again after the lock test")
    func unlockedAgain() throws {
        let attrs = attributes("after-lock")
        try store.write(Data([9, 9]), label: "b2c test key", attributes: attrs)
        #expect(try store.read(attributes: attrs) == Data([9, 9]))
        try store.delete(attributes: attrs)
    }

    @Test("a stopped (hung) keyring daemon gives timeout within the bound")
    func hungService() throws {
        let admin = try client()
        let reply = try admin.bus.call(
            destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus",
            interface: "org.freedesktop.DBus", member: "GetConnectionUnixProcessID",
            [.string(SecretServiceClient.busName)])
        let pid = pid_t(try #require(reply.first?.uint32Value))
        #expect(kill(pid, SIGSTOP) == 0)
        defer { kill(pid, SIGCONT) }

        let quick = SecretServiceKeyStore(timeout: .milliseconds(500))
        let (ms, error) = milliseconds { _ = try quick.read(attributes: attributes("hung")) }
        guard case .timeout(let step)? = error as? SecretServiceError else {
            Issue.record("got \(String(describing: error))")
            return
        }
        #expect(step.contains("OpenSession"))
        #expect(ms >= 490 && ms < 1500)
        print("hung daemon: \(error.map { "\($0)" } ?? "-") after \(Int(ms)) ms")
    }

    @Test("a fresh keyring daemon with no login keyring reports noDefaultCollection")
    func noDefaultCollection() throws {
        try #require(which("gnome-keyring-daemon") != nil)
        let home = try temporaryDirectory()
        let bus = try PrivateBus(
            serviceDirs: true,
            environment: [
                "HOME": home, "XDG_DATA_HOME": home + "/data", "XDG_RUNTIME_DIR": home, "XDG_CONFIG_HOME": home + "/config",
                "PATH": ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin",
            ])
        defer {
            bus.stop()
            try? FileManager.default.removeItem(atPath: home)
        }
        let fresh = SecretServiceKeyStore(address: bus.address, timeout: .seconds(5))  // allows for activation
        #expect(throws: SecretServiceError.noDefaultCollection) {
            try fresh.write(Data([1]), label: "x", attributes: attributes("no-default"))
        }
        #expect(try fresh.read(attributes: attributes("no-default")) == nil)
    }

    @Test("timing: cold connect + read")
    func timing() throws {
        let attrs = attributes("timing")
        try store.write(randomKey(), label: "b2c test key", attributes: attrs)
        defer { try? store.delete(attributes: attrs) }
        var samples: [Double] = []
        for _ in 0..<20 {
            let (ms, error) = milliseconds { _ = try store.read(attributes: attrs) }
            #expect(error == nil)
            samples.append(ms)
        }
        samples.sort()
        let line = String(
            format: "cold connect+read over 20 runs: min %.2f ms, median %.2f ms, max %.2f ms",
            samples.first!, samples[samples.count / 2], samples.last!)
        print(line)
        #expect(samples[samples.count / 2] < 200)
    }
}
