import B2CFastPath
import B2CProtocol
import Foundation
import GRDB

/// Refresh tokens and their grants. A refresh token is sealed, not stored: a JWE (compact, `dir`, A256GCM) of its record
/// under the state's refresh-token key — B2C's own refresh tokens are JWEs, which is what its AADB2C90090 ("The provided
/// JWE token is not valid") says. What the state keeps is the grant (`grants`: one row per sign-in, revoked as a whole), so
/// a refresh grant reads its grant's row and its person in one statement and writes nothing.
///
/// Tokens of emulators before this one (random, their SHA-256 in `refresh_tokens`) are still redeemed from that table,
/// their grants' revocations kept in `grants` as the new tokens' are (migration v16).
extension EmulatorStore {
    struct RefreshRecord: Sendable, Equatable {
        var grantId: String, clientId: String, policy: String, oid: String, scopes: String
        var authTime: Int, issuedAt: Int, grantIssuedAt: Int
        /// The grant was revoked (a replayed code, a password reset, `POST /_admin/users/{id}/revoke`): from `grants`.
        var revoked = false
        /// Issued to a confidential client: redeemed only with its secret.
        var confidential = false
        /// Issued to a single-page app: 24 hours from the sign-in, whatever the policy says.
        var spa = false
    }

    /// The refresh token of a record: sealed under the state's key, nothing written.
    func refreshToken(_ record: RefreshRecord) -> String { refreshSeal.seal(record) }

    /// Records a new grant (a sign-in's first refresh token; a refresh continues one that is recorded). A grant a replayed
    /// code revoked before its row was written stays revoked.
    func saveGrant(_ r: RefreshRecord) throws {
        try db.write { db in
            try db.cachedExecute(
                "INSERT OR IGNORE INTO grants(id, oid, client_id, policy, issued_at) VALUES (?, ?, ?, ?, ?)",
                [r.grantId, r.oid.lowercased(), r.clientId, r.policy, r.grantIssuedAt])
        }
    }

    /// Revokes a grant, recording it if it was not yet (a code replayed before its first redemption's tokens were issued).
    static func revokeGrant(_ db: Database, id: String, oid: String, clientId: String, policy: String, issuedAt: Int) throws {
        try db.execute(
            sql: """
                INSERT INTO grants(id, oid, client_id, policy, issued_at, revoked) VALUES (?, ?, ?, ?, ?, 1)
                ON CONFLICT(id) DO UPDATE SET revoked = 1
                """,
            arguments: [id, oid.lowercased(), clientId, policy, issuedAt])
    }

    /// A refresh token's record with its grant's revocation, and the person it was issued to (nil when they are gone); nil
    /// when the token is not one of this state's (forged, altered, another tenant's) or its grant is unknown.
    func refreshTokenAndUser(_ token: String) throws -> (RefreshRecord, UserRecord?)? {
        if token.utf8.contains(UInt8(ascii: ".")) {
            guard var record = refreshSeal.open(token) else { return nil }
            // One statement, in SQLite's own snapshot: no transaction around it.
            func decode(_ row: some StoredColumns) -> (RefreshRecord, UserRecord?) {
                record.revoked = row.bool(0)
                return (record, row.optionalString(1) == nil ? nil : Self.user(row, from: 1))
            }
            if let directReads { return try directReads.row(Self.grantAndUserSQL, record.grantId, decode) }
            return try db.unsafeRead { db in try db.cachedRow(Self.grantAndUserSQL, [record.grantId]).map(decode) }
        }
        func decode(_ row: some StoredColumns) -> (RefreshRecord, UserRecord?) {
            let user = row.optionalString(Self.legacyColumnCount) == nil ? nil : Self.user(row, from: Self.legacyColumnCount)
            return (Self.legacyRecord(row), user)
        }
        if let directReads { return try directReads.row(Self.legacyTokenAndUserSQL, Self.hash(token), decode) }
        return try db.unsafeRead { db in try db.cachedRow(Self.legacyTokenAndUserSQL, [Self.hash(token)]).map(decode) }
    }

    /// A grant's revocation, then its person's columns (NULL when they are gone).
    private static let grantAndUserSQL =
        "SELECT g.revoked, \(qualified(userColumns, "u")) FROM grants g LEFT JOIN users u ON u.oid = g.oid WHERE g.id = ?"

