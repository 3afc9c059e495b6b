import B2CFastPath
import Crypto
import Foundation
import GRDB

/// Which key protects the store's tokens, found once per process: the `settings` table names the mode, the key's
/// source and id, and holds a check value sealed with the key. A new store (or one written before encryption existed)
/// is encrypted in place, in one transaction, the first time a token is read or written.
extension TokenStore {
    static let settingsTable = """
        CREATE TABLE settings(key TEXT PRIMARY KEY, value BLOB NOT NULL);
        """

    func settings(_ db: Database) throws -> [String: DatabaseValue] {
        var out: [String: DatabaseValue] = [:]
        // Plain SQL: every command that opens the store reads these, and the record's query costs a generated statement.
        let rows = try Row.fetchCursor(db, sql: "SELECT key, value FROM settings")
        while let row = try rows.next() { out[row[0]] = row[1] as DatabaseValue }
        return out
    }

    static func text(_ s: [String: DatabaseValue], _ key: String) -> String? { s[key].flatMap { String.fromDatabaseValue($0) } }

    static func status(_ s: [String: DatabaseValue]) -> StorageStatus {
        StorageStatus(
            mode: text(s, "storage").flatMap(StorageMode.init(rawValue:)),
            source: text(s, "key_source").flatMap(StoreKeySource.init(rawValue:)),
            keyID: text(s, "key_id"), storeID: text(s, "store_id") ?? "")
    }

    /// The mode, key source and key id (never the key).
    public func storageStatus() throws -> StorageStatus { Self.status(try read { try settings($0) }) }

    /// The cipher of this process: a cache hit pays one settings read and, with a key store, one kernel keyring read.
    func cipher() throws -> StoreCipher {
        if let c = cipherBox.withLockedValue({ $0 }) { return c }
        let c = try resolveCipher()
        cipherBox.withLockedValue { $0 = c }
        return c
    }

    /// Finds (or, for a new store, makes) the key now: a sign-in says at once when its tokens could not be kept.
    public func prepareForTokens() throws { _ = try cipher() }

    /// The cipher when one can be had; nil otherwise (listings and sign-out work without the key).
    func cipherIfAvailable() -> StoreCipher? { try? cipher() }

    private func resolveCipher() throws -> StoreCipher {
        let s = try read { try settings($0) }
        switch Self.status(s).mode {
        case .plaintext?:
            // A key at hand always means encrypted: a plaintext store someone else prepared must not receive tokens.
            if case .success(_?) = environmentKey() { throw Self.plaintextWithKey(path) }
            return StoreCipher(key: nil)
        case .encrypted?: return StoreCipher(key: try existingKey(s))
        case nil: return try encryptInPlace()
        }
    }

    // MARK: the key of an encrypted store

    /// The store's key from wherever this process can find it (the recorded source first), checked against the store.
    private func existingKey(_ s: [String: DatabaseValue]) throws -> SymmetricKey {
        let status = Self.status(s)
        guard let keyID = status.keyID, let check = s["key_check"] else {
            throw B2CError.store("the store '\(path)' says it is encrypted but names no key; move it away and sign in again")
        }
        func fits(_ key: SymmetricKey) -> Bool {
            StoreCipher.keyID(key) == keyID && (try? StoreCipher(key: key).open(check, row: "settings\0key_check")) == StoreCipher.checkText
        }
        if let key = keys.ephemeralKey, fits(key) { return key }
        var reasons: [String] = []
        switch environmentKey() {
        case .success(let key?) where fits(key): return key
        case .success(let key?): reasons.append("B2C_STORE_KEY holds another key (id \(StoreCipher.keyID(key)))")
        case .success(nil): if status.source == .environment { reasons.append("B2C_STORE_KEY is not set") }
        case .failure(let e): reasons.append(e.description)
        }
        if status.source == .secretService || status.source == .keychain {
            switch platformKey(storeID: status.storeID, keyID: keyID) {
            case .success(let key?) where fits(key): return key
            case .success(.some): reasons.append("the key store's item for this store does not fit it")
            case .success(nil): reasons.append("\(status.source?.place ?? "the key store") has no key \(keyID) for this store")
            case .failure(let e): reasons.append(e.description)
            }
        }
        throw B2CError.store(
            "the store '\(path)' is encrypted with a key kept in \(status.source?.place ?? "an unknown place") (key id \(keyID)), which "
                + "this session cannot get: \(reasons.map { $0.hasSuffix(".") ? String($0.dropLast()) : $0 }.joined(separator: "; ")). "
                + "\(Self.howToReach(status.source)) Nothing was altered.",
            configuration: true, remedy: status.source == .ephemeral ? .removeStoredTokens : nil, missingKey: true)
    }

