import B2CProtocol
import Crypto
import _CryptoExtras
import Foundation
import GRDB
import NIOConcurrencyHelpers

/// The emulator's mutable state in SQLite: users, sessions, pending sign-in transactions, authorization
/// codes, refresh-token grants, the outbox of emailed codes, native-auth flows and its signing key.
/// Secrets (codes, refresh tokens, session ids, continuation tokens) are stored only as SHA-256 hashes.
public final class EmulatorStore: Sendable {
    /// The journey's calls to the developer's code (API connectors, authentication extensions), for `GET /_admin/callouts`.
    let callouts = CalloutLog()
    /// Every journey's steps in order, for `GET /_admin/journeys` and `b2c-emulator journeys`.
    let journeys = JourneyRecorder()

    /// A call to the developer's code: in the callout log, and in its journey's record (what was asked, what came back).
    func recordCallout(_ r: CalloutRecord) {
        callouts.append(r)
        var detail: [String: JSONValue] = [
            "kind": .string(r.kind), "url": .string(r.url), "attempts": JSONValue(r.attempts), "durationMs": JSONValue(r.durationMs),
            "outcome": .string(r.outcome), "request": r.request,
        ]
        if let status = r.status { detail["status"] = JSONValue(status) }
        if let response = r.response { detail["response"] = (try? JSONValue.parse(response)) ?? .string(response) }
        if let error = r.error { detail["error"] = .string(error) }
        journeys.note(r.journey, .callout, r.step, detail)
    }
    /// SAML assertions already taken (issuer and ID → until when they could be presented), so none is taken twice.
    private let usedAssertions = NIOLockedValueBox<[String: Int]>([:])

    func firstUse(ofAssertion key: String, until: Int, now: Int) -> Bool {
        usedAssertions.withLockedValue { used in
            used = used.filter { $0.value > now }
            return used.updateValue(until, forKey: key) == nil
        }
    }
    let db: any DatabaseWriter
    /// The parts of the state with types of their own.
    public let ssoSessions: SSOSessions
    let codes: AuthorizationCodes
    public let outbox: Outbox
    let nativeFlows: NativeFlows
    public let requests: RequestLog

    public typealias SessionRecord = SSOSessions.Record
    typealias CodeRecord = AuthorizationCodes.Record
    typealias Redemption = AuthorizationCodes.Redemption
    public typealias Channel = Outbox.Channel
    public typealias Message = Outbox.Message
    typealias NativeFlow = NativeFlows.Flow
    typealias NativeFlowSpent = NativeFlows.Spent
    public typealias LogEntry = RequestLog.Entry

    /// Closes the database (its connections and files); the store is not used afterwards. For a host that starts and stops
    /// many tenants in one process (a test suite), where open files add up.
    public func close() {
        if let pool = db as? DatabasePool { try? pool.close() }
        if let queue = db as? DatabaseQueue { try? queue.close() }
    }

    public static func inMemory() throws -> EmulatorStore {
        try EmulatorStore(writer: DatabaseQueue())
    }

