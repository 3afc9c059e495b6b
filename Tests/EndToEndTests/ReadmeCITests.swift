@testable import B2CEmulator
import B2CKit
import Foundation
import Testing

/// The CI snippet of docs/ci.md, run verbatim: its `env:` (the secret from the CI's store is the daemon's development secret
/// here) and each `run:` line, in bash, with the built b2c on PATH, against the emulator (issue 13, item 8).
@Suite struct ReadmeCITests {
    static func snippet() throws -> [String] {
        let readme = try String(contentsOf: packageRoot.appendingPathComponent("docs/ci.md"), encoding: .utf8)
        guard let start = readme.range(of: "<!-- ci-snippet: start -->"), let end = readme.range(of: "<!-- ci-snippet: end -->") else {
            throw SnapshotError(message: "docs/ci.md has no ci-snippet markers")
        }
        return readme[start.upperBound..<end.lowerBound].split(separator: "\n").map(String.init)
    }

    /// A YAML line without its comment (` # …`).
    static func uncommented(_ line: String) -> String {
        (line.range(of: " # ").map { String(line[..<$0.lowerBound]) } ?? line).trimmingCharacters(in: .whitespaces)
    }

    @Test func theCISnippetRunsAsWritten() async throws {
        try await World.with { w in
            let lines = try Self.snippet()
            var env: [String: String] = [:]
            var inEnv = false
            var commands: [String] = []
            for raw in lines {
                let line = Self.uncommented(raw)
                if line == "env:" { inEnv = true; continue }
                if line.hasSuffix(":") && !line.contains(" ") { inEnv = false }
                if inEnv, let colon = line.firstIndex(of: ":") {
                    let key = String(line[..<colon]), value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
                    env[key] = value.contains("${{ secrets.") ? daemonSecret : value
                }
                if line.hasPrefix("- run: ") { commands.append(String(line.dropFirst("- run: ".count))) }
            }
            #expect(env["B2C_CONFIG"] == "ci/policies.json" && env["B2C_CLIENT_SECRET"] == daemonSecret, "\(env)")
            #expect(commands.count == 2, "\(commands)")

            // The daemon's configuration, as `b2c emulator serve --config-out ci/policies.json --client daemon` writes it.
            let project = w.dir.appendingPathComponent("repo")
            try FileManager.default.createDirectory(at: project.appendingPathComponent("ci"), withIntermediateDirectories: true)
            let daemon = try #require(w.server.emulator.app(named: "daemon"))
            let config = w.server.emulator.clientConfiguration(baseURL: w.server.baseURL, caFile: w.caPath, app: daemon)
            try Data(config.serialized(pretty: true).utf8).write(to: project.appendingPathComponent("ci/policies.json"))

            var environment = w.environment(as: nil).merging(env) { $1 }
            environment["PATH"] = buildDir.path + ":" + (environment["PATH"] ?? "/usr/bin:/bin")
            for command in commands {
                let r = try await run(
                    URL(fileURLWithPath: "/bin/bash"), ["-eo", "pipefail", "-c", command], environment: environment,
                    directory: project)
                #expect(r.status == 0, "`\(command)` failed: \(r.stderr)")
                #expect(!r.stdout.contains(daemonSecret) && !r.stderr.contains(daemonSecret), "the secret was printed")
                if command.contains("call-api") {
                    #expect(r.stdout.contains("hello.read.all") && r.stderr.contains("as the app \(daemonID)"), "\(r.stdout) \(r.stderr)")
                }
            }
            // Without the secret the first step fails with the reason (the job would stop there).
            environment["B2C_CLIENT_SECRET"] = nil
            _ = try await run(b2cBinary, ["signout", "--app"], environment: environment, directory: project)
            let missing = try await run(
                URL(fileURLWithPath: "/bin/bash"), ["-eo", "pipefail", "-c", commands[0]], environment: environment,
                directory: project)
            #expect(missing.status == 3 && missing.stderr.contains("B2C_CLIENT_SECRET"), "\(missing.stderr)")
        }
    }
}
