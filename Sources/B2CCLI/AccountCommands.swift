import ArgumentParser
import B2CKit
import Foundation

struct AccountsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "accounts", abstract: "List people and, under each, their accounts per policy.",
        discussion: "Without any configuration (none named, none found), lists every account in the store, grouped by authority host and client id.",
        aliases: ["status"])
    @OptionGroup var options: ClientOptions
    @Option(help: "Only accounts of this policy.") var policy: String?
    @OptionGroup var output: OutputOptions

    func run() async throws {
        guard let config = try options.settings.loadConfigurationIfPresent() else {
            let overview = StoreOverview(store: try options.settings.openStore())
            let groups = try overview.people(policy: policy)
            writeErr("no configuration found: listing every configuration's accounts in \(overview.store.path)")
            Output.writeStore(groups, format: output.format, now: Int(Date().timeIntervalSince1970))
            return
        }
        let client = try options.settings.makeClient(config: config)
        try await withClient(client) { c in
            Output.writePeople(try c.listAccounts(policy: policy), format: output.format, now: c.now(), policy: policy)
        }
    }
}

struct SwitchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "switch", abstract: "Make an account the current one of a policy.",
        discussion: """
            Examples:
              b2c switch bob@contoso.com
              b2c switch alice --policy B2C_1_signin
            """)
    @OptionGroup var options: ClientOptions
    @Argument(help: "Email, its local part, oid, account id or a unique prefix.") var selector: String?
    @Option(help: "The policy; default: the signUpSignIn policy.") var policy: String?
    @Option(help: "The same as the argument.") var account: String?

    func validate() throws {
        if selector != nil && account != nil { throw ValidationError("give the account once: as the argument or with --account.") }
        if selector == nil && account == nil { throw ValidationError("name the account to switch to (email, oid or account id).") }
    }

    func run() async throws {
        let client = try options.makeClient()
        try await withClient(client) { c in
            let a = try c.switchAccount(policy: policy, selector: selector ?? account ?? "")
            writeOut("\(AccountSelection.email(a) ?? a.oid) is now the current account of \(a.policy).")
        }
    }
}

struct TokenCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "token", abstract: "Print an access token, from the cache or refreshed silently.")
    enum Format: String, ExpressibleByArgument, CaseIterable { case raw, bearer, header, json }
    @OptionGroup var options: ClientOptions
    @Option(help: "The policy; default: the signUpSignIn policy.") var policy: String?
    @Option(help: "Email, oid, account id or a unique prefix.") var account: String?
    @Option(help: "An API (from the configuration) whose scopes to use.") var api: String?
    @Option(parsing: .singleValue, help: "A scope (repeatable); overrides --api.") var scope: [String] = []
    @Option(parsing: .unconditional, help: "Refresh when fewer than this many seconds are left (any integer).") var minValid = 300
    @Flag(help: "Refresh even when the cached token is fresh.") var forceRefresh = false
    @Option(help: "raw, bearer, header or json.") var format: Format?
    @Option(name: [.customShort("o"), .long], help: "The same as --format (json for a JSON object).") var output: Format?

    func validate() throws {
        if let format, let output, format != output { throw ValidationError("--format \(format.rawValue) and --output \(output.rawValue) disagree; give one.") }
    }

    var request: TokenRequest {
        TokenRequest(client: options.settings, policy: policy, account: account, api: api, scopes: scope, minValid: minValid,
                     forceRefresh: forceRefresh, format: format ?? output ?? .raw)
    }

    func run() async throws { try await request.run() }
}

/// What `b2c token` was asked, as plain values.
struct TokenRequest: Equatable {
    var client = ClientSettings()
    var policy: String?
    var account: String?
    var api: String?
    var scopes: [String] = []
    var minValid = 300
    var forceRefresh = false
    var format: TokenCommand.Format = .raw

    func run() async throws {
        let client = try client.makeClient()
        let result = try await withClient(client) { c in
            try await c.acquireTokenSilently(policyName: policy, selector: account, scopes: try c.resourceScopes(api: api, scopes: scopes),
                                             minValid: minValid, forceRefresh: forceRefresh)
        }
        if let notice = result.notice { writeErr(notice) }
        let t = result.accessToken
        switch format {
        case .raw: writeOut(t.secret)
        case .bearer: writeOut("Bearer \(t.secret)")
        case .header: writeOut("Authorization: Bearer \(t.secret)")
        case .json:
            writeOut(JSONValue.object(["accessToken": .string(t.secret), "tokenType": "Bearer", "expiresOn": JSONValue(t.expiresOn),
                                       "scopes": .string(t.target), "accountId": .string(result.account.id), "policy": .string(result.account.policy),
                                       "fromCache": .bool(result.fromCache)]).serialized(pretty: true))
        }
    }

