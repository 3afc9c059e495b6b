@testable import B2CEmulator
import B2CKit
import Foundation
import Testing

/// `b2c token` gives the same answer whichever program gives it: the fast path in `b2c` (a cache hit the full client
/// answered before, served from the store) or the full client `b2c-client`. Every case runs the full client first (which
/// files its answer), then `b2c`, and compares stdout, stderr and the exit status byte for byte; the cases the fast path
/// must answer run `b2c` with B2C_FAST_PATH=require, so a hand-over fails them.
@Suite struct FastPathTests {
    static let fullClient = b2cBinary.deletingLastPathComponent().appendingPathComponent("b2c-client")

    struct Case: Sendable, CustomTestStringConvertible {
        var name: String
        var args: [String]
        /// Run in a project directory whose `./policies.json` (a copy of the configuration, allowed with `b2c config allow`
        /// before the first run) is found, not named: B2C_CONFIG is unset.
        var found = false
        /// A user configuration (`$XDG_CONFIG_HOME/b2c/policies.json`, a copy of the configuration) is there too; the
        /// project directory is the working directory even when `found` is false.
        var userConfig = false
        var extra: [String: String] = [:]
        /// The fast path answers it (a cache hit with nothing to say); else it hands over.
        var fast = false
        /// The exit status both must give.
        var status: Int32 = 0
        /// Both refresh: each gets a token of its own, so stdout is compared by its shape (the JSON keys) only.
        var refreshes = false
        /// Done to the world before the case (after the sign-ins).
        var setUp: (@Sendable (World) async throws -> Void)? = nil
        var testDescription: String { name }
    }

    static let helloScope = "https://contoso.onmicrosoft.com/helloapi/demo.read"