    static func howToReach(_ source: StoreKeySource?) -> String {
        switch source {
        case .secretService?:
            "Run b2c in the desktop session whose keyring holds it (DBUS_SESSION_BUS_ADDRESS set, the keyring unlocked)."
        case .keychain?: "Unlock the login Keychain."
        case .environment?: "Set B2C_STORE_KEY to the key the store was encrypted with."
        case .ephemeral?: "The key lived only in the process that made the store (a demo)."
        case nil: "Move the store away and sign in again."
        }
    }

    static func plaintextWithKey(_ path: String) -> B2CError {
        B2CError.store(
            "the store '\(path)' says its tokens are kept unencrypted, but B2C_STORE_KEY gives a key: b2c never keeps tokens "
                + "unencrypted while a key is given (a store prepared by someone else could say plaintext). If the plaintext "
                + "choice was yours, unset B2C_STORE_KEY; otherwise encrypt the store with the key.",
            configuration: true, remedy: .encryptStore)
    }

    /// `$B2C_STORE_KEY`: nil when unset; an error when it is not base64 of 32 bytes.
    func environmentKey() -> Result<SymmetricKey?, B2CError> {
        guard let text = keys.environment["B2C_STORE_KEY"], !text.isEmpty else { return .success(nil) }
        guard let data = Data(base64Encoded: text.trimmingCharacters(in: .whitespacesAndNewlines)), data.count == 32 else {
            return .failure(
                B2CError.store(
                    "B2C_STORE_KEY must be base64 of 32 random bytes (make one with `openssl rand -base64 32`)", configuration: true))
        }
        return .success(SymmetricKey(data: data))
    }

    /// The key from the kernel's cache, else from the platform key store (then cached).
    private func platformKey(storeID: String, keyID: String) -> Result<SymmetricKey?, B2CError> {
        let cacheName = SealedSecret.kernelCacheName(storeID: storeID, keyID: keyID)
        if keys.kernelCache, let data = try? KernelKeyring.read(description: cacheName), data.count == 32 {
            return .success(SymmetricKey(data: data))
        }
        guard let platform = keys.platform else {
            return .failure(B2CError.store("this session has no key store (no D-Bus session bus: DBUS_SESSION_BUS_ADDRESS is not set)"))
        }
        do {
            guard let data = try platform.read(storeID: storeID, keyID: keyID), data.count == 32 else { return .success(nil) }
            if keys.kernelCache { try? KernelKeyring.store(data, description: cacheName, timeoutSeconds: keys.cacheSeconds) }
            return .success(SymmetricKey(data: data))
        } catch {
            return .failure(B2CError.store("\(error)"))
        }
    }

    // MARK: choosing and changing keys

