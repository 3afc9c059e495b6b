import ArgumentParser
import Foundation

struct PoliciesCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "policies", abstract: "Show each configured policy, its role and its authority; --check asks the tenant about each.",
        discussion: """
            --check fetches every policy's discovery document and key set and reports each policy as OK or what is wrong.
            Exit codes: 0 when everything is fine, 3 when the configuration is wrong (an unknown policy, a host missing from \
            knownAuthorities, a caFile that cannot be read), 5 when the tenant cannot be reached.
            """)
    @OptionGroup var options: ClientOptions
    @Flag(help: "Fetch each policy's discovery document and keys and report what is wrong.") var check = false
    @OptionGroup var output: OutputOptions

    func run() async throws {
        let config = try options.loadConfiguration()
        // Which file and why (an implicit one has said so already: "using ./policies.json").
        let implicit = try options.settings.locate().implicit
        if !implicit { writeErr("configuration \(config.source) (\(options.settings.origin(implicit: false)))") }
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
            return
                "caFile '\(path)' does not exist or cannot be read; fix the path in the configuration (relative paths are relative to the "
                + "configuration file)"
        }
        return nil
    }
}
