@testable import B2CEmulator
import B2CKit
import Foundation
import Testing

/// Tokens at rest: the encrypted store, its key sources and migrations (issue 14).
@Suite struct StoreProtectionTests {
    /// The store's files (the database, its WAL and shared memory) as bytes.
    static func rawStore(_ w: World) throws -> Data {
        var all = Data()
        for suffix in ["", "-wal", "-shm"] {
            let path = w.home.appendingPathComponent("store.sqlite" + suffix).path
            if let d = FileManager.default.contents(atPath: path) { all.append(d) }
        }
        return all
    }

    /// Every secret the store should hold for this world, from an export (which decrypts them).
    static func secrets(_ w: World, extra: [String: String] = [:]) async throws -> [String] {
        let r = try await w.b2c(["export", "--format", "msal", "--stdout"], extra: extra)
        #expect(r.status == 0, "\(r.stderr)")
        var out: [String] = []
        for section in ["AccessToken", "RefreshToken", "IdToken"] {
            for (_, e) in r.json[section]?.objectValue ?? [:] { if let s = e["secret"]?.stringValue { out.append(s) } }
        }
        return out
    }

    /// Runs of 40 or more base64url characters in the raw store that are not part of a public document it caches
    /// (discovery documents and key sets) or an account's `sub` (its claims are kept in the clear, as `b2c accounts` shows
    /// them without a key; an External ID `sub` is 43 characters of base64url, an identifier, not a secret): what a token,
    /// or a piece of one, would look like.
    static func suspiciousRuns(_ raw: Data, _ w: World) throws -> [String] {
        let r = try runBlocking(
            URL(fileURLWithPath: "/usr/bin/sqlite3"),
            [
                w.home.appendingPathComponent("store.sqlite").path,
                "SELECT body FROM metadata UNION ALL SELECT json_extract(claims, '$.sub') FROM accounts",
            ], environment: [:])
        let public_ = r.stdout
        var runs: [String] = [], current = ""
        func end() {
            // Ids the store keeps in the clear (tenant, oid, client GUIDs) sit next to each other in SQLite's records:
            // they are not secrets, so they split a run.
            let pieces = current.replacingOccurrences(
                of: "[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}", with: " ", options: .regularExpression)
            // Random base64url of this length mixes upper case, lower case and digits; SQLite's schema names do not.
            for piece in pieces.split(separator: " ")
            where piece.count >= 40 && !public_.contains(piece)
                && piece.contains(where: \.isUppercase) && piece.contains(where: \.isLowercase) && piece.contains(where: \.isNumber)
            {
                runs.append(String(piece))
            }
            current = ""
        }
        for byte in raw {
            if byte.isASCIIAlphanumeric || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_") {
                current.append(Character(UnicodeScalar(byte)))
            } else {
                end()
            }
        }
        end()
        return runs
    }

    static func contains(_ raw: Data, _ secret: String) -> Bool {
        raw.range(of: Data(secret.utf8)) != nil
            || raw.range(of: Data(secret.split(separator: ".").last.map(String.init)?.utf8 ?? "".utf8)) != nil
    }

    @Test func noTokenBytesAreInTheStoreFilesAfterEveryKindOfSignInAndRefresh() async throws {
        try await World.with { w in
            #expect(try await w.b2c(["signin"], as: alice).status == 0)
            #expect(try await w.b2c(["token", "--force-refresh"]).status == 0)
            let ropc = try await w.b2c(
                ["signin", "--policy", "B2C_1_ROPC_Auth", "--username", bob.email, "--password-stdin"], stdin: bob.password + "\n")
            #expect(ropc.status == 0, "\(ropc.stderr)")
            let native = try await w.b2c(
                ["signin", "--native", "--username", alice.email, "--password-stdin"], stdin: alice.password + "\n")
            #expect(native.status == 0, "\(native.stderr)")
            let secrets = try await Self.secrets(w)
            #expect(secrets.count >= 9, "\(secrets.count) secrets")
            // The app's own token (the daemon, in its own configuration, same store).
            let daemonConfig = w.dir.appendingPathComponent("daemon.json")
            let daemon = try #require(w.server.emulator.app(named: "daemon"))
            try Data(w.server.emulator.clientConfiguration(baseURL: w.server.baseURL, caFile: w.caPath, app: daemon).serialized().utf8)
                .write(to: daemonConfig)
            let app = try await w.b2c(["token", "--app", "--config", daemonConfig.path], extra: ["B2C_CLIENT_SECRET": daemonSecret])
            #expect(app.status == 0, "\(app.stderr)")
            let raw = try Self.rawStore(w)
            for secret in secrets + [app.stdout.trimmingCharacters(in: .whitespacesAndNewlines)] {
                #expect(!Self.contains(raw, secret), "a token is in the store files in plaintext")
            }
            let runs = try Self.suspiciousRuns(raw, w)
            #expect(runs.isEmpty, "long base64url runs in the store files: \(runs.prefix(2))")
            let status = try await w.b2c(["config", "get", "-o", "json"])
            #expect(status.json["storage"] == "encrypted" && status.json["keySource"] == "environment", "\(status.stdout)")

            // The detector finds them when they are there: the same store in plaintext mode.
            let plain = try await w.b2c(["config", "set", "storage", "plaintext"])
            #expect(plain.status == 0 && plain.stderr.contains("unencrypted"), "\(plain.stderr)")
            let exposed = try Self.rawStore(w)
            let exposedRuns = try Self.suspiciousRuns(exposed, w)
            #expect(secrets.allSatisfy { Self.contains(exposed, $0) } && !exposedRuns.isEmpty, "the detector sees plaintext tokens")
            // A plaintext store is used only without a key at hand (security finding 3).
            let noKey = ["B2C_STORE_KEY": "", "DBUS_SESSION_BUS_ADDRESS": "", "XDG_RUNTIME_DIR": ""]
            #expect(try await w.b2c(["token"]).status == 3)
            let warned = try await w.b2c(["signin", "--prompt", "login"], as: alice, extra: noKey)
            #expect(warned.status == 0 && warned.stderr.contains("warning: tokens are stored unencrypted"), "\(warned.stderr)")
            #expect(try await w.b2c(["device", "-o", "table"], extra: noKey).stdout.contains("PLAINTEXT"))
            // And back: encrypted again in place.
            #expect(try await w.b2c(["config", "set", "storage", "encrypted"]).status == 0)
            #expect(try Self.suspiciousRuns(try Self.rawStore(w), w).isEmpty)
            #expect(try await w.b2c(["token"]).status == 0)
        }
    }

    @Test func withoutAKeyStoreNothingIsStoredUntilAKeyOrPlaintextIsChosen() async throws {
        try await World.with { w in
            let noKey = ["B2C_STORE_KEY": "", "DBUS_SESSION_BUS_ADDRESS": "", "XDG_RUNTIME_DIR": ""]
            let refused = try await w.b2c(["signin"], as: alice, extra: noKey)
            #expect(refused.status == 3, "\(refused.stderr)")
            for phrase in ["no key store", "B2C_STORE_KEY", "b2c config set storage plaintext", "Nothing was stored"] {
                #expect(refused.stderr.contains(phrase), "missing '\(phrase)': \(refused.stderr)")
            }
            #expect(!refused.stderr.contains("to sign in to B2C_1_susi, open"), "refused before the browser opens")
            let bad = try await w.b2c(["signin"], as: alice, extra: ["B2C_STORE_KEY": "not-base64"])
            #expect(bad.status == 3 && bad.stderr.contains("openssl rand -base64 32"), "\(bad.stderr)")
            #expect(try await w.b2c(["config", "get", "-o", "json"], extra: noKey).json["storage"] == .null)
            #expect(try await w.b2c(["config", "set", "storage", "plaintext"], extra: noKey).status == 0)
            let plain = try await w.b2c(["signin"], as: alice, extra: noKey)
            #expect(plain.status == 0 && plain.stderr.contains("unencrypted"), "\(plain.stderr)")
        }
    }

    @Test func aWrongKeyIsRefusedAndAMovedCiphertextDoesNotOpen() async throws {
        try await World.with { w in
            #expect(try await w.b2c(["signin"], as: alice, jar: "a").status == 0)
            #expect(try await w.b2c(["signin", "--prompt", "login"], as: bob, jar: "b").status == 0)
            let before = try w.storeSnapshot()
            let other = Data((0..<32).map { _ in UInt8.random(in: 0...255) }).base64EncodedString()
            let wrong = try await w.b2c(["token", "--account", alice.email], extra: ["B2C_STORE_KEY": other])
            #expect(
                wrong.status == 3 && wrong.stderr.contains("holds another key") && wrong.stderr.contains("Nothing was altered"),
                "\(wrong.stderr)")
            let missing = try await w.b2c(["token", "--account", alice.email], extra: ["B2C_STORE_KEY": ""])
            #expect(missing.status == 3 && missing.stderr.contains("B2C_STORE_KEY is not set"), "\(missing.stderr)")
            #expect(try w.storeSnapshot() == before)
            // Bob's refresh token moved into Alice's row: it does not decrypt there, and nothing is sent with it.
            let db = w.home.appendingPathComponent("store.sqlite").path
            let moved = try runBlocking(
                URL(fileURLWithPath: "/usr/bin/sqlite3"),
                [
                    db,
                    "UPDATE refresh_tokens SET secret = (SELECT secret FROM refresh_tokens WHERE account_id LIKE '\(bob.oid)%') WHERE "
                        + "account_id LIKE '\(alice.oid)%'",
                ],
                environment: [:])
            #expect(moved.status == 0, "\(moved.stderr)")
            let refreshes = try await w.tokenLog().filter { $0["grantType"] == "refresh_token" }.count
            let r = try await w.b2c(["token", "--account", alice.email, "--force-refresh"])
            #expect(r.status == 1 && r.stderr.contains("does not decrypt for its row"), "\(r.stderr)")
            #expect(try await w.tokenLog().filter { $0["grantType"] == "refresh_token" }.count == refreshes)
            #expect(try await w.b2c(["token", "--account", bob.email, "--force-refresh"]).status == 0, "Bob's own row still opens")
        }
    }

    @Test func aPlaintextStoreFromBeforeIsEncryptedInPlaceAndTheKeyRotates() async throws {
        try await World.with { w in
            let noKey = ["B2C_STORE_KEY": ""]
            #expect(try await w.b2c(["config", "set", "storage", "plaintext"], extra: noKey).status == 0)
            #expect(try await w.b2c(["signin"], as: alice, extra: noKey).status == 0)
            // A store written before encryption existed: plaintext tokens, nothing decided.
            let db = w.home.appendingPathComponent("store.sqlite").path
            _ = try runBlocking(
                URL(fileURLWithPath: "/usr/bin/sqlite3"), [db, "DELETE FROM settings WHERE key = 'storage'"], environment: [:])
            let token = try await w.b2c(["token"])  // B2C_STORE_KEY is set: the first use encrypts it
            #expect(token.status == 0, "\(token.stderr)")
            #expect(!Self.contains(try Self.rawStore(w), token.stdout.trimmingCharacters(in: .whitespacesAndNewlines)))
            #expect(try await w.b2c(["config", "get", "-o", "json"]).json["storage"] == "encrypted")

            // Rotation with B2C_STORE_KEY: the new key from B2C_NEW_STORE_KEY; afterwards only it opens the store.
            let newKey = Data((0..<32).map { _ in UInt8.random(in: 0...255) }).base64EncodedString()
            let rotated = try await w.b2c(["config", "rotate-key"], extra: ["B2C_NEW_STORE_KEY": newKey])
            #expect(rotated.status == 0 && rotated.stderr.contains("set B2C_STORE_KEY"), "\(rotated.stderr)")
            #expect(try await w.b2c(["token"]).status == 3, "the old key no longer opens it")
            let again = try await w.b2c(["token"], extra: ["B2C_STORE_KEY": newKey])
            #expect(again.status == 0 && again.stdout == token.stdout, "\(again.stderr)")
        }
    }
}

