import B2CKit
import Foundation
import Testing

/// `b2c emulator …` and `b2c demo` hand over to the tenant's own program: found next to b2c (the other tests run it that
/// way), else on PATH, else a message that names it and exit 1.
@Suite struct HandoverTests {
    @Test func b2cFindsTheTenantOnPathOrSaysItIsMissing() async throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("b2c-handover-\(UUID().uuidString)")
        let alone = dir.appendingPathComponent("alone"), onPath = dir.appendingPathComponent("path")
        try FileManager.default.createDirectory(at: alone, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: onPath, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        // A copy of b2c with no b2c-emulator beside it (a symbolic link would resolve back to the build directory).
        let b2c = alone.appendingPathComponent("b2c")
        try FileManager.default.copyItem(at: b2cBinary, to: b2c)
        var env = ProcessInfo.processInfo.environment
        for k in env.keys where k.hasPrefix("B2C_") { env[k] = nil }
        // Without the full client beside it or on PATH, b2c says so for every command but a fast answer.
        env["PATH"] = "/usr/bin:/bin"
        let noClient = try await run(b2c, ["--version"], environment: env)
        #expect(noClient.status == 1 && noClient.stderr.contains("b2c-client is neither next to this b2c"), "\(noClient.stderr)")
        try FileManager.default.copyItem(
            at: b2cBinary.deletingLastPathComponent().appendingPathComponent("b2c-client"), to: alone.appendingPathComponent("b2c-client"))

        env["PATH"] = "/usr/bin:/bin"
        for args in [["emulator", "default-seed"], ["demo"]] {
            let missing = try await run(b2c, args, environment: env)
            #expect(missing.status == 1, "\(args): \(missing.stderr)")
            #expect(
                missing.stderr.contains("b2c-emulator") && missing.stderr.contains("neither next to this b2c nor on PATH"),
                "\(missing.stderr)")
            #expect(missing.stdout.isEmpty)
        }

        try FileManager.default.createSymbolicLink(at: onPath.appendingPathComponent("b2c-emulator"), withDestinationURL: emulatorBinary)
        env["PATH"] = onPath.path + ":/usr/bin:/bin"
        let found = try await run(b2c, ["emulator", "default-seed"], environment: env)
        #expect(found.status == 0, "\(found.stderr)")
        #expect(found.stdout.contains("\"contoso.onmicrosoft.com\""), "the tenant's seed, printed by b2c-emulator")
        // Its exit codes are the tenant's own: a bad argument is 64 from b2c-emulator.
        let bad = try await run(b2c, ["emulator", "serve", "--port", "70000"], environment: env)
        #expect(bad.status == 64, "\(bad.stderr)")
    }

    /// Each program's errors start with its own name (issue 22, item 13): the tenant's are `b2c-emulator:`, run directly or
    /// handed over from `b2c emulator …`; b2c's stay `b2c:`.
    @Test func errorsArePrefixedWithTheProgramThatSaysThem() async throws {
        var env = ProcessInfo.processInfo.environment
        for k in env.keys where k.hasPrefix("B2C_") { env[k] = nil }
        let seed = "/nonexistent/seed.json"
        for (program, args) in [(emulatorBinary, ["serve", "--seed", seed]), (b2cBinary, ["emulator", "serve", "--seed", seed])] {
            let r = try await run(program, args, environment: env)
            #expect(
                r.status == 3 && r.stderr.hasPrefix("b2c-emulator: the seed file '\(seed)' does not exist") && !r.stderr.contains("b2c: "),
                "\(args): \(r.stderr)")
        }
        env["B2C_CONFIG"] = "/nonexistent/policies.json"
        let client = try await run(b2cBinary, ["token"], environment: env)
        #expect(client.status == 3 && client.stderr.hasPrefix("b2c: the configuration"), "\(client.stderr)")
    }
}

