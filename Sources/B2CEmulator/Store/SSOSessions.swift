import B2CProtocol
import Foundation
import GRDB

/// The SSO sessions behind the tenant's cookie (`x-ms-cpim-sso`): whose, since when, until when, and whether they did
/// MFA. Session ids are stored only as hashes.
public struct SSOSessions: Sendable {
    let db: any DatabaseWriter

    /// An SSO session as stored: whose, since when, until when, and what made it.
    public struct Record: Sendable {
        public var oid: String, authTime: Int, createdAt: Int, mfa: Bool
        /// When it ends on the tenant clock; nil: never on its own (sessions of the first releases).
        public var expiresAt: Int?
        /// "Keep me signed in": a persistent cookie.
        public var persistent: Bool
        public var clientID: String?, policy: String?
        /// A custom policy's session managers' persisted claims (JSON of the claims bag's values); nil for a user flow.
        var claims: String? = nil
        var json: JSONValue {
            [
                "oid": .string(oid), "authTime": JSONValue(authTime), "createdAt": JSONValue(createdAt), "mfa": .bool(mfa),
                "expiresAt": expiresAt.map { JSONValue($0) } ?? .null, "keepMeSignedIn": .bool(persistent),
                "clientId": clientID.map { .string($0) } ?? .null, "policy": policy.map { .string($0) } ?? .null,
            ]
        }
    }

    /// A row of `sessions`, as a GRDB record: the session id's hash and the record's fields.
    struct SessionRow: Codable, FetchableRecord, PersistableRecord {
        static let databaseTableName = "sessions"
        static let databaseColumnDecodingStrategy = DatabaseColumnDecodingStrategy.convertFromSnakeCase
        static let databaseColumnEncodingStrategy = DatabaseColumnEncodingStrategy.convertToSnakeCase

        var idHash: String
        var oid: String, authTime: Int, createdAt: Int, mfa: Bool, expiresAt: Int?, persistent: Bool
        var clientId: String?, policy: String?, claims: String?

        var record: Record {
            Record(
                oid: oid, authTime: authTime, createdAt: createdAt, mfa: mfa, expiresAt: expiresAt, persistent: persistent,
                clientID: clientId, policy: policy, claims: claims)
        }
    }

    /// A new SSO session; `mfa`: the sign-in that made it did multifactor authentication (not asked again in it).
    func create(
        oid: String, now: Int, mfa: Bool = false, expiresAt: Int? = nil, persistent: Bool = false, clientID: String? = nil,
        policy: String? = nil, claims: String? = nil
    ) throws -> String {
        let id = Random.token()
        let row = SessionRow(
            idHash: EmulatorStore.hash(id), oid: oid, authTime: now, createdAt: now, mfa: mfa, expiresAt: expiresAt, persistent: persistent,
            clientId: clientID, policy: policy?.lowercased(), claims: claims)
        try db.write { try row.insert($0) }
        return id
    }

    func session(id: String) throws -> Record? {
        try db.read { try SessionRow.fetchOne($0, key: EmulatorStore.hash(id))?.record }
    }

    /// A rolling session's new end, each time it answers.
    func extend(id: String, until: Int) throws {
        try db.write {
            try $0.execute(sql: "UPDATE sessions SET expires_at = ? WHERE id_hash = ?", arguments: [until, EmulatorStore.hash(id)])
        }
    }

    /// Every session (the admin surface), newest first.
    public func all() throws -> [Record] {
        try db.read { try SessionRow.order(Column("created_at").desc, Column.rowID.desc).fetchAll($0).map(\.record) }
    }

    /// Ends every session, or one person's. Returns how many.
    @discardableResult
    public func end(oid: String?) throws -> Int {
        try db.write { db in
            try db.execute(sql: "DELETE FROM sessions WHERE ?1 IS NULL OR oid = ?1", arguments: [oid])
            return db.changesCount
        }
    }

    /// The session did multifactor authentication (a later sign-in in it is not asked again).
    func markMFA(id: String) throws {
        try db.write { try $0.execute(sql: "UPDATE sessions SET mfa = 1 WHERE id_hash = ?", arguments: [EmulatorStore.hash(id)]) }
    }

    func end(id: String) throws {
        try db.write { try $0.execute(sql: "DELETE FROM sessions WHERE id_hash = ?", arguments: [EmulatorStore.hash(id)]) }
    }
}
