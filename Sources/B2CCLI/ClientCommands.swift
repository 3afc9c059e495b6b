import ArgumentParser
import B2CKit
import Foundation

/// Options every client command takes.
struct ClientOptions: ParsableArguments {
    @Option(help: ArgumentHelp("The policies.json to use (default: $B2C_CONFIG, ./policies.json, $XDG_CONFIG_HOME/b2c/policies.json).", valueName: "file"))
    var config: String?
    @Flag(name: .shortAndLong, help: "Trace HTTP requests to stderr (URLs without query values; never tokens, codes or passwords).")
    var verbose = false
    @Option(help: ArgumentHelp("Seconds to wait for the identity provider on each request.", valueName: "seconds"))
    var httpTimeout = 30

    func validate() throws {
        guard (1...600).contains(httpTimeout) else { throw ValidationError("--http-timeout must be between 1 and 600 seconds.") }
    }

    var settings: ClientSettings { ClientSettings(config: config, verbose: verbose, httpTimeout: httpTimeout) }
    func loadConfiguration() throws -> ClientConfiguration { try settings.loadConfiguration() }
    func makeClient() throws -> B2CClient { try settings.makeClient() }
}

/// The client options as plain values (what `ClientOptions` parses, and what the `token` fast path parses).
struct ClientSettings: Equatable {
    var config: String?
    var verbose = false
    var httpTimeout = 30

    func loadConfiguration() throws -> ClientConfiguration {
        guard let config = try loadConfigurationIfPresent() else {
            let located = ClientConfiguration.locate(explicit: config)
            throw CLIError("no configuration found (looked for \(located.searched.joined(separator: ", "))). Pass --config FILE, set B2C_CONFIG, or start from policies.example.json.",
                           exitCode: ExitStatus.configuration)
        }
        return config
    }

    /// The configuration, or nil when none is named and none is found (commands about the whole store then act on it all).
    func loadConfigurationIfPresent() throws -> ClientConfiguration? {
        guard let path = ClientConfiguration.locate(explicit: config).path else { return nil }
        do { return try ClientConfiguration.load(path: path) } catch let e as ConfigurationError {
            throw CLIError(e.description, exitCode: ExitStatus.configuration)
        }
    }

    func openStore() throws -> TokenStore {
        do { return try TokenStore(directory: StoreLocation.directory()) } catch let e as StoreError {
            throw CLIError(e.description, exitCode: ExitStatus.error)
        }
    }

    func makeClient() throws -> B2CClient {
        try makeClient(config: try loadConfiguration())
    }

    func makeClient(config: ClientConfiguration) throws -> B2CClient {
        let store = try openStore()
        var trace: (@Sendable (String) -> Void)?
        if verbose {
            trace = { line in FileHandle.standardError.write(Data("b2c: http \(line)\n".utf8)) }
        }
        // B2C_CLOCK_OFFSET shifts our clock (seconds), to follow an emulator whose clock a test has advanced.
        let offset = Int(ProcessInfo.processInfo.environment["B2C_CLOCK_OFFSET"] ?? "") ?? 0
        do {
            return try B2CClient(config: config, store: store, timeoutSeconds: httpTimeout, trace: trace,
                                 clock: { Int(Date().timeIntervalSince1970) + offset })
        } catch let e as B2CError {
            throw CLIError(e)
        }
    }
}

func exitStatus(_ kind: B2CError.Kind) -> Int32 {
    switch kind {
    case .failed: ExitStatus.error
    case .cancelled: ExitStatus.cancelled
    case .configuration: ExitStatus.configuration
    case .interactionRequired: ExitStatus.interactionRequired
    case .network: ExitStatus.network
    case .usage: ExitStatus.usage
    }
}

/// Runs a client operation, shutting the client down and mapping errors to messages and exit codes.
func withClient<T>(_ client: B2CClient, _ body: (B2CClient) async throws -> T) async throws -> T {
    do {
        let result = try await body(client)
        await client.shutdown()
        return result
    } catch let e as B2CError {
        await client.shutdown()
        throw CLIError(e)
    } catch let e as StoreError {
        await client.shutdown()
        throw CLIError(e.description, exitCode: ExitStatus.error)
    } catch {
        await client.shutdown()
        throw error
    }
}

/// `-o/--output table|json` on every command that lists or reports.
struct OutputOptions: ParsableArguments {
    @Option(name: [.customShort("o"), .long], help: "table or json (default: table on a terminal, json otherwise).") var output: OutputFormat?
    var format: OutputFormat { output ?? .auto }
}

enum OutputFormat: String, ExpressibleByArgument, CaseIterable {
    case table, json
    static var auto: OutputFormat { isatty(STDOUT_FILENO) == 1 ? .table : .json }
}

func writeOut(_ text: String) { FileHandle.standardOutput.write(Data((text.hasSuffix("\n") ? text : text + "\n").utf8)) }
func writeErr(_ text: String) { FileHandle.standardError.write(Data("b2c: \(text)\n".utf8)) }

func table(_ rows: [[String]]) -> String {
    guard let first = rows.first else { return "" }
    var widths = Array(repeating: 0, count: first.count)
    for r in rows { for (i, c) in r.enumerated() { widths[i] = max(widths[i], c.count) } }
    return rows.map { r in
        let line = r.enumerated().map { i, c in i == r.count - 1 ? c : c.padding(toLength: widths[i], withPad: " ", startingAt: 0) }
            .joined(separator: "  ")
        return String(line.reversed().drop { $0 == " " }.reversed())
    }.joined(separator: "\n")
}

// MARK: b2c policies

struct PoliciesCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "policies", abstract: "Show each configured policy, its role and its authority; --check asks the tenant about each.",
        discussion: """
            --check fetches every policy's discovery document and key set and reports each policy as OK or what is wrong.
            Exit codes: 0 when everything is fine, 3 when the configuration is wrong (an unknown policy, a host missing from
            knownAuthorities, a caFile that cannot be read), 5 when the tenant cannot be reached.
            """)
    @OptionGroup var options: ClientOptions
    @Flag(help: "Fetch each policy's discovery document and keys and report what is wrong.") var check = false
    @OptionGroup var output: OutputOptions

    func run() async throws {
        let config = try options.loadConfiguration()
        let caProblem = config.caFile.flatMap { Self.caFileProblem($0) }
        guard check else {
            Output.writePolicies(config, format: output.format, caProblem: caProblem)
            if let caProblem { throw CLIError(caProblem, exitCode: ExitStatus.configuration) }
            return
        }
        if let caProblem { throw CLIError(caProblem, exitCode: ExitStatus.configuration) }
        let client = try options.settings.makeClient(config: config)
        let checks = await client.checkPolicies()
        await client.shutdown()
        Output.writeChecks(checks, config: config, format: output.format)
        if checks.contains(where: { if case .configuration = $0.outcome { true } else { false } }) {
            throw CLIError("some policies are misconfigured (see above)", exitCode: ExitStatus.configuration)
        }
        if checks.contains(where: { if case .network = $0.outcome { true } else { false } }) {
            throw CLIError("some policies could not be checked (see above)", exitCode: ExitStatus.network)
        }
    }

    static func caFileProblem(_ path: String) -> String? {
        guard FileManager.default.isReadableFile(atPath: path) else {
            return "caFile '\(path)' does not exist or cannot be read; fix the path in the configuration (relative paths are relative to the configuration file)"
        }
        return nil
    }
}
