import B2CProtocol
import Crypto
import _CryptoExtras
import Foundation
import GRDB

/// The `users` table: local accounts, their passwords (salted hashes), profiles and attributes.
extension EmulatorStore {
    public struct UserRecord: Sendable, Equatable {
        public var oid: String
        public var email: String
        public var displayName: String
        public var givenName: String
        public var surname: String
        public var createdAt: Int
        public var tokensValidFrom: Int
        /// The identity provider a federated user signs in with (its domain, the tokens' `idp`); nil for a local account.
        public var idp: String? = nil
        /// What the sign-up page collected beyond the names (built-in attributes such as `city`, custom `extension_<Name>`),
        /// typed: the tokens carry them as they are.
        public var attributes: [String: JSONValue] = [:]
        /// Graph's `accountEnabled`: false, and the person gets no token on any path (`AccountRule`).
        public var accountEnabled = true
        /// Graph's `passwordProfile.forceChangePasswordNextSignIn`: the next sign-in with the password asks for a new one
        /// where the tenant honours it (`AccountRule.passwordChangeDue`).
        public var passwordChangeDue = false

        var json: JSONValue {
            var o: [String: JSONValue] = [
                "oid": .string(oid), "email": .string(email), "displayName": .string(displayName), "givenName": .string(givenName),
                "surname": .string(surname), "createdAt": JSONValue(createdAt), "tokensValidFrom": JSONValue(tokensValidFrom),
            ]
            if let idp { o["identityProvider"] = .string(idp) }
            if !attributes.isEmpty { o["attributes"] = .object(attributes) }
            return .object(o)
        }
    }

    /// The columns `user(_:)` reads, in its order. Rows are read by position: a lookup by name lowercases the name and
    /// searches the statement's columns at every access, which was a per cent of a refresh grant.
    static let userColumns =
        "oid, email, display_name, given_name, surname, created_at, tokens_valid_from, idp, attributes, account_enabled, "
        + "force_change_password"

    /// A person from `userColumns`, starting at column `base` of the row.
    static func user(_ row: some StoredColumns, from base: Int) -> UserRecord {
        UserRecord(
            oid: row.string(base), email: row.string(base + 1), displayName: row.string(base + 2), givenName: row.string(base + 3),
            surname: row.string(base + 4), createdAt: row.int(base + 5), tokensValidFrom: row.int(base + 6),
            idp: row.optionalString(base + 7),
            attributes: row.optionalString(base + 8).flatMap { try? JSONValue.parse(Data($0.utf8)).objectValue } ?? [:],
            accountEnabled: row.bool(base + 9), passwordChangeDue: row.bool(base + 10))
    }

    static func user(_ row: Row) -> UserRecord { user(row, from: 0) }

    static func passwordHash(_ password: String, salt: Data) -> Data {
        let key = try! KDF.Insecure.PBKDF2.deriveKey(
            from: Data(password.utf8), salt: salt, using: .sha256,
            outputByteCount: 32, unsafeUncheckedRounds: 4096)
        return key.withUnsafeBytes { Data($0) }
    }

    public enum UserError: Error, Equatable { case emailTaken, oidTaken }

    @discardableResult
    func createUser(
        oid: String = UUID().uuidString.lowercased(), email: String, password: String, displayName: String,
        givenName: String, surname: String, now: Int
    ) throws -> UserRecord {
        try createUser(
            oid: oid, email: email, credential: Self.passwordCredential(password), displayName: displayName, givenName: givenName,
            surname: surname, now: now)
    }

    /// A new salt and the password's hash under it: what the users table keeps instead of the password.
    static func passwordCredential(_ password: String) -> PasswordCredential {
        let salt = Data(Random.token(bytes: 16).utf8)
        return PasswordCredential(salt: salt, hash: passwordHash(password, salt: salt))
    }

    struct PasswordCredential: Codable, Sendable, Equatable { var salt: Data, hash: Data }

