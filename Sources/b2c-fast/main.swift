// b2c: the program users run. A `b2c token` whose answer the full client already gave — same question, same
// configuration file, no account changed since, the token still valid long enough — is answered here from the store, as
// the full client would answer it; every other command, and every doubt, is handed to the full client (`b2c-client`,
// next to this program) by exec, with the same arguments. This program links only what that needs (the store's SQLite,
// the key, AES-GCM), so a cache hit costs about what the database lookup does (bench/README.md, "token cache hit").
import B2CFastPath
import CKeyring
import CSQLite
import Crypto
import Foundation

/// Runs the full client in this process's place, found next to this program or else on PATH; it gives every answer and
/// every message.
func handOver() -> Never {
    let me = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
    let beside = URL(fileURLWithPath: me).deletingLastPathComponent().appendingPathComponent("b2c-client").path
    let onPath = (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":").map { "\($0)/b2c-client" }
    var argv: [UnsafeMutablePointer<CChar>?] = CommandLine.arguments.map { strdup($0) }
    argv.append(nil)
    for candidate in [beside] + onPath where access(candidate, X_OK) == 0 { execv(candidate, argv) }
    FileHandle.standardError.write(
        Data(
            ("b2c: the full client b2c-client is neither next to this b2c (\(beside)) nor on PATH; reinstall b2c "
                + "(its package puts b2c-client beside b2c)\n").utf8))
    exit(1)
}

/// A path that exists only as this user's: a directory or file owned by us and not writable by others (as the full
/// client requires of the store).
func isPrivate(_ path: String, directory: Bool) -> Bool {
    var info = stat()
    guard lstat(path, &info) == 0, info.st_uid == geteuid(), info.st_mode & (S_IWGRP | S_IWOTH) == 0 else { return false }
    return (info.st_mode & S_IFMT) == (directory ? S_IFDIR : S_IFREG)
}

/// The store directory, as the full client finds it.
func storeDirectory(_ environment: [String: String]) -> String {
    if let home = environment["B2C_HOME"], !home.isEmpty { return home }
    if let data = environment["XDG_DATA_HOME"], !data.isEmpty { return data + "/b2c" }
    return (environment["HOME"] ?? NSHomeDirectory()) + "/.local/share/b2c"
}

/// One read-only look at the store.
final class Store {
    let db: OpaquePointer

    init?(path: String) {
        var handle: OpaquePointer?
        guard sqlite3_open_v2(path, &handle, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, nil) == SQLITE_OK, let handle else {
            sqlite3_close(handle)
            return nil
        }
        db = handle
        sqlite3_busy_timeout(db, 2000)
    }

    deinit { sqlite3_close(db) }

    /// The first row of `sql` with `arguments` bound, as text or blob columns; nil on any error or no row.
    func row(_ sql: String, _ arguments: [String]) -> [Data?]? {
        var statement: OpaquePointer?
        guard sqlite3_prepare_v2(db, sql, -1, &statement, nil) == SQLITE_OK, let statement else { return nil }
        defer { sqlite3_finalize(statement) }
        let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)
        for (i, a) in arguments.enumerated() { sqlite3_bind_text(statement, Int32(i + 1), a, -1, transient) }
        guard sqlite3_step(statement) == SQLITE_ROW else { return nil }
        return (0..<sqlite3_column_count(statement)).map { i in
            guard sqlite3_column_type(statement, i) != SQLITE_NULL, let bytes = sqlite3_column_blob(statement, i) else {
                return sqlite3_column_type(statement, i) == SQLITE_NULL ? nil : Data()
            }
            return Data(bytes: bytes, count: Int(sqlite3_column_bytes(statement, i)))
        }
    }
}

extension Data {
    var text: String { String(decoding: self, as: UTF8.self) }
}

/// How the store's secrets open: with its key (from `B2C_STORE_KEY` or this user's kernel keyring cache, checked against
/// the store's key check), or as they are in a store kept in plaintext on purpose (never while a key is given: the full
/// client refuses that). nil: the fast path cannot tell, and hands over.
enum Secrets {
    case key(SymmetricKey)
    case plaintext

