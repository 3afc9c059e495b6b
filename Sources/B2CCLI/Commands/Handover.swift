import ArgumentParser
import B2CFastPath
import Foundation

/// `b2c emulator …` and `b2c demo`: the local tenant ships as its own program, b2c-emulator (next to b2c, else on PATH),
/// so that the client's start does not pay for the tenant's code. b2c replaces itself with it (exec): signals, exit codes
/// and output are the tenant's own.
package enum TenantProgram {
    static let program = "b2c-emulator"
    /// The argv[0] b2c runs b2c-emulator with: its own name, so that the tenant's usage lines and suggestions name the
    /// command people typed (`b2c emulator serve`), not `b2c-emulator emulator serve`.
    package static let handOverName = "b2c"
    /// `b2c emulator`'s subcommands, which b2c offers as completions without loading the tenant (a test holds them equal
    /// to b2c-emulator's).
    static let emulatorSubcommands = [
        "serve", "default-seed", "example-policies", "example-migration-function", "browser", "health", "page", "wait", "journeys",
    ]

    /// Whether the tenant's program answers these arguments: `b2c emulator …`, `b2c demo …`, and help about them.
    static func isItsCommand(_ arguments: [String]) -> Bool {
        let commands = ["emulator", "demo"]
        guard let first = arguments.first else { return false }
        return commands.contains(first) || (first == "help" && arguments.count > 1 && commands.contains(arguments[1]))
    }

    /// Where b2c-emulator is: beside this executable, else in an absolute directory of PATH.
    static func locate() -> String? {
        var candidates: [String] = []
        if let me = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") {
            candidates.append(URL(fileURLWithPath: me).deletingLastPathComponent().appendingPathComponent(program).path)
        } else if let me = Bundle.main.executablePath {
            candidates.append(
                URL(fileURLWithPath: me).resolvingSymlinksInPath().deletingLastPathComponent().appendingPathComponent(program).path)
        }
        // Absolute directories only: a relative PATH entry would run a program found below the working directory.
        for dir in (ProcessEnvironment.current()["PATH"] ?? "").split(separator: ":") where dir.hasPrefix("/") {
            candidates.append("\(dir)/\(program)")
        }
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    static func handOver(_ arguments: [String]) throws -> Never {
        guard let path = locate() else {
            throw CLIError(
                "`b2c \(arguments.first ?? "emulator")` runs the local tenant, which ships as its own program, \(program): it is neither "
                    + "next to this b2c nor on PATH. It is built with b2c (`swift build` makes both); install it beside b2c.",
                exitCode: ExitStatus.error)
        }
        fflush(nil)  // every stream: nothing buffered is lost to the exec
        let argv = ([handOverName] + arguments).map { strdup($0) } + [nil]
        execv(path, argv)
        throw CLIError("cannot start \(path): \(String(cString: strerror(errno)))", exitCode: ExitStatus.error)
    }
}

/// `b2c emulator` and `b2c demo` in the command list and its help (their arguments never reach them: `B2CCommand.run`
/// hands over first).
struct EmulatorHandover: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "emulator",
        abstract: "Run the local B2C tenant: `serve`, `default-seed` (the b2c-emulator program; see `b2c emulator --help`).")
    @Argument(
        help: "The tenant's command: serve, default-seed, browser, health or page.", completion: .list(TenantProgram.emulatorSubcommands))
    var subcommand: String?
    @Argument(parsing: .captureForPassthrough) var arguments: [String] = []
    func run() throws { try TenantProgram.handOver(["emulator"] + (subcommand.map { [$0] } ?? []) + arguments) }
}

struct DemoHandover: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "demo",
        abstract: "Run the whole job against an in-process local tenant (the b2c-emulator program; see `b2c demo --help`).")
    @Argument(parsing: .captureForPassthrough) var arguments: [String] = []
    func run() throws { try TenantProgram.handOver(["demo"] + arguments) }
}
