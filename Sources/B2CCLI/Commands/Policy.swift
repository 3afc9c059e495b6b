import ArgumentParser
import B2CKit
import Foundation

/// `b2c policy`: custom policies (the Identity Experience Framework's XML) deployed through Microsoft Graph, as the app
/// (`Policy.ReadWrite.TrustFramework`).
struct PolicyCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "policy",
        abstract: "Deploy custom policies through Microsoft Graph, as the app: upload a folder in inheritance order, list, …",
        discussion: """
            The app is the configuration's (the local tenant's: `b2c-emulator serve --config-out FILE --client \
            policy-deploy`), with Graph's application permission Policy.ReadWrite.TrustFramework; its secret comes from \
            B2C_CLIENT_SECRET, --client-secret-stdin or the configuration's clientSecretFile.
            Exit codes: 0 done, 1 the tenant refused a policy (its message names the element) or has no such policy, 3 a \
            configuration, settings file or missing permission, 5 network, 64 usage (a placeholder no environment fills).
            """,
        subcommands: [PolicyUpload.self, PolicyList.self, PolicyDownload.self, PolicyDelete.self])
}

struct PolicyUpload: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "upload", abstract: "Upload policy files or folders: each base before its children.",
        discussion: """
            --env NAME fills {Settings:Tenant} and {Settings:<key>} from the environment of that name in the settings file \
            (the B2C extension for VS Code's appsettings.json: Environments[].Name, Tenant, PolicySettings; default: the \
            first folder's appsettings.json). A placeholder left unfilled refuses the upload before anything is sent.
            Examples:
              b2c policy upload policies/ --env Development --config deploy.json
              b2c policy upload policies/ --env Production --dry-run        the order, the Graph calls and the values
            """)
    @OptionGroup var client: ClientOptions
    @Argument(help: "Policy files, or folders of them (*.xml).") var paths: [String]
    @Option(help: "The environment of the settings file whose values fill the placeholders.") var env: String?
    @Option(help: ArgumentHelp("The settings file (default: appsettings.json in the first folder).", valueName: "file"))
    var settings: String?
    @Flag(help: "Print the order, the Graph calls and the substitutions; send nothing.") var dryRun = false
    @Option(name: [.customShort("o"), .long], help: "table or json.") var output: OutputFormat?

    func validate() throws {
        if paths.isEmpty { throw ValidationError("name the policy files or folders to upload.") }
        if settings != nil && env == nil { throw ValidationError("--settings gives environments: name one with --env.") }
    }

    func run() async throws {
        var values: [String: String]?
        if let env {
            let file =
                settings
                ?? ((paths.first.map { p in
                    var d: ObjCBool = false
                    return FileManager.default.fileExists(atPath: p, isDirectory: &d) && d.boolValue
                        ? p : (p as NSString).deletingLastPathComponent
                } ?? ".") as NSString).appendingPathComponent("appsettings.json")
            let data: Data
            do { data = try LocalFile.read(file) } catch {
                throw CLIError("cannot read the settings file \(file): the file \(error.reason)", exitCode: ExitStatus.configuration)
            }
            do { values = try PolicyDeployment.settings(data, environment: env, path: file) } catch let e as PolicyDeployment.Failure {
                throw CLIError(e.description, exitCode: ExitStatus.configuration)
            }
        }
        let plan: (files: [PolicyFile], external: [String])
        do { plan = try PolicyDeployment.plan(paths: paths, values: values) } catch let e as PolicyDeployment.Failure {
            throw CLIError(e.description + "; nothing was uploaded", exitCode: ExitStatus.usage)
        }
        if dryRun {
            let config = try client.loadConfiguration()
            let base = config.graphSettings.baseURL.absoluteString
            switch output ?? .auto {
            case .json:
                writeOut(
                    JSONValue.array(
                        plan.files.enumerated().map { i, f in
                            [
                                "order": JSONValue(i + 1), "policyId": .string(f.policyId), "file": .string(f.path),
                                "basePolicyId": f.basePolicyId.map { .string($0) } ?? .null,
                                "request": .string("PUT \(base)/beta/trustFramework/policies/\(f.policyId)/$value"),
                                "substitutions": .object(f.substitutions.mapValues { .string($0) }),
                            ]
                        }
                    ).serialized(pretty: true))
            case .table:
                var rows = [["#", "POLICY", "FILE", "BASE", "GRAPH CALL"]]
                for (i, f) in plan.files.enumerated() {
                    rows.append([
                        String(i + 1), f.policyId, f.path, f.basePolicyId ?? "—",
                        "PUT …/beta/trustFramework/policies/\(f.policyId)/$value",
                    ])
                }
                writeOut(table(rows))
                let used = plan.files.flatMap { $0.substitutions }.reduce(into: [String: String]()) { $0[$1.key] = $1.value }
                for (k, v) in used.sorted(by: { $0.key < $1.key }) { writeOut("{Settings:\(k)} = \(v)") }
            }
            for base in plan.external { writeErr("\(base) is not among the files: it must be in the tenant already") }
            return
        }
        var done: [String] = []
        try await withClient(try client.makeClient()) { c in
            for f in plan.files {
                do {
                    let created = try await c.uploadPolicy(f)
                    writeOut("\(created ? "Uploaded" : "Replaced") \(f.policyId) (\(f.path))")
                    done.append(f.policyId)
                } catch let e as B2CError {
                    let left = plan.files.map(\.policyId).filter { !done.contains($0) }
                    throw B2CError(
                        e.kind,
                        e.message + (done.isEmpty ? "" : "; uploaded before it: \(done.joined(separator: ", "))")
                            + "; not uploaded: \(left.joined(separator: ", "))")
                }
            }
        }
    }
}