    init?(_ store: Store, _ environment: [String: String]) {
        guard
            let settings = store.row(
                """
                SELECT (SELECT value FROM settings WHERE key = 'storage'), (SELECT value FROM settings WHERE key = 'key_id'),
                (SELECT value FROM settings WHERE key = 'key_check'), (SELECT value FROM settings WHERE key = 'store_id')
                """, [])
        else { return nil }
        let givenKey = environment["B2C_STORE_KEY"].flatMap { $0.isEmpty ? nil : $0 }
        if settings[0]?.text == "plaintext" && givenKey == nil {
            self = .plaintext
            return
        }
        guard settings[0]?.text == "encrypted", let keyID = settings[1]?.text, let check = settings[2], let storeID = settings[3]?.text
        else { return nil }
        func fits(_ key: SymmetricKey) -> Bool {
            SealedSecret.keyID(key) == keyID && SealedSecret.open(check, key: key, row: SealedSecret.checkRow) == SealedSecret.checkText
        }
        if let text = givenKey {
            guard let data = Data(base64Encoded: text.trimmingCharacters(in: .whitespacesAndNewlines)), data.count == 32 else { return nil }
            let key = SymmetricKey(data: data)
            guard fits(key) else { return nil }
            self = .key(key)
            return
        }
        let serial = ckr_search(Int32(CKR_SPEC_USER_KEYRING), "user", SealedSecret.kernelCacheName(storeID: storeID, keyID: keyID))
        guard serial >= 0 else { return nil }
        var buffer = [UInt8](repeating: 0, count: 64)
        defer { ckr_wipe(&buffer, buffer.count) }
        guard ckr_read(Int32(truncatingIfNeeded: serial), &buffer, buffer.count) == 32 else { return nil }
        let key = SymmetricKey(data: buffer.prefix(32))
        guard fits(key) else { return nil }
        self = .key(key)
    }

    /// The secret in a column of the row `identity`; nil when it does not open there.
    func open(_ value: Data, row identity: String, isText: Bool) -> String? {
        switch self {
        case .plaintext: isText ? value.text : nil
        case .key(let key): isText ? nil : SealedSecret.open(value, key: key, row: identity)
        }
    }
}

/// The answer the full client gave this question, if it still holds; nil hands over.
func answer() -> String? {
    let environment = ProcessInfo.processInfo.environment
    let cwd = FileManager.default.currentDirectoryPath
    guard environment["B2C_FAST_PATH"] != "off",
        let question = TokenQuestion(arguments: Array(CommandLine.arguments.dropFirst()), environment: environment, workingDirectory: cwd),
        !(question.findsConfiguration && FileManager.default.fileExists(atPath: cwd + "/policies.json"))
    else { return nil }
    let directory = storeDirectory(environment)
    let path = directory + "/store.sqlite"
    guard isPrivate(directory, directory: true), isPrivate(path, directory: false), let store = Store(path: path),
        let filed = store.row("SELECT answer FROM fast_answers WHERE question = ?", [question.key])?[0],
        let a = try? JSONDecoder().decode(TokenAnswer.self, from: filed),
        let generation = store.row("SELECT n FROM store_generation", [])?[0]?.text, Int(generation) == a.generation,
        TokenAnswer.hash(ofFile: a.configPath) == a.configHash, a.caFile.map({ access($0, R_OK) == 0 }) ?? true,
        let secrets = Secrets(store, environment),
        let row = store.row(
            """
            SELECT secret, expires_on, typeof(secret) = 'text' FROM access_tokens
            WHERE environment = ? AND client_id = ? AND account_id = ? AND target = ?
            """, [a.environment, a.clientID, a.accountID, a.target]),
        let sealed = row[0], let expiresOn = row[1].flatMap({ Int($0.text) }),
        // B2C_CLOCK_OFFSET shifts the clock as it does the full client's (a test that advanced the tenant's clock).
        expiresOn - (Int(time(nil)) + (Int(environment["B2C_CLOCK_OFFSET"] ?? "") ?? 0)) >= question.minValid,
        let secret = secrets.open(
            sealed, row: SealedSecret.accessTokenRow(a.environment, a.clientID, a.accountID, a.target), isText: row[2]?.text == "1"),
        let claims = TokenAnswer.claims(ofToken: secret), claims.issuer == a.issuer, claims.party == a.party
    else { return nil }
    return TokenText.render(
        secret, expiresOn: expiresOn, format: question.format,
        extra: ["scopes": .string(a.target), "accountId": .string(a.accountID), "policy": .string(a.policy), "fromCache": .bool(true)])
}

guard CommandLine.arguments.count > 1, CommandLine.arguments[1] == "token", let text = answer() else {
    // B2C_FAST_PATH=require: a test's way to know the fast path answered (it says so and fails instead of handing over).
    if ProcessInfo.processInfo.environment["B2C_FAST_PATH"] == "require" {
        FileHandle.standardError.write(Data("b2c: the fast path did not answer this command (B2C_FAST_PATH=require)\n".utf8))
        exit(70)
    }
    handOver()
}
FileHandle.standardOutput.write(Data(text.utf8))
