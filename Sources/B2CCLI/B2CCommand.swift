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

    /// A library failure in the CLI's words: its message and its remedy as a command line, with its exit code.
    init(_ e: B2CError) {
        self.init(Self.render(e), exitCode: exitStatus(e.kind))
    }

    static func render(_ e: B2CError) -> String {
        guard let remedy = e.remedy else { return e.message }
        switch remedy {
        case let .signIn(policy, method, hint): return e.message + "\nRun: " + signInCommandLine(policy: policy, method: method, loginHint: hint)
        case .retryPasswordOrBrowser(let policy):
            return e.message + "\nCheck them and run the command again, or sign in in the browser: b2c signin --policy \(policy)"
        case .signUp(let policy): return e.message + "\nCheck the address, or sign up in the browser: b2c signin --policy \(policy)"
        case .chooseAccount(_, true): return e.message + "\nGive a longer --account (email, oid or account id)."
        case .chooseAccount(let policy, false):
            return e.message + "\nChoose one with --account, or make one current with `b2c switch --policy \(policy) <account>`."
        case .choosePerson(true): return e.message + "\nGive an email or oid with --account."
        case .choosePerson(false): return e.message + "\nChoose one with --account <email>."
        case .nameAccount: return e.message + ": --account <email|oid|account id>, --policy <policy>, or --all"
        case .listAccounts: return e.message + " (see `b2c accounts`)"
        case .namePolicy: return e.message + "; name one with --policy"
        case .allowMoreTime: return e.message + ". Run the command again, or raise --timeout."
        case .nameAPIAndAllowHost(let host):
            return e.message + ". Name the API whose token to use with --api and allow the host with --allow-host \(host)."
        case .allowHost(let host): return e.message + ". If you trust that host, add --allow-host \(host)."
        case .nameAPI: return e.message + ", or give a full URL and --api"
        }
    }

    /// The command that signs a person in to a policy by its method.
    static func signInCommandLine(policy: String, method: Remedy.SignInMethod, loginHint: String?) -> String {
        switch method {
        case .native: "b2c signin --native --username \(loginHint ?? "<email>")"
        case .password: "b2c signin --policy \(policy) --username \(loginHint ?? "<user>") --password-stdin"
        case .browser: "b2c signin --policy \(policy)" + (loginHint.map { " --login-hint \($0)" } ?? "")
        case .editProfile: "b2c edit-profile --policy \(policy)" + (loginHint.map { " --account \($0)" } ?? "")
        case .resetPassword: "b2c reset-password --policy \(policy)" + (loginHint.map { " --account \($0)" } ?? "")
        }
    }
}

public struct B2CCommand: AsyncParsableCommand {
    public static let version = "0.2.0"
    public static let configuration = CommandConfiguration(
        commandName: "b2c",
        abstract: "Sign in to Azure AD B2C user flows, keep accounts per policy, get tokens, and run a local B2C tenant.",
        version: "b2c \(version)",
        subcommands: [SignInCommand.self, EditProfileCommand.self, ResetPasswordCommand.self, AccountsCommand.self, TokenCommand.self,
                       CallAPICommand.self, SwitchCommand.self, WhoAmICommand.self, SignOutCommand.self, DeviceCommand.self, DemoCommand.self,
                       PoliciesCommand.self, EmulatorCommand.self])

    public init() {}

    /// Runs the CLI, turning `CLIError` into its message and exit code.
    public static func run(arguments: [String]? = nil) async -> Never {
        do {
            let args = arguments ?? Array(CommandLine.arguments.dropFirst())
            if let request = TokenRequest.fastParse(args) {
                try await request.run()
                Foundation.exit(ExitStatus.ok)
            }
            if let unknown = unknownSubcommand(args) { throw unknown }
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