    /// A new row of `users`, as a GRDB record: what a sign-up, the seed or Graph's `POST /users` writes; the columns it
    /// leaves out (`tokens_valid_from`, the MFA columns) take their defaults.
    struct NewUserRow: Encodable, PersistableRecord {
        static let databaseTableName = "users"
        static let databaseColumnEncodingStrategy = DatabaseColumnEncodingStrategy.convertToSnakeCase
        var oid: String, email: String, passwordSalt: Data, passwordHash: Data
        var displayName: String, givenName: String, surname: String, createdAt: Int
        /// JSON of what the sign-up page collected beyond the names.
        var attributes: String?
        var signInType: String, accountEnabled: Bool, passwordPolicies: String?, forceChangePassword: Bool
        var idp: String?

        init(
            oid: String, email: String, credential: PasswordCredential, displayName: String, givenName: String, surname: String,
            now: Int, attributes: [String: JSONValue] = [:], properties: DirectoryProperties = DirectoryProperties(), idp: String? = nil
        ) {
            (self.oid, self.email, passwordSalt, passwordHash) = (oid, email, credential.salt, credential.hash)
            (self.displayName, self.givenName, self.surname, createdAt) = (displayName, givenName, surname, now)
            self.attributes = attributes.isEmpty ? nil : JSONValue.object(attributes).serialized()
            (signInType, accountEnabled) = (properties.signInType, properties.accountEnabled)
            (passwordPolicies, forceChangePassword, self.idp) = (properties.passwordPolicies, properties.forceChangePassword, idp)
        }
    }

    @discardableResult
    func createUser(
        oid: String, email: String, credential: PasswordCredential, displayName: String, givenName: String, surname: String, now: Int
    ) throws -> UserRecord {
        let row = NewUserRow(
            oid: oid, email: email, credential: credential, displayName: displayName, givenName: givenName, surname: surname, now: now)
        return try db.write { db in
            if try Bool.fetchOne(db, sql: "SELECT 1 FROM users WHERE email = ?", arguments: [email]) == true { throw UserError.emailTaken }
            if try Bool.fetchOne(db, sql: "SELECT 1 FROM users WHERE oid = ?", arguments: [oid]) == true { throw UserError.oidTaken }
            try row.insert(db)
            return UserRecord(
                oid: oid, email: email, displayName: displayName, givenName: givenName, surname: surname,
                createdAt: now, tokensValidFrom: 0)
        }
    }

    /// Keeps what a sign-up page collected beyond the names.
    func setAttributes(oid: String, _ attributes: [String: JSONValue]) throws {
        try db.write {
            try $0.execute(
                sql: "UPDATE users SET attributes = ? WHERE oid = ?", arguments: [JSONValue.object(attributes).serialized(), oid])
        }
    }

    /// Adds the seed's users that are not there yet (by email), with their phone and authenticator; users created at run
    /// time are kept.
    func seedUsers(_ users: [EmulatorSeed.User], now: Int) throws {
        for u in users where try user(email: u.email) == nil {
            try createUser(
                oid: u.oid, email: u.email, password: u.password, displayName: u.displayName,
                givenName: u.givenName, surname: u.surname, now: now)
            if let phone = u.phone { try setPhone(oid: u.oid, phone, enrolled: u.mfaEnrolled) }
            if let secret = u.totpSecret { try setTOTP(oid: u.oid, secret: secret, enrolled: u.mfaEnrolled) }
            // Native auth's strong-authentication email: the sign-in address, registered unless the seed says not yet.
            if u.mfaEnrolled { try setMFAEmail(oid: u.oid, u.email) }
            if u.mfaRequired { try setMFARequired(oid: u.oid, true) }
        }
    }

    public func users() throws -> [UserRecord] {
        try db.read { try Row.fetchAll($0, sql: "SELECT \(Self.userColumns) FROM users ORDER BY email").map(Self.user) }
    }

