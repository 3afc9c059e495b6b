import ArgumentParser
import B2CKit
import Foundation

/// `b2c migrate users`: the people of one tenant copied to another through Microsoft Graph, as a migration script does —
/// each a local account with the same sign-in name and names, a password nobody knows, and the mark that makes the new
/// tenant's `OnPasswordSubmit` function move the real password at the first sign-in. A person already there is left
/// alone, so an interrupted copy runs again from the start; each person is one Graph call: never half made.
struct MigrateUsersCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "users",
        abstract: "Copy the people of a B2C tenant to an External ID tenant through Microsoft Graph, marked for migration.",
        discussion: """
            Each side is a configuration of an app allowed Graph's users API as itself (the app-only identity, as for \
            `b2c users`): --from needs User.Read.All (or User.ReadWrite.All), --to User.ReadWrite.All. Give each side's \
            secret in its configuration's clientSecretFile (B2C_CLIENT_SECRET is one secret for both sides).
            Every local account of --from (email or user name) becomes one on --to with the same sign-in name, display \
            name, given name and surname, a random password that is never shown, and the directory extension attribute \
            --flag set to true: the mark the new tenant's OnPasswordSubmit listener reads (migrationPropertyId), so that \
            the person's real password moves at the first sign-in (docs/migration.md). A person whose sign-in name the \
            target has already is left as it is; a federated-only person is skipped (they sign in through their provider).

            Examples:
              b2c migrate users --from b2c-admin.json --to eeid-admin.json --dry-run
              b2c migrate users --from b2c-admin.json --to eeid-admin.json --flag toBeMigrated -o json
            Exit codes: 0 every person copied, already there or skipped, 1 a person failed (the others are done; run again to \
            retry), 3 a configuration or permission problem, 5 network, 64 usage.
            """)

    @Option(help: ArgumentHelp("The tenant to copy from: a policies.json file or a profile name.", valueName: "file|profile"))
    var from: String
    @Option(help: ArgumentHelp("The tenant to copy to: a policies.json file or a profile name.", valueName: "file|profile"))
    var to: String
    @Option(help: "The extension attribute set true on each copy (short name, or extension_<app id>_Name).")
    var flag = "toBeMigrated"
    @Option(help: "Only the people whose display name or sign-in name starts with this.") var filter: String?
    @Flag(help: "Say what would be copied; change nothing.") var dryRun = false
    @Option(name: [.customShort("o"), .long], help: "table or json (default: table on a terminal, json otherwise).")
    var output: OutputFormat?
    @Flag(name: .shortAndLong, help: "Trace HTTP requests to stderr (never tokens).") var verbose = false
    @Option(help: ArgumentHelp("Seconds to wait for each tenant on each request.", valueName: "seconds")) var httpTimeout = 30

    func validate() throws {
        guard (1...600).contains(httpTimeout) else { throw ValidationError("--http-timeout must be between 1 and 600 seconds.") }
        guard !flag.isEmpty else { throw ValidationError("--flag names the extension attribute to set; it cannot be empty.") }
    }

    func run() async throws {
        let side = MigrateDiffCommand.sideSettings
        let source = try side(from, "--from", verbose, httpTimeout), target = try side(to, "--to", verbose, httpTimeout)
        var report: [JSONValue] = []
        try await withClient(try source.makeClient()) { old in
            try await withClient(try target.makeClient()) { new in
                for person in try await old.listUsers(filter: filter) { report.append(try await copy(person, to: new)) }
            }
        }
        render(report)
        let failed = report.filter { $0["outcome"] == "failed" }.count
        if failed > 0 {
            throw CLIError(
                "\(failed) \(failed == 1 ? "person was" : "people were") not copied (see the report); run again to retry",
                exitCode: ExitStatus.error)
        }
    }

    /// One person: created, already there, skipped or failed, as a report line.
    private func copy(_ person: DirectoryUser, to new: B2CClient) async throws -> JSONValue {
        func line(_ outcome: String, _ name: String, _ extra: [String: JSONValue] = [:]) -> JSONValue {
            .object(["from": .string(person.id), "signInName": .string(name), "outcome": .string(outcome)].merging(extra) { $1 })
        }
        guard let (kind, name) = person.signIn, kind == "emailAddress" || kind == "userName" || kind == "mail" else {
            return line("skipped", person.displayName, ["message": "no local sign-in name: they sign in through their provider"])
        }
        if let existing = try await new.user(name) { return line("exists", name, ["id": .string(existing.id)]) }
        if dryRun { return line("would create", name) }
        var copy = NewDirectoryUser(
            signIn: kind == "userName" ? .userName(name) : .email(name),
            displayName: person.displayName.isEmpty ? name : person.displayName,
            password: PasswordChoice.generated())
        copy.givenName = person.json["givenName"]?.stringValue
        copy.surname = person.json["surname"]?.stringValue
        // A short name (toBeMigrated) is the b2c-extensions-app's attribute: extension_<its app id>_toBeMigrated.
        copy.attributes = [flag.hasPrefix("extension_") ? flag : "extension_" + flag: true]
        do {
            return line("created", name, ["id": .string(try await new.createUser(copy).id)])
        } catch let e as B2CError where e.kind == .failed || e.kind == .usage {
            return line("failed", name, ["message": .string(e.message)])
        }
    }

    private func render(_ report: [JSONValue]) {
        switch output ?? .auto {
        case .json: writeOut(JSONValue.array(report).serialized(pretty: true))
        case .table:
            writeOut(
                table(
                    [["SIGN-IN NAME", "OUTCOME", "NEW ID / MESSAGE"]]
                        + report.map { r in
                            [
                                r["signInName"]?.stringValue ?? "", r["outcome"]?.stringValue ?? "",
                                r["id"]?.stringValue ?? r["message"]?.stringValue ?? "",
                            ]
                        }))
        }
        let count = { (outcome: String) in report.filter { $0["outcome"]?.stringValue == outcome }.count }
        writeErr(
            dryRun
                ? "\(count("would create")) would be created, \(count("exists")) already there, \(count("skipped")) skipped"
                : "\(count("created")) created, \(count("exists")) already there, \(count("skipped")) skipped, \(count("failed")) failed")
    }
}