    /// The columns `legacyRecord(_:)` reads, in its order (by position, as `userColumns`).
    private static let legacyColumns =
        "grant_id, client_id, policy, oid, scopes, auth_time, issued_at, grant_issued_at, revoked, confidential, spa"

    private static let legacyColumnCount = legacyColumns.split(separator: ",").count + 1

    /// A stored token's columns, its grant's revocation, then its person's. Oids are GUIDs: SQL's ASCII `lower` is Swift's
    /// `lowercased`, with which users are stored.
    private static let legacyTokenAndUserSQL =
        "SELECT \(qualified(legacyColumns, "r")), COALESCE(g.revoked, 0), \(qualified(userColumns, "u")) FROM refresh_tokens r "
        + "LEFT JOIN grants g ON g.id = r.grant_id LEFT JOIN users u ON u.oid = lower(r.oid) WHERE r.hash = ?"

    private static func qualified(_ columns: String, _ table: String) -> String {
        columns.split(separator: ",").map { table + "." + $0.trimmingCharacters(in: .whitespaces) }.joined(separator: ", ")
    }

    private static func legacyRecord(_ row: some StoredColumns) -> RefreshRecord {
        RefreshRecord(
            grantId: row.string(0), clientId: row.string(1), policy: row.string(2), oid: row.string(3), scopes: row.string(4),
            authTime: row.int(5), issuedAt: row.int(6), grantIssuedAt: row.int(7), revoked: row.bool(8) || row.bool(11),
            confidential: row.bool(9), spa: row.bool(10))
    }
}

/// The state's refresh-token key and the JWE form of a record under it. The key is 32 random bytes kept in the state's
/// settings beside the signing keys (a state in memory has its own for its life); a token whose header names another key,
/// or whose tag does not match, does not open. The plaintext is the record in a binary form of our own (`Fields`).
struct RefreshTokenSeal: Sendable {
    private let key: GCMKey
    /// The protected header, base64url: the associated data of every seal (RFC 7516 §5.1), and each token's first part.
    private let header: [UInt8]

    static let setting = "refresh_token_key"

