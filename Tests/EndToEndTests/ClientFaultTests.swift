import B2CEmulator
import B2CKit
import Foundation
import Testing

/// The store's secrets and rows, to prove a failed command left them as they were.
func storeSnapshot(_ w: World) async throws -> String {
    let db = w.home.appendingPathComponent("store.sqlite").path
    guard FileManager.default.fileExists(atPath: db) else { return "(no store)" }
    let r = try await run(
        URL(fileURLWithPath: "/usr/bin/sqlite3"),
        [
            db,
            "SELECT account_id, id_token FROM accounts ORDER BY 1; SELECT * FROM refresh_tokens ORDER BY 1; SELECT account_id, target,"
                + " secret FROM access_tokens ORDER BY 1, 2; SELECT * FROM current_accounts ORDER BY 1;",
        ],
        environment: ProcessInfo.processInfo.environment)
    #expect(r.status == 0, "\(r.stderr)")
    return r.stdout
}

@Suite(.serialized) struct ClientFaultTests {
    @Test func malformedConfigurationsExit3WithTheKeyPath() async throws {
        try await World.with { w in
            let good = try JSONValue.parse(Data(contentsOf: URL(fileURLWithPath: w.configPath)))
            func variant(_ change: (inout [String: JSONValue]) -> Void) -> JSONValue {
                var o = good.objectValue!
                change(&o)
                return .object(o)
            }
            let cases: [(JSONValue, String)] = [
                (variant { $0["clientId"] = 42 }, "$.clientId must be a string"),
                (variant { $0["clientId"] = nil }, "$.clientId is required"),
                (variant { $0["colour"] = "blue" }, "$.colour is not a known key"),
                (variant { $0["policies"] = [["name": "B2C_1_susi", "role": "superuser"]] }, "$.policies[0].role is 'superuser'"),
                (variant { $0["knownAuthorities"] = ["contoso.b2clogin.com"] }, "$.policies[0] resolves to"),
                (variant { $0["authorityHost"] = "http://contoso.b2clogin.com" }, "$.authorityHost must use https"),
                (variant { $0["tenant"] = [:] }, "$.tenant needs a name"),
            ]
            for (config, message) in cases {
                let path = w.dir.appendingPathComponent("bad.json").path
                try Data(config.serialized().utf8).write(to: URL(fileURLWithPath: path))
                for command in [["policies"], ["token"], ["signin", "--no-browser"]] {
                    let r = try await w.b2c(command + ["--config", path])
                    #expect(r.status == 3, "\(command) \(message): \(r.status) \(r.stderr)")
                    #expect(r.stderr.contains(message), "\(command): \(r.stderr)")
                }
            }
            try Data("{ not json".utf8).write(to: URL(fileURLWithPath: w.dir.appendingPathComponent("bad.json").path))
            let garbage = try await w.b2c(["token", "--config", w.dir.appendingPathComponent("bad.json").path])
            #expect(garbage.status == 3 && garbage.stderr.contains("is not valid JSON"))
            let missing = try await w.b2c(["token", "--config", "/nonexistent/policies.json"])
            #expect(missing.status == 3 && missing.stderr.contains("does not exist"))
            #expect(!FileManager.default.fileExists(atPath: w.home.path), "a bad configuration never creates or touches the store")
            let policies = try await w.b2c(["policies", "--output", "json"])
            #expect(policies.status == 0 && policies.json["policies"]?.arrayValue?.count == 8)
            #expect(
                policies.json["policies"]?.arrayValue?.first?["authority"]?.stringValue
                    == "\(w.server.baseURL)/contoso.onmicrosoft.com/B2C_1_susi")
        }
    }

    @Test func discoveryAndTokenEndpointFaultsLeaveTheStoreUnchanged() async throws {
        try await World.with { w in
            // A policy the tenant does not have: discovery 404 → configuration error.
            var config = try JSONValue.parse(Data(contentsOf: URL(fileURLWithPath: w.configPath))).objectValue!
            config["policies"] = .array((config["policies"]?.arrayValue ?? []) + [["name": "B2C_1_missing", "role": "signIn"]])
            try Data(JSONValue.object(config).serialized().utf8).write(to: URL(fileURLWithPath: w.configPath))
            let missing = try await w.b2c(["signin", "--policy", "B2C_1_missing", "--no-browser"])
            #expect(missing.status == 3 && missing.stderr.contains("HTTP 404"), "\(missing.stderr)")

            #expect(try await w.b2c(["signin"], as: alice).status == 0)
            let snapshot = try await storeSnapshot(w)
            for kind in ["status500", "malformedJSON", "wrongContentType"] {
                _ = try await w.admin("POST", "/faults", ["endpoint": "token", "kind": .string(kind)])
                let r = try await w.b2c(["token", "--force-refresh"])
                #expect(r.status == 5, "\(kind): \(r.status) \(r.stderr)")
                #expect(r.stdout.isEmpty)
                #expect(try await storeSnapshot(w) == snapshot, "\(kind) changed the store")
            }
            _ = try await w.admin("POST", "/faults", ["endpoint": "token", "kind": "delay", "delayMs": 3000])
            let slow = try await w.b2c(["token", "--force-refresh", "--http-timeout", "1"])
            #expect(slow.status == 5 && slow.stderr.contains("did not answer within 1 s"), "\(slow.stderr)")
            _ = try await w.admin("POST", "/faults", ["endpoint": "token", "kind": "drop"])
            let dropped = try await w.b2c(["token", "--force-refresh"])
            #expect(dropped.status == 5, "\(dropped.stderr)")
            #expect(try await storeSnapshot(w) == snapshot)
            // A refresh that fails on the network while the cached token is still valid serves the cached token.
            _ = try await w.admin("POST", "/faults", ["endpoint": "token", "kind": "status503"])
            let served = try await w.b2c(["token", "--min-valid", "4000", "--format", "json"])
            #expect(
                served.status == 0 && served.json["fromCache"] == true && served.stderr.contains("serving the cached token"),
                "\(served.stderr)")
            // Discovery faults on a fresh store (nothing cached) are network errors.
            let fresh = w.dir.appendingPathComponent("fresh-home").path
            _ = try await w.admin("POST", "/faults", ["endpoint": "discovery", "kind": "status500"])
            let d500 = try await w.b2c(["signin", "--no-browser", "--timeout", "5"], extra: ["B2C_HOME": fresh])
            #expect(d500.status == 5 && d500.stderr.contains("HTTP 500"), "\(d500.stderr)")
            _ = try await w.admin("POST", "/faults", ["endpoint": "discovery", "kind": "malformedJSON"])
            let dGarbage = try await w.b2c(["signin", "--no-browser", "--timeout", "5"], extra: ["B2C_HOME": fresh])
            #expect(dGarbage.status == 5 && dGarbage.stderr.contains("discovery document"), "\(dGarbage.stderr)")
        }
    }

    /// Issue 22, item 10: what the platform says (Foundation's error domains and sentences, NIO's and AsyncHTTPClient's
    /// error names) never reaches the user; each failure names the path or host and what to do.
    @Test func fileAndConnectionFailuresAreSaidInPlainWords() async throws {
        try await World.with { w in
            let platform = ["NSCocoaErrorDomain", "The operation could not be completed", "doesn’t exist", "HTTPClientError", "NIO"]
            let directory = w.dir.appendingPathComponent("configs")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            let dir = try await w.b2c(["accounts", "--config", directory.path])
            #expect(dir.status == 3 && dir.stderr.contains("'\(directory.path)' is a directory, not a configuration file"), "\(dir.stderr)")
            try FileManager.default.copyItem(atPath: w.configPath, toPath: directory.appendingPathComponent("policies.json").path)
            let named = try await w.b2c(["accounts", "--config", directory.path])
            #expect(named.stderr.contains("e.g. '\(directory.path)/policies.json'"), "\(named.stderr)")
            let missingPath = w.dir.appendingPathComponent("nowhere/policies.json").path
            let missing = try await w.b2c(["token"], extra: ["B2C_CONFIG": missingPath])
            #expect(
                missing.status == 3 && missing.stderr.contains("the configuration '\(missingPath)' does not exist")
                    && missing.stderr.contains("b2c init --out \(missingPath)"), "\(missing.stderr)")
            let body = try await w.b2c(["call-api", "--api", "hello", "-d", "@" + missingPath])
            #expect(body.status == 64 && body.stderr.contains("cannot read -d @\(missingPath): the file does not exist"), "\(body.stderr)")

            #expect(try await w.b2c(["signin"], as: alice).status == 0)
            _ = try await w.admin("POST", "/faults", ["endpoint": "token", "kind": "drop"])
            let dropped = try await w.b2c(["token", "--force-refresh"])
            let host = "127.0.0.1:\(w.server.port)"
            #expect(
                dropped.status == 5 && dropped.stderr.contains("\(host) closed the connection") && dropped.stderr.contains("try again"),
                "\(dropped.stderr)")
            for r in [dir, named, missing, body, dropped] {
                #expect(!platform.contains { r.stderr.contains($0) }, "\(r.stderr)")
            }
        }
    }

    @Test func emulatorDownServesAValidCachedToken() async throws {
        let w = try await World.start()
        #expect(try await w.b2c(["signin"], as: alice).status == 0)
        let cached = try await w.b2c(["token"])
        await w.stop()
        let hit = try await w.b2c(["token"])
        #expect(hit.status == 0 && hit.stdout == cached.stdout, "a cache hit needs no network")
        try FileManager.default.createDirectory(at: w.dir, withIntermediateDirectories: true)
        let stale = try await w.b2c(["token", "--min-valid", "4000", "--http-timeout", "2"])
        #expect(
            stale.status == 0 && stale.stdout == cached.stdout && stale.stderr.contains("nothing listens on 127.0.0.1"), "\(stale.stderr)")
        let forced = try await w.b2c(["token", "--force-refresh", "--http-timeout", "2"])
        #expect(
            forced.status == 5 && forced.stderr.contains("nothing listens on 127.0.0.1")
                && forced.stderr.contains("is the emulator running?"), "\(forced.stderr)")
    }

    @Test func cancelAndTimeoutAndStoreProblems() async throws {
        try await World.with { w in
            let cancelled = try await w.b2c(["signin"], as: alice, extra: ["B2C_AGENT_ACTION": "cancel"])
            #expect(cancelled.status == 2 && cancelled.stderr.contains("cancelled"), "\(cancelled.stderr)")
            let timeout = try await w.b2c(["signin", "--no-browser", "--timeout", "1"])
            #expect(timeout.status == 1 && timeout.stderr.contains("no answer from the browser within 1 s"))
            #expect(timeout.stderr.contains("oauth2/v2.0/authorize?"), "the URL is always printed")
            let interrupted = try await runAndSignal(
                b2cBinary, ["signin", "--no-browser"], environment: w.environment(as: nil),
                marker: "Ctrl-C cancels", signal: SIGINT)
            #expect(
                interrupted.status == 2 && interrupted.stderr.contains("cancelled (Ctrl-C); nothing was stored"), "\(interrupted.stderr)")
            let afterInterrupt = try await storeSnapshot(w)
            #expect(afterInterrupt == "(no store)" || afterInterrupt.isEmpty, "\(afterInterrupt)")
            let wrongThenRight = try await w.b2c(["signin"], as: alice, extra: ["B2C_AGENT_ACTION": "wrong-then-right"])
            #expect(wrongThenRight.status == 0)
            let accounts = try await w.b2c(["accounts", "--output", "json"])
            #expect(accounts.json["people"]?.arrayValue?.count == 1)

            // A corrupt store and a foreign SQLite file are refused, not altered.
            let corruptHome = w.dir.appendingPathComponent("corrupt")
            try FileManager.default.createDirectory(at: corruptHome, withIntermediateDirectories: true)
            let junk = Data((0..<8192).map { UInt8(truncatingIfNeeded: $0 &* 31) })
            try junk.write(to: corruptHome.appendingPathComponent("store.sqlite"))
            let corrupt = try await w.b2c(["accounts"], extra: ["B2C_HOME": corruptHome.path])
            #expect(corrupt.status == 1 && corrupt.stderr.contains("is not a b2c store"), "\(corrupt.stderr)")
            #expect(try Data(contentsOf: corruptHome.appendingPathComponent("store.sqlite")) == junk)
            let foreignHome = w.dir.appendingPathComponent("foreign")
            try FileManager.default.createDirectory(at: foreignHome, withIntermediateDirectories: true)
            let foreignDB = foreignHome.appendingPathComponent("store.sqlite").path
            _ = try await run(
                URL(fileURLWithPath: "/usr/bin/sqlite3"),
                [foreignDB, "CREATE TABLE recipes(name TEXT); INSERT INTO recipes VALUES ('soup');"],
                environment: ProcessInfo.processInfo.environment)
            let before = try Data(contentsOf: URL(fileURLWithPath: foreignDB))
            let foreign = try await w.b2c(["accounts"], extra: ["B2C_HOME": foreignHome.path])
            #expect(foreign.status == 1 && foreign.stderr.contains("another application"), "\(foreign.stderr)")
            #expect(try Data(contentsOf: URL(fileURLWithPath: foreignDB)) == before)
            // A store location that cannot be created (root ignores file modes, so use a path no one can create).
            let unwritable = try await w.b2c(["accounts"], extra: ["B2C_HOME": "/proc/b2c-store"])
            #expect(unwritable.status == 3 && unwritable.stderr.contains("cannot create the store directory"), "\(unwritable.stderr)")
            // Files are private.
            let attrs = try FileManager.default.attributesOfItem(atPath: w.home.appendingPathComponent("store.sqlite").path)
            #expect((attrs[.posixPermissions] as? Int) == 0o600)
            #expect((try FileManager.default.attributesOfItem(atPath: w.home.path)[.posixPermissions] as? Int) == 0o700)
        }
    }

    @Test func selectionSwitchSignoutAndSignedOutNotice() async throws {
        try await World.with { w in
            #expect(try await w.b2c(["signin"], as: alice, jar: "a").status == 0)
            #expect(try await w.b2c(["signin", "--prompt", "login"], as: bob, jar: "b").status == 0)
            // Bob is current; switch to Alice by a unique prefix of her oid.
            #expect(try await w.b2c(["switch", "--policy", "B2C_1_susi", "--account", "0a11"]).status == 0)
            #expect(try await w.b2c(["token", "--format", "json"]).json["accountId"]?.stringValue?.hasPrefix(alice.oid) == true)
            let ambiguousPrefix = try await w.b2c(["token", "--account", "0"])
            #expect(ambiguousPrefix.status == 64 && ambiguousPrefix.stderr.contains("matches several accounts"))
            let nobody = try await w.b2c(["token", "--account", "carol@contoso.com"])
            #expect(nobody.status == 4 && nobody.stderr.contains("b2c signin --policy B2C_1_susi --login-hint carol@contoso.com"))
            // Signing Alice out yourself: the next command falls back to the only account without telling you what you did
            // (issue 22, item 13). Only an account that went otherwise is announced (SelectionTests).
            let out = try await w.b2c(["signout", "--account", alice.email])
            #expect(
                out.status == 0 && out.stdout.contains("Signed out alice@contoso.com from B2C_1_susi (\(alice.oid)-b2c_1_susi")
                    && out.stderr.contains("stay valid until they expire"))
            let next = try await w.b2c(["token", "--format", "json"])
            #expect(
                next.status == 0 && !next.stderr.contains("has been signed out")
                    && next.json["accountId"]?.stringValue?.hasPrefix(bob.oid) == true, "\(next.stderr)")
            // Signing out the current account of a policy leaves none current, still without a notice.
            #expect(try await w.b2c(["signin", "--prompt", "login"], as: alice, jar: "a").status == 0)
            #expect(try await w.b2c(["signout", "--policy", "B2C_1_susi"]).status == 0)
            let quiet = try await w.b2c(["token", "--format", "json"])
            #expect(
                quiet.status == 0 && !quiet.stderr.contains("has been signed out")
                    && quiet.json["accountId"]?.stringValue?.hasPrefix(bob.oid) == true, "\(quiet.stderr)")
            // Two people, none current → ambiguous, listing the candidates.
            #expect(try await w.b2c(["signin", "--prompt", "login"], as: alice, jar: "a").status == 0)
            _ = try await run(
                URL(fileURLWithPath: "/usr/bin/sqlite3"),
                [w.home.appendingPathComponent("store.sqlite").path, "DELETE FROM current_accounts"],
                environment: ProcessInfo.processInfo.environment)
            let ambiguous = try await w.b2c(["token"])
            #expect(ambiguous.status == 64 && ambiguous.stderr.contains(alice.email) && ambiguous.stderr.contains(bob.email))
            let unknown = try await w.b2c(["signout", "--account", "nobody@contoso.com"])
            #expect(unknown.status == 1 && unknown.stderr.contains("no signed-in account matches"))
            let all = try await w.b2c(["signout", "--all"])
            #expect(all.status == 0 && all.stdout.components(separatedBy: "Signed out").count == 3)
            #expect(try await w.b2c(["accounts", "--output", "json"]).json["people"] == [])
            let none = try await w.b2c(["token"])
            #expect(none.status == 4 && none.stderr.contains("Run: b2c signin --policy B2C_1_susi"))
        }
    }
}
