import ArgumentParser
import B2CCLI
import B2CKit
import Foundation

/// `b2c-emulator health`: whether a running tenant serves, as an exit code — the container image's health check,
/// since the image has no shell and no curl (`HEALTHCHECK`, compose's `healthcheck`, GitHub Actions' `--health-cmd`).
struct HealthCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "health",
        abstract: "Ask a running tenant whether it serves: exit 0 when its /health answers 200, 5 when not.",
        discussion: """
            Without --url it asks http://127.0.0.1:$B2C_EMULATOR_PORT (8080 without the variable): the tenant in the same \
            container. Prints the tenant's answer on success; the reason on stderr otherwise.
            """)

    @Option(help: ArgumentHelp("The tenant's base URL (default: http://127.0.0.1:$B2C_EMULATOR_PORT, else :8080).", valueName: "url"))
    var url: String?
    @Option(help: ArgumentHelp("The CA of a tenant served with --tls (its state directory's CA file).", valueName: "file")) var ca: String?
    @Option(help: "Seconds to wait for the answer.") var timeout = 2

    func validate() throws {
        if timeout < 1 { throw ValidationError("--timeout must be at least 1 second, got \(timeout).") }
    }

    func run() async throws {
        let port = ProcessInfo.processInfo.environment["B2C_EMULATOR_PORT"].flatMap { Int($0) } ?? 8080
        let base = url ?? "http://127.0.0.1:\(port)"
        guard let root = URL(string: base), let scheme = root.scheme?.lowercased(), ["http", "https"].contains(scheme), root.host != nil
        else {
            throw CLIError("--url takes the tenant's base URL such as http://127.0.0.1:8080, not '\(base)'", exitCode: ExitStatus.usage)
        }
        let transport: HTTPTransport
        do { transport = try HTTPTransport(caFile: ca, timeoutSeconds: timeout) } catch {
            throw CLIError("\(error)", exitCode: ExitStatus.configuration)
        }
        let answer: HTTPResult
        do { answer = try await transport.get(root.appendingPathComponent("health")) } catch {
            await transport.shutdown()
            throw CLIError("no tenant answers at \(base): \(error)", exitCode: ExitStatus.network)
        }
        await transport.shutdown()
        guard answer.status == 200 else {
            throw CLIError("the tenant at \(base) answered HTTP \(answer.status) to /health, not 200", exitCode: ExitStatus.network)
        }
        // What answered may not be a tenant: its words are shown without terminal control characters.
        Terminal.out(String(decoding: answer.body, as: UTF8.self) + "\n")
    }
}
