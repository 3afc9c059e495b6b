import CSQLite
import GRDB
import NIOConcurrencyHelpers

/// The columns of one row, read by position: from a GRDB row, or from a statement stepped by `DirectReads`. A record's
/// decoder is written once against this, whichever way its row was read.
protocol StoredColumns {
    func string(_ index: Int) -> String
    func optionalString(_ index: Int) -> String?
    func int(_ index: Int) -> Int
    func optionalInt(_ index: Int) -> Int?
    func bool(_ index: Int) -> Bool
}

extension Row: StoredColumns {
    func string(_ index: Int) -> String { self[index] }
    func optionalString(_ index: Int) -> String? { self[index] }
    func int(_ index: Int) -> Int { self[index] }
    func optionalInt(_ index: Int) -> Int? { self[index] }
    func bool(_ index: Int) -> Bool { self[index] }
}

/// Reads of a file store that every refresh grant makes, on SQLite connections of their own that never write
/// (`query_only`): a statement prepared once per connection, stepped, its columns read in place.
///
/// Why not GRDB's reader pool for these: each of its reads checked the schema's version with a statement of its own (a
/// second read transaction: the WAL's locks twice), took a reader through a lock and a dispatch queue, built a key path
/// at run time and copied the row into values before they were read: the read took 4.6 % of a refresh grant's CPU time
/// under load, now 1.4 % (bench/README.md, "Issue 43, the reads and writes"). The tables are GRDB's: its migrations make
/// them before the first read here, and every write still goes through it.
final class DirectReads: Sendable {
    private let path: String
    /// Connections not in use (each is used by one thread at a time), and whether the store was closed.
    private let idle = NIOLockedValueBox<(connections: [Connection], closed: Bool)>(([], false))

    /// Connections kept for the next reads; more than this were open only while reads overlapped, and are closed when
    /// given back (a test suite runs hundreds of tenants in one process, and each connection holds open files).
    static let idleLimit = 4

    init(path: String) { self.path = path }

    deinit { close() }

    /// The first row of `sql` with its one parameter bound to `argument`, decoded; nil when there is none.
    func row<T>(_ sql: String, _ argument: String, _ decode: (StatementColumns) -> T) throws -> T? {
        let connection = try take()
        defer { give(connection) }
        let statement = try connection.statement(sql)
        defer {
            sqlite3_reset(statement)
            sqlite3_clear_bindings(statement)
        }
        let bound = sqlite3_bind_text(statement, 1, argument, -1, Connection.transient)
        guard bound == SQLITE_OK else { throw connection.error(bound, sql) }
        switch sqlite3_step(statement) {
        case SQLITE_ROW: return decode(StatementColumns(statement: statement))
        case SQLITE_DONE: return nil
        case let code: throw connection.error(code, sql)
        }
    }

    /// Closes every connection; a read afterwards fails as GRDB's do on a closed database.
    func close() {
        let connections = idle.withLockedValue { state in
            state.closed = true
            defer { state.connections = [] }
            return state.connections
        }
        for connection in connections { connection.close() }
    }

    private func take() throws -> Connection {
        let (reused, closed) = idle.withLockedValue { state in (state.connections.popLast(), state.closed) }
        if closed { throw DatabaseError(resultCode: .SQLITE_MISUSE, message: "Connection is closed") }
        return try reused ?? Connection(path: path)
    }

    private func give(_ connection: Connection) {
        let kept = idle.withLockedValue { state in
            guard !state.closed, state.connections.count < Self.idleLimit else { return false }
            state.connections.append(connection)
            return true
        }
        if !kept { connection.close() }
    }

    /// One SQLite connection and its prepared statements. Not thread-safe: `DirectReads` hands it to one thread at a time.
    final class Connection: @unchecked Sendable {
        static let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)
        private let handle: OpaquePointer
        private var statements: [String: OpaquePointer] = [:]

        init(path: String) throws {
            var handle: OpaquePointer?
            let code = sqlite3_open_v2(path, &handle, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, nil)
            guard code == SQLITE_OK, let handle else {
                let message = handle.map { String(cString: sqlite3_errmsg($0)) }
                sqlite3_close_v2(handle)
                throw DatabaseError(resultCode: ResultCode(rawValue: code), message: message)
            }
            self.handle = handle
            // Errors with their extended codes, as GRDB's connections give them; a wait as long as theirs (`busyMode`);
            // and this one never writes.
            sqlite3_extended_result_codes(handle, 1)
            sqlite3_busy_timeout(handle, 10_000)
            guard sqlite3_exec(handle, "PRAGMA query_only = ON", nil, nil, nil) == SQLITE_OK else {
                let failure = error(sqlite3_errcode(handle), "PRAGMA query_only = ON")
                sqlite3_close_v2(handle)
                throw failure
            }
        }

        func statement(_ sql: String) throws -> OpaquePointer {
            if let statement = statements[sql] { return statement }
            var statement: OpaquePointer?
            let code = sqlite3_prepare_v3(handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statement, nil)
            guard code == SQLITE_OK, let statement else { throw error(code, sql) }
            statements[sql] = statement
            return statement
        }

        func error(_ code: Int32, _ sql: String) -> DatabaseError {
            DatabaseError(resultCode: ResultCode(rawValue: code), message: String(cString: sqlite3_errmsg(handle)), sql: sql)
        }

        func close() {
            for statement in statements.values { sqlite3_finalize(statement) }
            statements = [:]
            sqlite3_close_v2(handle)
        }
    }

    /// A stepped statement's current row. A NULL read as a string, an integer or a flag is "", 0 or false (GRDB's `Row`
    /// would stop the program): the columns read so are NOT NULL in the schema.
    struct StatementColumns: StoredColumns {
        let statement: OpaquePointer

        func optionalString(_ index: Int) -> String? {
            sqlite3_column_text(statement, Int32(index)).map { String(cString: $0) }
        }
        func string(_ index: Int) -> String { optionalString(index) ?? "" }
        func optionalInt(_ index: Int) -> Int? {
            sqlite3_column_type(statement, Int32(index)) == SQLITE_NULL ? nil : Int(sqlite3_column_int64(statement, Int32(index)))
        }
        func int(_ index: Int) -> Int { Int(sqlite3_column_int64(statement, Int32(index))) }
        func bool(_ index: Int) -> Bool { sqlite3_column_int64(statement, Int32(index)) != 0 }
    }
}
