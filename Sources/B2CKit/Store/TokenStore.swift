import B2CFastPath
import Foundation
import GRDB
import NIOConcurrencyHelpers

/// Where the store lives: `$B2C_HOME`, else `$XDG_DATA_HOME/b2c`, else `~/.local/share/b2c` (the rule is
/// `StoreRules.directory`, which the fast path applies too).
public enum StoreLocation {
    /// The store directory, read from `environment` (the process environment by default).
    public static func directory(environment: [String: String] = ProcessEnvironment.current()) -> URL {
        URL(fileURLWithPath: StoreRules.directory({ environment[$0] }, home: environment["HOME"] ?? NSHomeDirectory())!)
    }
}

/// The SQLite token store (GRDB, WAL). Directory 0700, files 0600; writes are short immediate transactions.
///
/// One connection per process (a `DatabaseQueue` on a WAL database): a command is one short sequence of reads and
/// writes, and other processes are kept apart by SQLite's own locks and the busy timeout. A `DatabasePool` would
/// add a reader connection and, on every open whose WAL file is empty, a write with two fsyncs (GRDB makes sure
/// the WAL file is not empty); the token cache hit does neither.
public final class TokenStore: Sendable {
    public let directory: URL
    let queue: DatabaseQueue
    /// Where this process may take the data key from.
    let keys: StoreKeySources
    /// The cipher once found (see `cipher()`).
    let cipherBox = NIOLockedValueBox<StoreCipher?>(nil)
    static let applicationID: Int32 = 0x6232_6321  // "b2c!"

    public var path: String { directory.appendingPathComponent("store.sqlite").path }

    /// The store in `directory`, its data key from the platform key store or `$B2C_STORE_KEY`.
    public convenience init(directory: URL) throws { try self.init(directory: directory, keys: .system()) }

    /// `keys`: where the data key may come from.
    package init(directory: URL, keys: StoreKeySources) throws {
        self.directory = directory
        self.keys = keys
        try StoreDirectory.prepare(directory)
        let fm = FileManager.default
        let file = directory.appendingPathComponent("store.sqlite").path
        var header = Self.header(file)
        // A store that is new (or not yet recognisably ours) is created and migrated by one process at a time: others
        // would otherwise see it half-made (no application id yet) or run the same migration twice.
        var creationLock: FileLock?
        if !Self.isOurs(header) {
            creationLock = try FileLock(path: directory.appendingPathComponent("store.lock").path)
            header = Self.header(file)
        }
        try StoreDirectory.checkFiles(file)
        if fm.fileExists(atPath: file) && !Self.isOurs(header) { try Self.inspect(file) }
        // SQLite gives the -wal and -shm files the database file's mode: make it 0600 before SQLite creates it.
        if header.isEmpty { try StoreDirectory.createPrivateFile(file) }
        var config = Configuration()
        config.busyMode = .timeout(30)
        config.foreignKeysEnabled = true
        config.prepareDatabase { db in
            try db.execute(sql: "PRAGMA synchronous = NORMAL")
        }
        do {
            queue = try DatabaseQueue(path: file, configuration: config)
        } catch let e as DatabaseError where e.resultCode == .SQLITE_NOTADB || e.resultCode == .SQLITE_CORRUPT {
            throw Self.notOurStore(file)
        } catch {
            throw B2CError.store("cannot open the store '\(file)': \(error). Check that '\(directory.path)' is writable, or set B2C_HOME.")
        }
        do {
            // WAL is a property of the file: set once, when the header does not say so yet (bytes 18-19 = 2).
            if header.count < 20 || header[header.startIndex + 18] != 2 || header[header.startIndex + 19] != 2 {
                let mode = try queue.writeWithoutTransaction { try String.fetchOne($0, sql: "PRAGMA journal_mode = WAL") }
                guard mode?.lowercased() == "wal" else {
                    throw B2CError.store("cannot put the store '\(file)' in WAL mode (journal mode: \(mode ?? "unknown"))")
                }
            }
            try Self.migrate(queue) {
                if creationLock == nil { creationLock = try FileLock(path: directory.appendingPathComponent("store.lock").path) }
            }
            creationLock = nil
        } catch let e as B2CError {
            throw e
        } catch let e as DatabaseError where e.resultCode == .SQLITE_NOTADB || e.resultCode == .SQLITE_CORRUPT {
            throw Self.notOurStore(file)
        } catch let e as DatabaseError where e.resultCode == .SQLITE_READONLY || e.resultCode == .SQLITE_CANTOPEN {
            throw B2CError.store(
                "the store '\(file)' is read-only: \(e.message ?? "\(e)"). Check the permissions of '\(directory.path)', or set B2C_HOME.")
        } catch {
            throw B2CError.store("cannot prepare the store '\(file)': \(error)")
        }
    }

