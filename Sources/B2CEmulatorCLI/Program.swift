import ArgumentParser
import B2CCLI
import Foundation

/// b2c-emulator: the local tenant's commands. `b2c emulator …` and `b2c demo` hand over to it; it also answers
/// `b2c-emulator serve …` directly.
public struct B2CEmulatorProgram: AsyncParsableCommand {
    /// The name its usage lines and suggestions start with: `b2c` when b2c handed over (`b2c emulator serve`, `b2c demo`:
    /// b2c runs this program with its own name as argv[0]), else b2c-emulator. Messages always start `b2c-emulator:`.
    static let invokedName = CommandLine.arguments.first == TenantProgram.handOverName ? "b2c" : "b2c-emulator"
    public static let configuration = CommandConfiguration(
        commandName: invokedName,
        abstract: "The local B2C tenant of b2c: serve it, print its seed, sign people in with its scripted browser, or run the demo.",
        version: "b2c-emulator \(B2CCommand.version)",
        subcommands: [
            EmulatorCommand.self, DemoCommand.self, EmulatorCommand.Serve.self, EmulatorCommand.DefaultSeed.self,
            EmulatorCommand.ExamplePoliciesCommand.self, EmulatorCommand.ExampleMigrationFunctionCommand.self, BrowserCommand.self,
            HealthCommand.self, EmulatorCommand.PageCommand.self, WaitCommand.self, JourneysCommand.self,
        ])

    public init() {}

    /// Checks (or raises) the descriptor limit: the first thing `main` does, before any thread starts.
    public static func ensureDescriptors() { DescriptorLimit.ensure(program: "b2c-emulator") }

    public static func runProgram() async -> Never {
        await B2CCommand.runCatching(B2CEmulatorProgram.self, program: "b2c-emulator") {
            let args = Array(CommandLine.arguments.dropFirst())
            if let unknown = CommandHelp.unknownSubcommand(args, root: B2CEmulatorProgram.self) { throw unknown }
            var command = try parseAsRoot(args)
            if var async = command as? AsyncParsableCommand {
                try await async.run()
            } else {
                try command.run()
            }
        }
    }
}
