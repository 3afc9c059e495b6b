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
            try AppTokenRecord.scoped(scope).filter(Column("resource") == resource.lowercased()).fetchOne(db)
        }?.token(cipher: cipher)
    }

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
