import Crypto
import Foundation
import GRDB
import Testing

@testable import B2CKit

/// The store's schema is brought up to date once, and an up-to-date store is known from the header's `user_version` (the
/// number of migrations) without GRDB's migrations table; a store an older b2c left with that number unset is recognised
/// as up to date and given it.
@Suite struct StoreSchemaTests {
    static func freshHome() throws -> URL {
        let home = FileManager.default.temporaryDirectory.appendingPathComponent("schema-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: home, withIntermediateDirectories: true)
        return home
    }

    static func userVersion(_ store: TokenStore) throws -> Int? { try store.read { try Int.fetchOne($0, sql: "PRAGMA user_version") } }

    @Test func anUpToDateStoreIsKnownFromItsUserVersion() throws {
        let home = try Self.freshHome()
        defer { try? FileManager.default.removeItem(at: home) }
        let key = SymmetricKey(size: .bits256)
        let made = try TokenStore(directory: home, keys: .ephemeral(key))
        let count = try made.read { try String.fetchAll($0, sql: "SELECT identifier FROM grdb_migrations") }.count
        #expect(count >= 8)
        #expect(try Self.userVersion(made) == count)

        // With the number set, GRDB's table is not read: a store without it still opens and nothing is migrated again
        // (v1 would fail on its existing tables).
        try made.write { try $0.execute(sql: "DROP TABLE grdb_migrations") }
        let again = try TokenStore(directory: home, keys: .ephemeral(key))
        #expect(try Self.userVersion(again) == count)

        // A store an older b2c migrated (its migrations table complete, no number): recognised and given the number.
        try again.write { db in
            try db.execute(sql: "CREATE TABLE grdb_migrations (identifier TEXT NOT NULL PRIMARY KEY)")
            for id in Self.identifiers { try db.execute(sql: "INSERT INTO grdb_migrations VALUES (?)", arguments: [id]) }
        }
        try again.write { try $0.execute(sql: "PRAGMA user_version = 0") }
        let older = try TokenStore(directory: home, keys: .ephemeral(key))
        #expect(try Self.userVersion(older) == count)
        #expect(try older.read { try String.fetchAll($0, sql: "SELECT identifier FROM grdb_migrations") }.count == count)
    }

    static let identifiers = [
        "v1", "v2-scoped", "v3-app-tokens", "v4-settings", "v5-scoped-identities", "v6-refresh-refusal", "v7-fast-answers",
        "v8-dropped-token-generation",
    ]
}
