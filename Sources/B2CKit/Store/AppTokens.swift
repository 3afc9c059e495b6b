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
        try read { db in
            try Row.fetchOne(
                db,
                sql: """
                    SELECT * FROM app_tokens WHERE environment = ? AND client_id = ? AND resource = ? AND (?4 IS NULL OR tenant_id = ?4)
                    """, arguments: [scope.environment, scope.clientID, resource.lowercased(), scope.tenantID]
            ).map(Self.appToken)
        }
    }

    public func saveAppToken(_ t: AppToken) throws {
        try write { db in
            try db.execute(
                sql: """
                    INSERT OR REPLACE INTO app_tokens(environment, client_id, resource, tenant_id, policy, secret, expires_on, cached_at)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                    """,
                arguments: [
                    t.environment.lowercased(), t.clientID.lowercased(), t.resource.lowercased(), t.tenantID.lowercased(), t.policy,
                    t.secret,
                    t.expiresOn, t.cachedAt,
                ])
        }
    }

    /// The app tokens of a scope (nil: the whole store), for listings; their secrets are there but never shown.
    public func appTokens(scope: AccountScope?) throws -> [AppToken] {
        try read { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT * FROM app_tokens
                    WHERE ?1 IS NULL OR (environment = ?1 AND client_id = ?2 AND (?3 IS NULL OR tenant_id = ?3))
                    ORDER BY environment, client_id, resource
                    """, arguments: [scope?.environment, scope?.clientID, scope?.tenantID]
            ).map(Self.appToken)
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

    static func appToken(_ row: Row) -> AppToken {
        AppToken(
            environment: row["environment"], clientID: row["client_id"], resource: row["resource"], tenantID: row["tenant_id"],
            policy: row["policy"], secret: row["secret"], expiresOn: row["expires_on"], cachedAt: row["cached_at"])
    }
}
