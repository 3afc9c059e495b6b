import Foundation
import GRDB

/// The store's schema: its tables as versioned migrations (GRDB's `DatabaseMigrator`), each a step from the one before,
/// run once per store by the first process that opens it. A new column or table is a new migration at the end; a
/// migration that has shipped is never edited.
///
/// Tables (v6): `identities` (a person's profile per scope), `accounts` (a person under a policy, its id token and
/// claims), `access_tokens` (per account and scope set, "target"), `refresh_tokens` (per account, with the last
/// refusal), `current_accounts` (per scope and policy), `app_tokens` (the app's own, per resource), `metadata`
/// (discovery documents and key sets with their fetch time), `settings` (the store's id, storage mode and key check).
extension TokenStore {
    /// `lock` is called before any migration runs (an up-to-date store takes no lock).
    static func migrate(_ queue: DatabaseQueue, lock: () throws -> Void = {}) throws {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1") { db in
            try db.execute(
                sql: """
                    PRAGMA application_id = \(applicationID);
                    CREATE TABLE identities(
                        tenant_id TEXT NOT NULL, oid TEXT NOT NULL, name TEXT, given_name TEXT, family_name TEXT, email TEXT,
                        updated_at INTEGER NOT NULL, PRIMARY KEY (tenant_id, oid));
                    CREATE TABLE accounts(
                        account_id TEXT PRIMARY KEY, tenant_id TEXT NOT NULL, oid TEXT NOT NULL, policy TEXT NOT NULL,
                        authority TEXT NOT NULL, client_id TEXT NOT NULL, id_token TEXT NOT NULL, claims TEXT NOT NULL,
                        created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL,
                        FOREIGN KEY (tenant_id, oid) REFERENCES identities(tenant_id, oid));
                    CREATE INDEX accounts_policy ON accounts(policy COLLATE NOCASE);
                    CREATE INDEX accounts_person ON accounts(tenant_id, oid);
                    CREATE TABLE access_tokens(
                        account_id TEXT NOT NULL REFERENCES accounts(account_id) ON DELETE CASCADE, target TEXT NOT NULL,
                        secret TEXT NOT NULL, expires_on INTEGER NOT NULL, cached_at INTEGER NOT NULL, PRIMARY KEY (account_id, target));
                    CREATE TABLE refresh_tokens(
                        account_id TEXT PRIMARY KEY REFERENCES accounts(account_id) ON DELETE CASCADE, secret TEXT NOT NULL,
                        updated_at INTEGER NOT NULL);
                    CREATE TABLE current_accounts(policy TEXT PRIMARY KEY COLLATE NOCASE, account_id TEXT NOT NULL);
                    CREATE TABLE metadata(url TEXT PRIMARY KEY, body BLOB NOT NULL, fetched_at INTEGER NOT NULL);
                    """)
        }
        migrator.registerMigration("v2-scoped", migrate: scopeAccounts)
        migrator.registerMigration("v3-app-tokens") { db in
            try db.execute(
                sql: """
                    CREATE TABLE app_tokens(
                        environment TEXT NOT NULL, client_id TEXT NOT NULL, resource TEXT NOT NULL, tenant_id TEXT NOT NULL,
                        policy TEXT NOT NULL, secret TEXT NOT NULL, expires_on INTEGER NOT NULL, cached_at INTEGER NOT NULL,
                        PRIMARY KEY (environment, client_id, resource));
                    """)
        }
        migrator.registerMigration("v4-settings") { db in
            try db.execute(sql: settingsTable)
            try db.execute(
                sql: "INSERT INTO settings(key, value) VALUES ('store_id', ?)", arguments: [UUID().uuidString.lowercased()])
        }
        migrator.registerMigration("v5-scoped-identities", migrate: scopeIdentities)
        // What the tenant answered a refused refresh (NULL: the last refresh worked, or none was tried); a new refresh
        // token (INSERT OR REPLACE) clears it.
        migrator.registerMigration("v6-refresh-refusal") { db in
            try db.execute(sql: "ALTER TABLE refresh_tokens ADD COLUMN refused TEXT")
        }
        // The fast path's answers (`b2c token` cache hits the full client gave, by question) and the store's generation,
        // which every change to an account or a current account moves on, so that an answer given before it is not used.
        migrator.registerMigration("v7-fast-answers") { db in
            var sql = """
                CREATE TABLE fast_answers(question TEXT PRIMARY KEY, answer TEXT NOT NULL);
                CREATE TABLE store_generation(id INTEGER PRIMARY KEY CHECK (id = 1), n INTEGER NOT NULL);
                INSERT INTO store_generation(id, n) VALUES (1, 0);

                """
            for table in ["accounts", "current_accounts"] {
                for event in ["INSERT", "UPDATE", "DELETE"] {
                    sql += """
                        CREATE TRIGGER \(table)_\(event.lowercased())_generation AFTER \(event) ON \(table)
                        BEGIN UPDATE store_generation SET n = n + 1; END;

                        """
                }
            }
            try db.execute(sql: sql)
        }
        // v8: an access token dropped on its own (the reset's other sign-ins, one that must not be served) moves the
        // generation on too.
        migrator.registerMigration("v8-dropped-token-generation") { db in
            try db.execute(
                sql: """
                    CREATE TRIGGER IF NOT EXISTS access_tokens_delete_generation AFTER DELETE ON access_tokens
                    BEGIN UPDATE store_generation SET n = n + 1; END;
                    """)
        }
        // The header's user_version says how many migrations this store has had, as b2c counts them: an up-to-date store
        // (every command but the first) is known from one pragma. GRDB's own check reads its migrations table and the
        // schema, a millisecond of every refresh in the runtime's first-time lookups (bench/README.md, item 3).
        let version = migrator.migrations.count
        if try queue.read({ try Int.fetchOne($0, sql: "PRAGMA user_version") }) == version { return }
        // Then a read: a store migrated by a b2c before the count (or by a newer one) takes no write lock to find that out.
        if try queue.read({ try migrator.hasCompletedMigrations($0) }) {
            // Best effort: a store this process may only read still serves it (the number is written by a later run).
            try? queue.writeWithoutTransaction { try $0.execute(sql: "PRAGMA user_version = \(version)") }
            return
        }
        try lock()
        try migrator.migrate(queue)
        try queue.writeWithoutTransaction { try $0.execute(sql: "PRAGMA user_version = \(version)") }
    }

    /// v2: every account, token and current-account choice is keyed by (environment, client id) as well. The scope of a
    /// v1 row is read from its id token (`iss` host, `aud`), else from the row's authority URL and client id.
    /// Long on purpose: a migration script, the new schema and the copy in one transaction.
    static func scopeAccounts(_ db: Database) throws {
        try db.execute(
            sql: """
                ALTER TABLE accounts RENAME TO accounts_v1;
                ALTER TABLE access_tokens RENAME TO access_tokens_v1;
                ALTER TABLE refresh_tokens RENAME TO refresh_tokens_v1;
                ALTER TABLE current_accounts RENAME TO current_accounts_v1;
                DROP INDEX accounts_policy;
                DROP INDEX accounts_person;
                CREATE TABLE accounts(
                    environment TEXT NOT NULL, client_id TEXT NOT NULL, account_id TEXT NOT NULL, tenant_id TEXT NOT NULL,
                    oid TEXT NOT NULL, policy TEXT NOT NULL, authority TEXT NOT NULL, id_token TEXT NOT NULL, claims TEXT NOT NULL,
                    created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL,
                    PRIMARY KEY (environment, client_id, account_id),
                    FOREIGN KEY (tenant_id, oid) REFERENCES identities(tenant_id, oid));
                CREATE INDEX accounts_policy ON accounts(environment, client_id, policy COLLATE NOCASE);
                CREATE INDEX accounts_person ON accounts(tenant_id, oid);
                CREATE TABLE access_tokens(
                    environment TEXT NOT NULL, client_id TEXT NOT NULL, account_id TEXT NOT NULL, target TEXT NOT NULL,
                    secret TEXT NOT NULL, expires_on INTEGER NOT NULL, cached_at INTEGER NOT NULL,
                    PRIMARY KEY (environment, client_id, account_id, target),
                    FOREIGN KEY (environment, client_id, account_id) REFERENCES accounts(environment, client_id,
                    account_id) ON DELETE CASCADE);
                CREATE TABLE refresh_tokens(
                    environment TEXT NOT NULL, client_id TEXT NOT NULL, account_id TEXT NOT NULL, secret TEXT NOT NULL,
                    updated_at INTEGER NOT NULL,
                    PRIMARY KEY (environment, client_id, account_id),
                    FOREIGN KEY (environment, client_id, account_id) REFERENCES accounts(environment, client_id,
                    account_id) ON DELETE CASCADE);
                CREATE TABLE current_accounts(
                    environment TEXT NOT NULL, client_id TEXT NOT NULL, policy TEXT NOT NULL COLLATE NOCASE, account_id TEXT NOT NULL,
                    PRIMARY KEY (environment, client_id, policy));
                """)
        let rows = try Row.fetchAll(db, sql: "SELECT account_id, authority, client_id, id_token FROM accounts_v1")
        for row in rows {
            let accountID: String = row["account_id"]
            // A v1 row's id token is text; anything else (an unreadable value) falls back to the row's authority and client.
            let idToken = String.fromDatabaseValue(row["id_token"] as DatabaseValue) ?? ""
            let (environment, clientID) = legacyScope(idToken: idToken, authority: row["authority"], clientID: row["client_id"])
            try db.execute(
                sql: """
                    INSERT INTO accounts(environment, client_id, account_id, tenant_id, oid, policy, authority, id_token, claims,
                    created_at, updated_at)
                    SELECT ?, ?, account_id, tenant_id, oid, policy, authority, id_token, claims, created_at, updated_at
                    FROM accounts_v1 WHERE account_id = ?
                    """, arguments: [environment, clientID, accountID])
            try db.execute(
                sql: """
                    INSERT INTO access_tokens SELECT ?, ?, account_id, target, secret, expires_on,
                    cached_at FROM access_tokens_v1 WHERE account_id = ?
                    """, arguments: [environment, clientID, accountID])
            try db.execute(
                sql: """
                    INSERT INTO refresh_tokens SELECT ?, ?, account_id, secret, updated_at FROM refresh_tokens_v1 WHERE account_id = ?
                    """, arguments: [environment, clientID, accountID])
            try db.execute(
                sql: """
                    INSERT OR REPLACE INTO current_accounts SELECT ?, ?, policy, account_id FROM current_accounts_v1 WHERE account_id = ?
                    """, arguments: [environment, clientID, accountID])
        }
        try db.execute(
            sql: """
                DROP TABLE current_accounts_v1; DROP TABLE refresh_tokens_v1; DROP TABLE access_tokens_v1; DROP TABLE accounts_v1;
                """)
    }

    /// v5: a person's profile (identities) is kept per scope, as accounts are: a name edited under one configuration is
    /// not shown under another. Each v4 identity is copied into every scope that has an account of that person; the
    /// accounts table is rebuilt for its foreign key to the new key (SQLite cannot alter one), the rows unchanged.
    static func scopeIdentities(_ db: Database) throws {
        try db.execute(
            sql: """
                CREATE TABLE identities_v5(
                    environment TEXT NOT NULL, client_id TEXT NOT NULL, tenant_id TEXT NOT NULL, oid TEXT NOT NULL, name TEXT,
                    given_name TEXT, family_name TEXT, email TEXT, updated_at INTEGER NOT NULL,
                    PRIMARY KEY (environment, client_id, tenant_id, oid));
                INSERT INTO identities_v5
                    SELECT s.environment, s.client_id, i.tenant_id, i.oid, i.name, i.given_name, i.family_name, i.email, i.updated_at
                    FROM identities i JOIN (SELECT DISTINCT environment, client_id, tenant_id, oid FROM accounts) s
                        ON s.tenant_id = i.tenant_id AND s.oid = i.oid;
                CREATE TABLE accounts_v5(
                    environment TEXT NOT NULL, client_id TEXT NOT NULL, account_id TEXT NOT NULL, tenant_id TEXT NOT NULL,
                    oid TEXT NOT NULL, policy TEXT NOT NULL, authority TEXT NOT NULL, id_token TEXT NOT NULL, claims TEXT NOT NULL,
                    created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL,
                    PRIMARY KEY (environment, client_id, account_id),
                    FOREIGN KEY (environment, client_id, tenant_id, oid) REFERENCES identities(environment, client_id, tenant_id, oid));
                INSERT INTO accounts_v5(environment, client_id, account_id, tenant_id, oid, policy, authority, id_token, claims,
                    created_at, updated_at)
                    SELECT environment, client_id, account_id, tenant_id, oid, policy, authority, id_token, claims, created_at, updated_at
                    FROM accounts;
                DROP TABLE accounts;
                DROP TABLE identities;
                ALTER TABLE identities_v5 RENAME TO identities;
                ALTER TABLE accounts_v5 RENAME TO accounts;
                CREATE INDEX accounts_policy ON accounts(environment, client_id, policy COLLATE NOCASE);
                CREATE INDEX accounts_person ON accounts(environment, client_id, tenant_id, oid);
                """)
    }

    /// The environment (`host[:port]` of the issuer) and client id (`aud`) of a v1 row, from its id token; the row's
    /// authority URL and client id column when the token cannot be read.
    static func legacyScope(idToken: String, authority: String, clientID: String) -> (String, String) {
        let claims = JWT.payload(of: idToken)
        let issuer = claims?["iss"]?.stringValue.flatMap(URL.init(string:))
        let environment = (issuer?.host != nil ? issuer : URL(string: authority)).map(Authority.hostAndPort(of:)) ?? ""
        let audience = claims?["aud"]?.stringValue ?? claims?["aud"]?.arrayValue?.first?.stringValue
        return (environment, (audience ?? clientID).lowercased())
    }
}
