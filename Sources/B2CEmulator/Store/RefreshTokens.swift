import B2CProtocol
import Foundation
import GRDB

/// The `refresh_tokens` table: each grant's tokens (hashes), their rotation and revocation; the refresh grant's one read.
extension EmulatorStore {
    struct RefreshRecord: Sendable, Equatable {
        var grantId: String, clientId: String, policy: String, oid: String, scopes: String
        var authTime: Int, issuedAt: Int, grantIssuedAt: Int, rotatedAt: Int?, revoked: Bool
        /// Issued to a confidential client: redeemed only with its secret.
        var confidential = false
        /// Issued to a single-page app: 24 hours from the sign-in, whatever the policy says.
        var spa = false
    }

    /// A refresh token to store: its record and the token it rotates.
    struct NewRefreshToken: Sendable {
        var token: String, record: RefreshRecord, rotating: String?, now: Int
    }

    /// Stores a refresh token and marks the one it rotates, in one transaction: a refresh grant commits once (its
    /// token-log entry goes with the log's next batch).
    func saveRefreshToken(_ t: NewRefreshToken) throws { try db.write { try Self.save(t, $0) } }

    /// The same, the task waiting for the store's writer without holding its thread: a refresh grant's thread goes on to
    /// sign another answer meanwhile (on two cores a blocked thread was a tenth of a core left idle under load). The
    /// grants that arrive together share a transaction (`GroupCommit`).
    func saveRefreshToken(_ t: NewRefreshToken) async throws { try await rotations.write { try Self.save(t, $0) } }

    private static func save(_ t: NewRefreshToken, _ db: Database) throws {
        let r = t.record
        try db.cachedExecute(
            """
            INSERT INTO refresh_tokens(hash, grant_id, client_id, policy, oid, scopes, auth_time, issued_at, grant_issued_at,
                                       confidential, spa)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """,
            [
                Self.hash(t.token), r.grantId, r.clientId, r.policy, r.oid, r.scopes, r.authTime, r.issuedAt, r.grantIssuedAt,
                r.confidential, r.spa,
            ])
        if let old = t.rotating {
            try db.cachedExecute("UPDATE refresh_tokens SET rotated_at = ? WHERE hash = ? AND rotated_at IS NULL", [t.now, Self.hash(old)])
        }
    }

    /// A refresh token's record, and the person it was issued to (nil when they are gone): one read for a refresh grant.
    func refreshTokenAndUser(_ token: String) throws -> (RefreshRecord, UserRecord?)? {
        // One statement, in SQLite's own snapshot: no transaction around it, and one read lock rather than two.
        func decode(_ row: some StoredColumns) -> (RefreshRecord, UserRecord?) {
            let user = row.optionalString(Self.refreshColumnCount) == nil ? nil : Self.user(row, from: Self.refreshColumnCount)
            return (Self.refreshRecord(row), user)
        }
        if let directReads { return try directReads.row(Self.refreshTokenAndUserSQL, Self.hash(token), decode) }
        return try db.unsafeRead { db in try db.cachedRow(Self.refreshTokenAndUserSQL, [Self.hash(token)]).map(decode) }
    }

    /// The columns `refreshRecord(_:)` reads, in its order (by position, as `userColumns`).
    private static let refreshColumns =
        "grant_id, client_id, policy, oid, scopes, auth_time, issued_at, grant_issued_at, rotated_at, revoked, confidential, spa"

    private static let refreshColumnCount = refreshColumns.split(separator: ",").count

    /// A refresh token's columns, then its person's (NULL when they are gone). Oids are GUIDs: SQL's ASCII `lower` is
    /// Swift's `lowercased`, with which users are stored.
    private static let refreshTokenAndUserSQL: String = {
        func qualified(_ columns: String, _ table: String) -> String {
            columns.split(separator: ",").map { table + "." + $0.trimmingCharacters(in: .whitespaces) }.joined(separator: ", ")
        }
        return "SELECT \(qualified(refreshColumns, "r")), \(qualified(userColumns, "u")) "
            + "FROM refresh_tokens r LEFT JOIN users u ON u.oid = lower(r.oid) WHERE r.hash = ?"
    }()

    private static func refreshRecord(_ row: some StoredColumns) -> RefreshRecord {
        RefreshRecord(
            grantId: row.string(0), clientId: row.string(1), policy: row.string(2), oid: row.string(3), scopes: row.string(4),
            authTime: row.int(5), issuedAt: row.int(6), grantIssuedAt: row.int(7), rotatedAt: row.optionalInt(8), revoked: row.bool(9),
            confidential: row.bool(10), spa: row.bool(11))
    }
}
