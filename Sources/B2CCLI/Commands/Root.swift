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
            ExportCommand.self, ImportCommand.self, MigrateCommand.self, UsersCommand.self, PolicyCommand.self,
            EmulatorHandover.self,
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
            if TenantProgram.isItsCommand(args) { try TenantProgram.handOver(args) }
            if let unknown = CommandHelp.unknownSubcommand(args, root: B2CCommand.self) { throw unknown }
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
    /// Messages start with the program's name (`b2c:`, `b2c-emulator:`; default: the root command's name).
    package static func runCatching<Root: ParsableCommand>(
        _ root: Root.Type, program: String? = nil, _ body: () async throws -> Void
    ) async -> Never {
        ProgramName.set(program ?? root.configuration.commandName ?? "b2c")
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
            // completion scripts (a clean exit) are ArgumentParser's to print, help with its examples whole.
            let code = root.exitCode(for: error)
            guard code != .success else {
                let columns = CommandHelp.columns
                let text = root.fullMessage(for: error, columns: columns)
                if let help = CommandHelp.keepingExamplesWhole(text, root: root, columns: columns) {
                    print(help)
                    Foundation.exit(ExitStatus.ok)
                }
                root.exit(withError: error)
            }
            let message = root.fullMessage(for: error)
            if !message.isEmpty { Terminal.err(message + "\n") }
            Foundation.exit(code.rawValue)
        }
    }
}
