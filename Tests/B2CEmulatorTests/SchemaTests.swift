import Foundation
import GRDB
import Testing

@testable import B2CEmulator

/// The tenant's state file moves forward: a file of an earlier schema opens with its rows kept.
@Suite struct SchemaTests {
    /// v10 made the token log's ids plain row ids (no AUTOINCREMENT, so a grant's commit no longer writes
    /// `sqlite_sequence`); the entries logged before are kept, in order, and new ones follow them.
    @Test func theTokenLogKeepsItsEntriesThroughV10() throws {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let path = dir.appendingPathComponent("emulator.sqlite").path
        let before = try DatabaseQueue(path: path)
        try EmulatorSchema.migrator.migrate(before, upTo: "v9-native-journeys")
        try before.write { db in
            for outcome in ["ok", "AADB2C90080"] {
                try db.execute(
                    sql: "INSERT INTO token_log(at, endpoint, grant_type, policy, client_id, oid, outcome) VALUES (?, ?, ?, ?, ?, ?, ?)",
                    arguments: [1_700_000_000, "token", "refresh_token", "b2c_1_susi", "client", nil, outcome])
            }
            #expect(try Int.fetchOne(db, sql: "SELECT count(*) FROM sqlite_sequence WHERE name = 'token_log'") == 1)
        }
        try before.close()

        let store = try EmulatorStore.file(directory: dir)
        defer { store.close() }
        store.requests.log(
            .init(at: 1_700_000_001, endpoint: "token", grantType: "password", policy: "b2c_1_ropc", clientId: "c", oid: "o", outcome: "ok")
        )
        #expect(try store.requests.entries().map(\.outcome) == ["ok", "AADB2C90080", "ok"])
        try store.db.read { db in
            #expect(try Int.fetchOne(db, sql: "SELECT count(*) FROM sqlite_sequence WHERE name = 'token_log'") == 0)
            let sql = try String.fetchOne(db, sql: "SELECT sql FROM sqlite_master WHERE name = 'token_log'") ?? ""
            #expect(!sql.uppercased().contains("AUTOINCREMENT"), "\(sql)")
        }
    }
}
