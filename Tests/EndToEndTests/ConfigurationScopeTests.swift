import B2CKit
import Foundation
import Testing

/// One store, several configurations: each sees only the accounts and tokens of its own (authority host, tenant,
/// client id), as MSAL keys its cache (issue 10, item 1).
@Suite struct ConfigurationScopeTests {
    /// A configuration for another tenant and another app, whose API is a server that records what reaches it.
    static func fabrikamConfig(in w: World, apiPort: Int) throws -> String {
        let path = w.dir.appendingPathComponent("fabrikam.json").path
        let config: JSONValue = [
            "tenant": ["name": "fabrikam.onmicrosoft.com", "id": "11111111-2222-4333-8444-555555555555"],
            "authorityHost": "https://fabrikam.b2clogin.com", "knownAuthorities": ["fabrikam.b2clogin.com"],
            "clientId": "99999999-9999-4999-8999-999999999999",
            "policies": [["name": "B2C_1_susi", "role": "signUpSignIn"]],
            "apis": [
                [
                    "name": "hello", "baseUrl": .string("http://127.0.0.1:\(apiPort)/api"),
                    "scopes": ["https://fabrikam.onmicrosoft.com/api/read"],
                ]
            ],
        ]
        try Data(config.serialized(pretty: true).utf8).write(to: URL(fileURLWithPath: path))
        return path
    }

    /// The host (`host:port`) that issued an access token.
    static func issuerHost(_ token: String) -> String? {
        JWT.payload(of: token)?["iss"]?.stringValue.flatMap(URL.init(string:)).map(Authority.hostAndPort(of:))
    }

    @Test func anotherTenantAndClientNeverGetsTheTokenAndTwoHostsKeepTheirOwnAccounts() async throws {
        try await World.with { w1 in
            try await World.with { w2 in  // the same tenant (same GUID, same app) on another host
                let api = try await HostileAPI.start()
                defer { api.stop() }
                let shared = ["B2C_HOME": w1.home.path, "B2C_STORE_KEY": w1.storeKey]
                let host1 = URL(string: w1.server.baseURL).map(Authority.hostAndPort(of:))!
                let host2 = URL(string: w2.server.baseURL).map(Authority.hostAndPort(of:))!

                #expect(try await w1.b2c(["signin"], as: alice, jar: "alice1").status == 0)
                let contoso = try await w1.b2c(["token"])
                #expect(contoso.status == 0)

                // Another tenant and app, same store: nothing is signed in there, and nothing is sent to its API.
                let fabrikam = try Self.fabrikamConfig(in: w1, apiPort: api.port)
                let token = try await w1.b2c(["token", "--config", fabrikam])
                #expect(token.status == 4 && token.stdout.isEmpty, "\(token.stdout) \(token.stderr)")
                #expect(token.stderr.contains("no account is signed in under B2C_1_susi"), "\(token.stderr)")
                let call = try await w1.b2c(["call-api", "--config", fabrikam, "--api", "hello", "/items"])
                #expect(call.status == 4, "\(call.stderr)")
                #expect(api.requests.isEmpty, "fabrikam's API received \(api.requests)")
                #expect(try await w1.b2c(["accounts", "--config", fabrikam, "-o", "json"]).json["people"] == .array([]))

                // The same person, the same tenant, another host: a second account, not an overwrite of the first.
                #expect(try await w2.b2c(["signin"], as: alice, jar: "alice2", extra: shared).status == 0)
                let people1 = try await w1.b2c(["accounts", "-o", "json"]).json["people"]?.arrayValue ?? []
                let people2 = try await w2.b2c(["accounts", "-o", "json"], extra: shared).json["people"]?.arrayValue ?? []
                #expect(people1.count == 1 && people1[0]["accounts"]?.arrayValue?.count == 1, "\(people1)")
                #expect(people2.count == 1 && people2[0]["accounts"]?.arrayValue?.count == 1, "\(people2)")
                let t1 = try await w1.b2c(["token", "--force-refresh"])
                let t2 = try await w2.b2c(["token", "--force-refresh"], extra: shared)
                #expect(t1.status == 0 && t2.status == 0, "\(t1.stderr) \(t2.stderr)")
                #expect(Self.issuerHost(t1.stdout.trimmingCharacters(in: .whitespacesAndNewlines)) == host1)
                #expect(Self.issuerHost(t2.stdout.trimmingCharacters(in: .whitespacesAndNewlines)) == host2)

                // Signing out everything under one configuration leaves the other's account alone.
                #expect(try await w2.b2c(["signout", "--all"], extra: shared).status == 0)
                #expect(try await w1.b2c(["token"]).status == 0)
                #expect(try await w2.b2c(["token"], extra: shared).status == 4)
            }
        }
    }

