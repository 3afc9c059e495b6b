import Foundation
import GRDB

/// The `transactions` table: an authorize request waiting for the person (an hour at most).
extension EmulatorStore {
    // By hand, not a GRDB record: every page of every journey reads and writes its transaction, and the record's encoding
    // made the page walk measurably slower (bench/README.md, "The house tidy against the build before it").
    func saveTransaction(_ tx: AuthorizeTransaction, now: Int) throws {
        try db.write {
            try $0.execute(
                sql: "INSERT OR REPLACE INTO transactions(id, data, created_at) VALUES (?, ?, ?)",
                arguments: [tx.id, String(decoding: try JSONEncoder().encode(tx), as: UTF8.self), now])
        }
    }

    func transaction(id: String, now: Int) throws -> AuthorizeTransaction? {
        try db.read { db in
            guard let row = try Row.fetchOne(db, sql: "SELECT data, created_at FROM transactions WHERE id = ?", arguments: [id]),
                (row["created_at"] as Int) + 3600 > now
            else { return nil }
            // One from an older version of the tenant, in another shape, is as good as gone: the person starts again.
            return try? JSONDecoder().decode(AuthorizeTransaction.self, from: Data((row["data"] as String).utf8))
        }
    }

    func deleteTransaction(id: String) throws {
        try db.write { try $0.execute(sql: "DELETE FROM transactions WHERE id = ?", arguments: [id]) }
    }
}