    /// A new key and where it is kept: the ephemeral key, else a new key in the platform key store, else
    /// `$B2C_STORE_KEY`; else why there is none.
    func newKey(storeID: String) throws -> (SymmetricKey, StoreKeySource) {
        if let key = keys.ephemeralKey { return (key, .ephemeral) }
        var reasons: [String] = []
        if let platform = keys.platform {
            let key = SymmetricKey(size: .bits256)
            do {
                try key.withUnsafeBytes {
                    try platform.write(
                        Data($0), storeID: storeID, keyID: StoreCipher.keyID(key), label: "b2c token store key (\(directory.path))")
                }
                return (key, platform.source)
            } catch {
                reasons.append("\(error)")
            }
        } else {
            reasons.append("no key store: no D-Bus session bus (DBUS_SESSION_BUS_ADDRESS is not set)")
        }
        switch environmentKey() {
        case .success(let key?): return (key, .environment)
        case .success(nil): reasons.append("B2C_STORE_KEY is not set")
        case .failure(let e): throw e
        }
        throw B2CError.store(
            "b2c keeps tokens encrypted and this session offers no key for that (\(reasons.joined(separator: "; "))). Choose one: run in a "
                + "desktop session with GNOME Keyring or KWallet; set B2C_STORE_KEY to a base64 32-byte key from your CI's secret store "
                + "(`openssl rand -base64 32`).", configuration: true, remedy: .chooseStorage,
            missingKey: true)
    }

    /// Encrypts a store whose tokens are in plaintext (new, or written before encryption existed, or in plaintext
    /// mode), in one transaction: a crash leaves the old store as it was.
    @discardableResult
    func encryptInPlace() throws -> StoreCipher {
        let storeID = try read { try Self.text(settings($0), "store_id") } ?? UUID().uuidString.lowercased()
        let (key, source) = try newKey(storeID: storeID)
        let sealer = StoreCipher(key: key)
        let decided = try write { db -> Bool in
            let s = try settings(db)
            if Self.status(s).mode == .encrypted { return true }  // another process was first
            try recode(db, from: StoreCipher(key: nil), to: sealer)
            try setSettings(db, key: key, source: source, storeID: storeID)
            return false
        }
        if decided {
            if source != .environment && source != .ephemeral, let platform = keys.platform {
                try? platform.delete(storeID: storeID, keyID: StoreCipher.keyID(key))
            }
            cipherBox.withLockedValue { $0 = nil }
            return try cipher()
        }
        return sealer
    }

    private func setSettings(_ db: Database, key: SymmetricKey, source: StoreKeySource, storeID: String) throws {
        let values: [(String, DatabaseValueConvertible)] = [
            ("storage", StorageMode.encrypted.rawValue), ("key_source", source.rawValue), ("key_id", StoreCipher.keyID(key)),
            ("store_id", storeID), ("key_check", try StoreCipher(key: key).seal(StoreCipher.checkText, row: "settings\0key_check")),
        ]
        for (k, v) in values { try SettingRecord(key: k, value: v).insert(db, onConflict: .replace) }
    }

    /// Switches the store to `mode`: encrypts a plaintext store with a new key, or decrypts an encrypted one and forgets
    /// its key — each in one transaction.
    public func setStorage(_ mode: StorageMode) throws -> StorageStatus {
        let before = try storageStatus()
        switch (mode, before.mode) {
        case (.encrypted, .encrypted?): _ = try cipher()
        case (.encrypted, _):
            cipherBox.withLockedValue { $0 = nil }
            let cipher = try encryptInPlace()
            cipherBox.withLockedValue { $0 = cipher }
        // Decrypting needs the key; a store not encrypted yet is never made plaintext while a key is given.
        case (.plaintext, let m) where m != .encrypted && (try? environmentKey().get()) != nil: throw Self.plaintextWithKey(path)
        case (.plaintext, .plaintext?): break
        case (.plaintext, nil):
            try write { db in try db.execute(sql: "INSERT OR REPLACE INTO settings(key, value) VALUES ('storage', 'plaintext')") }
        case (.plaintext, .encrypted?):
            let old = try cipher()
            try write { db in
                try recode(db, from: old, to: StoreCipher(key: nil))
                try db.execute(sql: "DELETE FROM settings WHERE key IN ('key_source', 'key_id', 'key_check')")
                try db.execute(sql: "INSERT OR REPLACE INTO settings(key, value) VALUES ('storage', 'plaintext')")
            }
            forget(before)
            cipherBox.withLockedValue { $0 = StoreCipher(key: nil) }
        }
        return try storageStatus()
    }

