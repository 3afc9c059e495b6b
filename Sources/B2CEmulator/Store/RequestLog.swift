import B2CProtocol
import Foundation
import GRDB

/// The request log of the token endpoint and the journeys (`GET /_admin/log`): what was asked and how it ended, never a
/// secret.
public struct RequestLog: Sendable {
    let db: any DatabaseWriter

    public struct Entry: Sendable {
        public var at: Int, endpoint: String, grantType: String, policy: String, clientId: String, oid: String?, outcome: String
        /// Written already, with the refresh token the request rotated (in its transaction).
        var written = false
        var json: JSONValue {
            [
                "at": JSONValue(at), "endpoint": .string(endpoint), "grantType": .string(grantType), "policy": .string(policy),
                "clientId": .string(clientId), "oid": oid.map { .string($0) } ?? .null, "outcome": .string(outcome),
            ]
        }
    }

    func log(_ e: Entry) {
        // One statement: SQLite commits it alone, no transaction around it (every token request logs).
        try? db.writeWithoutTransaction { try Self.insert(e, $0) }
    }

    static func insert(_ e: Entry, _ db: Database) throws {
        try db.cachedExecute(
            "INSERT INTO token_log(at, endpoint, grant_type, policy, client_id, oid, outcome) VALUES (?, ?, ?, ?, ?, ?, ?)",
            [e.at, e.endpoint, e.grantType, e.policy, e.clientId, e.oid, e.outcome])
    }

    /// A row of `token_log`, as a GRDB record, for reading the log (`insert` writes it by hand: every token request logs).
    struct EntryRow: Decodable, FetchableRecord, TableRecord {
        static let databaseTableName = "token_log"
        static let databaseColumnDecodingStrategy = DatabaseColumnDecodingStrategy.convertFromSnakeCase
        var at: Int, endpoint: String, grantType: String, policy: String, clientId: String, oid: String?, outcome: String

        var entry: Entry {
            Entry(at: at, endpoint: endpoint, grantType: grantType, policy: policy, clientId: clientId, oid: oid, outcome: outcome)
        }
    }

    public func entries() throws -> [Entry] {
        try db.read { try EntryRow.order(Column("id")).fetchAll($0).map(\.entry) }
    }

    func clear() throws {
        try db.write { _ = try EntryRow.deleteAll($0) }
    }
}
