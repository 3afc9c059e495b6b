import Foundation
import GRDB
import NIOConcurrencyHelpers
import Testing

@testable import B2CEmulator

/// Writes that arrive while a commit runs share the next one; each caller learns its own write's fate.
struct GroupCommitTests {
    /// Counts the commits of a database.
    final class Commits: TransactionObserver, @unchecked Sendable {
        let count = NIOLockedValueBox(0)
        func observes(eventsOfKind eventKind: DatabaseEventKind) -> Bool { true }
        func databaseDidChange(with event: DatabaseEvent) {}
        func databaseDidCommit(_ db: Database) { count.withLockedValue { $0 += 1 } }
        func databaseDidRollback(_ db: Database) {}
    }

    struct Refused: Error {}

    /// Runs `body` with a database file of one table, `t(n)`, and a group commit on it; closes and removes them after.
    static func withGroup(_ body: (DatabasePool, GroupCommit) async throws -> Void) async throws {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let pool = try DatabasePool(path: dir.appendingPathComponent("g.sqlite").path)
        defer { try? pool.close() }
        try await pool.write { try $0.execute(sql: "CREATE TABLE t(n INTEGER PRIMARY KEY)") }
        try await body(pool, GroupCommit(db: pool))
    }

    @Test func writesThatArriveDuringACommitShareTheNextAndAFailingOneFailsAlone() async throws {
        try await Self.withGroup { pool, group in
            let commits = Commits()
            pool.add(transactionObserver: commits, extent: .databaseLifetime)

            // The first write holds the writer until ten more wait behind it.
            let (running, release) = (NIOLockedValueBox(false), NIOLockedValueBox(false))
            async let first: Void = group.write { db in
                try db.execute(sql: "INSERT INTO t(n) VALUES (0)")
                running.withLockedValue { $0 = true }
                while !release.withLockedValue({ $0 }) { Thread.sleep(forTimeInterval: 0.01) }
            }
            // (Each wait gives up after 10 s, then the expectations below fail rather than the test hanging.)
            for _ in 0..<2000 where !running.withLockedValue({ $0 }) { try await Task.sleep(for: .milliseconds(5)) }
            let outcomes = try await withThrowingTaskGroup(of: (Int, Bool).self) { tasks in
                for n in 1...10 {
                    tasks.addTask {
                        do {
                            try await group.write { db in
                                try db.execute(sql: "INSERT INTO t(n) VALUES (?)", arguments: [n])
                                if n == 7 { throw Refused() }
                            }
                            return (n, true)
                        } catch is Refused { return (n, false) }
                    }
                }
                for _ in 0..<2000 where group.waitingCount < 10 { try await Task.sleep(for: .milliseconds(5)) }
                release.withLockedValue { $0 = true }
                return try await tasks.reduce(into: [Int: Bool]()) { $0[$1.0] = $1.1 }
            }
            try await first
            #expect(outcomes.count == 10 && outcomes.filter { !$0.value }.map(\.key) == [7])
            // Every caller that returned finds its row; the refused write's row was rolled back with its savepoint.
            let rows = try await pool.read { try Int.fetchAll($0, sql: "SELECT n FROM t ORDER BY n") }
            #expect(rows == [0, 1, 2, 3, 4, 5, 6, 8, 9, 10])
            // (The observer came after the table's creation.) The first write's commit, then one for the ten.
            #expect(commits.count.withLockedValue { $0 } == 2)
        }
    }

    @Test func aWriteAloneIsCommittedAtOnceAndItsErrorReachesItsCaller() async throws {
        try await Self.withGroup { pool, group in
            try await group.write { try $0.execute(sql: "INSERT INTO t(n) VALUES (1)") }
            await #expect(throws: Refused.self) {
                try await group.write { db in
                    try db.execute(sql: "INSERT INTO t(n) VALUES (2)")
                    throw Refused()
                }
            }
            #expect(try await pool.read { try Int.fetchAll($0, sql: "SELECT n FROM t") } == [1])
        }
    }

    @Test func aCommitThatFailsFailsEveryWriteOfItsBatch() async throws {
        try await Self.withGroup { pool, group in
            try pool.close()
            // Every write's transaction fails to begin on the closed database: each caller gets the error.
            let failed = try await withThrowingTaskGroup(of: Int.self) { tasks in
                for n in 1...5 {
                    tasks.addTask {
                        do {
                            try await group.write { try $0.execute(sql: "INSERT INTO t(n) VALUES (?)", arguments: [n]) }
                            return 0
                        } catch is DatabaseError { return 1 }
                    }
                }
                return try await tasks.reduce(0, +)
            }
            #expect(failed == 5)
        }
    }
}
