import GRDB

/// The emulator's database schema: the first tables (v1), then each migration in the order it was added. A state
/// directory written by an older emulator is brought up to date when it is opened.
enum EmulatorSchema {
    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        tables(&migrator)
        clientsAndMFA(&migrator)
        journeys(&migrator)
        directory(&migrator)
        return migrator
    }

    /// v1: settings, users, sessions, authorize transactions, codes, refresh tokens, the outbox, native-auth flows and
    /// the token request log.
    private static func tables(_ migrator: inout DatabaseMigrator) {
        migrator.registerMigration("v1") { db in
            try db.execute(
                sql: """
                    CREATE TABLE settings(key TEXT PRIMARY KEY, value TEXT NOT NULL);
                    CREATE TABLE users(
                        oid TEXT PRIMARY KEY, email TEXT NOT NULL UNIQUE COLLATE NOCASE,
                        password_salt BLOB NOT NULL, password_hash BLOB NOT NULL,
                        display_name TEXT NOT NULL, given_name TEXT NOT NULL, surname TEXT NOT NULL,
                        created_at INTEGER NOT NULL, tokens_valid_from INTEGER NOT NULL DEFAULT 0);
                    CREATE TABLE sessions(id_hash TEXT PRIMARY KEY, oid TEXT NOT NULL, auth_time INTEGER NOT NULL,
                    created_at INTEGER NOT NULL);
                    CREATE TABLE transactions(id TEXT PRIMARY KEY, data TEXT NOT NULL, created_at INTEGER NOT NULL);
                    CREATE TABLE codes(
                        hash TEXT PRIMARY KEY, client_id TEXT NOT NULL, redirect_uri TEXT NOT NULL, policy TEXT NOT NULL,
                        scopes TEXT NOT NULL, nonce TEXT, challenge TEXT, challenge_method TEXT, oid TEXT NOT NULL,
                        auth_time INTEGER NOT NULL, new_user INTEGER NOT NULL, created_at INTEGER NOT NULL, redeemed_at INTEGER,
                        grant_id TEXT NOT NULL);
                    CREATE TABLE refresh_tokens(
                        hash TEXT PRIMARY KEY, grant_id TEXT NOT NULL, client_id TEXT NOT NULL, policy TEXT NOT NULL,
                        oid TEXT NOT NULL, scopes TEXT NOT NULL, auth_time INTEGER NOT NULL, issued_at INTEGER NOT NULL,
                        grant_issued_at INTEGER NOT NULL, rotated_at INTEGER, revoked INTEGER NOT NULL DEFAULT 0);
                    CREATE INDEX refresh_tokens_grant ON refresh_tokens(grant_id);
                    CREATE INDEX refresh_tokens_oid ON refresh_tokens(oid);
                    CREATE TABLE outbox(
                        id INTEGER PRIMARY KEY AUTOINCREMENT, recipient TEXT NOT NULL COLLATE NOCASE, purpose TEXT NOT NULL,
                        code TEXT NOT NULL, created_at INTEGER NOT NULL);
                    CREATE TABLE native_flows(
                        hash TEXT PRIMARY KEY, client_id TEXT NOT NULL, oid TEXT NOT NULL, stage TEXT NOT NULL,
                        challenge_types TEXT NOT NULL, otp_hash TEXT, otp_issued_at INTEGER, attempts INTEGER NOT NULL DEFAULT 0,
                        expires_at INTEGER NOT NULL);
                    CREATE TABLE token_log(
                        id INTEGER PRIMARY KEY AUTOINCREMENT, at INTEGER NOT NULL, endpoint TEXT NOT NULL, grant_type TEXT NOT NULL,
                        policy TEXT NOT NULL, client_id TEXT NOT NULL, oid TEXT, outcome TEXT NOT NULL);
                    """)
        }
    }

    private static func clientsAndMFA(_ migrator: inout DatabaseMigrator) {
        // v2: the kind of client a grant was issued to (web and spa codes and refresh tokens have their own rules).
        migrator.registerMigration("v2-client-kinds") { db in
            try db.execute(
                sql: """
                    ALTER TABLE codes ADD COLUMN redirect_type TEXT NOT NULL DEFAULT 'publicClient';
                    ALTER TABLE refresh_tokens ADD COLUMN confidential INTEGER NOT NULL DEFAULT 0;
                    ALTER TABLE refresh_tokens ADD COLUMN spa INTEGER NOT NULL DEFAULT 0;
                    """)
        }
        // v3: multifactor authentication — a user's registered phone and authenticator, a risky-sign-in mark, whether a
        // session did MFA, and the outbox's channel, expiry and journey.
        migrator.registerMigration("v3-mfa") { db in
            try db.execute(
                sql: """
                    ALTER TABLE users ADD COLUMN phone TEXT;
                    ALTER TABLE users ADD COLUMN phone_enrolled INTEGER NOT NULL DEFAULT 0;
                    ALTER TABLE users ADD COLUMN totp_secret TEXT;
                    ALTER TABLE users ADD COLUMN totp_enrolled INTEGER NOT NULL DEFAULT 0;
                    ALTER TABLE users ADD COLUMN risky INTEGER NOT NULL DEFAULT 0;
                    ALTER TABLE sessions ADD COLUMN mfa INTEGER NOT NULL DEFAULT 0;
                    ALTER TABLE outbox ADD COLUMN channel TEXT NOT NULL DEFAULT 'email';
                    ALTER TABLE outbox ADD COLUMN expires_at INTEGER;
                    ALTER TABLE outbox ADD COLUMN journey TEXT;
                    """)
        }
        // v4: federated sign-in — the identity provider of a user who signed up through one, each federated identity
        // (issuer and subject) with its user, and the mock identity providers' codes.
        migrator.registerMigration("v4-federation") { db in
            try db.execute(
                sql: """
                    ALTER TABLE users ADD COLUMN idp TEXT;
                    CREATE TABLE federated_identities(
                        issuer TEXT NOT NULL, subject TEXT NOT NULL, oid TEXT NOT NULL, PRIMARY KEY (issuer, subject));
                    CREATE TABLE idp_codes(hash TEXT PRIMARY KEY, identity TEXT NOT NULL, created_at INTEGER NOT NULL);
                    """)
        }
    }

    private static func journeys(_ migrator: inout DatabaseMigrator) {
        // v5: session behaviour — when a session ends (nil: with the browser's own session, under the tenant clock's
        // lifetime), whether "Keep me signed in" made it persistent, and the app and user flow that made it (SSO scope).
        migrator.registerMigration("v5-sessions") { db in
            try db.execute(
                sql: """
                    ALTER TABLE sessions ADD COLUMN expires_at INTEGER;
                    ALTER TABLE sessions ADD COLUMN persistent INTEGER NOT NULL DEFAULT 0;
                    ALTER TABLE sessions ADD COLUMN client_id TEXT;
                    ALTER TABLE sessions ADD COLUMN policy TEXT;
                    """)
        }
        // v6: the attributes a sign-up page collected beyond the names (JSON).
        migrator.registerMigration("v6-attributes") { db in try db.execute(sql: "ALTER TABLE users ADD COLUMN attributes TEXT") }
        // v7: the identity provider's access token a federated sign-in's code carries (the `idp_access_token` claim).
        migrator.registerMigration("v7-idp-access-token") { db in
            try db.execute(sql: "ALTER TABLE codes ADD COLUMN idp_access_token TEXT")
        }
        // v8: the claims an API connector added before the token (JSON), carried by the code to its tokens.
        migrator.registerMigration("v8-code-extra-claims") { db in try db.execute(sql: "ALTER TABLE codes ADD COLUMN extra_claims TEXT") }
        // v9: native authentication beyond sign-in — what a sign-up, reset, MFA or registration journey carries between its
        // steps (JSON), a user's registered strong-authentication email, and MFA required for one user.
        migrator.registerMigration("v9-native-journeys") { db in
            try db.execute(
                sql: """
                    ALTER TABLE native_flows ADD COLUMN journey TEXT;
                    ALTER TABLE users ADD COLUMN mfa_email TEXT;
                    ALTER TABLE users ADD COLUMN mfa_required INTEGER NOT NULL DEFAULT 0;
                    """)
        }
        // v10: the token log's ids are plain row ids: AUTOINCREMENT made every grant's commit write sqlite_sequence too (a
        // page more in the WAL per request), and nothing needs ids never reused after the log is cleared.
        migrator.registerMigration("v10-token-log-rowid") { db in
            try db.execute(
                sql: """
                    CREATE TABLE token_log_v10(
                        id INTEGER PRIMARY KEY, at INTEGER NOT NULL, endpoint TEXT NOT NULL, grant_type TEXT NOT NULL,
                        policy TEXT NOT NULL, client_id TEXT NOT NULL, oid TEXT, outcome TEXT NOT NULL);
                    INSERT INTO token_log_v10 SELECT id, at, endpoint, grant_type, policy, client_id, oid, outcome FROM token_log;
                    DROP TABLE token_log;
                    ALTER TABLE token_log_v10 RENAME TO token_log;
                    """)
        }
        // v11: the last authenticator-app step a user's code was accepted for (RFC 6238 §5.2: a code is taken once).
        migrator.registerMigration("v11-totp-last-step") { db in
            try db.execute(sql: "ALTER TABLE users ADD COLUMN totp_last_step INTEGER")
        }
        // v12: custom policies uploaded through Graph (trustFramework/policies), kept across restarts in upload order.
        migrator.registerMigration("v12-custom-policies") { db in
            try db.execute(
                sql: """
                    CREATE TABLE custom_policies(
                        id TEXT PRIMARY KEY COLLATE NOCASE, xml BLOB NOT NULL, uploaded_at INTEGER NOT NULL, seq INTEGER NOT NULL)
                    """)
        }
        // v13: what a custom policy's session managers keep in the SSO session (their PersistedClaims), as JSON.
        migrator.registerMigration("v13-session-claims") { db in
            try db.execute(sql: "ALTER TABLE sessions ADD COLUMN claims TEXT")
        }
    }

    /// v14: what Microsoft Graph says of a user beyond the sign-in name and the names — the kind of local sign-in name
    /// (`emailAddress` or `userName`), whether the account is enabled, its password policies and whether the next sign-in
    /// must change the password.
    private static func directory(_ migrator: inout DatabaseMigrator) {
        migrator.registerMigration("v14-directory") { db in
            try db.execute(
                sql: """
                    ALTER TABLE users ADD COLUMN sign_in_type TEXT NOT NULL DEFAULT 'emailAddress';
                    ALTER TABLE users ADD COLUMN account_enabled INTEGER NOT NULL DEFAULT 1;
                    ALTER TABLE users ADD COLUMN password_policies TEXT;
                    ALTER TABLE users ADD COLUMN force_change_password INTEGER NOT NULL DEFAULT 0;
                    """)
        }
        // v15: the device authorization grant's flows: the device code's hash, the code a person types, and the flow (JSON).
        migrator.registerMigration("v15-device-flows") { db in
            try db.execute(
                sql: """
                    CREATE TABLE device_flows(
                        hash TEXT PRIMARY KEY, user_code TEXT NOT NULL UNIQUE, data TEXT NOT NULL, expires_at INTEGER NOT NULL)
                    """)
        }
        // v16: grants, one per sign-in, revoked as a whole: refresh tokens are sealed and no longer stored (a refresh grant
        // writes nothing). The stored tokens of earlier emulators stay in `refresh_tokens` and are redeemed from there;
        // their grants come here, revoked if any of their tokens was.
        migrator.registerMigration("v16-grants") { db in
            try db.execute(
                sql: """
                    CREATE TABLE grants(
                        id TEXT PRIMARY KEY, oid TEXT NOT NULL, client_id TEXT NOT NULL, policy TEXT NOT NULL,
                        issued_at INTEGER NOT NULL, revoked INTEGER NOT NULL DEFAULT 0);
                    CREATE INDEX grants_oid ON grants(oid);
                    INSERT INTO grants(id, oid, client_id, policy, issued_at, revoked)
                        SELECT grant_id, lower(oid), client_id, policy, MIN(grant_issued_at), MAX(revoked) FROM refresh_tokens
                        GROUP BY grant_id;
                    """)
        }
    }
}