    /// A new data key for an encrypted store: every token re-encrypted in one transaction. A key store keeps the new
    /// key beside the old until the transaction is done; a store keyed by `$B2C_STORE_KEY` takes the new key from
    /// `newEnvironmentKey` (the CI's new secret).
    public func rotateKey(newEnvironmentKey: Data?) throws -> StorageStatus {
        let before = try storageStatus()
        guard before.mode == .encrypted, let source = before.source else {
            throw B2CError.store("the store is not encrypted", configuration: true, remedy: .encryptStore)
        }
        let old = try cipher()
        let key: SymmetricKey
        switch source {
        case .environment:
            guard let given = newEnvironmentKey else {
                throw B2CError.store(
                    "the store's key comes from B2C_STORE_KEY: put the new key in B2C_NEW_STORE_KEY (base64 of 32 bytes) for the "
                        + "rotation, then use it as B2C_STORE_KEY", configuration: true)
            }
            key = SymmetricKey(data: given)
        case .ephemeral: throw B2CError.store("a temporary store's key cannot be rotated", configuration: true)
        case .secretService, .keychain:
            guard let platform = keys.platform else {
                throw B2CError.store("the key store is not reachable from this session", configuration: true)
            }
            key = SymmetricKey(size: .bits256)
            do {
                try key.withUnsafeBytes {
                    try platform.write(
                        Data($0), storeID: before.storeID, keyID: StoreCipher.keyID(key), label: "b2c token store key (\(directory.path))")
                }
            } catch { throw B2CError.store("\(error)", configuration: true) }
        }
        let new = StoreCipher(key: key)
        try write { db in
            try recode(db, from: old, to: new)
            try setSettings(db, key: key, source: source, storeID: before.storeID)
        }
        forget(before)
        cipherBox.withLockedValue { $0 = new }
        return try storageStatus()
    }

    /// Forgets the key this user's kernel keyring caches for the store: the next command asks the key store again (and a
    /// locked keyring then refuses). Returns whether there was one.
    @discardableResult
    public func forgetCachedKey() throws -> Bool {
        let status = try storageStatus()
        guard let keyID = status.keyID else { return false }
        let name = "b2c:store-key:\(status.storeID):\(keyID)"
        let cached = (try? KernelKeyring.read(description: name)) != nil
        try? KernelKeyring.remove(description: name)
        cipherBox.withLockedValue { $0 = nil }
        return cached
    }

    /// Drops a key no longer used: its key-store item and its kernel cache entry (best effort).
    private func forget(_ status: StorageStatus) {
        guard let keyID = status.keyID else { return }
        try? KernelKeyring.remove(description: "b2c:store-key:\(status.storeID):\(keyID)")
        if status.source == .secretService || status.source == .keychain {
            try? keys.platform?.delete(storeID: status.storeID, keyID: keyID)
        }
    }

    /// Every secret column re-sealed from one cipher to another (inside the caller's transaction).
    func recode(_ db: Database, from old: StoreCipher, to new: StoreCipher) throws {
        for (table, column, identity) in Self.secretColumns {
            let rows = try Row.fetchAll(db, sql: "SELECT rowid AS rid, * FROM \(table)")
            for row in rows {
                let id = identity(row)
                let plain = try old.open(row[column] as DatabaseValue, row: id)
                try db.execute(
                    sql: "UPDATE \(table) SET \(column) = ? WHERE rowid = ?", arguments: [try new.seal(plain, row: id), row["rid"]])
            }
        }
    }

    /// The secret columns and how each row names itself.
    static let secretColumns: [(String, String, @Sendable (Row) -> String)] = [
        ("access_tokens", "secret", { StoreCipher.accessToken($0["environment"], $0["client_id"], $0["account_id"], $0["target"]) }),
        ("refresh_tokens", "secret", { StoreCipher.refreshToken($0["environment"], $0["client_id"], $0["account_id"]) }),
        ("accounts", "id_token", { StoreCipher.idToken($0["environment"], $0["client_id"], $0["account_id"]) }),
        ("app_tokens", "secret", { StoreCipher.appToken($0["environment"], $0["client_id"], $0["resource"]) }),
    ]
}
