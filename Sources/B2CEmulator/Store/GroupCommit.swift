import GRDB
import NIOConcurrencyHelpers

/// Writes that requests make at the same moment, committed together: each caller waits for the commit that carries its
/// write. While one commit runs on the store's writer, the writes that arrive wait, and the next commit takes them all.
///
/// A refresh grant rotates its token in a write transaction; one transaction per grant cost each grant the writer
/// thread's wake-up, six file locks and its own WAL frames. Under load the grants of a moment now share one. A write
/// that throws has its savepoint rolled back and fails only its own caller; a commit that fails (the database closed, a
/// full disk: an error after which SQLite ends the whole transaction) fails every write of the batch.
final class GroupCommit: Sendable {
    typealias Work = @Sendable (Database) throws -> Void

    private struct Waiting {
        var writes: [(work: Work, done: CheckedContinuation<Void, any Error>)] = []
        /// A commit is queued or running on the writer: new writes wait for the next commit (a running one schedules it).
        var committing = false
    }

    private let db: any DatabaseWriter
    private let waiting = NIOLockedValueBox(Waiting())

    init(db: any DatabaseWriter) { self.db = db }

    /// How many writes wait for the next commit (for the tests).
    var waitingCount: Int { waiting.withLockedValue { $0.writes.count } }

    /// Runs `work` in a transaction shared with the other writes of the moment; returns once it is committed.
    func write(_ work: @escaping Work) async throws {
        try await withCheckedThrowingContinuation { (done: CheckedContinuation<Void, any Error>) in
            let lead = waiting.withLockedValue { w in
                w.writes.append((work, done))
                defer { w.committing = true }
                return !w.committing
            }
            if lead { schedule() }
        }
    }

    private func schedule() {
        db.asyncWriteWithoutTransaction { [self] db in commitWaiting(db) }
    }

    /// Commits the writes waiting now (on the writer's queue); writes that arrived meanwhile get a commit of their own,
    /// queued behind the writer's other work so that a steady stream of grants never holds the writer.
    private func commitWaiting(_ db: Database) {
        let batch = waiting.withLockedValue { w in
            defer { w.writes = [] }
            return w.writes
        }
        var failures = [(any Error)?](repeating: nil, count: batch.count)
        do {
            try db.inTransaction {
                if batch.count == 1 {
                    try batch[0].work(db)
                } else {
                    for (i, write) in batch.enumerated() {
                        do { try Self.inSavepoint(db, write.work) } catch { failures[i] = error }
                    }
                }
                return .commit
            }
        } catch {
            failures = failures.map { $0 ?? error }
        }
        let more = waiting.withLockedValue { w in
            if w.writes.isEmpty { w.committing = false }
            return !w.writes.isEmpty
        }
        if more { schedule() }
        for (write, failure) in zip(batch, failures) {
            if let failure { write.done.resume(throwing: failure) } else { write.done.resume() }
        }
    }

    /// `work` in a savepoint, rolled back if it throws. The savepoint's statements are prepared once per connection:
    /// GRDB's `inSavepoint` compiled its two statements again for every write.
    private static func inSavepoint(_ db: Database, _ work: Work) throws {
        try db.cachedExecute("SAVEPOINT rotation", [])
        do {
            try work(db)
            try db.cachedExecute("RELEASE SAVEPOINT rotation", [])
        } catch {
            // (When SQLite has already ended the transaction these fail too, and the commit's failure reaches everyone.)
            try? db.cachedExecute("ROLLBACK TO SAVEPOINT rotation", [])
            try? db.cachedExecute("RELEASE SAVEPOINT rotation", [])
            throw error
        }
    }
}