/// MSAL's token cache out of b2c and into it, with msal-python and msal-extensions (issue 14, item 3).
let helloScope = "https://contoso.onmicrosoft.com/helloapi/demo.read"

@Suite struct MSALCacheTests {
    @Test func msalPythonUsesAnExportAndB2CImportsMSALPythonsCache() async throws {
        try await World.with { w in
            #expect(try await w.b2c(["signin"], as: alice).status == 0)
            let exported = w.dir.appendingPathComponent("exported.json")
            let refused = try await w.b2c(["export", "--format", "msal"])
            #expect(refused.status == 64 && refused.stderr.contains("--out"), "\(refused.stderr)")
            let export = try await w.b2c(["export", "--format", "msal", "--out", exported.path])
            #expect(export.status == 0 && export.stderr.contains("holds refresh tokens") && export.stdout.isEmpty, "\(export.stderr)")
            let mode = try FileManager.default.attributesOfItem(atPath: exported.path)[.posixPermissions] as? NSNumber
            #expect(mode?.intValue == 0o600)

            let written = w.dir.appendingPathComponent("written.json")
            let r = try await run(
                packageRoot.appendingPathComponent("Tests/interop/run.sh"),
                ["msal_cache_interop.py", w.server.baseURL, w.caPath, exported.path, written.path],
                environment: ProcessInfo.processInfo.environment)
            #expect(r.status == 0, "\(r.stdout)\n\(r.stderr.suffix(3000))")
            let result = try JSONValue.parse(Data((r.stdout.split(separator: "\n").last.map(String.init) ?? "{}").utf8))
            #expect(
                result["servedFromExport"] == true && result["refreshedWithExportedRefreshToken"] == true
                    && result["msalExtensions"] == true)

            let imported = try await w.b2c(["import", "--format", "msal", written.path])
            #expect(
                imported.status == 0 && imported.stdout.contains("Imported \(bob.oid)-b2c_1_susi"), "\(imported.stdout) \(imported.stderr)")
            let token = try await w.b2c(["token", "--account", bob.email, "--scope", helloScope, "-o", "json"])
            #expect(token.json["fromCache"] == true && token.json["accessToken"] == result["writtenAccessToken"], "\(token.stdout)")
            #expect(try await w.b2c(["token", "--account", bob.email, "--force-refresh"]).status == 0, "the imported refresh token works")

