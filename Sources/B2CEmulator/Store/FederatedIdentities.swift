import B2CProtocol
import Foundation
import GRDB

/// A person as a (mock) identity provider answers: who, by which provider.
struct FederatedIdentity: Codable, Sendable, Equatable {
    /// A built-in (mock) provider; nil for an OpenID Connect provider, named by `issuer`.
    var provider: EmulatorSeed.IdentityProvider?
    /// An OpenID Connect provider's issuer (the tokens' `idp`) and display name.
    var issuer: String? = nil
    var providerName: String? = nil
    var subject: String
    var email: String
    var name: String?
    var givenName: String?
    var surname: String?
    /// The provider's access token (an OpenID Connect provider's; a mock provider makes one up).
    var accessToken: String? = nil

    /// The tokens' `idp`: the built-in provider's domain or the OpenID Connect provider's issuer.
    var idp: String { issuer ?? provider?.domain ?? "" }
    var label: String { providerName ?? provider?.label ?? idp }
}

/// What a mock identity provider answers next (`POST /_admin/idp/{name}/next`): a person, or an error such as
/// `access_denied` (the person cancelled at the provider).
struct IdPAnswer: Codable, Sendable, Equatable {
    var subject: String?
    var email: String?
    var name: String?
    var givenName: String?
    var surname: String?
    var error: String?
    var errorDescription: String?
}

extension EmulatorStore {
    /// A row of `idp_codes`, as a GRDB record: a mock provider's code (its hash only), the identity it stands for, when it
    /// was made.
    struct IdPCodeRow: Codable, FetchableRecord, PersistableRecord {
        static let databaseTableName = "idp_codes"
        static let databaseColumnDecodingStrategy = DatabaseColumnDecodingStrategy.convertFromSnakeCase
        static let databaseColumnEncodingStrategy = DatabaseColumnEncodingStrategy.convertToSnakeCase
        var hash: String
        /// The `FederatedIdentity` as JSON.
        var identity: String
        var createdAt: Int
    }

    /// A row of `federated_identities`, as a GRDB record: the person an identity provider's subject signed up as.
    struct FederatedIdentityRow: Codable, FetchableRecord, PersistableRecord {
        static let databaseTableName = "federated_identities"
        var issuer: String
        var subject: String
        var oid: String
    }

    /// The answer queued for a provider, taken (each answers one sign-in).
    func takeNextIdPAnswer(_ provider: EmulatorSeed.IdentityProvider) throws -> IdPAnswer? {
        let key = "idp_next:\(provider.rawValue)"
        return try db.write { db in
            guard let row = try SettingRow.fetchOne(db, key: key) else { return nil }
            try row.delete(db)
            return try? JSONDecoder().decode(IdPAnswer.self, from: Data(row.value.utf8))
        }
    }

    func nextIdPAnswer(_ provider: EmulatorSeed.IdentityProvider) throws -> IdPAnswer? {
        try setting("idp_next:\(provider.rawValue)").flatMap { try? JSONDecoder().decode(IdPAnswer.self, from: Data($0.utf8)) }
    }

    func setNextIdPAnswer(_ provider: EmulatorSeed.IdentityProvider, _ answer: IdPAnswer?) throws {
        let key = "idp_next:\(provider.rawValue)"
        guard let answer else {
            try db.write { _ = try SettingRow.deleteOne($0, key: key) }
            return
        }
        try setSetting(key, String(decoding: try JSONEncoder().encode(answer), as: UTF8.self))
    }

    /// A code the mock provider hands the tenant for a person (single use, 10 minutes).
    func saveIdPCode(_ code: String, _ identity: FederatedIdentity, now: Int) throws {
        let row = IdPCodeRow(
            hash: Self.hash(code), identity: String(decoding: try JSONEncoder().encode(identity), as: UTF8.self), createdAt: now)
        try db.write { try row.insert($0) }
    }

    func redeemIdPCode(_ code: String, now: Int) throws -> FederatedIdentity? {
        try db.write { db in
            guard let row = try IdPCodeRow.fetchOne(db, key: Self.hash(code)) else { return nil }
            try row.delete(db)
            guard row.createdAt + 600 > now else { return nil }
            return try? JSONDecoder().decode(FederatedIdentity.self, from: Data(row.identity.utf8))
        }
    }

    /// The user a federated identity signed up as (same provider and subject), if any.
    func federatedUser(_ identity: FederatedIdentity) throws -> UserRecord? {
        let row = try db.read {
            try FederatedIdentityRow.fetchOne($0, key: ["issuer": identity.idp, "subject": identity.subject])
        }
        return try row.flatMap { try user(oid: $0.oid) }
    }

    /// A federated user's identity (provider and subject), as API connectors describe the person.
    func federatedIdentity(oid: String) throws -> (issuer: String, subject: String)? {
        try db.read { try FederatedIdentityRow.filter(Column("oid") == oid).fetchOne($0) }.map { ($0.issuer, $0.subject) }
    }

    /// A new user for a federated identity: no password of their own (they sign in at their provider), the provider kept.
    func createFederatedUser(
        _ identity: FederatedIdentity, displayName: String, givenName: String, surname: String, now: Int
    ) throws -> UserRecord {
        var user = try createUser(
            email: identity.email, password: Random.token(bytes: 32), displayName: displayName, givenName: givenName, surname: surname,
            now: now)
        try db.write { db in
            try db.execute(sql: "UPDATE users SET idp = ? WHERE oid = ?", arguments: [identity.idp, user.oid])
            try FederatedIdentityRow(issuer: identity.idp, subject: identity.subject, oid: user.oid).insert(db)
        }
        user.idp = identity.idp
        return user
    }
}
