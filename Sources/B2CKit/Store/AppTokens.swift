import Foundation
import GRDB

/// An app-only (client credentials) access token: the app's own, for one resource (`<App ID URI>/.default`), no person.
public struct AppToken: Sendable, Equatable {
    /// The authority host it was issued at, `host[:port]`.
    public var environment: String
    /// The app's client id.
    public var clientID: String
    /// `<App ID URI>/.default`
    public var resource: String
    /// The tenant GUID.
    public var tenantID: String
    /// The policy whose token endpoint issued it.
    public var policy: String
    /// The token itself; empty in listings.
    public var secret: String
    /// When it expires (epoch seconds).
    public var expiresOn: Int
    /// When it was stored (epoch seconds).
    public var cachedAt: Int
}

extension TokenStore {
    /// The cached app token of a client for a resource, within a scope.
    public func appToken(scope: AccountScope, resource: String) throws -> AppToken? {
        let cipher = try cipher()
        return try read { db in
            try AppTokenRecord.scoped(scope).filter(Column("resource") == resource.lowercased()).fetchOne(db)
        }?.token(cipher: cipher)
    }

    /// Stores an app token, its secret sealed with the store's key, in place of the app's token for the same resource.
    public func saveAppToken(_ t: AppToken) throws {
        let cipher = try cipher()
        let record = AppTokenRecord(
            t,
            sealedSecret: try cipher.seal(
                t.secret, row: StoreCipher.appToken(t.environment.lowercased(), t.clientID.lowercased(), t.resource.lowercased())))
        try write { try record.insert($0, onConflict: .replace) }
    }

    /// The app tokens of a scope (nil: the whole store), for listings: without their secrets (empty).
    public func appTokens(scope: AccountScope?) throws -> [AppToken] {
        try read { db in
            try AppTokenRecord.scoped(scope).order(Column("environment"), Column("client_id"), Column("resource")).fetchAll(db)
        }.map { try $0.token(cipher: nil) }
    }

    /// Forgets app tokens: one resource's, a scope's, or (nil scope) every one. Returns how many.
    @discardableResult
    public func removeAppTokens(scope: AccountScope?, resource: String? = nil) throws -> Int {
        try write { db in
            var request = AppTokenRecord.scoped(scope)
            if let resource { request = request.filter(Column("resource") == resource.lowercased()) }
            return try request.deleteAll(db)
        }
    }
}