            // Another app's and another host's entries are skipped with a note; a file that is not a cache is refused.
            var foreign = try JSONValue.parse(Data(contentsOf: written)).objectValue ?? [:]
            foreign["Account"] = .object(
                (foreign["Account"]?.objectValue ?? [:]).mapValues { a in
                    var o = a.objectValue ?? [:]; o["environment"] = "contoso.b2clogin.com"; return .object(o)
                })
            try Data(JSONValue.object(foreign).serialized().utf8).write(to: written)
            let skipped = try await w.b2c(["import", "--format", "msal", written.path])
            #expect(
                skipped.status == 1 && skipped.stderr.contains("skipped") && skipped.stderr.contains("contoso.b2clogin.com"),
                "\(skipped.stderr)")
            let notCache = try await w.b2c(["import", "--format", "msal", "-"], stdin: "{\"hello\": 1}")
            #expect(notCache.status == 1 && notCache.stderr.contains("not an MSAL token cache"), "\(notCache.stderr)")
        }
    }
}

/// The store's key in a real Secret Service: gnome-keyring on a private session bus (Tests/keyring/run-keyring.sh).
@Suite struct SecretServiceStoreTests {
    @Test func theKeyLivesInGnomeKeyringIsCachedRotatedAndRefusedWithoutTheBus() async throws {
        var env = ProcessInfo.processInfo.environment
        for k in env.keys where k.hasPrefix("B2C_") || k.hasPrefix("DBUS_") { env[k] = nil }
        let r = try await run(
            URL(fileURLWithPath: "/bin/bash"),
            [packageRoot.appendingPathComponent("Tests/keyring/run-keyring.sh").path, b2cBinary.path, agent.path],
            environment: env)
        #expect(r.status != 77, "install dbus gnome-keyring libsecret-tools (as .ci/run does) to run the keyring test: \(r.stdout)")
        #expect(r.status == 0 && !r.stdout.contains("not ok"), "\(r.stdout)\n\(r.stderr.suffix(2000))")
        #expect(r.stdout.components(separatedBy: "\nok - ").count + (r.stdout.hasPrefix("ok - ") ? 0 : -1) >= 9, "\(r.stdout)")
    }
}