    /// The plain forms of `b2c token …` (every option above, as `--name value` or `--name=value`, each at most once
    /// but `--scope`), parsed without ArgumentParser: its reflection over the command tree costs a token cache hit
    /// about 2 ms, a third of the whole run. Anything else — help, an unknown or repeated option, a value that does
    /// not validate, an empty value or one starting with '-' — returns nil, and ArgumentParser parses it and gives its messages.
    static func fastParse(_ arguments: [String]) -> TokenRequest? {
        guard arguments.first == "token" else { return nil }
        var r = TokenRequest()
        var seen: Set<String> = []
        var formatGiven = false
        var i = 1
        while i < arguments.count {
            var name = arguments[i]
            var value: String?
            if let eq = name.firstIndex(of: "="), name.hasPrefix("--") {
                value = String(name[name.index(after: eq)...])
                name = String(name[..<eq])
            }
            i += 1
            if name != "--scope" {
                guard seen.insert(name).inserted else { return nil }
            }
            switch name {
            case "--force-refresh", "--verbose", "-v":
                guard value == nil else { return nil }
                if name == "--force-refresh" { r.forceRefresh = true } else { r.client.verbose = true }
                continue
            default: break
            }
            if value == nil {
                // A value may start with '-' only for --min-valid (a negative number), as ArgumentParser takes it there.
                guard i < arguments.count, !arguments[i].hasPrefix("-") || (name == "--min-valid" && Int(arguments[i]) != nil) else { return nil }
                value = arguments[i]
                i += 1
            }
            guard let v = value, !v.isEmpty else { return nil }
            switch name {
            case "--config": r.client.config = v
            case "--http-timeout":
                guard let n = Int(v), (1...600).contains(n) else { return nil }
                r.client.httpTimeout = n
            case "--policy": r.policy = v
            case "--account": r.account = v
            case "--api": r.api = v
            case "--scope": r.scopes.append(v)
            case "--min-valid":
                guard let n = Int(v) else { return nil }
                r.minValid = n
            case "--format", "--output", "-o":
                // --format and --output (-o) are one setting: given twice, ArgumentParser judges.
                guard let f = TokenCommand.Format(rawValue: v), !formatGiven else { return nil }
                formatGiven = true
                r.format = f
            default: return nil
            }
        }
        return r
    }
}

struct SignOutCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "signout", abstract: "Forget accounts and their tokens on this machine; --browser also ends the B2C browser session.",
        discussion: """
            In shared-device mode (deviceMode "shared" in the configuration) any sign-out forgets every account and ends the browser session.
            Without any configuration (none named, none found), --all forgets every account in the store.
            """,
        aliases: ["logout"])
    @OptionGroup var options: ClientOptions
    @Option(help: "Only this policy's account.") var policy: String?
    @Option(help: "Email, oid, account id or a unique prefix (an email or oid signs the person out of every policy).") var account: String?
    @Flag(help: "Every account.") var all = false
    @Flag(help: "Also end the B2C session in the browser (the policy's end_session endpoint), so the next sign-in shows the form.") var browser = false
    @Flag(help: "With --browser: print the sign-out URL only; do not start a browser.") var noBrowser = false
    @Option(help: "Seconds to wait for the browser to come back from the sign-out page.") var timeout = 120

    func run() async throws {
        guard let config = try options.settings.loadConfigurationIfPresent() else { return try signOutEverywhere() }
        let client = try options.settings.makeClient(config: config)
        let interrupt = cancelOnInterrupt()
        defer { interrupt.forEach { $0.cancel() } }
        let (outcome, ended) = try await withClient(client) { c -> (SignOutOutcome, Bool?) in
            let outcome = try c.signOut(policyName: policy, selector: account, all: all)
            var ended: Bool?
            if browser || outcome.endBrowserSession {
                ended = try await c.endBrowserSession(policyName: outcome.removed.first?.policy ?? policy, ui: TerminalUI(openBrowser: !noBrowser),
                                                      timeoutSeconds: timeout)
            }
            return (outcome, ended)
        }
        if outcome.sharedDevice { writeOut("Shared-device mode: every account on this device is signed out.") }
        report(outcome.removed)
        switch ended {
        case true?: writeOut("The browser session is ended: the next sign-in shows the sign-in page.")
        case false?:
            throw CLIError("the accounts were forgotten here, but the browser did not come back from the sign-out page, so the browser session may still be open. Run `b2c signout --browser --all` again or close the browser.",
                           exitCode: ExitStatus.error)
        case nil: break
        }
        if !outcome.removed.isEmpty {
            writeErr("access tokens already issued stay valid until they expire (up to an hour)" + (ended == nil ? "; the browser session is untouched (add --browser to end it)" : ""))
        }
    }

    /// No configuration: only `--all` makes sense, and it means the whole store.
    func signOutEverywhere() throws {
        guard all, policy == nil, account == nil, !browser else {
            let located = ClientConfiguration.locate(explicit: nil)
            throw CLIError("no configuration found (looked for \(located.searched.joined(separator: ", "))), so only `b2c signout --all` (every account in the store) can run. Pass --config FILE or set B2C_CONFIG to sign out of one configuration.",
                           exitCode: ExitStatus.configuration)
        }
        let overview = StoreOverview(store: try options.settings.openStore())
        writeErr("no configuration found: signing out every account in \(overview.store.path)")
        let removed = try overview.signOutEverything()
        report(removed, withScope: true)
        if !removed.isEmpty { writeErr("access tokens already issued stay valid until they expire (up to an hour); browser sessions are untouched") }
    }

    func report(_ removed: [Account], withScope: Bool = false) {
        if removed.isEmpty { writeOut("No accounts to sign out.") }
        for a in removed {
            writeOut("Signed out \(AccountSelection.email(a) ?? a.oid) from \(a.policy) (\(a.id))" + (withScope ? " at \(a.environment), client \(a.clientID)." : "."))
        }
    }
}

struct WhoAmICommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "whoami", abstract: "Show the selected account, its person and its id-token claims.")
    @OptionGroup var options: ClientOptions
    @Option(help: "The policy; default: the signUpSignIn policy.") var policy: String?
    @Option(help: "Email, oid, account id or a unique prefix.") var account: String?
    @OptionGroup var output: OutputOptions

    func run() async throws {
        let client = try options.makeClient()
        try await withClient(client) { c in
            let selected = try c.selectedAccount(policy: policy, selector: account)
            if let n = selected.notice { writeErr(n) }
            Output.writeWhoAmI(selected.account, person: selected.person, format: output.format, now: c.now())
        }
    }
}