    @Test func withoutAConfigurationTheWholeStoreIsListedByScopeAndCanBeWiped() async throws {
        try await World.with { w1 in
            try await World.with { w2 in  // the same tenant (same GUID, same app) on another host
                let shared = ["B2C_HOME": w1.home.path, "B2C_STORE_KEY": w1.storeKey]
                #expect(try await w1.b2c(["signin"], as: alice, jar: "a1").status == 0)
                #expect(try await w2.b2c(["signin"], as: bob, jar: "b2", extra: shared).status == 0)

                let (none, empty) = try w1.withoutConfiguration()
                let listed = try await w1.b2c(["accounts", "-o", "json"], extra: none, directory: empty)
                #expect(listed.status == 0, "\(listed.stderr)")
                #expect(listed.stderr.contains("no configuration found"), "says so: \(listed.stderr)")
                let scopes = listed.json["scopes"]?.arrayValue ?? []
                #expect(scopes.count == 2, "\(listed.stdout)")
                #expect(Set(scopes.compactMap { $0["people"]?.arrayValue?.first?["email"]?.stringValue }) == [alice.email, bob.email])
                let table = try await w1.b2c(["accounts", "-o", "table"], extra: none, directory: empty)
                #expect(
                    table.stdout.contains("127.0.0.1:\(w1.server.port) · client")
                        && table.stdout.contains("127.0.0.1:\(w2.server.port) · client"),
                    "\(table.stdout)")
                let device = try await w1.b2c(["device", "-o", "json"], extra: none, directory: empty)
                #expect(
                    device.status == 0 && device.json["accounts"] == 2 && device.json["config"] == .null,
                    "\(device.stdout) \(device.stderr)")
                // Without a configuration only --all can run.
                let named = try await w1.b2c(["signout", "--account", alice.email], extra: none, directory: empty)
                #expect(named.status == 3 && named.stderr.contains("only `b2c signout --all`"), "\(named.stderr)")
                let wiped = try await w1.b2c(["signout", "--all", "--yes"], extra: none, directory: empty)
                #expect(
                    wiped.status == 0 && wiped.stdout.contains(alice.email) && wiped.stdout.contains(bob.email),
                    "\(wiped.stdout) \(wiped.stderr)")
                #expect(try await w1.b2c(["accounts", "-o", "json"], extra: none, directory: empty).json["scopes"] == .array([]))
                // A broken configuration is still an error (exit 3), not the whole store.
                try Data("{".utf8).write(to: empty.appendingPathComponent("policies.json"))
                #expect(try await w1.b2c(["accounts"], extra: none, directory: empty).status == 3)
            }
        }
    }

    /// A store written before scopes existed (schema v1) is migrated in place: each row's scope comes from its id token.
    @Test func aVersionOneStoreIsMigratedWithTheScopeOfEachRowFromItsIdToken() async throws {
        try await World.with { w in
            // The rows of a v1 store were plaintext: made in plaintext mode, then migrated (and encrypted) on first use.
            // (A plaintext store is used only with no key at hand: security finding 3.)
            let noKey = ["B2C_STORE_KEY": "", "DBUS_SESSION_BUS_ADDRESS": "", "XDG_RUNTIME_DIR": ""]
            #expect(try await w.b2c(["config", "set", "storage", "plaintext"], extra: noKey).status == 0)
            #expect(try await w.b2c(["signin"], as: alice, jar: "alice", extra: noKey).status == 0)
            let cached = try await w.b2c(["token"], extra: noKey)
            let store = w.home.appendingPathComponent("store.sqlite").path
            let old = w.home.appendingPathComponent("v1.sqlite").path
            // A v1 store with the same rows, plus an account whose id token was issued by another host (another configuration's).
            let foreignToken =
                "eyJhbGciOiJSUzI1NiJ9."
                + Base64URL.encode(
                    JSONValue.object([
                        "iss": "https://other.b2clogin.com/8f2c6d4e-1a3b-4c5d-9e7f-0a1b2c3d4e5f/v2.0/",
                        "aud": "3f6b8c9d-2e1a-4b7c-8d9e-0f1a2b3c4d5e",
                    ]).serialized()) + ".c2ln"
            let script = """
                PRAGMA application_id = \(0x6232_6321);
                CREATE TABLE grdb_migrations (identifier TEXT NOT NULL PRIMARY KEY);
                INSERT INTO grdb_migrations VALUES ('v1');
                CREATE TABLE identities(tenant_id TEXT NOT NULL, oid TEXT NOT NULL, name TEXT, given_name TEXT, family_name TEXT,
                    email TEXT,
                    updated_at INTEGER NOT NULL, PRIMARY KEY (tenant_id, oid));
                CREATE TABLE accounts(account_id TEXT PRIMARY KEY, tenant_id TEXT NOT NULL, oid TEXT NOT NULL, policy TEXT NOT NULL,
                    authority TEXT NOT NULL, client_id TEXT NOT NULL, id_token TEXT NOT NULL, claims TEXT NOT NULL,
                        created_at INTEGER NOT NULL,
                    updated_at INTEGER NOT NULL, FOREIGN KEY (tenant_id, oid) REFERENCES identities(tenant_id, oid));
                CREATE INDEX accounts_policy ON accounts(policy COLLATE NOCASE);
                CREATE INDEX accounts_person ON accounts(tenant_id, oid);
                CREATE TABLE access_tokens(account_id TEXT NOT NULL REFERENCES accounts(account_id) ON DELETE CASCADE, target TEXT NOT NULL,
                    secret TEXT NOT NULL, expires_on INTEGER NOT NULL, cached_at INTEGER NOT NULL, PRIMARY KEY (account_id, target));
                CREATE TABLE refresh_tokens(account_id TEXT PRIMARY KEY REFERENCES accounts(account_id) ON DELETE CASCADE, secret TEXT
                    NOT NULL,
                    updated_at INTEGER NOT NULL);
                CREATE TABLE current_accounts(policy TEXT PRIMARY KEY COLLATE NOCASE, account_id TEXT NOT NULL);
                CREATE TABLE metadata(url TEXT PRIMARY KEY, body BLOB NOT NULL, fetched_at INTEGER NOT NULL);
                ATTACH '\(store)' AS new;
                INSERT INTO identities SELECT tenant_id, oid, name, given_name, family_name, email, updated_at FROM new.identities;
                INSERT INTO accounts SELECT account_id, tenant_id, oid, policy, authority, client_id, id_token, claims, created_at,
                    updated_at FROM new.accounts;
                INSERT INTO access_tokens SELECT account_id, target, secret, expires_on, cached_at FROM new.access_tokens;
                INSERT INTO refresh_tokens SELECT account_id, secret, updated_at FROM new.refresh_tokens;
                INSERT INTO current_accounts SELECT policy, account_id FROM new.current_accounts;
                INSERT INTO accounts SELECT 'ffffffff-0000-4000-8000-000000000001-b2c_1_susi.' || tenant_id, tenant_id, oid, policy,
                    'https://other.b2clogin.com/contoso.onmicrosoft.com/B2C_1_susi', client_id, '\(foreignToken)', claims, created_at,
                        updated_at
                    FROM new.accounts;
                """
            let made = try runBlocking(URL(fileURLWithPath: "/usr/bin/sqlite3"), [old, script], environment: [:])
            #expect(made.status == 0, "\(made.stderr)")
            for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: store + suffix) }
            try FileManager.default.moveItem(atPath: old, toPath: store)

            let after = try await w.b2c(["token"])
            #expect(after.status == 0 && after.stdout == cached.stdout, "the migrated store serves the same cached token: \(after.stderr)")
            let people = try await w.b2c(["accounts", "-o", "json"]).json["people"]?.arrayValue ?? []
            #expect(people.count == 1 && people[0]["accounts"]?.arrayValue?.count == 1, "only this configuration's account: \(people)")
            let (none, empty) = try w.withoutConfiguration()
            let all = try await w.b2c(["accounts", "-o", "json"], extra: none, directory: empty).json["scopes"]?.arrayValue ?? []
            #expect(
                Set(all.compactMap { $0["environment"]?.stringValue }) == ["127.0.0.1:\(w.server.port)", "other.b2clogin.com"], "\(all)")
            // The one v1 profile of Alice is now hers in each scope that has her account (v5), named in both listings.
            #expect(
                all.map { $0["people"]?.arrayValue?.first?["name"] } == [.string("Alice Example"), .string("Alice Example")], "\(all)")
            let rows = try runBlocking(
                URL(fileURLWithPath: "/usr/bin/sqlite3"), [store, "SELECT environment, oid FROM identities ORDER BY 1"], environment: [:])
            #expect(rows.stdout.split(separator: "\n").count == 2, "\(rows.stdout)")
        }
    }

    /// Issue 22, item 12: a person's profile belongs to its scope, as accounts do. The same person (same tenant and oid)
    /// signed in under two configurations keeps the name each one saw: an edit under one does not show under the other.
    @Test func aProfileEditedUnderOneConfigurationDoesNotShowUnderAnother() async throws {
        try await World.with { w1 in
            try await World.with { w2 in  // the same tenant (same GUID, same app) on another host: another scope
                let shared = ["B2C_HOME": w1.home.path, "B2C_STORE_KEY": w1.storeKey]
                #expect(try await w1.b2c(["signin"], as: alice, jar: "alice1").status == 0)
                #expect(try await w2.b2c(["signin"], as: alice, jar: "alice2", extra: shared).status == 0)
                let edit = try await w1.b2c(
                    ["edit-profile"], jar: "alice1", extra: ["B2C_AGENT_DISPLAY_NAME": "Alice Cooper", "B2C_AGENT_GIVEN_NAME": "Alicia"])
                #expect(edit.status == 0 && edit.stdout.contains("name: Alice Example → Alice Cooper"), "\(edit.stdout) \(edit.stderr)")
                let here = try await w1.b2c(["accounts", "-o", "json"]).json["people"]?.arrayValue ?? []
                #expect(here.first?["name"] == "Alice Cooper", "\(here)")
                let there = try await w2.b2c(["accounts", "-o", "json"], extra: shared).json["people"]?.arrayValue ?? []
                #expect(there.first?["name"] == "Alice Example" && there.first?["givenName"] == "Alice", "\(there)")
                let who = try await w2.b2c(["whoami", "-o", "json"], extra: shared)
                #expect(who.json["person"]?["name"] == "Alice Example", "\(who.stdout)")
                // Signing out under one configuration leaves the other's profile of the person.
                #expect(try await w1.b2c(["signout", "--all"]).status == 0)
                let still = try await w2.b2c(["accounts", "-o", "json"], extra: shared).json["people"]?.arrayValue ?? []
                #expect(still.first?["name"] == "Alice Example", "\(still)")
            }
        }
    }
}