    /// True when the file's SQLite header carries our application id (bytes 68-71, big-endian): then it is a store
    /// that b2c created and the SQL inspection below is not needed. Anything else (another header, a short file, an
    /// id not yet checkpointed from the WAL) goes through `inspect`.
    static func isOurs(_ header: Data) -> Bool {
        guard header.count == 100, header.prefix(16).elementsEqual("SQLite format 3\0".utf8) else { return false }
        let id = header[header.startIndex + 68..<header.startIndex + 72].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
        return Int32(bitPattern: id) == applicationID
    }

    /// The first 100 bytes of the file (the SQLite header), or fewer when the file is shorter or missing.
    static func header(_ file: String) -> Data {
        guard let handle = FileHandle(forReadingAtPath: file) else { return Data() }
        defer { try? handle.close() }
        return (try? handle.read(upToCount: 100)) ?? Data()
    }

    /// Looks at an existing file read-only, so that a corrupt or foreign file is refused before anything writes to it.
    static func inspect(_ file: String) throws {
        var config = Configuration()
        config.readonly = true
        config.busyMode = .timeout(30)
        let notOurs = Self.notOurStore(file)
        do {
            let queue = try DatabaseQueue(path: file, configuration: config)
            let (appID, tables) = try queue.read { db -> (Int32, [String]) in
                (
                    try Int32.fetchOne(db, sql: "PRAGMA application_id") ?? 0,
                    try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")
                )
            }
            try queue.close()
            if appID != applicationID && !tables.isEmpty {
                throw B2CError.store(
                    "'\(file)' is an SQLite database of another application (tables: \(tables.prefix(5).joined(separator: ", "))). Point "
                        + "B2C_HOME elsewhere."
                )
            }
        } catch let e as DatabaseError where e.resultCode == .SQLITE_NOTADB || e.resultCode == .SQLITE_CORRUPT {
            throw notOurs
        } catch let e as DatabaseError {
            throw B2CError.store(
                "cannot read the store '\(file)': \(e.message ?? "SQLite error \(e.resultCode.rawValue)"). Try again; if it persists, "
                    + "check '\(file)'."
            )
        }
    }

    /// Reads and writes of the store, with SQLite's failures in words (a read-only, busy or damaged store) instead
    /// of raw database errors.
    func read<T>(_ body: (Database) throws -> T) throws -> T {
        do { return try queue.read(body) } catch let e as DatabaseError { throw storeError(e) }
    }

    func write<T>(_ body: (Database) throws -> T) throws -> T {
        do { return try queue.write(body) } catch let e as DatabaseError { throw storeError(e) }
    }

    /// A file at the store's path that is not our store: refused, never altered.
    static func notOurStore(_ file: String) -> B2CError {
        B2CError.store("'\(file)' is not a b2c store (not an SQLite database or corrupt). Move it away and sign in again.")
    }

