import B2CEmulator
import B2CKit
import Foundation
import Testing

/// Typos, help and completion of both programs (issue 37, item 7), through the built binaries.
@Suite struct CommandHelpTests {
    /// Every command of a program as the words that name it (`["jwt", "decode"]`), with its discussion, as
    /// `--experimental-dump-help` gives them.
    static func commands(of program: URL) async throws -> [(words: [String], discussion: String)] {
        let dump = try await run(program, ["--experimental-dump-help"], environment: [:])
        var out: [(words: [String], discussion: String)] = []
        func walk(_ command: JSONValue, _ words: [String]) {
            out.append((words, command["discussion"]?.stringValue ?? ""))
            for sub in command["subcommands"]?.arrayValue ?? [] where sub["commandName"]?.stringValue != "help" {
                walk(sub, words + [sub["commandName"]?.stringValue ?? ""])
            }
        }
        walk(try JSONValue.parse(Data(dump.stdout.utf8))["command"] ?? .null, [])
        return out
    }

    /// A discussion's examples are its indented lines: ArgumentParser would wrap any other line like prose.
    static let exampleOutsideIndentation = #"^Examples?: \S|(^|[^`\w-])(b2c|b2c-emulator|echo) [a-z-]+ [^`]*--[a-z]"#

    /// Each example line of each command's `--help` comes out whole, as written, on a terminal of 80 columns and on a
    /// narrow one: a line broken in the middle of a command would not run when copied.
    @Test(arguments: [80, 40])
    func everyExampleLineComesOutWhole(columns: Int) async throws {
        let client = try await Self.commands(of: b2cBinary), tenant = try await Self.commands(of: emulatorBinary)
        // The tenant's commands also as b2c hands them over (`b2c emulator serve --help`, `b2c demo --help`).
        let handedOver = tenant.filter { ["emulator", "demo"].contains($0.words.first) }
        let runs = client.map { (b2cBinary, $0) } + tenant.map { (emulatorBinary, $0) } + handedOver.map { (b2cBinary, $0) }
        var examples = 0
        for (program, command) in runs where !command.discussion.isEmpty {
            let name = ([program.lastPathComponent] + command.words).joined(separator: " ")
            let help = try await run(program, command.words + ["--help"], environment: ["COLUMNS": String(columns)])
            #expect(help.status == 0 && help.stdout.hasPrefix("OVERVIEW: "), "\(name): \(help.stderr)")
            let shown = Set(help.stdout.split(separator: "\n").map(String.init))
            for line in command.discussion.split(separator: "\n") {
                if line.first?.isWhitespace == true {
                    examples += 1
                    #expect(shown.contains(String(line)), "\(name) at \(columns) columns: '\(line)' is not one line of\n\(help.stdout)")
                } else {
                    #expect(
                        line.range(of: Self.exampleOutsideIndentation, options: .regularExpression) == nil,
                        "\(name): the example in '\(line)' is not an indented line")
                }
            }
        }
        #expect(examples >= 40, "\(examples) example lines")
    }

    /// ArgumentParser wraps each line of a discussion to the terminal and keeps the line breaks written in it, so a
    /// break in the middle of a sentence (a source line that was only too long) shows as a short line cut off in the
    /// middle of the text ("…stands in for" / "options that…"). Prose lines end where a sentence or a clause does; the
    /// source joins the rest with a trailing backslash.
    @Test func noProseLineOfADiscussionBreaksInTheMiddleOfASentence() async throws {
        var prose = 0
        for program in [b2cBinary, emulatorBinary] {
            for command in try await Self.commands(of: program) {
                for line in command.discussion.split(separator: "\n") where line.first?.isWhitespace == false {
                    prose += 1
                    let name = ([program.lastPathComponent] + command.words).joined(separator: " ")
                    #expect(
                        [".", ":", "?", "!"].contains(line.last.map(String.init) ?? ""),
                        "\(name): the line '\(line.suffix(60))' breaks in the middle of a sentence")
                }
            }
        }
        #expect(prose >= 60, "\(prose) prose lines")
    }

    /// A word where a command belongs that names none gets the closest command, at any depth, in either program, with
    /// the name it was run by; exit 64.
    @Test(arguments: [
        (b2cBinary, ["sigin"], "'sigin' is not a b2c command. Did you mean `b2c signin`?"),
        (b2cBinary, ["jwt", "decod"], "Did you mean `b2c jwt decode`?"),
        (b2cBinary, ["emulator", "serv"], "'serv' is not a b2c emulator command. Did you mean `b2c emulator serve`?"),
        (b2cBinary, ["emulator", "brwoser"], "Did you mean `b2c emulator browser`?"),
        (emulatorBinary, ["serv"], "'serv' is not a b2c-emulator command. Did you mean `b2c-emulator serve`?"),
        (emulatorBinary, ["brwoser", "--as", "alice@contoso.com"], "Did you mean `b2c-emulator browser`?"),
        (emulatorBinary, ["defualt-seed"], "Did you mean `b2c-emulator default-seed`?"),
        (emulatorBinary, ["nonsense"], "'nonsense' is not a b2c-emulator command. See `b2c-emulator --help`."),
    ])
    func aMistypedCommandGetsTheClosestOne(program: URL, args: [String], says: String) async throws {
        let r = try await run(program, args, environment: [:])
        #expect(r.status == 64 && r.stderr.hasPrefix(program == b2cBinary && args[0] != "emulator" ? "b2c: " : "b2c-emulator: "))
        #expect(r.stderr.contains(says), "\(r.stderr)")
        #expect(r.stdout.isEmpty)
    }

    /// Usage lines name the command as it was typed: `b2c-emulator serve` run directly, `b2c emulator serve` through b2c
    /// (never `b2c-emulator emulator`); b2c-emulator's own list does not offer b2c's word `emulator`.
    @Test func usageNamesTheCommandAsItWasTyped() async throws {
        let cases: [(URL, [String], String)] = [
            (emulatorBinary, ["--help"], "USAGE: b2c-emulator <subcommand>"),
            (emulatorBinary, ["serve", "--help"], "USAGE: b2c-emulator serve "),
            (b2cBinary, ["emulator", "--help"], "USAGE: b2c emulator <subcommand>"),
            (b2cBinary, ["emulator", "--help"], "See 'b2c help emulator <subcommand>'"),
            (b2cBinary, ["help", "emulator", "serve"], "USAGE: b2c emulator serve "),
            (b2cBinary, ["emulator", "serve", "--help"], "USAGE: b2c emulator serve "),
            (b2cBinary, ["demo", "--help"], "USAGE: b2c demo "),
        ]
        for (program, args, usage) in cases {
            let r = try await run(program, args, environment: [:])
            #expect(r.status == 0 && r.stdout.contains(usage) && !r.stdout.contains("b2c-emulator emulator"), "\(args): \(r.stdout)")
        }
        let own = try await run(emulatorBinary, ["--help"], environment: [:])
        #expect(!own.stdout.contains("  emulator "), "\(own.stdout)")
        let bad = try await run(b2cBinary, ["emulator", "serve", "--port", "70000"], environment: [:])
        #expect(bad.status == 64 && bad.stderr.contains("Usage: b2c emulator serve "), "\(bad.stderr)")
    }

    static let bash = URL(fileURLWithPath: "/bin/bash")

    /// What bash offers after `words` (the last one being completed): `script`, the program's completion script, sourced
    /// and its completion function called as bash's `complete -F` calls it.
    static func bashCandidates(_ script: URL, _ program: URL, _ words: [String]) async throws -> [String] {
        let call = """
            source "$1"; shift
            COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); COMP_LINE="$*"; COMP_POINT=${#COMP_LINE}
            "_$1" "$1" "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD - 1]}"
            printf '%s\\n' "${COMPREPLY[@]}"
            """
        let r = try await run(bash, ["-c", call, "bash", script.path, program.lastPathComponent] + words, environment: [:])
        return r.stdout.split(separator: "\n").map(String.init)
    }

    /// Options with a fixed set of values complete them, and `b2c emulator <TAB>` the tenant's commands: in bash (run),
    /// zsh and fish (their scripts list the values).
    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: bash.path), "bash runs the completion script; it is missing"))
    func completionOffersTheValuesAnOptionTakes() async throws {
        let tenantCommands = try await Self.commands(of: emulatorBinary).filter { $0.words.count == 2 && $0.words[0] == "emulator" }
            .map { $0.words[1] }
        let cases: [(URL, [String], [String])] = [
            (b2cBinary, ["signin", "--prompt", ""], ["login", "select_account", "consent", "none"]),
            (b2cBinary, ["signin", "--prompt", "s"], ["select_account"]),
            (b2cBinary, ["emulator", ""], tenantCommands),
            (b2cBinary, ["emulator", "he"], ["health"]),
            (b2cBinary, ["emulator", "serve", ""], []),
            (b2cBinary, ["token", "--format", ""], ["raw", "bearer", "header", "json"]),
            (b2cBinary, ["accounts", "-o", ""], ["table", "json"]),
            (b2cBinary, ["signup", "--username", "erin@contoso.com", "--mfa-method", ""], ["email", "sms"]),
            (b2cBinary, ["init", "--client-auth", ""], ["client_secret_post", "client_secret_basic"]),
            (b2cBinary, ["config", "set", "storage", ""], ["encrypted", "plaintext"]),
            (emulatorBinary, ["browser", "--action", "c"], ["cancel", "cancel-signup", "cancel-reset-code"]),
            (emulatorBinary, ["browser", "--idp", "g"], ["google", "github"]),
            (emulatorBinary, ["page", "B2C_1_susi", ""], ["unifiedssp", "selfasserted", "multifactor", "globalexception"]),
            (emulatorBinary, ["page", "B2C_1_susi", "selfasserted", "--layout", ""], ["classic", "oceanBlue", "slateGray"]),
            (emulatorBinary, ["serve", "--log-format", ""], ["text", "json"]),
            (emulatorBinary, ["s"], ["serve"]),
        ]
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("b2c-completion-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        for program in [b2cBinary, emulatorBinary] {
            let generated = try await run(program, ["--generate-completion-script", "bash"], environment: [:])
            try Data(generated.stdout.utf8).write(to: dir.appendingPathComponent(program.lastPathComponent))
        }
        for (program, words, expected) in cases {
            let offered = try await Self.bashCandidates(dir.appendingPathComponent(program.lastPathComponent), program, words)
            #expect(offered == expected, "\(program.lastPathComponent) \(words.joined(separator: " "))<TAB>: \(offered)")
        }
        #expect(
            tenantCommands == [
                "serve", "default-seed", "example-policies", "example-migration-function", "browser", "health", "page", "wait", "journeys",
            ])

        // How each shell's script writes a list of values.
        let shells: [(String, ([String]) -> String)] = [
            ("zsh", { "('" + $0.joined(separator: "' '") + "')" }), ("fish", { "'" + $0.joined(separator: " ") + "'" }),
        ]
        for (shell, list) in shells {
            let client = try await run(b2cBinary, ["--generate-completion-script", shell], environment: [:]).stdout
            let tenant = try await run(emulatorBinary, ["--generate-completion-script", shell], environment: [:]).stdout
            for values in [["login", "select_account", "consent", "none"], tenantCommands] {
                #expect(client.contains(list(values)), "\(shell): \(list(values))")
            }
            for values in [ScriptedBrowser.Action.allCases.map(\.rawValue), ["classic", "oceanBlue", "slateGray"]] {
                #expect(tenant.contains(list(values)), "\(shell): \(list(values))")
            }
        }
    }
}
