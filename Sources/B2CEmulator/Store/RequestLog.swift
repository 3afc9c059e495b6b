import B2CProtocol
import CSQLite
import Dispatch
import Foundation
import GRDB
import NIOConcurrencyHelpers

/// The request log of the token endpoint and the journeys (`GET /_admin/log`): what was asked and how it ended, never a
/// secret.
///
/// Entries are written in batches: a request's entry waits up to `delay` for the others of the moment, and one commit
/// writes them all. A commit per request had cost every client-credentials grant a write transaction of its own (six file
/// locks, a WAL frame, the writer's lock taken on the event loop's thread). Whoever reads the log (`entries()`, `clear()`)
/// writes what is waiting first, on the writer's queue, so a reader sees every request answered before it asked; the
/// server writes the rest when it stops. A process killed outright loses the entries not yet committed (normally those
/// of the last `delay`).
public struct RequestLog: Sendable {
    let db: any DatabaseWriter
    private let waiting = NIOLockedValueBox(Waiting())

    private struct Waiting {
        var entries: [Entry] = []
        /// A write of the waiting entries is on its way.
        var scheduled = false
    }

    /// How long an entry waits for others before it is written.
    static let delay = DispatchTimeInterval.milliseconds(20)
    /// A batch this large is written at once, without waiting for `delay`.
    static let batchLimit = 512

    init(db: any DatabaseWriter) { self.db = db }

    public struct Entry: Sendable {
        public var at: Int, endpoint: String, grantType: String, policy: String, clientId: String, oid: String?, outcome: String
        var json: JSONValue {
            [
                "at": JSONValue(at), "endpoint": .string(endpoint), "grantType": .string(grantType), "policy": .string(policy),
                "clientId": .string(clientId), "oid": oid.map { .string($0) } ?? .null, "outcome": .string(outcome),
            ]
        }
    }

    func log(_ e: Entry) {
        let (first, full) = waiting.withLockedValue { w in
            w.entries.append(e)
            defer { w.scheduled = true }
            // (`==`: the batch that reaches the limit is written at once; while that write waits, later entries go with it.)
            return (!w.scheduled, w.entries.count == Self.batchLimit)
        }
        let log = self
        if full {
            db.asyncWriteWithoutTransaction { log.writeWaiting($0) }
        } else if first {
            DispatchQueue.global().asyncAfter(deadline: .now() + Self.delay) {
                log.db.asyncWriteWithoutTransaction { log.writeWaiting($0) }
            }
        }
    }

    /// Writes the waiting entries in one transaction (on the writer's queue: `db` is the writer's connection).
    private func writeWaiting(_ db: Database) {
        let batch = waiting.withLockedValue { w in
            defer { (w.entries, w.scheduled) = ([], false) }
            return w.entries
        }
        guard !batch.isEmpty else { return }
        // A log entry never fails a request: a write that fails (a full disk) loses the batch, as the single writes did.
        try? db.inTransaction {
            try Self.insert(batch, db)
            return .commit
        }
    }

    /// Writes what is waiting now, before returning (the server calls it when it stops).
    public func flush() {
        db.writeWithoutTransaction { writeWaiting($0) }
    }

    /// Inserts the entries with GRDB's cached statement, bound and stepped through SQLite's own calls: GRDB's arguments
    /// (an array of boxed values per row, then a binding per value through a protocol) were two fifths of a row's
    /// instructions (18,900 -> 11,600 per row under callgrind; the log is written for every token request).
    static func insert(_ entries: [Entry], _ db: Database) throws {
        let sql = "INSERT INTO token_log(at, endpoint, grant_type, policy, client_id, oid, outcome) VALUES (?, ?, ?, ?, ?, ?, ?)"
        let statement = try db.cachedStatement(sql: sql).sqliteStatement
        func check(_ code: Int32) throws {
            guard code == SQLITE_OK || code == SQLITE_DONE else {
                throw DatabaseError(
                    resultCode: ResultCode(rawValue: code), message: String(cString: sqlite3_errmsg(db.sqliteConnection)), sql: sql)
            }
        }
        func bind(_ index: Int32, _ text: String?) -> Int32 {
            guard let text else { return sqlite3_bind_null(statement, index) }
            return sqlite3_bind_text(statement, index, text, -1, DirectReads.Connection.transient)
        }
        defer { sqlite3_clear_bindings(statement) }
        for e in entries {
            sqlite3_reset(statement)
            try check(sqlite3_bind_int64(statement, 1, Int64(e.at)))
            try check(bind(2, e.endpoint))
            try check(bind(3, e.grantType))
            try check(bind(4, e.policy))
            try check(bind(5, e.clientId))
            try check(bind(6, e.oid))
            try check(bind(7, e.outcome))
            try check(sqlite3_step(statement))
        }
        sqlite3_reset(statement)
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

    /// Every entry, oldest first: the waiting ones written first, on the writer's queue, after any batch on its way.
    public func entries() throws -> [Entry] {
        try db.writeWithoutTransaction { db in
            writeWaiting(db)
            return try EntryRow.order(Column("id")).fetchAll(db).map(\.entry)
        }
    }

    func clear() throws {
        try db.writeWithoutTransaction { db in
            writeWaiting(db)
            _ = try EntryRow.deleteAll(db)
        }
    }
}