    private func storeError(_ e: DatabaseError) -> B2CError {
        let what = "\(e.message ?? "SQLite error") (\(e.resultCode))"
        switch e.resultCode {
        case .SQLITE_READONLY, .SQLITE_CANTOPEN, .SQLITE_PERM, .SQLITE_IOERR:
            return B2CError.store(
                "cannot write the store '\(path)': \(what). Check the permissions of '\(directory.path)', or set B2C_HOME.")
        case .SQLITE_BUSY, .SQLITE_LOCKED:
            return B2CError.store("the store '\(path)' stayed locked by another b2c for 30 s: \(what). Try again.")
        case .SQLITE_CORRUPT, .SQLITE_NOTADB:
            return B2CError.store("'\(path)' is damaged: \(what). Move it away and sign in again.")
        default:
            return B2CError.store("the store '\(path)' failed: \(what)")
        }
    }

    // MARK: writes

    /// Stores a sign-in or refresh result atomically: identity, account, access token, rotated refresh token,
    /// and (when `makeCurrent`) the policy's current account, all under the account's environment and client id.
    /// With `onlyIfPresent` (a refresh), nothing is written when the account has been removed meanwhile; the result says
    /// whether the set was stored.
    @discardableResult
    public func save(_ set: TokenSet, makeCurrent: Bool, now: Int, onlyIfPresent: Bool = false) throws -> Bool {
        let cipher = try cipher()
        return try write { db in
            let a = set.account
            let key: [DatabaseValueConvertible] = [a.environment, a.clientID, a.id]
            if onlyIfPresent,
                try Bool.fetchOne(
                    db,
                    sql: """
                        SELECT 1 FROM accounts WHERE environment = ? AND client_id = ? AND account_id = ?
                        """, arguments: StatementArguments(key)) != true
            {
                return false
            }
            let i = set.identity
            // The person's profile in this scope only (another configuration's listing keeps what it saw).
            try db.execute(
                sql: """
                    INSERT INTO identities(environment, client_id, tenant_id, oid, name, given_name, family_name, email, updated_at)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
                    ON CONFLICT(environment, client_id, tenant_id, oid) DO UPDATE SET
                        name = COALESCE(excluded.name, name), given_name = COALESCE(excluded.given_name, given_name),
                        family_name = COALESCE(excluded.family_name, family_name), email = COALESCE(excluded.email, email),
                        updated_at = excluded.updated_at
                    """, arguments: [a.environment, a.clientID, i.tenantID, i.oid, i.name, i.givenName, i.familyName, i.email, now])
            try db.execute(
                sql: """
                    INSERT INTO accounts(environment, client_id, account_id, tenant_id, oid, policy, authority, id_token, claims,
                    created_at, updated_at)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                    ON CONFLICT(environment, client_id, account_id) DO UPDATE SET authority = excluded.authority,
                    id_token = excluded.id_token,
                        claims = excluded.claims, updated_at = excluded.updated_at
                    """,
                arguments: StatementArguments(key) + [
                    a.tenantID, a.oid, a.policy, a.authority,
                    try cipher.seal(a.idToken, row: StoreCipher.idToken(a.environment, a.clientID, a.id)),
                    a.claims.serialized(), now, now,
                ])
            if let at = set.accessToken {
                try db.execute(
                    sql: """
                        INSERT OR REPLACE INTO access_tokens(environment, client_id, account_id, target, secret, expires_on, cached_at)
                        VALUES (?, ?, ?, ?, ?, ?, ?)
                        """,
                    arguments: StatementArguments(key) + [
                        at.target, try cipher.seal(at.secret, row: StoreCipher.accessToken(a.environment, a.clientID, a.id, at.target)),
                        at.expiresOn, at.cachedAt,
                    ])
            }
            if let rt = set.refreshToken {
                try db.execute(
                    sql: """
                        INSERT OR REPLACE INTO refresh_tokens(environment, client_id, account_id, secret, updated_at) VALUES (?, ?, ?, ?, ?)
                        """,
                    arguments: StatementArguments(key) + [
                        try cipher.seal(rt, row: StoreCipher.refreshToken(a.environment, a.clientID, a.id)), now,
                    ])
            }
            if makeCurrent {
                try db.execute(
                    sql: """
                        INSERT OR REPLACE INTO current_accounts(environment, client_id, policy, account_id) VALUES (?, ?, ?, ?)
                        """, arguments: [a.environment, a.clientID, a.policy, a.id])
            }
            return true
        }
    }