    static let cases: [Case] = [
        Case(name: "the default policy's current account, raw", args: ["token"], fast: true),
        Case(name: "-o json", args: ["token", "-o", "json"], fast: true),
        Case(name: "--format bearer", args: ["token", "--format", "bearer"], fast: true),
        Case(name: "--output=header", args: ["token", "--output=header"], fast: true),
        Case(name: "--api hello", args: ["token", "--api", "hello"], fast: true),
        Case(name: "another policy's current account", args: ["token", "--policy", "B2C_1_signin", "-o", "json"], fast: true),
        Case(name: "a person by email", args: ["token", "--account", "bob@contoso.com"], fast: true),
        Case(name: "a margin the token still has", args: ["token", "--min-valid", "60"], fast: true),
        Case(name: "--config named on the command line", args: ["token", "--config", "CONFIG"], fast: true),
        Case(name: "an ambiguous account prefix (exit 64)", args: ["token", "--account", "0"], status: 64),
        Case(name: "an unknown policy (exit 3)", args: ["token", "--policy", "B2C_1_nope"], status: 3),
        Case(name: "an unknown API (exit 3)", args: ["token", "--api", "nope"], status: 3),
        Case(
            name: "a margin longer than the token's life: refreshed", args: ["token", "--min-valid", "7200", "-o", "json"],
            refreshes: true),
        Case(name: "--force-refresh", args: ["token", "--force-refresh", "-o", "json"], refreshes: true),
        Case(
            name: "a scope the cached token was not issued for: refreshed",
            args: ["token", "--scope", "https://contoso.onmicrosoft.com/helloapi/demo.write", "-o", "json"], refreshes: true),
        Case(name: "--verbose", args: ["token", "--verbose"]),
        Case(name: "--decode", args: ["token", "--decode", "-o", "json"]),
        Case(name: "help", args: ["token", "--help"]),
        Case(name: "no key for the store (exit 3)", args: ["token"], extra: ["B2C_STORE_KEY": ""], status: 3),
        Case(
            name: "another key (exit 3)", args: ["token"], extra: ["B2C_STORE_KEY": "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="],
            status: 3),
        Case(name: "B2C_CONFIG and B2C_PROFILE both set: the notice", args: ["token"], extra: ["B2C_PROFILE": "work"]),
        Case(
            name: "a proxy variable: the full client's HTTP set-up answers", args: ["token"], extra: ["HTTPS_PROXY": "http://127.0.0.1:9"]),
        Case(name: "a malformed proxy variable (exit 3)", args: ["token"], extra: ["HTTPS_PROXY": "https://proxy"], status: 3),
        Case(name: "SSL_CERT_FILE naming nothing (exit 3)", args: ["token"], extra: ["SSL_CERT_FILE": "/nonexistent.pem"], status: 3),
        Case(
            name: "a token moved into another row is not served (exit 1)", args: ["token", "--account", "alice@contoso.com"], status: 1,
            setUp: { w in
                try sqlite(
                    w,
                    """
                    UPDATE access_tokens SET secret = (SELECT secret FROM access_tokens WHERE account_id LIKE '0b0b%' LIMIT 1)
                    WHERE account_id LIKE '0a11%' AND account_id LIKE '%b2c_1_susi%'
                    """)
            }),
        Case(
            name: "the configuration changed since the answer", args: ["token", "-o", "json"],
            setUp: { w in
                try w.editConfig { o in o["description"] = "edited after the answer was filed" }
            }),
        Case(
            name: "the current account changed (b2c switch)", args: ["token", "-o", "json"],
            setUp: { w in try await w.b2c(["switch", "bob@contoso.com", "--policy", "B2C_1_susi"]) }),
        Case(
            name: "the person signed out (exit 4)", args: ["token", "--account", "bob@contoso.com"], status: 4,
            setUp: { w in try await w.b2c(["signout", "--account", "bob@contoso.com"]) }),
        Case(
            name: "tokens kept in plaintext on purpose", args: ["token"], extra: ["B2C_STORE_KEY": ""], fast: true,
            setUp: { w in
                try await w.b2c(["config", "set", "storage", "plaintext"])
            }),
        Case(name: "./policies.json found and allowed: the notice", args: ["token", "-o", "json"], found: true, fast: true),
        Case(
            name: "./policies.json found, changed since it was allowed (exit 3)", args: ["token"], found: true, status: 3,
            setUp: { w in
                try editFound(w) { $0 + "\n" }
            }),
        Case(
            name: "./policies.json found, allowed, then writable by others (exit 3)", args: ["token"], found: true, status: 3,
            setUp: { w in
                #expect(chmod(project(w).appendingPathComponent("policies.json").path, 0o666) == 0)
            }),
        Case(
            name: "./policies.json found, allowed, then taken back (exit 3)", args: ["token"], found: true, status: 3,
            setUp: { w in
                try await w.b2c(["config", "deny"], extra: ["B2C_CONFIG": ""], directory: project(w))
            }),
        Case(
            name: "./policies.json found, allowed, then a link to another allowed file", args: ["token"], found: true, fast: true,
            setUp: { w in
                let other = w.dir.appendingPathComponent("other.json")
                try FileManager.default.copyItem(atPath: w.configPath, toPath: other.path)
                try await w.b2c(["config", "allow", other.path], extra: ["B2C_CONFIG": ""], directory: project(w))
                let found = project(w).appendingPathComponent("policies.json")
                try FileManager.default.removeItem(at: found)
                try FileManager.default.createSymbolicLink(at: found, withDestinationURL: other)
            }),
        Case(
            name: "./policies.json allowed again with other bytes, then given back the first ones (exit 3)", args: ["token"],
            found: true, status: 3,
            setUp: { w in
                let first = try String(contentsOf: project(w).appendingPathComponent("policies.json"), encoding: .utf8)
                try editFound(w) { $0 + "\n" }
                try await w.b2c(["config", "allow"], extra: ["B2C_CONFIG": ""], directory: project(w))
                try editFound(w) { _ in first }
            }),
        Case(
            name: "./policies.json replaced by a link to a copy never allowed (exit 3)", args: ["token"], found: true, status: 3,
            setUp: { w in
                let copy = w.dir.appendingPathComponent("never-allowed.json")
                try FileManager.default.copyItem(atPath: w.configPath, toPath: copy.path)
                let found = project(w).appendingPathComponent("policies.json")
                try FileManager.default.removeItem(at: found)
                try FileManager.default.createSymbolicLink(at: found, withDestinationURL: copy)
            }),
        Case(
            name: "./policies.json found, then removed: the user configuration answers", args: ["token", "-o", "json"], found: true,
            userConfig: true,
            setUp: { w in try FileManager.default.removeItem(at: project(w).appendingPathComponent("policies.json")) }),
        Case(
            name: "the user configuration answered, then ./policies.json appears (allowed): its notice", args: ["token", "-o", "json"],
            userConfig: true,
            setUp: { w in
                try FileManager.default.copyItem(atPath: w.configPath, toPath: project(w).appendingPathComponent("policies.json").path)
                try await w.b2c(["config", "allow"], extra: ["B2C_CONFIG": ""], directory: project(w))
            }),
    ]

    /// The project directory of the `found` cases.
    static func project(_ w: World) -> URL { w.dir.appendingPathComponent("project") }

    /// Rewrites the project's `./policies.json`.
    static func editFound(_ w: World, _ change: (String) -> String) throws {
        let file = project(w).appendingPathComponent("policies.json")
        try change(String(contentsOf: file, encoding: .utf8)).write(to: file, atomically: false, encoding: .utf8)
    }

