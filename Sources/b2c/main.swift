// b2c: the program users run. A `b2c token` whose answer the full client already gave — same question, same
// configuration file, no account changed since, the very token it served still valid long enough — is answered here from
// the store, as the full client would answer it; every other command, and every doubt, is handed to the full client
// (`b2c-client`, next to this program) by exec, with the same arguments. This program links only what that needs (the C
// library, SQLite, libcrypto, the kernel keyring calls) — not even Foundation, whose start alone costs more than the
// database lookup — so a cache hit costs about what the lookup does (bench/README.md, "token cache hit").
import B2CFastPath
import CKeyring
import CSQLite
import Glibc

func environment(_ name: String) -> String? { getenv(name).map { String(cString: $0) } }

/// The path of this program (symbolic links resolved); nil when /proc cannot tell.
func programPath() -> String? {
    var buffer = [CChar](repeating: 0, count: 4096)
    let n = readlink("/proc/self/exe", &buffer, buffer.count - 1)
    return n > 0 ? String(decoding: buffer[0..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self) : nil
}

func writeAll(_ fd: Int32, _ text: String) {
    var bytes = Array(text.utf8)[...]
    while !bytes.isEmpty {
        let n = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        if n <= 0 { return }
        bytes = bytes.dropFirst(n)
    }
}

/// Runs the full client in this process's place — the `b2c-client` beside this program, else the first in an absolute
/// directory of PATH (never one found relative to the working directory) — with the same arguments; it gives every
/// answer and every message.
func handOver() -> Never {
    let beside = programPath().flatMap { me in me.lastIndex(of: "/").map { String(me[..<$0]) + "/b2c-client" } }
    let onPath = (environment("PATH") ?? "").split(separator: ":").filter { $0.hasPrefix("/") }.map { "\($0)/b2c-client" }
    var argv: [UnsafeMutablePointer<CChar>?] = CommandLine.arguments.map { strdup($0) }
    argv.append(nil)
    for candidate in (beside.map { [$0] } ?? []) + onPath where access(candidate, X_OK) == 0 { execv(candidate, argv) }
    writeAll(
        2,
        "b2c: the full client b2c-client is neither next to this b2c\(beside.map { " (\($0))" } ?? "") nor on PATH; reinstall b2c "
            + "(its package puts b2c-client beside b2c)\n")
    exit(1)
}

/// A path that exists as this user's private directory or file (StoreRules.unfit: ours, writable by nobody else), not
/// a link: the fast path is stricter than the full client here (a store directory reached through a link is handed over).
func isPrivate(_ path: String, directory: Bool) -> Bool {
    var info = stat()
    guard lstat(path, &info) == 0, StoreRules.unfit(info) == nil else { return false }
    return (info.st_mode & S_IFMT) == (directory ? S_IFDIR : S_IFREG)
}

/// The store's file and, when they exist, its companions: each a private regular file.
func storeFilesArePrivate(_ path: String) -> Bool {
    guard isPrivate(path, directory: false) else { return false }
    for suffix in StoreRules.companionSuffixes {
        var info = stat()
        if lstat(path + suffix, &info) == 0 && !isPrivate(path + suffix, directory: false) { return false }
    }
    return true
}

/// Whether a path is a regular file (a configuration read from a pipe is left to the full client: reading it here would
/// drain it).
func isRegularFile(_ path: String) -> Bool {
    var info = stat()
    return stat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFREG
}

/// A CA file as the full client takes it: a regular file holding a PEM certificate.
func isCertificateFile(_ path: String) -> Bool {
    guard isRegularFile(path), let bytes = FileBytes.contents(of: path) else { return false }
    return String(decoding: bytes, as: UTF8.self).contains("-----BEGIN CERTIFICATE-----")
}

/// What the full client's HTTP set-up checks even for a cache hit: a CA bundle or directory named by `SSL_CERT_FILE` or
/// `SSL_CERT_DIR` must be readable, and a proxy variable must be an http:// URL. The fast path takes the first as the
/// full client does and leaves any proxy variable to it.
func networkVariablesHold() -> Bool {
    if let file = NetworkVariables.value(environment, [NetworkVariables.trustFile]), access(file, R_OK) != 0 { return false }
    if let directory = NetworkVariables.value(environment, [NetworkVariables.trustDirectory]),
        access(NetworkVariables.firstDirectory(directory), R_OK) != 0
    {
        return false
    }
    return NetworkVariables.value(environment, NetworkVariables.httpsProxy + NetworkVariables.httpProxy) == nil
}

/// Whether `./policies.json`, found in the working directory, may be used as the full client decides it may: the file
/// (symbolic links resolved) is ours and not writable by others, holds the bytes the answer was given for, and `b2c
/// config allow` (or the prompt) recorded exactly those bytes for that path in the store directory's `allowed/`. The
/// file is opened once and every check is made on what was opened (its status, its bytes, its resolved path), so a link
/// moved between two looks cannot pass one file's checks with another's.
func foundConfigurationIsAllowed(_ path: String, hash: String, storeDirectory: String) -> Bool {
    let fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
    guard fd >= 0 else { return false }
    defer { close(fd) }
    var info = stat()
    var target = [CChar](repeating: 0, count: 4096)
    let n = readlink("/proc/self/fd/\(fd)", &target, target.count - 1)
    guard fstat(fd, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG, StoreRules.unfit(info) == nil,
        let bytes = FileBytes.contents(ofDescriptor: fd),
        TokenAnswer.digest(bytes) == hash, n > 0
    else { return false }
    let canonical = String(decoding: target[0..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    let record = storeDirectory + "/" + AllowRecord.folder + "/" + AllowRecord.name(canonicalPath: canonical)
    return FileBytes.contents(of: record).flatMap(AllowRecord.allowedHash) == hash
}

/// One look at the store.
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

    /// The first row of `sql` with `arguments` bound, each column's bytes (nil for NULL); nil on any error or no row.
    func row(_ sql: String, _ arguments: [String]) -> [[UInt8]?]? {
        var statement: OpaquePointer?
        guard sqlite3_prepare_v2(db, sql, -1, &statement, nil) == SQLITE_OK, let statement else { return nil }
        defer { sqlite3_finalize(statement) }
        let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)
        for (i, a) in arguments.enumerated() { sqlite3_bind_text(statement, Int32(i + 1), a, -1, transient) }
        guard sqlite3_step(statement) == SQLITE_ROW else { return nil }
        return (0..<sqlite3_column_count(statement)).map { i in
            if sqlite3_column_type(statement, i) == SQLITE_NULL { return nil }
            let count = Int(sqlite3_column_bytes(statement, i))
            guard count > 0, let bytes = sqlite3_column_blob(statement, i) else { return [] }
            return [UInt8](UnsafeRawBufferPointer(start: bytes, count: count))
        }
    }
}

func text(_ bytes: [UInt8]?) -> String? { bytes.map { String(decoding: $0, as: UTF8.self) } }

/// How the store's secrets open: with its key (from `B2C_STORE_KEY` or this user's kernel keyring cache, checked against
/// the store's key check), or as they are in a store kept in plaintext on purpose (never while a key is given: the full
/// client refuses that). nil: the fast path cannot tell, and hands over.
enum Secrets {
    case key([UInt8])
    case plaintext

    init?(_ store: Store) {
        guard
            let settings = store.row(
                """
                SELECT (SELECT value FROM settings WHERE key = 'storage'), (SELECT value FROM settings WHERE key = 'key_id'),
                (SELECT value FROM settings WHERE key = 'key_check'), (SELECT value FROM settings WHERE key = 'store_id'),
                (SELECT value FROM settings WHERE key = 'key_source')
                """, [])
        else { return nil }
        let givenKey = environment("B2C_STORE_KEY").flatMap { $0.isEmpty ? nil : $0 }
        if text(settings[0]) == "plaintext" && givenKey == nil {
            self = .plaintext
            return
        }
        guard text(settings[0]) == "encrypted", let keyID = text(settings[1]), let check = settings[2], let storeID = text(settings[3]),
            let source = text(settings[4])
        else { return nil }
        func fits(_ key: [UInt8]) -> Bool {
            SealedSecret.keyID(key) == keyID && SealedSecret.open(check, key: key, row: SealedSecret.checkRow) == SealedSecret.checkText
        }
        // As the full client looks: B2C_STORE_KEY first (it must be base64 of 32 bytes, or the full client refuses it),
        // then, for a key kept in a key store, that key store's cache in the kernel keyring.
        if let given = givenKey {
            guard let key = Digest.base64DecodeStrict(given), key.count == 32 else { return nil }
            if fits(key) {
                self = .key(key)
                return
            }
        }
        guard source == "secret-service" || source == "keychain" else { return nil }
        let serial = ckr_search(Int32(CKR_SPEC_USER_KEYRING), "user", SealedSecret.kernelCacheName(storeID: storeID, keyID: keyID))
        guard serial >= 0 else { return nil }
        var buffer = [UInt8](repeating: 0, count: 64)
        defer { ckr_wipe(&buffer, buffer.count) }
        guard ckr_read(Int32(truncatingIfNeeded: serial), &buffer, buffer.count) == 32 else { return nil }
        let key = Array(buffer.prefix(32))
        guard fits(key) else { return nil }
        self = .key(key)
    }

    /// The secret in a column of the row `identity`; nil when it does not open there.
    func open(_ value: [UInt8], row identity: String, isText: Bool) -> String? {
        switch self {
        case .plaintext: isText ? String(decoding: value, as: UTF8.self) : nil
        case .key(let key): isText ? nil : SealedSecret.open(value, key: key, row: identity)
        }
    }
}

/// The answer the full client gave this question, if it still holds; nil hands over.
func answer() -> String? {
    var cwdBuffer = [CChar](repeating: 0, count: 4096)
    guard environment("B2C_FAST_PATH") != "off", getcwd(&cwdBuffer, cwdBuffer.count) != nil,
        networkVariablesHold()
    else { return nil }
    let cwd = String(decoding: cwdBuffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    var variables: [String: String] = [:]
    for name in ["B2C_CONFIG", "B2C_PROFILE", "HOME", "XDG_CONFIG_HOME"] { variables[name] = environment(name) }
    guard
        let question = TokenQuestion(arguments: Array(CommandLine.arguments.dropFirst()), environment: variables, workingDirectory: cwd),
        // Both set: the full client compares the two each time (and says so when they differ).
        (environment("B2C_CONFIG") ?? "").isEmpty || (environment("B2C_PROFILE") ?? "").isEmpty,
        let directory = StoreRules.directory(environment, home: environment("HOME"))
    else { return nil }
    let path = directory + "/" + StoreRules.fileName
    guard isPrivate(directory, directory: true), storeFilesArePrivate(path), let store = Store(path: path),
        let filed = text(store.row("SELECT answer FROM fast_answers WHERE question = ?", [question.key])?[0]),
        let a = TokenAnswer(encoded: filed),
        // A configuration found in the working directory (the full client looks there first) is used once allowed.
        a.found == (question.findsConfiguration && access(cwd + "/" + StoreRules.configurationFileName, F_OK) == 0),
        !a.found || (cwd != "/" && a.configPath == cwd + "/" + StoreRules.configurationFileName),
        let generation = text(store.row("SELECT n FROM store_generation", [])?[0]), Int(generation) == a.generation,
        // (A found file is opened once for all its checks: its bytes are hashed there.)
        a.found
            ? foundConfigurationIsAllowed(a.configPath, hash: a.configHash, storeDirectory: directory)
            : isRegularFile(a.configPath) && TokenAnswer.hash(ofFile: a.configPath) == a.configHash,
        a.caFile.isEmpty || isCertificateFile(a.caFile),
        let secrets = Secrets(store),
        let row = store.row(
            """
            SELECT secret, expires_on, typeof(secret) = 'text' FROM access_tokens
            WHERE environment = ? AND client_id = ? AND account_id = ? AND target = ?
            """, [a.environment, a.clientID, a.accountID, a.target]),
        let sealed = row[0], let expiresOn = text(row[1]).flatMap({ Int($0) }),
        // B2C_CLOCK_OFFSET shifts the clock as it does the full client's (a test that advanced the tenant's clock); a value
        // the full client refuses is handed to it, which says why.
        let offset = ClockOffset.parse(environment(ClockOffset.variable)),
        expiresOn - (time(nil) + offset) >= question.options.minValid,
        let secret = secrets.open(
            sealed, row: SealedSecret.accessTokenRow(a.environment, a.clientID, a.accountID, a.target), isText: text(row[2]) == "1"),
        TokenAnswer.digest(Array(secret.utf8)) == a.secretHash
    else { return nil }
    if a.found { writeAll(2, "b2c: " + StoreRules.foundConfigurationNotice + "\n") }
    return TokenText.render(
        secret, expiresOn: expiresOn, format: question.options.format,
        extra: ["scopes": .string(a.target), "accountId": .string(a.accountID), "policy": .string(a.policy), "fromCache": .bool(true)])
}

guard CommandLine.arguments.count > 1, CommandLine.arguments[1] == "token", let output = answer() else {
    // B2C_FAST_PATH=require: a test's way to know the fast path answered (it says so and fails instead of handing over).
    if environment("B2C_FAST_PATH") == "require" {
        writeAll(2, "b2c: the fast path did not answer this command (B2C_FAST_PATH=require)\n")
        exit(70)
    }
    handOver()
}
writeAll(1, output)