    /// Drops the access and refresh tokens of a person's accounts in one scope (all but `except`), keeping the accounts
    /// listed: after a password reset the tenant has revoked those grants, so each account then needs a new sign-in.
    @discardableResult
    public func dropTokens(scope: AccountScope, tenantID: String, oid: String, except: String?) throws -> [String] {
        try write { db in
            let ids = try String.fetchAll(
                db,
                sql: """
                    SELECT account_id FROM accounts WHERE environment = ? AND client_id = ? AND tenant_id = ? AND oid = ? AND account_id
                    IS NOT ?
                    """, arguments: [scope.environment, scope.clientID, tenantID, oid, except])
            for id in ids {
                let key: StatementArguments = [scope.environment, scope.clientID, id]
                try db.execute(sql: "DELETE FROM access_tokens WHERE environment = ? AND client_id = ? AND account_id = ?", arguments: key)
                try db.execute(sql: "DELETE FROM refresh_tokens WHERE environment = ? AND client_id = ? AND account_id = ?", arguments: key)
            }
            return ids
        }
    }

    /// Notes that the tenant refused the account's refresh token ("revoked", "expired", …), for `accounts` to show.
    public func recordRefreshRefusal(of account: Account, _ refusal: String) throws {
        try write {
            try $0.execute(
                sql: "UPDATE refresh_tokens SET refused = ? WHERE environment = ? AND client_id = ? AND account_id = ?",
                arguments: [refusal, account.environment, account.clientID, account.id])
        }
    }

    /// Makes `account` the current account of its policy (in its configuration's scope).
    public func setCurrent(_ account: Account) throws {
        try write {
            try $0.execute(
                sql: "INSERT OR REPLACE INTO current_accounts(environment, client_id, policy, account_id) VALUES (?, ?, ?, ?)",
                arguments: [account.environment, account.clientID, account.policy, account.id])
        }
    }

    /// Removes accounts and their tokens; identities left without accounts go too. Returns the accounts removed.
    /// A policy's current-account choice stays, so that the next selection says once that the account has been signed out
    /// — unless `forgetCurrent` (a sign-out the person asked for: nothing to tell them afterwards).
    @discardableResult
    public func remove(_ accounts: [Account], forgetCurrent: Bool = false) throws -> [Account] {
        try write { db in
            var removed: [Account] = []
            for a in accounts {
                try db.execute(
                    sql: "DELETE FROM accounts WHERE environment = ? AND client_id = ? AND account_id = ?",
                    arguments: [a.environment, a.clientID, a.id])
                if db.changesCount > 0 { removed.append(a) }
                if forgetCurrent {
                    try db.execute(
                        sql: "DELETE FROM current_accounts WHERE environment = ? AND client_id = ? AND account_id = ?",
                        arguments: [a.environment, a.clientID, a.id])
                }
            }
            try db.execute(
                sql: """
                    DELETE FROM identities WHERE NOT EXISTS (SELECT 1 FROM accounts a WHERE a.environment = identities.environment
                        AND a.client_id = identities.client_id AND a.tenant_id = identities.tenant_id AND a.oid = identities.oid)
                    """)
            return removed
        }
    }

    /// Removes every account of a scope, or of the whole store when `scope` is nil.
    public func removeAll(scope: AccountScope?, forgetCurrent: Bool = false) throws -> [Account] {
        try remove(try accounts(scope: scope), forgetCurrent: forgetCurrent)
    }

    // MARK: reads

