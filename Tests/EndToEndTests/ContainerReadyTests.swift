import B2CEmulator
import B2CKit
import Foundation
import Testing

/// What a container needs of `b2c-emulator serve` (issue 23, item 2): the address clients use (`--public-url`), a health
/// endpoint under any name, one log line per request on stdout (JSON), an admin surface that other machines reach only
/// with its token, and a clean stop on SIGTERM.
@Suite struct ContainerReadyTests {
    static func curl(_ args: [String]) async throws -> Run {
        try await run(URL(fileURLWithPath: "/usr/bin/curl"), ["-sS", "-w", "\n%{http_code}"] + args, environment: [:])
    }

    /// The machine's first address that is not loopback (a container's host reaches it that way), if it has one.
    static func outsideAddress() -> String? {
        var list: UnsafeMutablePointer<ifaddrs>?
        guard getifaddrs(&list) == 0 else { return nil }
        defer { freeifaddrs(list) }
        var p = list
        while let a = p?.pointee {
            defer { p = a.ifa_next }
            guard let sa = a.ifa_addr, sa.pointee.sa_family == sa_family_t(AF_INET) else { continue }
            var host = [CChar](repeating: 0, count: 64)
            guard getnameinfo(sa, socklen_t(MemoryLayout<sockaddr_in>.size), &host, 64, nil, 0, NI_NUMERICHOST) == 0 else { continue }
            let ip = String(decoding: host.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            if !ip.hasPrefix("127.") { return ip }
        }
        return nil
    }

    @Test func aTenantMadeForAContainer() async throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("b2c-container-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: root) }
        let env = ["HOME": root.path, "PATH": "\(buildDir.path):/usr/bin:/bin"]
        let p = try LiveProcess(
            emulatorBinary,
            [
                "serve", "--host", "0.0.0.0", "--public-url", "http://127.0.0.1:18443", "--log-format", "json",
                "--admin-token-file", "out/admin-token", "--config-out", "out/policies.json",
            ],
            environment: env, directory: root)
        try await p.waitForOutput("b2c emulator: ")
        let port = try #require(p.stdout.split(separator: "listening on 0.0.0.0:").last.flatMap { Int($0.prefix { $0.isNumber }) })
        let local = "http://127.0.0.1:\(port)"

        // The issuer and every endpoint name the public URL, whatever Host the request carries; so does --config-out.
        let discovery = try await Self.curl([local + "/contoso.onmicrosoft.com/B2C_1_susi/v2.0/.well-known/openid-configuration"])
        let doc = try JSONValue.parse(Data(discovery.stdout.split(separator: "\n").dropLast().joined(separator: "\n").utf8))
        #expect(doc["issuer"]?.stringValue?.hasPrefix("http://127.0.0.1:18443/") == true, "\(discovery.stdout)")
        #expect(doc["token_endpoint"]?.stringValue?.hasPrefix("http://127.0.0.1:18443/") == true)
        let config = try JSONValue.parse(try Data(contentsOf: root.appendingPathComponent("out/policies.json")))
        #expect(config["authorityHost"]?.stringValue == "http://127.0.0.1:18443")
        // A name the tenant does not know is still refused for the protocol (421), but the health check answers it.
        let named = try await Self.curl([
            "-H", "Host: b2c-tenant:8080", local + "/contoso.onmicrosoft.com/B2C_1_susi/v2.0/.well-known/openid-configuration",
        ])
        #expect(named.stdout.hasSuffix("421"), "\(named.stdout)")
        let health = try await Self.curl(["-H", "Host: b2c-tenant:8080", local + "/health"])
        #expect(health.stdout.hasSuffix("200") && health.stdout.contains("\"status\":\"ok\""), "\(health.stdout)")

        // One JSON line per request on stdout, the path without its query.
        _ = try await Self.curl([local + "/contoso.onmicrosoft.com/B2C_1_susi/oauth2/v2.0/authorize?client_id=x&code_challenge=secret-ish"])
        // (The line is written after the answer: on a loaded machine curl can be done before it reaches this pipe.)
        try await p.waitForOutput("/authorize\"")
        let lines = p.stdout.split(separator: "\n").filter { $0.hasPrefix("{") }
        #expect(lines.count >= 4, "\(p.stdout)")
        let last = try JSONValue.parse(Data(try #require(lines.last).utf8))
        #expect(last["method"] == "GET" && last["path"]?.stringValue?.hasSuffix("/authorize") == true && last["status"]?.lenientInt != nil)
        #expect(!p.stdout.contains("secret-ish"))

        // The admin surface: this machine without a token; another machine only with the token from the file (0600).
        let mine = try await Self.curl([local + "/_admin/outbox"])
        #expect(mine.stdout.hasSuffix("200"), "\(mine.stdout)")
        let file = root.appendingPathComponent("out/admin-token").path
        #expect((try FileManager.default.attributesOfItem(atPath: file)[.posixPermissions] as? Int) == 0o600)
        #expect(p.stderr.contains("warning: the admin surface"), "\(p.stderr)")
        if let outside = Self.outsideAddress() {
            let token = try String(contentsOfFile: file, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
            let url = "http://\(outside):\(port)/_admin/outbox"
            let without = try await Self.curl([url])
            #expect(without.stdout.hasSuffix("403") && without.stdout.contains("with its token"), "\(without.stdout)")
            let wrong = try await Self.curl(["-H", "Authorization: Bearer \(String(token.reversed()))", url])
            #expect(wrong.stdout.hasSuffix("403"), "\(wrong.stdout)")
            let with = try await Self.curl(["-H", "Authorization: Bearer \(token)", url])
            #expect(with.stdout.hasSuffix("200"), "\(with.stdout)")
        }

        // SIGTERM: a clean stop (exit 0).
        p.signal(SIGTERM)
        let end = await p.finish()
        #expect(end.status == 0, "\(end.stderr)")
    }

    /// Without --admin-token-file, another machine is refused and told how to open it.
    @Test func theAdminSurfaceStaysLocalByDefault() async throws {
        guard let outside = Self.outsideAddress() else { return }
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("b2c-container-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: root) }
        let p = try LiveProcess(
            emulatorBinary, ["serve", "--host", "0.0.0.0"], environment: ["HOME": root.path, "PATH": "/usr/bin:/bin"], directory: root)
        try await p.waitForOutput("b2c emulator: ")
        let port = try #require(p.stdout.split(separator: "listening on 0.0.0.0:").last.flatMap { Int($0.prefix { $0.isNumber }) })
        let r = try await Self.curl(["http://\(outside):\(port)/_admin/outbox"])
        #expect(r.stdout.hasSuffix("403") && r.stdout.contains("--admin-token-file"), "\(r.stdout)")
        p.signal(SIGTERM)
        #expect(await p.finish().status == 0)
    }

    /// GitHub Actions `services:` pass no arguments: the environment stands in for the options not given, and an option
    /// given wins over its variable; a variable that is not a value says so.
    /// `serve --ready-file` and `b2c-emulator wait`: a script's wait ends — ready (the URL), failed (serve's reason, at once:
    /// a port taken by another tenant), gone (a tenant that died), or nothing within --timeout (issue 37, item 3).
    @Test func aWaitForATenantAlwaysEnds() async throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("b2c-ready-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: root) }
        let env = ["HOME": root.path, "PATH": "/usr/bin:/bin"]
        let first = try LiveProcess(
            emulatorBinary, ["serve", "--port", "0", "--ready-file", "first.ready", "--config-out", "policies.json"], environment: env,
            directory: root)
        let ready = try await run(emulatorBinary, ["wait", "first.ready"], environment: env, directory: root)
        #expect(ready.status == 0 && ready.stdout.hasPrefix("http://127.0.0.1:"), "\(ready.stderr)")
        #expect(FileManager.default.fileExists(atPath: root.appendingPathComponent("policies.json").path), "ready after the config")
        let port = try #require(Int(ready.stdout.trimmingCharacters(in: .whitespacesAndNewlines).split(separator: ":").last ?? ""))
        // A second tenant on the same port cannot start: the wait says why at once.
        let second = try LiveProcess(
            emulatorBinary, ["serve", "--port", "\(port)", "--ready-file", "second.ready"], environment: env, directory: root)
        let failed = try await run(emulatorBinary, ["wait", "second.ready", "--timeout", "60"], environment: env, directory: root)
        #expect(failed.status == 1 && failed.stderr.contains("could not start") && failed.stderr.contains("in use"), "\(failed.stderr)")
        _ = await second.finish()
        // Stopped: the file goes; an old file of a process that is gone is not taken for a tenant.
        first.signal(SIGTERM)
        #expect(await first.finish().status == 0)
        #expect(!FileManager.default.fileExists(atPath: root.appendingPathComponent("first.ready").path))
        try Data("ready 999999 http://127.0.0.1:1\n".utf8).write(to: root.appendingPathComponent("stale.ready"))
        let stale = try await run(emulatorBinary, ["wait", "stale.ready", "--timeout", "5"], environment: env, directory: root)
        #expect(stale.status == 1 && stale.stderr.contains("is gone"), "\(stale.stderr)")
        let nothing = try await run(emulatorBinary, ["wait", "nobody.ready", "--timeout", "1"], environment: env, directory: root)
        #expect(nothing.status == 1 && nothing.stderr.contains("no tenant wrote nobody.ready within 1 s"), "\(nothing.stderr)")
    }

    @Test func theEnvironmentStandsInForOptions() async throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("b2c-container-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: root) }
        var env = [
            "HOME": root.path, "PATH": "/usr/bin:/bin", "B2C_EMULATOR_HOST": "0.0.0.0", "B2C_EMULATOR_PUBLIC_URL": "http://127.0.0.1:18443",
            "B2C_EMULATOR_LOG_FORMAT": "json", "B2C_EMULATOR_CONFIG_OUT": "out/policies.json", "B2C_EMULATOR_STATE": "state",
            "B2C_EMULATOR_ADMIN_TOKEN_FILE": "out/admin-token",
        ]
        let p = try LiveProcess(emulatorBinary, ["serve", "--log-format", "text"], environment: env, directory: root)
        try await p.waitForOutput("b2c emulator: ")
        #expect(p.stdout.hasPrefix("b2c emulator: http://127.0.0.1:18443 (listening on 0.0.0.0:"), "\(p.stdout)")
        let port = try #require(p.stdout.split(separator: "listening on 0.0.0.0:").last.flatMap { Int($0.prefix { $0.isNumber }) })
        let config = try JSONValue.parse(try Data(contentsOf: root.appendingPathComponent("out/policies.json")))
        #expect(config["authorityHost"]?.stringValue == "http://127.0.0.1:18443")
        #expect(FileManager.default.fileExists(atPath: root.appendingPathComponent("out/admin-token").path))
        #expect(FileManager.default.fileExists(atPath: root.appendingPathComponent("state/port").path))
        _ = try await Self.curl(["http://127.0.0.1:\(port)/health"])
        // --log-format text on the command line beat B2C_EMULATOR_LOG_FORMAT=json.
        try await p.waitForOutput(" GET /health 200 ")
        // The image's health check (no shell, no curl there): the tenant on B2C_EMULATOR_PORT, or --url.
        let health = try await run(
            emulatorBinary, ["health"], environment: ["PATH": "/usr/bin:/bin", "B2C_EMULATOR_PORT": "\(port)"], directory: root)
        #expect(health.status == 0 && health.stdout.contains("\"status\":\"ok\""), "\(health.status) \(health.stderr)")
        p.signal(SIGTERM)
        #expect(await p.finish().status == 0)
        let gone = try await run(emulatorBinary, ["health", "--url", "http://127.0.0.1:\(port)"], environment: [:], directory: root)
        #expect(gone.status == 5 && gone.stderr.contains("no tenant answers at http://127.0.0.1:\(port)"), "\(gone.stderr)")
        // Something else answering /health with terminal escapes (a clipboard write, a screen clear): shown without them.
        let site = root.appendingPathComponent("site")
        try FileManager.default.createDirectory(at: site, withIntermediateDirectories: true)
        try Data("\u{1B}]52;c;b3duZWQ=\u{07}\u{1B}[2J{\"status\":\"ok\"}".utf8).write(to: site.appendingPathComponent("health"))
        let impostor = try LiveProcess(
            URL(fileURLWithPath: "/usr/bin/python3"), ["-u", "-m", "http.server", "--bind", "127.0.0.1", "\(port)"],
            environment: ["PATH": "/usr/bin:/bin"], directory: site)
        try await impostor.waitForOutput("Serving HTTP")
        let shown = try await run(emulatorBinary, ["health", "--url", "http://127.0.0.1:\(port)"], environment: [:], directory: root)
        impostor.signal(SIGKILL)  // the runner ignores SIGTERM, and python keeps an inherited SIG_IGN
        _ = await impostor.finish()
        #expect(shown.status == 0 && shown.stdout.contains("{\"status\":\"ok\"}"), "\(shown.stderr)")
        #expect(!shown.stdout.unicodeScalars.contains { $0.value == 0x1B || $0.value == 0x07 }, "\(shown.stdout.debugDescription)")

        for (name, value, message) in [
            ("B2C_EMULATOR_PORT", "http", "B2C_EMULATOR_PORT must be a port number"),
            ("B2C_EMULATOR_LOG_FORMAT", "yaml", "B2C_EMULATOR_LOG_FORMAT must be text or json"),
            ("B2C_EMULATOR_PUBLIC_URL", "127.0.0.1:8443", "--public-url takes an origin"),
        ] {
            env = ["HOME": root.path, "PATH": "/usr/bin:/bin", name: value]
            let r = try await run(emulatorBinary, ["serve"], environment: env, directory: root)
            #expect(r.status == 64 && r.stderr.contains(message), "\(name)=\(value): \(r.status) \(r.stderr)")
        }
    }

    /// `serve` runs Swift concurrency's jobs on NIO's event loops (the request's task stays on its connection's loop), and
    /// every kind of work still completes there: a password grant (signing, a synchronous write) and the refresh grant
    /// after it (an asynchronous write that resumes the task on a loop).
    @Test func servedRequestsRunOnTheEventLoops() async throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("b2c-loops-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: root) }
        let p = try LiveProcess(
            emulatorBinary, ["serve", "--verbose", "--state", "state"], environment: ["HOME": root.path, "PATH": "/usr/bin:/bin"],
            directory: root)
        try await p.waitForOutput("b2c emulator: ")
        #expect(p.stderr.contains(/b2c-emulator: requests run on the \d+ event-loop threads/), "\(p.stderr)")
        let base = try #require(p.stdout.split(separator: " ").dropFirst(2).first.map(String.init))
        let token = "\(base)/contoso.onmicrosoft.com/B2C_1_ROPC_Auth/oauth2/v2.0/token"
        // (The form goes in a file: a password belongs on no command line, not even a test's.)
        let form = root.appendingPathComponent("form")
        try Data(
            ("grant_type=password&client_id=\(EmulatorSeed.defaultClientID)&scope=openid%20offline_access"
                + "&username=alice%40contoso.com&password=Alice-dev-2026%21").utf8
        ).write(to: form)
        let password = try await Self.curl(["--data-binary", "@\(form.path)", token])
        #expect(password.stdout.hasSuffix("\n200"), "\(password.stdout)")
        let answer = try JSONValue.parse(Data(password.stdout.split(separator: "\n").dropLast().joined(separator: "\n").utf8))
        let refresh = try #require(answer["refresh_token"]?.stringValue)
        try Data("grant_type=refresh_token&client_id=\(EmulatorSeed.defaultClientID)&refresh_token=\(refresh)".utf8).write(to: form)
        for _ in 0..<3 {
            let renewed = try await Self.curl(["--data-binary", "@\(form.path)", token])
            #expect(renewed.stdout.hasSuffix("\n200") && renewed.stdout.contains("\"id_token\""), "\(renewed.stdout)")
        }
        p.signal(SIGTERM)
        #expect(await p.finish().status == 0)

        // The way out: Swift's own executor, said as such; a value that is neither is refused before anything starts.
        let env = ["HOME": root.path, "PATH": "/usr/bin:/bin", "B2C_EMULATOR_EXECUTOR": "default"]
        let plain = try LiveProcess(emulatorBinary, ["serve", "--verbose", "--in-memory"], environment: env, directory: root)
        try await plain.waitForOutput("b2c emulator: ")
        #expect(plain.stderr.contains("requests run on Swift's default executor (B2C_EMULATOR_EXECUTOR=default)"), "\(plain.stderr)")
        plain.signal(SIGTERM)
        #expect(await plain.finish().status == 0)
        let bad = try await run(
            emulatorBinary, ["serve", "--in-memory"], environment: env.merging(["B2C_EMULATOR_EXECUTOR": "threads"]) { $1 },
            directory: root)
        #expect(
            bad.status == 64 && bad.stderr.contains("B2C_EMULATOR_EXECUTOR must be event-loops or default, not 'threads'"), "\(bad.stderr)")
    }
}
