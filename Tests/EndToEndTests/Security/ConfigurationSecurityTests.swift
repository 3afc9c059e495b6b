@testable import B2CKit
import Foundation
import NIOSSL
import Testing

/// Finding 2 of the security review (docs/security.md): a `policies.json` in the working directory (a cloned repository's)
/// silently replaced the user's configuration and received their tokens.
@Suite struct ConfigurationSecurityTests {
    /// A loopback HTTP listener that writes every request's Authorization header to a file: where a hostile
    /// configuration's `apis[].baseUrl` points.
    final class RecordingListener: @unchecked Sendable {
        let process: LiveProcess
        let port: Int
        let log: URL

        init(dir: URL) async throws {
            log = dir.appendingPathComponent("received-\(UUID().uuidString.prefix(6)).log")
            let script = """
                import http.server, sys
                class H(http.server.BaseHTTPRequestHandler):
                    def do_GET(self):
                        with open(sys.argv[1], "a") as f: f.write((self.headers.get("Authorization") or "-") + "\\n")
                        self.send_response(200); self.send_header("Content-Type", "application/json"); self.end_headers()
                        self.wfile.write(b'{"stolen": true}')
                    def log_message(self, *a): pass
                s = http.server.HTTPServer(("127.0.0.1", 0), H)
                print(s.server_address[1], flush=True)
                s.serve_forever()
                """
            process = try LiveProcess(
                URL(fileURLWithPath: "/usr/bin/python3"), ["-c", script, log.path], environment: ProcessInfo.processInfo.environment)
            let deadline = Date().addingTimeInterval(10)
            while Int(process.stdout.trimmingCharacters(in: .whitespacesAndNewlines)) == nil && Date() < deadline {
                try await Task.sleep(nanoseconds: 20_000_000)
            }
            port = Int(process.stdout.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0
        }

        var received: String { (try? String(contentsOf: log, encoding: .utf8)) ?? "" }
        func stop() { process.signal(SIGKILL) }
    }

    /// The repository's file: the user's own tenant and app (both public), with the API's base URL rewritten.
    static func hostileCheckout(_ w: World, apiBase: String) throws -> URL {
        let checkout = w.dir.appendingPathComponent("checkout-\(UUID().uuidString.prefix(6))")
        try FileManager.default.createDirectory(at: checkout, withIntermediateDirectories: true)
        var json = try JSONValue.parse(Data(contentsOf: URL(fileURLWithPath: w.configPath))).objectValue ?? [:]
        var apis = json["apis"]?.arrayValue ?? []
        var hello = apis[0].objectValue ?? [:]
        hello["baseUrl"] = .string(apiBase)
        apis[0] = .object(hello)
        json["apis"] = .array(apis)
        try Data(JSONValue.object(json).serialized(pretty: true).utf8).write(to: checkout.appendingPathComponent("policies.json"))
        return checkout
    }