    public func user(email: String) throws -> UserRecord? {
        try db.read {
            try Row.fetchOne($0, sql: "SELECT \(Self.userColumns) FROM users WHERE email = ?", arguments: [email]).map(Self.user)
        }
    }

    public func user(oid: String) throws -> UserRecord? {
        // One statement, SQLite's own snapshot: no transaction around it (every grant reads the user).
        try db.unsafeRead { try $0.cachedRow("SELECT \(Self.userColumns) FROM users WHERE oid = ?", [oid.lowercased()]).map(Self.user) }
    }

    /// Finds a user by email or oid.
    public func user(identifier: String) throws -> UserRecord? {
        try user(email: identifier) ?? user(oid: identifier)
    }

    func checkPassword(email: String, password: String) throws -> UserRecord? {
        if case .user(let user) = try passwordCheck(email: email, password: password) { return user }
        return nil
    }

    enum PasswordCheck { case noUser, wrongPassword, user(UserRecord) }

    /// A local account's password, checked in one read: whether the account exists, and the user when the password is right.
    func passwordCheck(email: String, password: String) throws -> PasswordCheck {
        let row = try db.read {
            try Row.fetchOne(
                $0, sql: "SELECT password_salt, password_hash, \(Self.userColumns) FROM users WHERE email = ?", arguments: [email])
        }
        guard let row else { return .noUser }
        let salt: Data = row[0]
        let expected: Data = row[1]
        let actual = Self.passwordHash(password, salt: salt)
        guard actual.count == expected.count, zip(actual, expected).reduce(0, { $0 | ($1.0 ^ $1.1) }) == 0 else { return .wrongPassword }
        return .user(Self.user(row, from: 2))
    }

    func updateProfile(oid: String, displayName: String, givenName: String, surname: String) throws {
        try db.write {
            try $0.execute(
                sql: "UPDATE users SET display_name = ?, given_name = ?, surname = ? WHERE oid = ?",
                arguments: [displayName, givenName, surname, oid])
        }
    }

    /// Sets a new password the person chose and revokes the user's refresh tokens (B2C does this on reset); a change an
    /// administrator asked for (`forceChangePasswordNextSignIn`) is then done.
    func setPassword(oid: String, password: String, now: Int) throws {
        let salt = Data(Random.token(bytes: 16).utf8)
        let hash = Self.passwordHash(password, salt: salt)
        try db.write { db in
            try db.execute(
                sql: "UPDATE users SET password_salt = ?, password_hash = ?, force_change_password = 0 WHERE oid = ?",
                arguments: [salt, hash, oid])
            _ = try Self.revoke(db, oid: oid, now: now)
        }
    }

    /// Revokes every grant of a user (their refresh tokens) and ends their sessions. Returns how many grants were live.
    @discardableResult
    public func revokeGrants(oid: String, now: Int) throws -> Int {
        try db.write { try Self.revoke($0, oid: oid, now: now) }
    }

    /// Every grant recorded so far is marked revoked; `tokens_valid_from` = now then only guards grants whose sign-in was
    /// under way. A grant made after the reset, even within the same second, stays valid.
    private static func revoke(_ db: Database, oid: String, now: Int) throws -> Int {
        try db.execute(sql: "UPDATE users SET tokens_valid_from = ? WHERE oid = ?", arguments: [now, oid])
        try db.execute(sql: "UPDATE grants SET revoked = 1 WHERE oid = ? AND revoked = 0", arguments: [oid.lowercased()])
        let n = db.changesCount
        try db.execute(sql: "DELETE FROM sessions WHERE oid = ?", arguments: [oid])
        return n
    }

    public func deleteUser(oid: String) throws -> Bool {
        try db.write { db in
            try db.execute(sql: "DELETE FROM users WHERE oid = ?", arguments: [oid])
            let n = db.changesCount
            try db.execute(sql: "DELETE FROM sessions WHERE oid = ?", arguments: [oid])
            try FederatedIdentityRow.filter(Column("oid") == oid).deleteAll(db)
            return n > 0
        }
    }
}
