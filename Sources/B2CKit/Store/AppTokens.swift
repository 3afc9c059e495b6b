import Foundation
import GRDB

/// An app-only (client credentials) access token: the app's own, for one resource (`<App ID URI>/.default`), no person.
public struct AppToken: Sendable, Equatable {
    public var environment: String
    public var clientID: String
    /// `<App ID URI>/.default`
    public var resource: String
    public var tenantID: String
    /// The policy whose token endpoint issued it.
    public var policy: String
    public var secret: String
    public var expiresOn: Int
    public var cachedAt: Int
}

extension TokenStore {
    /// The cached app token of a client for a resource, within a scope.
    public func appToken(scope: AccountScope, resource: String) throws -> AppToken? {
        let cipher = try cipher()
        return try read { db in
            try Row.fetchOne(
                db,
                sql: """
                    SELECT * FROM app_tokens WHERE environment = ? AND client_id = ? AND resource = ? AND (?4 IS NULL OR tenant_id = ?4)
                    """, arguments: [scope.environment, scope.clientID, resource.lowercased(), scope.tenantID]
            ).map { try Self.appToken($0, cipher: cipher) }
        }
    }

    public func saveAppToken(_ t: AppToken) throws {
        let cipher = try cipher()
        let (environment, client, resource) = (t.environment.lowercased(), t.clientID.lowercased(), t.resource.lowercased())
        try write { db in
            try db.execute(
                sql: """
                    INSERT OR REPLACE INTO app_tokens(environment, client_id, resource, tenant_id, policy, secret, expires_on, cached_at)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                    """,
                arguments: [
                    environment, client, resource, t.tenantID.lowercased(), t.policy,
                    try cipher.seal(t.secret, row: StoreCipher.appToken(environment, client, resource)), t.expiresOn, t.cachedAt,
                ])
        }
    }

    /// The app tokens of a scope (nil: the whole store), for listings: without their secrets (empty).
    public func appTokens(scope: AccountScope?) throws -> [AppToken] {
        try read { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT * FROM app_tokens
                    WHERE ?1 IS NULL OR (environment = ?1 AND client_id = ?2 AND (?3 IS NULL OR tenant_id = ?3))
                    ORDER BY environment, client_id, resource
                    """, arguments: [scope?.environment, scope?.clientID, scope?.tenantID]
            ).map { try Self.appToken($0, cipher: nil) }
        }
    }

    /// Forgets app tokens: one resource's, a scope's, or (nil scope) every one. Returns how many.
    @discardableResult
    public func removeAppTokens(scope: AccountScope?, resource: String? = nil) throws -> Int {
        try write { db in
            try db.execute(
                sql: """
                    DELETE FROM app_tokens
                    WHERE (?1 IS NULL OR (environment = ?1 AND client_id = ?2 AND (?3 IS NULL OR tenant_id = ?3)))
                        AND (?4 IS NULL OR resource = ?4)
                    """, arguments: [scope?.environment, scope?.clientID, scope?.tenantID, resource?.lowercased()])
            return db.changesCount
        }
    }

    /// A row; with no cipher, the secret is left out (listings).
    static func appToken(_ row: Row, cipher: StoreCipher?) throws -> AppToken {
        let secret = try cipher.map {
            try $0.open(row["secret"], row: StoreCipher.appToken(row["environment"], row["client_id"], row["resource"]))
        }
        return AppToken(
            environment: row["environment"], clientID: row["client_id"], resource: row["resource"], tenantID: row["tenant_id"],
            policy: row["policy"], secret: secret ?? "", expiresOn: row["expires_on"], cachedAt: row["cached_at"])
    }
}