    /// The review's repro: signed in with the user's own configuration, `b2c call-api --api hello /x` in a checkout whose
    /// policies.json points `hello` at a local listener. No token reaches it until the user allows the file, and a
    /// changed file must be allowed again.
    @Test func aRepositorysPoliciesJsonGetsNoTokenUntilAllowed() async throws {
        try await World.with { w in
            #expect(try await w.b2c(["signin"], as: alice).status == 0)
            let listener = try await RecordingListener(dir: w.dir)
            defer { listener.stop() }
            let checkout = try Self.hostileCheckout(w, apiBase: "http://127.0.0.1:\(listener.port)")
            let inCheckout = ["B2C_CONFIG": ""]
            let refused = try await w.b2c(["call-api", "--api", "hello", "/me"], extra: inCheckout, directory: checkout)
            #expect(refused.status == 3, "\(refused.stderr)")
            #expect(
                refused.stderr.contains("b2c config allow ./policies.json") && refused.stderr.contains("not been allowed"),
                "\(refused.stderr)")
            #expect(listener.received.isEmpty, "a token went to the repository's host: \(listener.received)")

            // Allowed (after looking at where it points), it is the user's choice, and each use says which file it is.
            let allowed = try await w.b2c(["config", "allow"], extra: inCheckout, directory: checkout)
            #expect(allowed.status == 0 && allowed.stdout.contains("127.0.0.1:\(listener.port)"), "\(allowed.stdout) \(allowed.stderr)")
            let used = try await w.b2c(["call-api", "--api", "hello", "/me"], extra: inCheckout, directory: checkout)
            #expect(used.status == 0, "\(used.stderr)")
            #expect(used.stderr.contains("using ./policies.json (found in the current directory)"), "\(used.stderr)")
            #expect(listener.received.hasPrefix("Bearer "))

            // A change (another host) needs a new allow.
            let file = checkout.appendingPathComponent("policies.json")
            try (String(contentsOf: file, encoding: .utf8) + "\n").write(to: file, atomically: true, encoding: .utf8)
            let changed = try await w.b2c(["token"], extra: inCheckout, directory: checkout)
            #expect(changed.status == 3 && changed.stderr.contains("changed since you allowed it"), "\(changed.stderr)")
            #expect(try await w.b2c(["config", "deny"], extra: inCheckout, directory: checkout).status == 0)
            // Named explicitly, a file is the user's choice: no allow needed.
            #expect(try await w.b2c(["token"], extra: ["B2C_CONFIG": file.path], directory: checkout).status == 0)
        }
    }

    /// At a terminal the first use shows where the file points and asks; "n" leaves everything as it was.
    @Test func atATerminalTheFileIsShownAndTheUserAsked() async throws {
        try await World.with { w in
            #expect(try await w.b2c(["signin"], as: alice).status == 0)
            let checkout = try Self.hostileCheckout(w, apiBase: "https://api.attacker.example")
            for (answer, status) in [("n", Int32(3)), ("y", Int32(0))] {
                let p = try LiveProcess(
                    b2cBinary, ["token"], environment: w.environment(as: nil, extra: ["B2C_CONFIG": ""]), terminal: true,
                    directory: checkout)
                try await p.waitFor("[y/N]")
                #expect(p.stderr.contains("https://api.attacker.example") && p.stderr.contains("gets your access tokens"), "\(p.stderr)")
                p.write(answer)
                let r = await p.finish()
                #expect(r.status == status, "\(answer): \(r.stderr)")
            }
        }
    }

    /// A file owned by another user, or writable by others, is refused outright: allowing it is not offered.
    @Test func aFileOthersOwnOrMayWriteIsRefused() async throws {
        try await World.with { w in
            let checkout = try Self.hostileCheckout(w, apiBase: "https://api.attacker.example")
            let file = checkout.appendingPathComponent("policies.json").path
            chmod(file, 0o666)
            let writable = try await w.b2c(["token"], extra: ["B2C_CONFIG": ""], directory: checkout)
            #expect(writable.status == 3 && writable.stderr.contains("writable by other users"), "\(writable.stderr)")
            #expect(try await w.b2c(["config", "allow"], directory: checkout).status == 3)
            guard geteuid() == 0 else { return }
            chmod(file, 0o644)
            chown(file, 65534, 65534)
            let theirs = try await w.b2c(["token"], extra: ["B2C_CONFIG": ""], directory: checkout)
            #expect(theirs.status == 3 && theirs.stderr.contains("belongs to another user"), "\(theirs.stderr)")
        }
    }

    /// Finding 2 (and 7): a configuration's `caFile` is trusted for that configuration's own hosts only. Here the same
    /// tenant is reached as 127.0.0.1 (a configured host: the CA applies) and as localhost (not configured: the system's
    /// roots alone, so the tenant's certificate is refused).
    @Test func theCAFileIsTrustedForTheConfigurationsHostsOnly() async throws {
        try await World.with { w in
            let transport = try HTTPTransport(caFile: w.caPath, caHosts: ["127.0.0.1"])
            let ok = try await transport.get(URL(string: "https://127.0.0.1:\(w.server.port)/public")!)
            #expect(ok.status == 200)
            await #expect(throws: NetworkError.self) {
                _ = try await transport.get(URL(string: "https://localhost:\(w.server.port)/public")!)
            }
            await transport.shutdown()
        }
    }
}
