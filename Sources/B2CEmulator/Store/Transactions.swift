import Foundation
import GRDB

/// The `transactions` table: an authorize request waiting for the person (an hour at most).
extension EmulatorStore {
    /// A row of `transactions`, as a GRDB record: the transaction's id, the transaction as JSON text, when it began.
    struct TransactionRow: Codable, FetchableRecord, PersistableRecord {
        static let databaseTableName = "transactions"
        static let databaseColumnDecodingStrategy = DatabaseColumnDecodingStrategy.convertFromSnakeCase
        static let databaseColumnEncodingStrategy = DatabaseColumnEncodingStrategy.convertToSnakeCase
        var id: String, data: String, createdAt: Int
    }

    func saveTransaction(_ tx: AuthorizeTransaction, now: Int) throws {
        let row = TransactionRow(id: tx.id, data: String(decoding: try JSONEncoder().encode(tx), as: UTF8.self), createdAt: now)
        try db.write { try row.insert($0, onConflict: .replace) }
    }

    func transaction(id: String, now: Int) throws -> AuthorizeTransaction? {
        guard let row = try db.read({ try TransactionRow.fetchOne($0, key: id) }), row.createdAt + 3600 > now else { return nil }
        // One from an older version of the tenant, in another shape, is as good as gone: the person starts again.
        return try? JSONDecoder().decode(AuthorizeTransaction.self, from: Data(row.data.utf8))
    }

    func deleteTransaction(id: String) throws {
        try db.write { _ = try TransactionRow.deleteOne($0, key: id) }
    }
}
