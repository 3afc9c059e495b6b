import ArgumentParser
import B2CKit
import Foundation

/// The one format b2c exchanges tokens in.
enum CacheFormat: String, ExpressibleByArgument, CaseIterable { case msal }

struct ExportCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "export", abstract: "Write this configuration's accounts and tokens as an MSAL token cache (msal-python, MSAL.NET).",
        discussion: """
            The file holds refresh tokens: it is written 0600, and to standard output only with --stdout.
            Examples:
              b2c export --format msal --out msal_token_cache.json
              b2c export --format msal --policy B2C_1_susi --account alice@contoso.com --out alice.json
            """)
    @OptionGroup var options: ClientOptions
    @Option(help: "The cache format (msal).") var format: CacheFormat
    @Option(help: "Only accounts of this policy.") var policy: String?
    @Option(help: "Only accounts this selector names (email, oid, account id, prefix).") var account: String?
    @Option(help: ArgumentHelp("The file to write (0600).", valueName: "file")) var out: String?
    @Flag(help: "Write to standard output instead of a file.") var stdout = false

    func validate() throws {
        if (out == nil) == !stdout {
            throw ValidationError(
                out == nil ? "say where the cache goes: --out FILE (or --stdout)." : "--out and --stdout exclude each other.")
        }
    }

    func run() async throws {
        let client = try options.makeClient()
        let (cache, report) = try await withClient(client) { c in try c.exportMSALCache(policyName: policy, selector: account) }
        for note in report.notes { writeErr(note) }
        guard !report.accounts.isEmpty else { throw CLIError("no accounts to export (see `b2c accounts`)", exitCode: ExitStatus.error) }
        let text = cache.serialized(pretty: true) + "\n"
        if stdout {
            writeOut(text)
        } else if let out {
            do {
                try makeParentDirectories(of: out)
                try writeFile(Data(text.utf8), to: out, mode: 0o600)
            } catch {
                throw CLIError("\(error)", exitCode: ExitStatus.error)
            }
        }
        writeErr(
            "exported \(report.accounts.count) account\(report.accounts.count == 1 ? "" : "s") with their tokens"
                + (out.map { " to \($0) (0600)" } ?? "") + ": the file holds refresh tokens, keep it as private as the store")
    }
}

struct ImportCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import", abstract: "Take this configuration's accounts from an MSAL token cache (msal-python, msal-extensions).",
        discussion: """
            Accounts whose home account id is <oid>-<policy>.<tenant> for a configured policy (External ID: <oid>.<tenant>), of this \
            configuration's client id and host, whose id token is signed with the policy's keys and names the same person and policy, \
            are stored with their tokens; the rest are skipped with a note. An account already in the store keeps its refresh \
            token unless --replace.
            Example:
              b2c import --format msal ~/.cache/myapp/msal_token_cache.json
            """)
    @OptionGroup var options: ClientOptions
    @Option(help: "The cache format (msal).") var format: CacheFormat
    @Argument(help: "The cache file (- for standard input).") var file: String
    @Flag(help: "Replace the refresh token of an account that is already in the store (kept otherwise, with a note).")
    var replace = false

    func run() async throws {
        let data = try Prompt.file(file, what: "the MSAL cache")
        let client = try options.makeClient()
        let report = try await withClient(client) { c in try await c.importMSALCache(data, replace: replace) }
        for note in report.notes { writeErr(note) }
        for id in report.accounts { writeOut("Imported \(id).") }
        if report.accounts.isEmpty {
            throw CLIError(
                report.notes.isEmpty ? "no account of this configuration in \(file)" : "nothing was imported from \(file) (see above)",
                exitCode: ExitStatus.error)
        }
    }
}
