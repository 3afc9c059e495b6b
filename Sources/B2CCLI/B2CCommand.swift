import ArgumentParser
import B2CKit
import Foundation

/// Documented exit codes (README "Exit codes").
public enum ExitStatus {
    public static let ok: Int32 = 0
    public static let error: Int32 = 1
    public static let cancelled: Int32 = 2
    public static let configuration: Int32 = 3
    public static let interactionRequired: Int32 = 4
    public static let network: Int32 = 5
    public static let usage: Int32 = 64
}

/// A failure with its message and exit code; printed once as `b2c: message`.
public struct CLIError: Error, CustomStringConvertible {
    public let message: String
    public let exitCode: Int32
    public init(_ message: String, exitCode: Int32) { self.message = message; self.exitCode = exitCode }
    public var description: String { message }
}

public struct B2CCommand: AsyncParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "b2c",
        abstract: "Sign in to Azure AD B2C user flows, keep accounts per policy, get tokens, and run a local B2C tenant.",
        subcommands: [SignInCommand.self, EditProfileCommand.self, ResetPasswordCommand.self, AccountsCommand.self, TokenCommand.self,
                       CallAPICommand.self, SwitchCommand.self, WhoAmICommand.self, SignOutCommand.self, DeviceCommand.self, DemoCommand.self,
                       PoliciesCommand.self, EmulatorCommand.self])

    public init() {}

    /// Runs the CLI, turning `CLIError` into its message and exit code.
    public static func run(arguments: [String]? = nil) async -> Never {
        do {
            if let request = TokenRequest.fastParse(arguments ?? Array(CommandLine.arguments.dropFirst())) {
                try await request.run()
                Foundation.exit(ExitStatus.ok)
            }
            var command = try parseAsRoot(arguments)
            if var async = command as? AsyncParsableCommand {
                try await async.run()
            } else {
                try command.run()
            }
            Foundation.exit(ExitStatus.ok)
        } catch let e as CLIError {
            FileHandle.standardError.write(Data("b2c: \(e.message)\n".utf8))
            Foundation.exit(e.exitCode)
        } catch {
            exit(withError: error)
        }
    }
}