    /// An account row; its id token decrypted when the key is at hand (empty otherwise: listings and sign-out do not
    /// need it, and every command that does asks for the key on its own).
    static func account(_ row: Row, cipher: StoreCipher?) -> Account {
        let identity = StoreCipher.idToken(row["environment"], row["client_id"], row["account_id"])
        let idToken: String
        if let cipher {
            idToken = (try? cipher.open(row["id_token"] as DatabaseValue, row: identity)) ?? ""
        } else {
            idToken = String.fromDatabaseValue(row["id_token"] as DatabaseValue) ?? ""
        }
        return Account(
            id: row["account_id"], environment: row["environment"], tenantID: row["tenant_id"], oid: row["oid"], policy: row["policy"],
            authority: row["authority"], clientID: row["client_id"], idToken: idToken,
            claims: (try? JSONValue.parse(row["claims"] as String)) ?? .object([:]), updatedAt: row["updated_at"])
    }

    /// One row per (person, account, access token) of the listing, in one query and one read transaction: scopes, then
    /// people by email and oid; their accounts by policy, then id. The policy claim is read with json_extract, so that
    /// the claims of every account need not be parsed. A nil scope lists the whole store.
    public func listing(scope: AccountScope?, policy: String?) throws -> [ListedPerson] {
        try read { db in
            let rows = try Row.fetchCursor(
                db,
                sql: """
                    SELECT i.tenant_id, i.oid, i.name, i.given_name, i.family_name, i.email, a.account_id, a.policy,
                        CASE WHEN NOT json_valid(a.claims) THEN NULL
                             WHEN json_type(a.claims, '$.tfp') = 'text' THEN json_extract(a.claims, '$.tfp')
                             WHEN json_type(a.claims, '$.acr') = 'text' THEN json_extract(a.claims, '$.acr') END AS claim_policy,
                        json_valid(a.claims) AND (json_type(a.claims, '$.tfp') IS NOT NULL OR json_type(a.claims, '$.acr') IS NOT NULL)
                            AS has_policy_claim,
                        c.account_id IS NOT NULL AS is_current, r.account_id IS NOT NULL AS has_refresh_token, t.target, t.expires_on,
                        a.environment, a.client_id, r.refused,
                        CASE WHEN json_valid(a.claims) AND json_type(a.claims, '$.idp') = 'text' THEN json_extract(a.claims, '$.idp') END
                            AS idp
                    FROM accounts a JOIN identities i ON i.environment = a.environment AND i.client_id = a.client_id
                        AND i.tenant_id = a.tenant_id AND i.oid = a.oid
                    LEFT JOIN current_accounts c ON c.environment = a.environment AND c.client_id = a.client_id AND c.policy = a.policy
                        AND c.account_id = a.account_id
                    LEFT JOIN refresh_tokens r ON r.environment = a.environment AND r.client_id = a.client_id AND r.account_id =
                    a.account_id
                    LEFT JOIN access_tokens t ON t.environment = a.environment AND t.client_id = a.client_id AND t.account_id = a.account_id
                    WHERE (?1 IS NULL OR (a.environment = ?1 AND a.client_id = ?2 AND (?3 IS NULL OR a.tenant_id = ?3)))
                        AND (?4 IS NULL OR a.policy = ?4 COLLATE NOCASE)
                    ORDER BY a.environment, a.client_id, i.email, i.oid, i.tenant_id, a.policy, a.account_id, t.target
                    """, arguments: [scope?.environment, scope?.clientID, scope?.tenantID, policy])
            var people: [ListedPerson] = []
            while let row = try rows.next() {
                let tenantID: String = row[0], oid: String = row[1], accountID: String = row[6]
                let environment: String = row[14], clientID: String = row[15]
                let samePerson =
                    people.last.map {
                        $0.identity.tenantID == tenantID && $0.identity.oid == oid && $0.environment == environment
                            && $0.clientID == clientID
                    } ?? false
                if !samePerson {
                    people.append(
                        ListedPerson(
                            environment: environment, clientID: clientID,
                            identity: Identity(
                                tenantID: tenantID, oid: oid, name: row[2], givenName: row[3], familyName: row[4],
                                email: row[5]), accounts: []))
                }
                if people[people.count - 1].accounts.last?.accountID != accountID {
                    people[people.count - 1].accounts.append(
                        ListedAccount(
                            accountID: accountID, tenantID: tenantID, oid: oid, policy: row[7],
                            claimPolicy: row[8], hasPolicyClaim: row[9], current: row[10],
                            hasRefreshToken: row[11], refreshRefused: row[16], identityProvider: row[17], accessTokens: []))
                }
                if let target: String = row[12] {
                    let last = people.count - 1
                    people[last].accounts[people[last].accounts.count - 1].accessTokens.append(.init(target: target, expiresOn: row[13]))
                }
            }
            return people
        }
    }