struct PolicyList: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "list", abstract: "List the tenant's custom policies.", discussion: "Example:\n  b2c policy list --config deploy.json")
    @OptionGroup var client: ClientOptions
    @Option(name: [.customShort("o"), .long], help: "table or json.") var output: OutputFormat?

    func run() async throws {
        let ids = try await withClient(try client.makeClient()) { try await $0.listPolicies() }
        switch output ?? .auto {
        case .json: writeOut(JSONValue(ids).serialized(pretty: true))
        case .table: writeOut(table([["POLICY"]] + ids.map { [$0] }))
        }
    }
}

struct PolicyDownload: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "download", abstract: "Print (or write to --out) a custom policy's XML.",
        discussion: "Example:\n  b2c policy download B2C_1A_TrustFrameworkBase --out base.xml --config deploy.json")
    @OptionGroup var client: ClientOptions
    @Argument(help: "The policy id (B2C_1A_…).") var id: String
    @Option(help: ArgumentHelp("Write it to this file instead of stdout.", valueName: "file")) var out: String?

    func run() async throws {
        guard let xml = try await withClient(try client.makeClient(), { try await $0.downloadPolicy(id) }) else {
            throw CLIError("the tenant has no policy \(id) (see `b2c policy list`)", exitCode: ExitStatus.error)
        }
        guard let out else { return Output.writeBody(xml) }
        do { try writeFile(xml, to: out, mode: 0o644) } catch { throw CLIError("--out: \(error)", exitCode: ExitStatus.error) }
        writeErr("wrote \(id) to \(out)")
    }
}

struct PolicyDelete: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "delete", abstract: "Delete a custom policy (asks at a terminal; --yes otherwise).",
        discussion: "Example:\n  b2c policy delete B2C_1A_signup_signin --yes --config deploy.json")
    @OptionGroup var client: ClientOptions
    @Argument(help: "The policy id (B2C_1A_…).") var id: String
    @Flag(help: "Delete without asking.") var yes = false

    func run() async throws {
        try confirmDeletion("the custom policy \(id)", yes: yes)
        guard try await withClient(try client.makeClient(), { try await $0.deletePolicy(id) }) else {
            throw CLIError("the tenant has no policy \(id) (see `b2c policy list`)", exitCode: ExitStatus.error)
        }
        writeOut("Deleted \(id).")
    }
}
