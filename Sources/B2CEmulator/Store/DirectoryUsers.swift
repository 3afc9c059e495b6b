import B2CProtocol
import Foundation
import GRDB

/// What Microsoft Graph's users API reads and writes beyond the sign-in name and the names (`GraphUsers.swift`).
extension EmulatorStore {
    /// A user's directory properties: the kind of local sign-in name, whether the account is enabled, its password
    /// policies (`DisablePasswordExpiration`, `DisableStrongPassword`) and a password change due at the next sign-in. A
    /// GRDB record of those columns of `users`.
    struct DirectoryProperties: Sendable, Equatable, Decodable, FetchableRecord, TableRecord {
        static let databaseTableName = "users"
        static let databaseColumnDecodingStrategy = DatabaseColumnDecodingStrategy.convertFromSnakeCase
        static var databaseSelection: [any SQLSelectable] {
            [Column("sign_in_type"), Column("account_enabled"), Column("password_policies"), Column("force_change_password")]
        }

        var signInType = "emailAddress"
        var accountEnabled = true
        var passwordPolicies: String?
        var forceChangePassword = false
    }

    func directoryProperties(oid: String) throws -> DirectoryProperties? {
        try db.read { try DirectoryProperties.fetchOne($0, key: oid) }
    }

    /// Every user with their directory properties, ordered by creation then object id (Graph's pages follow this order).
    func directoryUsers() throws -> [(UserRecord, DirectoryProperties)] {
        let users = try db.read { try Row.fetchAll($0, sql: "SELECT oid FROM users ORDER BY created_at, oid") }
            .compactMap { (row: Row) -> String? in row["oid"] }
        return try users.compactMap { oid in
            guard let user = try user(oid: oid), let properties = try directoryProperties(oid: oid) else { return nil }
            return (user, properties)
        }
    }

    /// A person as Graph's `POST /users` makes them, in one transaction: the sign-in name (an email address or a user
    /// name), the password's hash, the names, the attributes, the directory properties and a federated identity.
    func createDirectoryUser(
        oid: String, signInName: String, password: String, displayName: String, givenName: String, surname: String,
        attributes: [String: JSONValue], properties: DirectoryProperties, federated: (issuer: String, subject: String)?, now: Int
    ) throws -> UserRecord {
        let row = NewUserRow(
            oid: oid, email: signInName, credential: Self.passwordCredential(password), displayName: displayName, givenName: givenName,
            surname: surname, now: now, attributes: attributes, properties: properties, idp: federated?.issuer)
        return try db.write { db in
            if try Bool.fetchOne(db, sql: "SELECT 1 FROM users WHERE email = ?", arguments: [signInName]) == true {
                throw UserError.emailTaken
            }
            if let federated, try FederatedIdentityRow.exists(db, key: ["issuer": federated.issuer, "subject": federated.subject]) {
                throw UserError.emailTaken
            }
            try row.insert(db)
            if let federated { try FederatedIdentityRow(issuer: federated.issuer, subject: federated.subject, oid: oid).insert(db) }
            return UserRecord(
                oid: oid, email: signInName, displayName: displayName, givenName: givenName, surname: surname, createdAt: now,
                tokensValidFrom: 0, idp: federated?.issuer, attributes: attributes)
        }
    }

    /// Graph's `PATCH /users/{id}`: the names, attributes, directory properties and local sign-in name in one transaction.
    func updateDirectoryUser(
        _ user: UserRecord, properties: DirectoryProperties, signInName: String?, password: String?, now: Int
    ) throws {
        try db.write { db in
            if let signInName, signInName.caseInsensitiveCompare(user.email) != .orderedSame,
                try Bool.fetchOne(db, sql: "SELECT 1 FROM users WHERE email = ?", arguments: [signInName]) == true
            {
                throw UserError.emailTaken
            }
            try db.execute(
                sql: """
                    UPDATE users SET email = ?, display_name = ?, given_name = ?, surname = ?, attributes = ?, sign_in_type = ?,
                        account_enabled = ?, password_policies = ?, force_change_password = ?
                    WHERE oid = ?
                    """,
                arguments: [
                    signInName ?? user.email, user.displayName, user.givenName, user.surname,
                    user.attributes.isEmpty ? nil : JSONValue.object(user.attributes).serialized(), properties.signInType,
                    properties.accountEnabled, properties.passwordPolicies, properties.forceChangePassword, user.oid,
                ])
            if let password {
                let credential = Self.passwordCredential(password)
                try db.execute(
                    sql: "UPDATE users SET password_salt = ?, password_hash = ? WHERE oid = ?",
                    arguments: [credential.salt, credential.hash, user.oid])
            }
        }
    }

    /// A user's federated identities (issuer and subject), as Graph lists them.
    func federatedIdentities(oid: String) throws -> [(issuer: String, subject: String)] {
        try db.read { try FederatedIdentityRow.filter(Column("oid") == oid).order(Column("issuer")).fetchAll($0) }.map {
            ($0.issuer, $0.subject)
        }
    }
}
