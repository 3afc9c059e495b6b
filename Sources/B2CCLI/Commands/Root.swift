import ArgumentParser
import B2CKit
import Foundation

public struct B2CCommand: AsyncParsableCommand {
    /// The one place the version is written: `b2c --version` and `b2c-emulator --version` print it, and
    /// scripts/release.sh names the archive and the Debian package after what the built b2c prints.
    public static let version = "0.3.0"
    public static let configuration = CommandConfiguration(
        commandName: "b2c",
        abstract: "Sign in to Azure AD B2C user flows, keep accounts per policy, get tokens, and run a local B2C tenant.",
        version: "b2c \(version)",
        subcommands: [
            SignInCommand.self, SignUpCommand.self, EditProfileCommand.self, ResetPasswordCommand.self, AccountsCommand.self,
            TokenCommand.self,
            CallAPICommand.self, SwitchCommand.self, WhoAmICommand.self, SignOutCommand.self, DeviceCommand.self,
            DemoHandover.self, PoliciesCommand.self, InitCommand.self, ProfilesCommand.self, JWTCommand.self, ConfigCommand.self,
            ExportCommand.self, ImportCommand.self, EmulatorHandover.self,
        ])

    public init() {}

    /// Runs the CLI, turning `CLIError` into its message and exit code.
    public static func run(arguments: [String]? = nil) async -> Never {
        let args = arguments ?? Array(CommandLine.arguments.dropFirst())
        await runCatching(B2CCommand.self) {
            if let request = TokenArguments.fastParse(args) {
                try await request.run()
                return
            }
            // The local tenant is its own program: hand over before any parsing, so its options and help are its own.
            if let first = args.first, first == "emulator" || first == "demo" { try TenantProgram.handOver(args) }
            if let unknown = unknownSubcommand(args) { throw unknown }
            var command = try parseAsRoot(args)
            if var async = command as? AsyncParsableCommand {
                try await async.run()
            } else {
                try command.run()
            }
        }
    }

    /// Runs `body` and exits: 0, or the error's message and exit code (`CLIError`, `B2CError`, else
    /// ArgumentParser's own).
    /// Messages start with the root command's name (`b2c:`, `b2c-emulator:`).
    package static func runCatching<Root: ParsableCommand>(_ root: Root.Type, _ body: () async throws -> Void) async -> Never {
        ProgramName.set(root.configuration.commandName ?? "b2c")
        do {
            try await body()
            Foundation.exit(ExitStatus.ok)
        } catch let e as CLIError {
            writeErr(e.message)
            Foundation.exit(e.exitCode)
        } catch let e as B2CError {
            let cli = CLIError(e)
            writeErr(cli.message)
            Foundation.exit(cli.exitCode)
        } catch {
            // ArgumentParser's errors quote what they were given: said as `Terminal` says text. Help, `--version` and
            // completion scripts (a clean exit) are ArgumentParser's to print.
            let code = root.exitCode(for: error)
            guard code != .success else { root.exit(withError: error) }
            let message = root.fullMessage(for: error)
            if !message.isEmpty { Terminal.err(message + "\n") }
            Foundation.exit(code.rawValue)
        }
    }

    /// "did you mean `signin`?" for a first word that names no command.
    static func unknownSubcommand(_ args: [String]) -> CLIError? {
        guard let first = args.first, !first.hasPrefix("-"), first != "help" else { return nil }
        let names = configuration.subcommands.flatMap { [$0.configuration.commandName ?? ""] + $0.configuration.aliases }
        guard !names.contains(first) else { return nil }
        let close = names.map { ($0, editDistance($0, first.lowercased())) }.filter { $0.1 <= 2 || $0.0.hasPrefix(first.lowercased()) }
            .sorted { $0.1 < $1.1 }.map(\.0)
        let hint = close.first.map { " Did you mean `b2c \($0)`?" } ?? ""
        return CLIError("'\(first)' is not a b2c command.\(hint) See `b2c --help`.", exitCode: ExitStatus.usage)
    }

    /// Levenshtein distance, for command suggestions.
    static func editDistance(_ a: String, _ b: String) -> Int {
        let a = Array(a), b = Array(b)
        guard !a.isEmpty, !b.isEmpty else { return max(a.count, b.count) }
        var row = Array(0...b.count)
        for i in 1...a.count {
            var previous = row[0]
            row[0] = i
            for j in 1...b.count {
                let saved = row[j]
                row[j] = min(row[j] + 1, row[j - 1] + 1, previous + (a[i - 1] == b[j - 1] ? 0 : 1))
                previous = saved
            }
        }
        return row[b.count]
    }
}