    /// The accounts of a scope (nil: the whole store), of one policy when given.
    public func accounts(scope: AccountScope?, policy: String? = nil) throws -> [Account] {
        let cipher = cipherIfAvailable()
        return try read { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT * FROM accounts
                    WHERE (?1 IS NULL OR (environment = ?1 AND client_id = ?2 AND (?3 IS NULL OR tenant_id = ?3)))
                        AND (?4 IS NULL OR policy = ?4 COLLATE NOCASE)
                    ORDER BY environment, client_id, policy, account_id
                    """, arguments: [scope?.environment, scope?.clientID, scope?.tenantID, policy]
            ).map { Self.account($0, cipher: cipher) }
        }
    }

    /// The accounts of a policy that a selector may name: a superset of what `AccountSelection.filter` keeps (exact
    /// account id or oid, an email anywhere in the claims, or a prefix of the account id or oid), found through the
    /// indexes instead of by reading every account of the policy.
    public func accounts(scope: AccountScope, policy: String, narrowedTo selector: String) throws -> [Account] {
        let cipher = cipherIfAvailable()
        let s = selector.lowercased()
        let prefix =
            s.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "%", with: "\\%")
            .replacingOccurrences(of: "_", with: "\\_") + "%"
        return try read { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT * FROM accounts WHERE environment = ? AND client_id = ? AND (? IS NULL OR tenant_id = ?) AND policy = ? COLLATE
                    NOCASE
                        AND (account_id = ? OR oid = ? OR instr(lower(claims),
                        ?) > 0 OR account_id LIKE ? ESCAPE '\\' OR oid LIKE ? ESCAPE '\\')
                    ORDER BY account_id
                    """, arguments: [scope.environment, scope.clientID, scope.tenantID, scope.tenantID, policy, s, s, s, prefix, prefix]
            )
            .map { Self.account($0, cipher: cipher) }
        }
    }

    /// The policy's current account in a scope, read in one transaction with its row (nil when there is none or it is gone).
    public func currentAccount(scope: AccountScope, policy: String) throws -> Account? {
        let cipher = cipherIfAvailable()
        return try read { db in
            guard
                let id = try String.fetchOne(
                    db,
                    sql: """
                        SELECT account_id FROM current_accounts WHERE environment = ? AND client_id = ? AND policy = ?
                        """, arguments: [scope.environment, scope.clientID, policy])
            else {
                return nil
            }
            return try Row.fetchOne(
                db,
                sql: """
                    SELECT * FROM accounts WHERE environment = ? AND client_id = ? AND account_id = ? AND (? IS NULL OR tenant_id = ?)
                    """, arguments: [scope.environment, scope.clientID, id, scope.tenantID, scope.tenantID]
            ).map { Self.account($0, cipher: cipher) }
        }
    }

    /// The profile of an account's person, as seen in the account's scope.
    public func identity(of account: Account) throws -> Identity? {
        try read { db in
            try IdentityRecord.fetchOne(
                db,
                key: ["environment": account.environment, "client_id": account.clientID, "tenant_id": account.tenantID, "oid": account.oid])
        }?.identity
    }

    /// The id of the current account of `policy` in `scope`, or nil when none is current.
    public func currentAccountID(scope: AccountScope, policy: String) throws -> String? {
        try read {
            try String.fetchOne(
                $0, sql: "SELECT account_id FROM current_accounts WHERE environment = ? AND client_id = ? AND policy = ?",
                arguments: [scope.environment, scope.clientID, policy])
        }
    }

    /// Forgets which account is current for `policy` in `scope` (an explicit call: selecting never writes).
    public func clearCurrent(scope: AccountScope, policy: String) throws {
        try write {
            try $0.execute(
                sql: "DELETE FROM current_accounts WHERE environment = ? AND client_id = ? AND policy = ?",
                arguments: [scope.environment, scope.clientID, policy])
        }
    }

    /// The cached access token of `account` for `target` (its scopes, space-separated), decrypted; nil when none is kept.
    public func accessToken(of account: Account, target: String) throws -> AccessToken? {
        let cipher = try cipher()
        return try read { db in
            try Row.fetchOne(
                db,
                sql: """
                    SELECT * FROM access_tokens WHERE environment = ? AND client_id = ? AND account_id = ? AND target = ?
                    """, arguments: [account.environment, account.clientID, account.id, target]
            ).map {
                AccessToken(
                    accountID: $0["account_id"], target: $0["target"],
                    secret: try cipher.open(
                        $0["secret"], row: StoreCipher.accessToken(account.environment, account.clientID, account.id, target)),
                    expiresOn: $0["expires_on"], cachedAt: $0["cached_at"])
            }
        }
    }

    /// Every cached access token of an account (for an export).
    public func accessTokens(of account: Account) throws -> [AccessToken] {
        let cipher = try cipher()
        return try read { db in
            try Row.fetchAll(
                db, sql: "SELECT * FROM access_tokens WHERE environment = ? AND client_id = ? AND account_id = ? ORDER BY target",
                arguments: [account.environment, account.clientID, account.id]
            ).map {
                let target: String = $0["target"]
                return AccessToken(
                    accountID: $0["account_id"], target: target,
                    secret: try cipher.open(
                        $0["secret"], row: StoreCipher.accessToken(account.environment, account.clientID, account.id, target)),
                    expiresOn: $0["expires_on"], cachedAt: $0["cached_at"])
            }
        }
    }

    /// The refresh token of `account`, decrypted; nil when none is kept.
    public func refreshToken(of account: Account) throws -> String? {
        let cipher = try cipher()
        return try read {
            try DatabaseValue.fetchOne(
                $0, sql: "SELECT secret FROM refresh_tokens WHERE environment = ? AND client_id = ? AND account_id = ?",
                arguments: [account.environment, account.clientID, account.id]
            ).map { try cipher.open($0, row: StoreCipher.refreshToken(account.environment, account.clientID, account.id)) }
        }
    }

    /// Drops one cached access token (one that must not be served).
    public func removeAccessToken(of account: Account, target: String) throws {
        try write {
            try $0.execute(
                sql: "DELETE FROM access_tokens WHERE environment = ? AND client_id = ? AND account_id = ? AND target = ?",
                arguments: [account.environment, account.clientID, account.id, target])
        }
    }

    // MARK: metadata cache (discovery documents, JWKS)

    /// A discovery document or key set cached under `url`, with when it was fetched.
    public func metadata(url: String) throws -> (body: Data, fetchedAt: Int)? {
        // SQL of its own rather than the record's query: a refresh reads this once per process, and GRDB's query
        // interface first introspects the table (its primary key) and decodes through Codable (bench/README.md, item 3).
        try read { db in
            try Row.fetchOne(db, sql: "SELECT body, fetched_at FROM metadata WHERE url = ?", arguments: [url]).map { row in
                (body: row[0] as Data, fetchedAt: row[1] as Int)
            }
        }
    }

    /// Caches a discovery document or key set fetched from `url` at `now`.
    public func saveMetadata(url: String, body: Data, now: Int) throws {
        try write { try MetadataRecord(url: url, body: body, fetchedAt: now).insert($0, onConflict: .replace) }
    }

}