    public static func file(directory: URL) throws -> EmulatorStore {
        try FileManager.default.createDirectory(
            at: directory, withIntermediateDirectories: true,
            attributes: [.posixPermissions: 0o700])
        let path = directory.appendingPathComponent("emulator.sqlite").path
        var config = Configuration()
        config.busyMode = .timeout(10)
        // WAL with synchronous=NORMAL: a commit is not fsynced (a checkpoint is). The state survives the emulator being
        // killed; a power cut may lose the last grants, which a test tenant can afford. With FULL, every grant waited for
        // an fsync on the thread that serves it.
        config.prepareDatabase { db in try db.execute(sql: "PRAGMA synchronous = NORMAL") }
        // Two readers beside the writer: most of a tenant's work writes (grants, codes, sessions), and each reader holds
        // open files — a test suite runs many tenants in one process.
        config.maximumReaderCount = 2
        let pool = try DatabasePool(path: path, configuration: config)
        for suffix in ["", "-wal", "-shm"] {
            let p = path + suffix
            if FileManager.default.fileExists(atPath: p) {
                try? FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: p)
            }
        }
        return try EmulatorStore(writer: pool)
    }

    init(writer: any DatabaseWriter) throws {
        self.db = writer
        (ssoSessions, codes, nativeFlows, requests) = (
            SSOSessions(db: writer), AuthorizationCodes(db: writer), NativeFlows(db: writer), RequestLog(db: writer)
        )
        outbox = Outbox(db: writer, journeys: journeys)
        try EmulatorSchema.migrator.migrate(writer)
    }

    static func hash(_ secret: String) -> String { Base64URL.encode(Data(SHA256.hash(data: Data(secret.utf8)))) }

    /// A GUID derived from a text (the same text, the same GUID): ids the seed may leave out, stable across restarts.
    static func derivedGUID(_ text: String) -> String {
        var b = Array(SHA256.hash(data: Data(text.utf8)).prefix(16))
        b[6] = (b[6] & 0x0f) | 0x50  // version 5-style (name-based)
        b[8] = (b[8] & 0x3f) | 0x80  // RFC 4122 variant
        let hex = b.map { String(format: "%02x", $0) }.joined()
        let parts = [
            hex.prefix(8), hex.dropFirst(8).prefix(4), hex.dropFirst(12).prefix(4), hex.dropFirst(16).prefix(4), hex.dropFirst(20),
        ]
        return parts.joined(separator: "-")
    }

    // MARK: settings

    func setting(_ key: String) throws -> String? {
        try db.read { try String.fetchOne($0, sql: "SELECT value FROM settings WHERE key = ?", arguments: [key]) }
    }

    func setSetting(_ key: String, _ value: String) throws {
        try db.write { try $0.execute(sql: "INSERT OR REPLACE INTO settings(key, value) VALUES (?, ?)", arguments: [key, value]) }
    }

    // MARK: users

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
    private static let userColumns = "oid, email, display_name, given_name, surname, created_at, tokens_valid_from, idp, attributes"

    /// A person from `userColumns`, starting at column `base` of the row.
    private static func user(_ row: Row, from base: Int) -> UserRecord {
        UserRecord(
            oid: row[base], email: row[base + 1], displayName: row[base + 2], givenName: row[base + 3], surname: row[base + 4],
            createdAt: row[base + 5], tokensValidFrom: row[base + 6], idp: row[base + 7],
            attributes: (row[base + 8] as String?).flatMap { try? JSONValue.parse(Data($0.utf8)).objectValue } ?? [:])
    }

    private static func user(_ row: Row) -> UserRecord { user(row, from: 0) }

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

    @discardableResult
    func createUser(
        oid: String, email: String, credential: PasswordCredential, displayName: String, givenName: String, surname: String, now: Int
    ) throws -> UserRecord {
        let (salt, hash) = (credential.salt, credential.hash)
        return try db.write { db in
            if try Bool.fetchOne(db, sql: "SELECT 1 FROM users WHERE email = ?", arguments: [email]) == true { throw UserError.emailTaken }
            if try Bool.fetchOne(db, sql: "SELECT 1 FROM users WHERE oid = ?", arguments: [oid]) == true { throw UserError.oidTaken }
            try db.execute(
                sql: """
                    INSERT INTO users(oid, email, password_salt, password_hash, display_name, given_name, surname, created_at)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                    """, arguments: [oid, email, salt, hash, displayName, givenName, surname, now])
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

    /// Sets a new password and revokes the user's refresh tokens (B2C does this on reset).
    func setPassword(oid: String, password: String, now: Int) throws {
        let salt = Data(Random.token(bytes: 16).utf8)
        let hash = Self.passwordHash(password, salt: salt)
        try db.write { db in
            try db.execute(sql: "UPDATE users SET password_salt = ?, password_hash = ? WHERE oid = ?", arguments: [salt, hash, oid])
            _ = try Self.revoke(db, oid: oid, now: now)
        }
    }

    /// Revokes every refresh token of a user and ends their sessions. Returns how many tokens were live.
    @discardableResult
    public func revokeGrants(oid: String, now: Int) throws -> Int {
        try db.write { try Self.revoke($0, oid: oid, now: now) }
    }

    /// Every refresh token issued so far is marked revoked; `tokens_valid_from` = now then only guards grants issued
    /// earlier and redeemed later. A token issued after the reset, even within the same second, stays valid.
    private static func revoke(_ db: Database, oid: String, now: Int) throws -> Int {
        try db.execute(sql: "UPDATE users SET tokens_valid_from = ? WHERE oid = ?", arguments: [now, oid])
        try db.execute(sql: "UPDATE refresh_tokens SET revoked = 1 WHERE oid = ? AND revoked = 0", arguments: [oid])
        let n = db.changesCount
        try db.execute(sql: "DELETE FROM sessions WHERE oid = ?", arguments: [oid])
        return n
    }

    public func deleteUser(oid: String) throws -> Bool {
        try db.write { db in
            try db.execute(sql: "DELETE FROM users WHERE oid = ?", arguments: [oid])
            let n = db.changesCount
            try db.execute(sql: "DELETE FROM sessions WHERE oid = ?", arguments: [oid])
            try db.execute(sql: "DELETE FROM federated_identities WHERE oid = ?", arguments: [oid])
            return n > 0
        }
    }

    // MARK: transactions (an authorize request waiting for the user)

    func saveTransaction(_ tx: AuthorizeTransaction, now: Int) throws {
        try db.write {
            try $0.execute(
                sql: "INSERT OR REPLACE INTO transactions(id, data, created_at) VALUES (?, ?, ?)",
                arguments: [tx.id, String(decoding: try JSONEncoder().encode(tx), as: UTF8.self), now])
        }
    }

    func transaction(id: String, now: Int) throws -> AuthorizeTransaction? {
        try db.read { db in
            guard let row = try Row.fetchOne(db, sql: "SELECT data, created_at FROM transactions WHERE id = ?", arguments: [id]),
                (row["created_at"] as Int) + 3600 > now
            else { return nil }
            // One from an older version of the tenant, in another shape, is as good as gone: the person starts again.
            return try? JSONDecoder().decode(AuthorizeTransaction.self, from: Data((row["data"] as String).utf8))
        }
    }

    func deleteTransaction(id: String) throws {
        try db.write { try $0.execute(sql: "DELETE FROM transactions WHERE id = ?", arguments: [id]) }
    }

    // MARK: refresh tokens

    struct RefreshRecord: Sendable {
        var grantId: String, clientId: String, policy: String, oid: String, scopes: String
        var authTime: Int, issuedAt: Int, grantIssuedAt: Int, rotatedAt: Int?, revoked: Bool
        /// Issued to a confidential client: redeemed only with its secret.
        var confidential = false
        /// Issued to a single-page app: 24 hours from the sign-in, whatever the policy says.
        var spa = false
    }

    /// A refresh token to store: its record, the token it rotates, and the request's token-log entry.
    struct NewRefreshToken: Sendable {
        var token: String, record: RefreshRecord, rotating: String?, now: Int, log: LogEntry?
    }

    /// Stores a refresh token, marks the one it rotates, and writes the request's token-log entry in the same
    /// transaction: a refresh grant commits once.
    func saveRefreshToken(_ t: NewRefreshToken) throws { try db.write { try Self.save(t, $0) } }

    /// The same, the task waiting for the store's writer without holding its thread: a refresh grant's thread goes on to
    /// sign another answer meanwhile (on two cores a blocked thread was a tenth of a core left idle under load).
    func saveRefreshToken(_ t: NewRefreshToken) async throws { try await db.write { try Self.save(t, $0) } }

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
        if let log = t.log { try RequestLog.insert(log, db) }
    }

    /// A refresh token's record, and the person it was issued to (nil when they are gone): one read for a refresh grant.
    func refreshTokenAndUser(_ token: String) throws -> (RefreshRecord, UserRecord?)? {
        // One statement, in SQLite's own snapshot: no transaction around it, and one read lock rather than two.
        return try db.unsafeRead { db in
            guard let row = try db.cachedRow(Self.refreshTokenAndUserSQL, [Self.hash(token)]) else { return nil }
            let user = (row[Self.refreshColumnCount] as String?) == nil ? nil : Self.user(row, from: Self.refreshColumnCount)
            return (Self.refreshRecord(row), user)
        }
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

    private static func refreshRecord(_ row: Row) -> RefreshRecord {
        RefreshRecord(
            grantId: row[0], clientId: row[1], policy: row[2], oid: row[3], scopes: row[4], authTime: row[5], issuedAt: row[6],
            grantIssuedAt: row[7], rotatedAt: row[8], revoked: row[9], confidential: row[10], spa: row[11])
    }

}

extension Database {
    /// The first row of a statement prepared once per connection (GRDB's statement cache): for the statements every grant
    /// runs, whose parsing (and GRDB's authorizer callbacks during it) cost more than their execution.
    func cachedRow(_ sql: String, _ arguments: StatementArguments) throws -> Row? {
        try Row.fetchOne(cachedStatement(sql: sql), arguments: arguments)
    }

    /// Executes a statement prepared once per connection.
    func cachedExecute(_ sql: String, _ arguments: StatementArguments) throws {
        try cachedStatement(sql: sql).execute(arguments: arguments)
    }
}
