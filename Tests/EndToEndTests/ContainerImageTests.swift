import Foundation
import Testing

/// The container image's admin promise (issue 36, the container check): in a container a port forwarder may hand the
/// host's requests in from a loopback address (pasta splices them in; `--network host` shares the host's loopback), so
/// the image requires the admin token from loopback peers too. Here the image's own command line and environment, read
/// from scripts/image.sh, run the built tenant; scripts/test-image.sh checks the same through podman's forwarders.
@Suite struct ContainerImageTests {
    /// The image's command and environment as scripts/image.sh sets them (`--config.cmd`, `--config.env`).
    static func imageConfiguration() throws -> (command: [String], environment: [String: String]) {
        let script = try String(contentsOf: packageRoot.appendingPathComponent("scripts/image.sh"), encoding: .utf8)
        func values(_ flag: String) -> [String] {
            script.components(separatedBy: flag + " ").dropFirst().compactMap {
                $0.split(whereSeparator: \.isWhitespace).first.map(String.init)
            }
        }
        let environment = Dictionary(
            values("--config.env").map { pair in (String(pair.prefix { $0 != "=" }), String(pair.drop { $0 != "=" }.dropFirst())) }
        ) { $1 }
        return (values("--config.cmd"), environment)
    }

    /// The image's command with `arguments` added, in its environment but for a free port instead of 8080 and a
    /// directory of the test's as HOME and working directory; `body` gets the process and its port.
    static func withImageTenant(_ arguments: [String], _ body: (LiveProcess, Int) async throws -> Void) async throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("b2c-image-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: root) }
        let image = try imageConfiguration()
        var env = image.environment
        env["HOME"] = root.path
        env["B2C_EMULATOR_PORT"] = "0"
        let p = try LiveProcess(emulatorBinary, image.command + arguments, environment: env, directory: root)
        do {
            try await p.waitForOutput("b2c emulator: ")
            let port = try #require(p.stdout.split(separator: "listening on 0.0.0.0:").last.flatMap { Int($0.prefix { $0.isNumber }) })
            try await body(p, port)
        } catch {
            p.signal(SIGTERM)
            _ = await p.finish()
            throw error
        }
        p.signal(SIGTERM)
        #expect(await p.finish().status == 0)
    }

    static func admin(_ port: Int, token: String? = nil) async throws -> String {
        let header = token.map { ["-H", "Authorization: Bearer \($0)"] } ?? []
        return try await run(
            URL(fileURLWithPath: "/usr/bin/curl"), ["-sS", "-w", "\n%{http_code}"] + header + ["http://127.0.0.1:\(port)/_admin/users"],
            environment: [:]
        ).stdout
    }

    @Test func theImageRequiresTheAdminTokenFromLoopbackPeersToo() async throws {
        #expect(try Self.imageConfiguration().command == ["serve"])
        #expect(try Self.imageConfiguration().environment["B2C_EMULATOR_ADMIN_TOKEN_REQUIRED"] == "true")
        // With no arguments (`podman run IMAGE`): no token file, so the admin surface answers no one.
        try await Self.withImageTenant([]) { p, port in
            #expect(p.stdout.contains("/_admin (closed: the token is required and there is no --admin-token-file)"), "\(p.stdout)")
            let answer = try await Self.admin(port)
            #expect(answer.hasSuffix("403"), "\(answer)")
        }
        // As docs/container.md starts it: the token from the file, and nothing without it, loopback or not.
        try await Self.withImageTenant(["--admin-token-file", "out/admin-token"]) { p, port in
            #expect(p.stdout.contains("/_admin (with the token only)"), "\(p.stdout)")
            let file = try #require(p.process.currentDirectoryURL?.appendingPathComponent("out/admin-token"))
            let token = try String(contentsOf: file, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
            let without = try await Self.admin(port)
            #expect(without.hasSuffix("403") && without.contains("with its token"), "\(without)")
            let wrong = try await Self.admin(port, token: String(token.reversed()))
            #expect(wrong.hasSuffix("403"), "\(wrong)")
            let with = try await Self.admin(port, token: token)
            #expect(with.hasSuffix("200"), "\(with)")
        }
    }

    /// Whoever runs the image on a network where loopback is only the container's may say so; the variable takes only
    /// true or false.
    @Test func theRequirementCanBeTurnedOffExplicitly() async throws {
        try await Self.withImageTenant(["--no-admin-token-required"]) { p, port in
            #expect(p.stdout.contains("/_admin (loopback only)"), "\(p.stdout)")
            let answer = try await Self.admin(port)
            #expect(answer.hasSuffix("200"), "\(answer)")
        }
        let root = FileManager.default.temporaryDirectory
        let env = ["PATH": "/usr/bin:/bin", "HOME": root.path, "B2C_EMULATOR_ADMIN_TOKEN_REQUIRED": "yes"]
        let r = try await run(emulatorBinary, ["serve"], environment: env, directory: root)
        #expect(r.status == 64 && r.stderr.contains("B2C_EMULATOR_ADMIN_TOKEN_REQUIRED must be true or false"), "\(r.status) \(r.stderr)")
    }
}