    /// Nil when the key is not 32 bytes or libcrypto has no AES-256-GCM.
    init?(key: [UInt8]) {
        guard let cipher = GCMKey(key) else { return nil }
        self.key = cipher
        let kid = Base64URL.encode(EmulatorStore.sha256("b2c-emulator refresh token key\0" + Base64URL.encode(key)).prefix(12))
        header = Array(Base64URL.encode(#"{"alg":"dir","enc":"A256GCM","kid":"\#(kid)","ver":"1.0"}"#).utf8)
    }

    /// The state's key, made on its first start (two emulators opening one new state agree on the first one written).
    static func load(_ db: any DatabaseWriter) throws -> RefreshTokenSeal {
        let saved = try db.write { db -> String in
            try db.execute(
                sql: "INSERT OR IGNORE INTO settings(key, value) VALUES (?, ?)", arguments: [setting, Base64URL.encode(Random.bytes(32))])
            return try String.fetchOne(db, sql: "SELECT value FROM settings WHERE key = ?", arguments: [setting]) ?? ""
        }
        guard let key = Base64URL.decodeBytes(saved), key.count == 32 else {
            throw EmulatorStartError(
                message: "the state's refresh-token key (setting '\(setting)') is not 32 bytes of base64url: restore the state "
                    + "directory from a copy, or start with a new one")
        }
        guard let seal = RefreshTokenSeal(key: key) else {
            throw EmulatorStartError(message: "this system's libcrypto has no AES-256-GCM, which the tenant's refresh tokens need")
        }
        return seal
    }

    /// `header..nonce.ciphertext.tag`, each part base64url.
    func seal(_ r: EmulatorStore.RefreshRecord) -> String {
        let nonce = Random.bytes(12)
        // (Sealing fails only for a key or nonce of another length, which these are not.)
        guard let (ciphertext, tag) = key.seal(Fields.encode(r), nonce: nonce, aad: header) else {
            preconditionFailure("AES-256-GCM sealing failed with a 32-byte key")
        }
        var token = header
        token.reserveCapacity(header.count + 44 + ciphertext.count * 4 / 3)
        for (separator, part) in [("..", nonce), (".", ciphertext), (".", tag)] {
            token.append(contentsOf: separator.utf8)
            token.append(contentsOf: Base64URL.encode(part).utf8)
        }
        return String(decoding: token, as: UTF8.self)
    }

    func open(_ token: String) -> EmulatorStore.RefreshRecord? {
        var token = token
        return token.withUTF8 { t -> EmulatorStore.RefreshRecord? in
            // The header, exactly ours, and an empty encrypted key; then nonce, ciphertext and tag.
            guard t.count > header.count + 2, t.prefix(header.count).elementsEqual(header),
                t[header.count] == UInt8(ascii: "."), t[header.count + 1] == UInt8(ascii: ".")
            else { return nil }
            let rest = UnsafeBufferPointer(rebasing: t[(header.count + 2)...])
            guard let first = rest.firstIndex(of: UInt8(ascii: ".")),
                let second = rest[(first + 1)...].firstIndex(of: UInt8(ascii: ".")),
                !rest[(second + 1)...].contains(UInt8(ascii: ".")),
                let nonce = Base64URL.decode(buffer: UnsafeBufferPointer(rebasing: rest[..<first]), canonical: true), nonce.count == 12,
                let ciphertext = Base64URL.decode(buffer: UnsafeBufferPointer(rebasing: rest[(first + 1)..<second]), canonical: true),
                let tag = Base64URL.decode(buffer: UnsafeBufferPointer(rebasing: rest[(second + 1)...]), canonical: true), tag.count == 16,
                let plain = key.open(ciphertext, tag: tag, nonce: nonce, aad: header)
            else { return nil }
            return Fields.decode(plain)
        }
    }

    /// A record as bytes: a version byte, each string as a two-byte length and its UTF-8, each time as eight bytes, and a
    /// byte of flags (1 confidential, 2 single-page app), all big-endian.
    enum Fields {
        static let version: UInt8 = 1

        static func encode(_ r: EmulatorStore.RefreshRecord) -> [UInt8] {
            var out: [UInt8] = [version]
            out.reserveCapacity(1 + 5 * 2 + 3 * 8 + 1 + 160 + r.scopes.utf8.count)
            // Each string's bytes copied whole (appending a prefix of its UTF-8 view went byte by byte: 11,200 instructions
            // a token, bench/README.md).
            func append(_ text: String) {
                var text = text
                text.withUTF8 { utf8 in
                    let kept = UnsafeBufferPointer(rebasing: utf8.prefix(Int(UInt16.max)))
                    out.append(UInt8(kept.count >> 8))
                    out.append(UInt8(kept.count & 0xFF))
                    out.append(contentsOf: kept)
                }
            }
            func append(_ time: Int) {
                for shift in stride(from: 56, through: 0, by: -8) { out.append(UInt8(truncatingIfNeeded: Int64(time) >> shift)) }
            }
            append(r.grantId); append(r.clientId); append(r.policy); append(r.oid); append(r.scopes)
            append(r.authTime); append(r.issuedAt); append(r.grantIssuedAt)
            out.append((r.confidential ? 1 : 0) | (r.spa ? 2 : 0))
            return out
        }

        static func decode(_ bytes: [UInt8]) -> EmulatorStore.RefreshRecord? {
            guard bytes.first == version else { return nil }
            var at = 1
            func text() -> String? {
                guard at + 2 <= bytes.count else { return nil }
                let n = Int(bytes[at]) << 8 | Int(bytes[at + 1])
                guard at + 2 + n <= bytes.count else { return nil }
                defer { at += 2 + n }
                return String(validating: bytes[(at + 2)..<(at + 2 + n)], as: UTF8.self)
            }
            func time() -> Int? {
                guard at + 8 <= bytes.count else { return nil }
                defer { at += 8 }
                return Int(bytes[at..<(at + 8)].reduce(Int64(0)) { $0 << 8 | Int64($1) })
            }
            guard let grant = text(), let client = text(), let policy = text(), let oid = text(), let scopes = text(),
                let authTime = time(), let issuedAt = time(), let grantIssuedAt = time(), at + 1 == bytes.count, bytes[at] < 4
            else { return nil }
            return EmulatorStore.RefreshRecord(
                grantId: grant, clientId: client, policy: policy, oid: oid, scopes: scopes, authTime: authTime, issuedAt: issuedAt,
                grantIssuedAt: grantIssuedAt, confidential: bytes[at] & 1 != 0, spa: bytes[at] & 2 != 0)
        }
    }
}