/// The library names what fixes a failure as a value (`Remedy`); the CLI says it as its own flags and commands. One
/// command per kind of value the library has no words for.
@Suite struct RemedyWordingTests {
    @Test func theCLISaysTheLibrarysRemediesAsFlagsAndCommands() async throws {
        let home = FileManager.default.temporaryDirectory.appendingPathComponent("b2c-remedy-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: home) }
        var env = ProcessInfo.processInfo.environment
        for k in env.keys where k.hasPrefix("B2C_") || k == "XDG_CONFIG_HOME" { env[k] = nil }
        env["B2C_HOME"] = home.appendingPathComponent("store").path
        env["XDG_CONFIG_HOME"] = home.appendingPathComponent("config").path
        env["B2C_STORE_KEY"] = Data((0..<32).map { _ in UInt8.random(in: 0...255) }).base64EncodedString()
        let example = packageRoot.appendingPathComponent("policies.example.json").path

        let policy = try await run(
            b2cBinary,
            [
                "init", "--tenant", "contoso.onmicrosoft.com", "--client-id", "3f6b8c9d-2e1a-4b7c-8d9e-0f1a2b3c4d5e",
                "--policy", "susi", "--out", home.appendingPathComponent("p.json").path,
            ], environment: env)
        #expect(
            policy.status == 64 && policy.stderr.contains("the policy 'susi' is not NAME=ROLE")
                && policy.stderr.contains("(--policy NAME=ROLE)"),
            "\(policy.stderr)")
        let profile = try await run(b2cBinary, ["token", "--profile", "staging"], environment: env)
        #expect(profile.status == 3 && profile.stderr.contains("create it with `b2c init --profile staging`"), "\(profile.stderr)")
        let scope = try await run(b2cBinary, ["token", "--app", "--config", example, "--scope", "https://x/api/read"], environment: env)
        #expect(scope.status == 64 && scope.stderr.contains("give --api NAME or --scope <App ID URI>/.default"), "\(scope.stderr)")
        // The example configuration's host does not resolve: a missing secret is said before any network request.
        let secret = try await run(b2cBinary, ["token", "--app", "--config", example], environment: env)
        #expect(
            secret.status == 3 && secret.stderr.contains("pipe it to --client-secret-stdin") && secret.stderr.contains("clientSecretFile")
                && !secret.stderr.contains("does not resolve"), "\(secret.stderr)")
        for r in [policy, profile, scope, secret] { #expect(r.stdout.isEmpty) }
    }
}

/// The man pages keep each command's examples as written (issue 22, item 13): swift-argument-parser's manual generator
/// puts the `discussion` under DESCRIPTION as text lines, which man fills into one paragraph; scripts/man-examples.sh
/// (run by scripts/release.sh on the generated pages) makes every run of indented lines a literal display.
@Suite struct ManPageTests {
    static let groff = URL(fileURLWithPath: "/usr/bin/groff")

    /// Every command's discussion as `b2c --experimental-dump-help` gives it to the generator.
    static func discussions() async throws -> [(String, String)] {
        let dump = try await run(b2cBinary, ["--experimental-dump-help"], environment: [:])
        var out: [(String, String)] = []
        func walk(_ c: JSONValue, _ path: String) {
            if let d = c["discussion"]?.stringValue { out.append((path, d)) }
            for s in c["subcommands"]?.arrayValue ?? [] { walk(s, path + " " + (s["commandName"]?.stringValue ?? "")) }
        }
        walk(try JSONValue.parse(Data(dump.stdout.utf8))["command"] ?? .null, "b2c")
        return out
    }

    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: groff.path), "groff renders the pages; it is not installed"))
    func theExamplesOfEveryCommandStayOneToALine() async throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("b2c-man-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let withExamples = try await Self.discussions().filter { $0.1.contains("\n ") }
        #expect(withExamples.count >= 5, "\(withExamples.map(\.0))")
        for (command, discussion) in withExamples {
            // The DESCRIPTION as the generator writes it: the discussion's lines as text, then the options' list.
            let page = dir.appendingPathComponent(command.replacingOccurrences(of: " ", with: ".") + ".1")
            let text = discussion.replacingOccurrences(of: "\\", with: "\\e")
            let mdoc =
                ".Dd November 1, 2026\n.Dt X 1\n.Os\n.Sh NAME\n.Nm x\n.Nd x\n.Sh DESCRIPTION\n\(text)\n.Bl -tag -width 6n\n"
                + ".It Fl h\nHelp.\n.El\n"
            try Data(mdoc.utf8).write(to: page)
            let script = try await run(
                URL(fileURLWithPath: "/bin/bash"), [packageRoot.path + "/scripts/man-examples.sh", page.path], environment: [:])
            #expect(script.status == 0, "\(script.stderr)")
            let rendered = try await run(Self.groff, ["-k", "-mandoc", "-Tutf8", "-rLL=250n", page.path], environment: [:]).stdout
            // groff's UTF-8 output may use backspaces for bold; plain text lines compare trimmed.
            let lines = Set(rendered.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) })
            for line in discussion.split(separator: "\n") where line.hasPrefix(" ") {
                #expect(lines.contains(line.trimmingCharacters(in: .whitespaces)), "\(command): '\(line)' is not a line of\n\(rendered)")
            }
        }
    }
}
