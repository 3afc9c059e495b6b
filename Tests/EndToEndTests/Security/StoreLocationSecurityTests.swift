import B2CKit
import Foundation
import Testing

/// Finding 3 of the security review (docs/security.md): `B2C_HOME` is the user's own, or b2c refuses it.
@Suite struct StoreLocationSecurityTests {
    static func mode(_ path: String) -> Int {
        ((try? FileManager.default.attributesOfItem(atPath: path))?[.posixPermissions] as? Int) ?? -1
    }

    /// `B2C_HOME=/tmp` (as root) chmod-ed /tmp to 0700, even for a read-only command. A directory that others may write
    /// to is refused and left as it was.
    @Test func aDirectoryOthersCanWriteIsRefusedNotChmodded() async throws {
        try await World.with { w in
            let shared = w.dir.appendingPathComponent("shared-tmp")
            try FileManager.default.createDirectory(at: shared, withIntermediateDirectories: false)
            chmod(shared.path, 0o1777)
            for args in [["accounts"], ["signin"]] {
                let r = try await w.b2c(args, as: alice, extra: ["B2C_HOME": shared.path])
                #expect(r.status == 3, "\(args): \(r.stderr)")
                #expect(r.stderr.contains("writable by other users") && r.stderr.contains("B2C_HOME"), "\(r.stderr)")
            }
            #expect(Self.mode(shared.path) == 0o1777)
            #expect(!FileManager.default.fileExists(atPath: shared.appendingPathComponent("store.sqlite").path))
        }
    }

    /// Another user's directory (here: owned by `nobody`) was used silently; b2c's tokens would go where that user reads.
    @Test func anotherUsersDirectoryOrStoreIsRefused() async throws {
        try await World.with { w in
            guard geteuid() == 0 else { return }  // chown needs root; CI runs as root
            let theirs = w.dir.appendingPathComponent("theirs")
            try FileManager.default.createDirectory(at: theirs, withIntermediateDirectories: false)
            chmod(theirs.path, 0o755)
            chown(theirs.path, 65534, 65534)
            let r = try await w.b2c(["signin"], as: alice, extra: ["B2C_HOME": theirs.path])
            #expect(r.status == 3 && r.stderr.contains("belongs to another user"), "\(r.stderr)")
            #expect(!FileManager.default.fileExists(atPath: theirs.appendingPathComponent("store.sqlite").path))
            // A directory of ours holding a store file of theirs: refused as well.
            #expect(try await w.b2c(["accounts"]).status == 0)
            chown(w.home.appendingPathComponent("store.sqlite").path, 65534, 65534)
            let file = try await w.b2c(["accounts"])
            #expect(file.status == 3 && file.stderr.contains("store.sqlite") && file.stderr.contains("another user"), "\(file.stderr)")
        }
    }

    /// A store planted with `settings.storage = plaintext` received the victim's refresh token although the victim gave a
    /// key. A key at hand means encrypted: the store is refused, and nothing is written to it.
    @Test func aPlaintextStoreIsRefusedWhenAKeyIsGiven() async throws {
        try await World.with { w in
            let noKey = ["B2C_STORE_KEY": "", "DBUS_SESSION_BUS_ADDRESS": "", "XDG_RUNTIME_DIR": ""]
            #expect(try await w.b2c(["config", "set", "storage", "plaintext"], extra: noKey).status == 0)
            let r = try await w.b2c(["signin"], as: alice)
            #expect(r.status == 3, "\(r.stderr)")
            #expect(r.stderr.contains("unencrypted") && r.stderr.contains("B2C_STORE_KEY"), "\(r.stderr)")
            #expect(try w.storeSecrets().isEmpty)
            let set = try await w.b2c(["config", "set", "storage", "plaintext"])
            #expect(set.status == 3, "\(set.stderr)")
        }
    }

    /// A new store's directory is 0700 and its files 0600 without b2c touching the process umask (issue 22, item 15:
    /// an app that embeds B2CKit keeps its umask).
    @Test func aNewStoreIsPrivateWithoutChangingTheUmask() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("b2c-umask-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: dir) }
        let before = umask(0o022)
        defer { umask(before) }
        let store = try TokenStore(directory: dir.appendingPathComponent("home"), keys: .ephemeral())
        try store.prepareForTokens()
        let after = umask(0o022)
        #expect(after == 0o022)
        #expect(Self.mode(dir.appendingPathComponent("home").path) == 0o700)
        for suffix in ["", "-wal", "-shm"] {
            let path = store.path + suffix
            if FileManager.default.fileExists(atPath: path) { #expect(Self.mode(path) == 0o600, "\(path)") }
        }
    }
}
