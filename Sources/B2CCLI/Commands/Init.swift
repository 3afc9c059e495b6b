import ArgumentParser
import B2CFastPath
import B2CKit
import Foundation

struct InitCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "init", abstract: "Write a policies.json for your tenant from a few answers, then check it against the tenant.",
        discussion: """
            Asks at a terminal for what the flags do not give. Writes ./policies.json, --out FILE, or with --profile NAME \
            $XDG_CONFIG_HOME/b2c/profiles/NAME.json; never replaces a file without --force. Then fetches every policy's \
            discovery document and key set and reports each (skip with --no-check).
            Examples:
              b2c init --tenant contoso.onmicrosoft.com --client-id <guid> --policy B2C_1_susi=signUpSignIn \\
                       --policy B2C_1_edit_profile=editProfile --api hello --api-url https://api.contoso.com \\
                       --scope https://contoso.onmicrosoft.com/api/demo.read
              b2c init --profile test --external-id --tenant contoso.onmicrosoft.com --client-id <guid>
            Exit codes: 0 written and every policy OK; 3 an existing file (without --force) or a policy the tenant does not \
            know; 5 the tenant could not be reached (the file is written); 64 missing or bad answers.
            """)
    @Option(help: ArgumentHelp("Write this file (default: ./policies.json).", valueName: "file")) var out: String?
    @Option(help: ArgumentHelp("Write the profile NAME ($XDG_CONFIG_HOME/b2c/profiles/NAME.json).", valueName: "name")) var profile: String?
    @Flag(help: "Replace an existing file.") var force = false
    @Option(help: "The tenant: contoso.onmicrosoft.com, or its GUID.") var tenant: String?
    @Option(help: "The tenant's GUID, when --tenant is its name (tokens are then checked against it).") var tenantId: String?
    @Option(help: "The authority host: https://contoso.b2clogin.com (the default from the tenant name), a custom domain, or an emulator.")
    var host: String?
    @Option(help: "The application (client) id.") var clientId: String?
    @Option(parsing: .singleValue, help: "A policy as NAME=ROLE (repeatable), e.g. B2C_1_susi=signUpSignIn.") var policy: [String] = []
    @Flag(help: "An Entra External ID tenant (ciamlogin.com): no policies.") var externalId = false
    @Option(help: "An API's name.") var api: String?
    @Option(help: "The API's base URL.") var apiUrl: String?
    @Option(parsing: .singleValue, help: "A scope of the API, as a full URI (repeatable).") var scope: [String] = []
    @Flag(help: "The app is confidential (a web app): redemptions send its secret.") var confidential = false
    @Option(
        help: "How the secret is sent: client_secret_post or client_secret_basic.",
        completion: .list(ClientAuthentication.Method.allCases.map(\.rawValue))) var clientAuth: String?
    @Option(help: ArgumentHelp("A 0600 file holding the client secret (the path is written, never the secret).", valueName: "file"))
    var clientSecretFile: String?
    @Option(help: ArgumentHelp("A CA certificate file to trust (an emulator's, a proxy's).", valueName: "file")) var caFile: String?
    @Flag(help: "Write the file without asking the tenant.") var noCheck = false
    @OptionGroup var output: OutputOptions

    func validate() throws {
        if out != nil && profile != nil { throw ValidationError("--out and --profile both name the file; give one.") }
        if let profile, !Profiles.isValidName(profile) {
            throw ValidationError("--profile '\(profile)' is not a profile name (letters, digits, _ . -).")
        }
    }

    var path: String {
        if let out { return out }
        if let profile { return Profiles.path(of: profile) }
        return "policies.json"
    }

    func run() async throws {
        let file = path
        if FileManager.default.fileExists(atPath: file) && !force {
            throw CLIError(
                "\(file) exists; nothing was written. Add --force to replace it, or choose another --out or --profile.",
                exitCode: ExitStatus.configuration)
        }
        let json: JSONValue
        do { json = try draft().json() } catch let e as B2CError { throw CLIError(e) }
        do {
            try makeParentDirectories(of: file)
            try writeFile(Data((json.serialized(pretty: true) + "\n").utf8), to: file, mode: 0o644)
        } catch {
            throw CLIError("\(error)", exitCode: ExitStatus.error)
        }
        // Written by the user's own command: allowed as it is, should it be found in the working directory later.
        try? ConfigurationTrust(storeDirectory: StoreLocation.directory()).allow(ConfigurationTrust.read(file))
        writeErr("wrote \(file)" + (profile.map { " (use it with --profile \($0) or B2C_PROFILE=\($0))" } ?? ""))
        if noCheck { return }
        let settings = ClientSettings(config: file)
        let client = try settings.makeClient(config: try settings.loadConfiguration())
        let checks = await client.checkPolicies()
        await client.shutdown()
        Output.writeChecks(checks, config: client.config, format: output.format)
        if checks.contains(where: { if case .configuration = $0.outcome { true } else { false } }) {
            throw CLIError(
                "\(file) is written, but the tenant disagrees (see above): fix it, then run `b2c policies --check`",
                exitCode: ExitStatus.configuration)
        }
        if checks.contains(where: { if case .network = $0.outcome { true } else { false } }) {
            throw CLIError(
                "\(file) is written, but the tenant could not be reached (see above); run `b2c policies --check` later",
                exitCode: ExitStatus.network)
        }
    }

    /// The answers: flags first, then questions at a terminal for what is missing.
    func draft() throws -> ConfigurationDraft {
        var d = ConfigurationDraft()
        d.externalId = externalId || (host?.lowercased().contains(".ciamlogin.com") ?? false)
        d.tenant = try tenant ?? ask("Tenant (contoso.onmicrosoft.com or its GUID)", flag: "--tenant")
        d.tenantID = tenantId
        d.host = host
        d.clientID = try clientId ?? ask("Application (client) id", flag: "--client-id")
        if policy.isEmpty && !d.externalId {
            // A typing mistake at the prompt asks again (flags are checked once: a script gets exit 64).
            d.policies = try askUntilValid(
                "Policies as NAME=ROLE, separated by spaces (e.g. B2C_1_susi=signUpSignIn B2C_1_edit_profile=editProfile)",
                flag: "--policy NAME=ROLE"
            ) { answer in try answer.split(separator: " ").map { try ConfigurationDraft.policy(String($0)) } }
        } else {
            d.policies = try policy.map { try ConfigurationDraft.policy($0) }
        }
        d.apiName = api
        d.apiURL = apiUrl
        d.scopes = scope
        // The API the app calls (optional: without one, `b2c token` gives a token for the app itself).
        if api == nil && Prompt.stdinIsTerminal {
            let name = try askOptional(
                "The API the app calls, a short name such as hello (Enter: none; tokens are then for the app itself)")
            if let name {
                d.apiName = name
                d.apiURL = try apiUrl ?? ask("Base URL of \(name) (such as https://api.contoso.com)", flag: "--api-url")
                if scope.isEmpty {
                    d.scopes = try askUntilValid(
                        "Scopes of \(name), full URIs separated by spaces (such as https://contoso.onmicrosoft.com/hello/demo.read)",
                        flag: "--scope"
                    ) { answer in
                        let scopes = answer.split(separator: " ").map(String.init)
                        guard scopes.allSatisfy({ $0.contains("://") }) else {
                            throw B2CError(
                                .usage,
                                "a scope is a full URI (<App ID URI>/<scope name>), such as https://contoso.onmicrosoft.com/hello/demo.read"
                            )
                        }
                        return scopes
                    }
                }
            }
        }
        d.confidential = confidential
        if let clientAuth {
            guard
                let m = ClientAuthentication.Method(rawValue: clientAuth)
                    ?? ClientAuthentication.Method(rawValue: "client_secret_\(clientAuth)")
            else { throw CLIError("--client-auth is client_secret_post or client_secret_basic", exitCode: ExitStatus.usage) }
            d.clientAuthMethod = m
        }
        d.clientSecretFile = clientSecretFile
        d.caFile = caFile
        return d
    }

    /// An answer that may be left empty (Enter); nil then.
    func askOptional(_ question: String) throws -> String? {
        writePrompt("\(question): ")
        guard let line = Prompt.line() else { throw CLIError("no answer; nothing was written", exitCode: ExitStatus.usage) }
        let answer = line.trimmingCharacters(in: .whitespaces)
        return answer.isEmpty ? nil : answer
    }

    /// Asks until `parse` takes the answer, saying what was wrong each time.
    func askUntilValid<T>(_ question: String, flag: String, _ parse: (String) throws -> T) throws -> T {
        while true {
            let answer = try ask(question, flag: flag)
            do { return try parse(answer) } catch let e as B2CError {
                Terminal.err("b2c: \(e.message); try again\n")
            }
        }
    }

    /// One answer from the terminal; without one, the flag that gives it.
    func ask(_ question: String, flag: String) throws -> String {
        guard Prompt.stdinIsTerminal else {
            throw CLIError("\(flag) is missing (no terminal to ask at); give it as a flag", exitCode: ExitStatus.usage)
        }
        writePrompt("\(question): ")
        guard let line = Prompt.line()?.trimmingCharacters(in: .whitespaces), !line.isEmpty else {
            throw CLIError("no answer for \(flag); nothing was written", exitCode: ExitStatus.usage)
        }
        return line
    }
}

