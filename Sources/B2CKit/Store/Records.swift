import Foundation
import GRDB

// Record types for the store's cold paths, one per table (GRDB's record guide). The hot reads (a cache hit, the one-query
// listing) and the sign-in's write stay hand-written SQL in TokenStore.swift: they are measured (bench/README.md).

/// A row of `app_tokens`: the app's own token for one resource, its secret sealed with the row's identity.
struct AppTokenRecord: FetchableRecord, PersistableRecord {
    static let databaseTableName = "app_tokens"
    var environment: String
    var clientID: String
    var resource: String
    var tenantID: String
    var policy: String
    var secret: DatabaseValue
    var expiresOn: Int
    var cachedAt: Int

    init(row: Row) throws {
        environment = row["environment"]; clientID = row["client_id"]; resource = row["resource"]; tenantID = row["tenant_id"]
        policy = row["policy"]; secret = row["secret"]; expiresOn = row["expires_on"]; cachedAt = row["cached_at"]
    }

    init(_ t: AppToken, sealedSecret: DatabaseValue) {
        environment = t.environment.lowercased(); clientID = t.clientID.lowercased(); resource = t.resource.lowercased()
        tenantID = t.tenantID.lowercased(); policy = t.policy; secret = sealedSecret; expiresOn = t.expiresOn; cachedAt = t.cachedAt
    }

    func encode(to container: inout PersistenceContainer) throws {
        container["environment"] = environment; container["client_id"] = clientID; container["resource"] = resource
        container["tenant_id"] = tenantID; container["policy"] = policy; container["secret"] = secret
        container["expires_on"] = expiresOn; container["cached_at"] = cachedAt
    }

    /// The rows of a scope (nil: the whole store): its environment and client, and its tenant when the scope names one.
    static func scoped(_ scope: AccountScope?) -> QueryInterfaceRequest<AppTokenRecord> {
        guard let scope else { return all() }
        var request = filter(Column("environment") == scope.environment && Column("client_id") == scope.clientID)
        if let tenant = scope.tenantID { request = request.filter(Column("tenant_id") == tenant) }
        return request
    }

    /// The token, its secret opened with `cipher`; with no cipher, left out (listings never show it).
    func token(cipher: StoreCipher?) throws -> AppToken {
        let opened = try cipher.map { try $0.open(secret, row: StoreCipher.appToken(environment, clientID, resource)) }
        return AppToken(
            environment: environment, clientID: clientID, resource: resource, tenantID: tenantID, policy: policy, secret: opened ?? "",
            expiresOn: expiresOn, cachedAt: cachedAt)
    }
}

/// A row of `metadata`: a discovery document or key set, as fetched, with its fetch time.
struct MetadataRecord: Codable, FetchableRecord, PersistableRecord {
    static let databaseTableName = "metadata"
    static let databaseColumnDecodingStrategy = DatabaseColumnDecodingStrategy.convertFromSnakeCase
    static let databaseColumnEncodingStrategy = DatabaseColumnEncodingStrategy.convertToSnakeCase
    var url: String
    var body: Data
    var fetchedAt: Int
}

/// A row of `identities`: a person's profile as seen in one scope.
struct IdentityRecord: Codable, FetchableRecord, PersistableRecord {
    static let databaseTableName = "identities"
    static let databaseColumnDecodingStrategy = DatabaseColumnDecodingStrategy.convertFromSnakeCase
    static let databaseColumnEncodingStrategy = DatabaseColumnEncodingStrategy.convertToSnakeCase
    var environment: String
    var clientId: String
    var tenantId: String
    var oid: String
    var name: String?
    var givenName: String?
    var familyName: String?
    var email: String?
    var updatedAt: Int

    var identity: Identity {
        Identity(tenantID: tenantId, oid: oid, name: name, givenName: givenName, familyName: familyName, email: email)
    }
}

/// A row of `settings`: the store's id, its storage mode, its key's source, id and check value.
struct SettingRecord: FetchableRecord, PersistableRecord {
    static let databaseTableName = "settings"
    var key: String
    var value: DatabaseValue

    init(row: Row) throws { key = row["key"]; value = row["value"] }
    init(key: String, value: DatabaseValueConvertible) { self.key = key; self.value = value.databaseValue }

    func encode(to container: inout PersistenceContainer) throws { container["key"] = key; container["value"] = value }
}
