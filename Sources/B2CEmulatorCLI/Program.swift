import ArgumentParser
import B2CCLI
import Foundation

/// b2c-emulator: the local tenant's commands. `b2c emulator …` and `b2c demo` hand over to it; it also answers
/// `b2c-emulator serve …` directly.
public struct B2CEmulatorProgram: AsyncParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "b2c-emulator",
        abstract: "The local B2C tenant of b2c: serve it, print its seed, sign people in with its scripted browser, or run the demo.",
        version: "b2c-emulator \(B2CCommand.version)",
        subcommands: [
            EmulatorCommand.self, DemoCommand.self, EmulatorCommand.Serve.self, EmulatorCommand.DefaultSeed.self, BrowserCommand.self,
            HealthCommand.self, EmulatorCommand.PageCommand.self,
        ])

    public init() {}

    /// Checks (or raises) the descriptor limit: the first thing `main` does, before any thread starts.
    public static func ensureDescriptors() { DescriptorLimit.ensure(program: "b2c-emulator") }

    public static func runProgram() async -> Never {
        await B2CCommand.runCatching(B2CEmulatorProgram.self) {
            var command = try parseAsRoot(Array(CommandLine.arguments.dropFirst()))
            if var async = command as? AsyncParsableCommand {
                try await async.run()
            } else {
                try command.run()
            }
        }
    }
}
