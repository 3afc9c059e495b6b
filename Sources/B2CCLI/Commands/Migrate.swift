import ArgumentParser
import B2CKit
import Foundation

/// `b2c migrate`: what a move from Azure AD B2C to Entra External ID changes for an app.
struct MigrateCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "migrate", abstract: "Check a move from Azure AD B2C to Entra External ID before the cutover.",
        subcommands: [MigrateDiffCommand.self, MigrateUsersCommand.self])
}

struct MigrateDiffCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "diff",
        abstract: "Compare one person's tokens (and an API's answers) from a B2C configuration and an External ID one.",
        discussion: """
            Each side's token is acquired silently (sign in first with `b2c signin` on each configuration, or give \
            --interactive). The claims are lined up with the move's mapping: emails[0] ↔ email, tfp/acr ↔ none, sub ↔ a \
            pairwise sub, oid ↔ oid (which must be equal), extension_Name ↔ extension_<app id>_Name. With --api the API is \
            called with each side's token and the answers are compared.

            Examples:
              b2c migrate diff --from b2c.json --to external-id.json
              b2c migrate diff --from prod-b2c --to prod-eeid --api hello -o json
            Exit codes: 0 nothing an app relies on differs, 6 something does (each line says what the app must change), \
            3 a configuration or API that cannot be used, 4 a side needs a sign-in (the command is printed), 5 network.
            """)

    @Option(help: ArgumentHelp("The B2C side: a policies.json file or a profile name.", valueName: "file|profile")) var from: String
    @Option(help: ArgumentHelp("The External ID side: a policies.json file or a profile name.", valueName: "file|profile")) var to: String
    @Option(help: "The person on the B2C side: email, oid or account id (default: the current account).") var account: String?
    @Option(help: "The person on the External ID side (default: --account, else the current account).") var toAccount: String?
    @Option(help: "An API both configurations name: called with each side's token, the answers compared.") var api: String?
    @Option(help: "The path below the API's base URL to call (default: the base URL).") var path: String?
    @Flag(help: "When a side needs a sign-in, sign in in the browser and carry on.") var interactive = false
    @Option(name: [.customShort("o"), .long], help: "table or json (default: table on a terminal, json otherwise).")
    var output: OutputFormat?
    @Flag(name: .shortAndLong, help: "Trace HTTP requests to stderr (never tokens).") var verbose = false
    @Option(help: ArgumentHelp("Seconds to wait for each side on each request.", valueName: "seconds")) var httpTimeout = 30

    func validate() throws {
        guard (1...600).contains(httpTimeout) else { throw ValidationError("--http-timeout must be between 1 and 600 seconds.") }
        if path != nil && api == nil { throw ValidationError("--path is below an API's base URL: add --api NAME.") }
    }

    /// A side's settings: a file that exists is a configuration, else the name of a profile.
    func settings(_ value: String, option: String) throws -> ClientSettings {
        try Self.sideSettings(value, option, verbose, httpTimeout)
    }

    /// A side of a migrate command (`--from`, `--to`): a file that exists is a configuration, else the name of a profile.
    static func sideSettings(_ value: String, _ option: String, _ verbose: Bool, _ httpTimeout: Int) throws -> ClientSettings {
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: value, isDirectory: &isDirectory), !isDirectory.boolValue {
            return ClientSettings(config: value, verbose: verbose, httpTimeout: httpTimeout)
        }
        if value.contains("/") || value.hasSuffix(".json") {
            throw CLIError(
                "\(option) '\(value)' names no file; give a policies.json or the name of a profile (see `b2c profiles`)",
                exitCode: ExitStatus.configuration)
        }
        return ClientSettings(profile: value, verbose: verbose, httpTimeout: httpTimeout)
    }

    /// One side: the person's id token claims (refreshed when due) and, with --api, the API's answer to their token.
    struct Side {
        var name: String
        var account: Account
        var answer: APICallResult?
    }

    func side(_ settings: ClientSettings, name: String, selector: String?, option: String) async throws -> Side {
        let client = try settings.makeClient()
        do {
            return try await withInteractiveClient(client) { c in
                let scopes = try c.config.resourceScopes(api: api, scopes: [])
                let silent: SilentResult
                do {
                    silent = try await c.acquireTokenSilently(policyName: nil, selector: selector, scopes: scopes)
                } catch let e as B2CError where e.kind == .interactionRequired && interactive {
                    _ = try await c.signInInteractively(
                        policyName: nil, options: InteractiveOptions(loginHint: selector, scopes: scopes),
                        ui: TerminalUI(openBrowser: true, verbose: verbose))
                    silent = try await c.acquireTokenSilently(policyName: nil, selector: selector, scopes: scopes)
                }
                var answer: APICallResult?
                if let api {
                    var request = APICallRequest(url: path, api: api)
                    request.account = silent.account.id
                    answer = try await c.callAPI(request)
                }
                return Side(name: name, account: silent.account, answer: answer)
            }
        } catch let e as CLIError {
            // A remedy names this side's configuration, as the command it prints must.
            let which = settings.config.map { "--config \($0)" } ?? settings.profile.map { "--profile \($0)" } ?? ""
            let message = e.message.replacingOccurrences(of: "\nRun: b2c signin", with: "\nRun: b2c signin \(which)")
            throw CLIError("the \(name) side (\(option)): \(message)", exitCode: e.exitCode)
        }
    }

    func run() async throws {
        let old = try await side(try settings(from, option: "--from"), name: "B2C", selector: account, option: "--from \(from)")
        let new = try await side(
            try settings(to, option: "--to"), name: "External ID", selector: toAccount ?? account, option: "--to \(to)")
        let claims = ClaimComparison(b2c: old.account.claims, externalId: new.account.claims)
        let answers = old.answer.flatMap { a in
            new.answer.map { b in
                APIAnswerComparison(b2cStatus: a.status, b2cBody: a.body, externalIdStatus: b.status, externalIdBody: b.body)
            }
        }
        switch output ?? .auto {
        case .json: writeOut(Self.json(claims, answers, api: api).serialized(pretty: true))
        case .table: writeOut(Self.table(claims, answers, api: api))
        }
        if claims.breaks || answers?.breaks == true {
            throw CLIError(
                "what the app relies on differs between the two sides (see the lines marked differs or only-b2c)",
                exitCode: ExitStatus.differs)
        }
    }

    static func text(_ value: JSONValue?) -> String {
        guard let value else { return "—" }
        let s = value.stringValue ?? value.serialized()
        return s.count > 48 ? String(s.prefix(47)) + "…" : s
    }

    static func table(_ c: ClaimComparison, _ a: APIAnswerComparison?, api: String?) -> String {
        var rows = [["B2C CLAIM", "EXTERNAL ID CLAIM", "B2C VALUE", "EXTERNAL ID VALUE", "VERDICT", "WHAT THE APP MUST DO"]]
        for line in c.lines {
            rows.append([
                line.b2cClaim ?? "—", line.externalIdClaim ?? "—", text(line.b2cValue), text(line.externalIdValue),
                line.verdict.rawValue,
                line.advice ?? "",
            ])
        }
        var out = B2CCLI.table(rows)
        if let a, let api {
            var apiRows = [["API \(api)", "B2C", "EXTERNAL ID"], ["status", String(a.b2cStatus), String(a.externalIdStatus)]]
            for m in a.differing { apiRows.append([m.name, text(m.b2c), text(m.externalId)]) }
            out += "\n\n" + B2CCLI.table(apiRows) + "\n"
            out += a.breaks ? "The API answers differently.\n" : "The API answers the same.\n"
        }
        return out
    }

    static func json(_ c: ClaimComparison, _ a: APIAnswerComparison?, api: String?) -> JSONValue {
        var out: [String: JSONValue] = [
            "claims": .array(
                c.lines.map { line in
                    .object(
                        [
                            "b2cClaim": line.b2cClaim.map { .string($0) } ?? .null,
                            "externalIdClaim": line.externalIdClaim.map { .string($0) } ?? .null, "b2cValue": line.b2cValue ?? .null,
                            "externalIdValue": line.externalIdValue ?? .null, "verdict": .string(line.verdict.rawValue),
                            "advice": line.advice.map { .string($0) } ?? .null, "breaks": .bool(line.breaks),
                        ])
                }),
            "breaks": .bool(c.breaks || a?.breaks == true),
        ]
        if let a, let api {
            out["api"] = [
                "name": .string(api), "b2cStatus": JSONValue(a.b2cStatus), "externalIdStatus": JSONValue(a.externalIdStatus),
                "differing": .array(
                    a.differing.map { ["name": .string($0.name), "b2c": $0.b2c ?? .null, "externalId": $0.externalId ?? .null] }),
                "breaks": .bool(a.breaks),
            ]
        }
        return .object(out)
    }
}