    static func sqlite(_ w: World, _ sql: String) throws {
        let r = try runBlocking(
            URL(fileURLWithPath: "/usr/bin/sqlite3"), [w.home.appendingPathComponent("store.sqlite").path, sql],
            environment: ProcessInfo.processInfo.environment)
        guard r.status == 0 else { throw LiveProcessError(message: "sqlite3 failed: \(sql): \(r.stderr)") }
    }

    @Test(arguments: cases)
    func bothPathsAnswerTheSame(_ c: Case) async throws {
        try await World.with { w in
            #expect(try await w.b2c(["signin", "--policy", "B2C_1_susi"], as: bob).status == 0)
            #expect(try await w.b2c(["signin", "--policy", "B2C_1_susi"], as: alice, jar: "alice").status == 0)
            #expect(try await w.b2c(["signin", "--policy", "B2C_1_signin"], as: alice, jar: "alice").status == 0)
            let args = c.args.map { $0 == "CONFIG" ? w.configPath : $0 }
            var extra = c.extra
            var directory: URL?
            if c.found || c.userConfig {
                let project = Self.project(w)
                try FileManager.default.createDirectory(at: project, withIntermediateDirectories: false)
                // The user configuration directory: empty unless the case has one (never this machine's own).
                let xdg = w.dir.appendingPathComponent("xdg")
                try FileManager.default.createDirectory(at: xdg.appendingPathComponent("b2c"), withIntermediateDirectories: true)
                if c.userConfig {
                    try FileManager.default.copyItem(atPath: w.configPath, toPath: xdg.appendingPathComponent("b2c/policies.json").path)
                }
                extra["B2C_CONFIG"] = ""
                extra["XDG_CONFIG_HOME"] = xdg.path
                directory = project
                if c.found {
                    try FileManager.default.copyItem(atPath: w.configPath, toPath: project.appendingPathComponent("policies.json").path)
                    #expect(try await w.b2c(["config", "allow"], extra: extra, directory: project).status == 0)
                }
            }
            // The answer is filed by a first run (of the full client through b2c), then the world changes.
            _ = try await w.b2c(args, extra: extra, directory: directory)
            if let setUp = c.setUp { try await setUp(w) }
            let full = try await run(Self.fullClient, args, environment: w.environment(as: nil, extra: extra), directory: directory)
            let fast = try await w.b2c(
                args, extra: extra.merging(c.fast ? ["B2C_FAST_PATH": "require"] : [:]) { $1 }, directory: directory)
            #expect(full.status == c.status, "\(c.name): the full client: \(full.stderr)")
            #expect(fast.status == full.status, "\(c.name): \(fast.stderr)")
            if c.refreshes {
                #expect(fast.json.objectValue.map { Set($0.keys) } == full.json.objectValue.map { Set($0.keys) }, "\(c.name)")
            } else {
                #expect(fast.stdout == full.stdout, "\(c.name): stdout differs")
            }
            #expect(fast.stderr == full.stderr, "\(c.name): stderr differs:\n\(fast.stderr)\n---\n\(full.stderr)")
        }
    }

    @Test func anAnswerIsServedOnlyWhileItHolds() async throws {
        try await World.with { w in
            #expect(try await w.b2c(["signin", "--policy", "B2C_1_susi"], as: alice).status == 0)
            let require = ["B2C_FAST_PATH": "require"]
            // Nothing filed yet: the fast path does not answer.
            #expect(try await w.b2c(["token"], extra: require).status == 70)
            #expect(try await w.b2c(["token"]).status == 0)
            let served = try await w.b2c(["token"], extra: require)
            #expect(served.status == 0 && served.stderr.isEmpty, "\(served.stderr)")
            // The tenant clock (and so the client's, B2C_CLOCK_OFFSET) moves past the margin: the full client refreshes.
            try await w.advanceClock(3400)
            #expect(try await w.b2c(["token"], extra: require).status == 70)
            let refreshed = try await w.b2c(["token", "-o", "json"])
            #expect(refreshed.status == 0 && refreshed.json["fromCache"] == false, "\(refreshed.stdout)")
            // B2C_FAST_PATH=off: the full client answers, and files nothing.
            try FastPathTests.sqlite(w, "DELETE FROM fast_answers")
            #expect(try await w.b2c(["token"], extra: ["B2C_FAST_PATH": "off"]).status == 0)
            #expect(try await w.b2c(["token"], extra: require).status == 70)
            // A store others may write is not read by the fast path (the full client refuses it with its message).
            #expect(try await w.b2c(["token"]).status == 0)
            #expect(chmod(w.home.appendingPathComponent("store.sqlite").path, 0o666) == 0)
            let open = try await w.b2c(["token"])
            #expect(open.status == 3 && open.stderr.contains("writable by other users"), "\(open.stderr)")
            #expect(chmod(w.home.appendingPathComponent("store.sqlite").path, 0o600) == 0)
        }
    }
}