struct ProfilesCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "profiles", abstract: "List the named configurations ($XDG_CONFIG_HOME/b2c/profiles) with their tenant and client.",
        discussion: "Choose one per command with --profile NAME, or per shell with B2C_PROFILE=NAME; nothing here changes another shell.")
    @OptionGroup var output: OutputOptions

    func run() throws {
        // The profile in use: B2C_PROFILE, unless B2C_CONFIG (which comes first) names another file.
        let environment = ProcessEnvironment.current()
        let named = environment["B2C_PROFILE"].flatMap { $0.isEmpty ? nil : $0 }
        let overridden = named != nil && ClientSettings.environmentConflict(environment) != nil
        let active = overridden ? nil : named
        let rows = Profiles.names().map { name -> (String, Result<ClientConfiguration, Error>) in
            (name, Result { try ClientConfiguration.load(path: Profiles.path(of: name)) })
        }
        switch output.format {
        case .json:
            writeOut(
                JSONValue.object([
                    "directory": .string(Profiles.directory().path),
                    "profiles": .array(
                        rows.map { name, r in
                            var o: [String: JSONValue] = [
                                "name": .string(name), "path": .string(Profiles.path(of: name)), "active": .bool(name == active),
                            ]
                            switch r {
                            case .success(let c):
                                o["tenant"] = .string(c.tenantName ?? c.tenantID ?? "")
                                o["tenantType"] = .string(c.tenantType.rawValue)
                                o["clientId"] = .string(c.clientID)
                                o["authorityHost"] = .string(c.authorityHost.absoluteString)
                            case .failure(let e): o["error"] = .string("\(e)")
                            }
                            return .object(o)
                        }),
                ]).serialized(pretty: true))
        case .table:
            if rows.isEmpty { return writeOut("No profiles in \(Profiles.directory().path). Create one with: b2c init --profile NAME") }
            writeOut(
                table(
                    [["PROFILE", "TENANT", "CLIENT", "HOST"]]
                        + rows.map { name, r in
                            let label = name + (name == active ? " *" : "")
                            switch r {
                            case .success(let c):
                                let tenant = (c.tenantName ?? c.tenantID ?? "") + (c.tenantType == .externalId ? " (External ID)" : "")
                                return [label, tenant, Output.shortID(c.clientID), Authority.hostAndPort(of: c.authorityHost)]
                            case .failure: return [label, "(invalid: run b2c policies --profile \(name))", "", ""]
                            }
                        }) + (active != nil ? "\n(* = B2C_PROFILE in this shell)" : "")
                    + (overridden
                        ? "\n(B2C_PROFILE=\(named ?? "") is set, but B2C_CONFIG=\(environment["B2C_CONFIG"] ?? "") comes first and is in "
                            + "use; "
                            + "unset B2C_CONFIG to use the profile)" : ""))
        }
    }
}
