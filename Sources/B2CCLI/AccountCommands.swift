import ArgumentParser
import B2CKit
import Foundation

struct AccountsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "accounts", abstract: "List people and, under each, their accounts per policy.")
    @OptionGroup var options: ClientOptions
    @Option(help: "Only accounts of this policy.") var policy: String?
    @Option(help: "table or json (default: table on a terminal, json otherwise).") var output: OutputFormat?

    func run() async throws {
        let client = try options.makeClient()
        try await withClient(client) { c in
            let now = c.now()
            let people = try AccountSelection.list(store: c.store, policy: policy)
            switch output ?? .auto {
            case .json:
                // Streamed person by person (same bytes as one pretty document): at 100,000 people the whole tree
                // and its text would hold several hundred MB at once.
                var out = "{\n  \"people\": ["
                for (n, person) in people.enumerated() {
                    let p = person.identity
                    let items: [JSONValue] = person.accounts.map { a in
                        ["accountId": .string(a.accountID), "policy": .string(a.policy), "current": .bool(a.current), "refreshToken": .bool(a.hasRefreshToken),
                         "accessTokens": .array(a.accessTokens.map { ["scopes": .string($0.target), "expiresOn": JSONValue($0.expiresOn),
                                                                     "expiresIn": JSONValue(max(0, $0.expiresOn - now))] })]
                    }
                    let entry: JSONValue = ["tenantId": .string(p.tenantID), "oid": .string(p.oid), "name": p.name.map { .string($0) } ?? .null,
                                            "givenName": p.givenName.map { .string($0) } ?? .null, "familyName": p.familyName.map { .string($0) } ?? .null,
                                            "email": p.email.map { .string($0) } ?? .null, "accounts": .array(items)]
                    out += n == 0 ? "\n    " : ",\n    "
                    entry.serialize(into: &out, pretty: true, indent: 2)
                    if out.utf8.count >= 1 << 20 {
                        FileHandle.standardOutput.write(Data(out.utf8))
                        out = ""
                    }
                }
                out += people.isEmpty ? "]\n}\n" : "\n  ]\n}\n"
                FileHandle.standardOutput.write(Data(out.utf8))
            case .table:
                var rows: [[String]] = [["PERSON", "POLICY", "ACCOUNT", "ACCESS TOKEN", "REFRESH"]]
                for person in people {
                    for (i, a) in person.accounts.enumerated() {
                        let label = i == 0 ? "\(person.identity.name ?? "-") <\(person.identity.email ?? person.identity.oid)>" : ""
                        rows.append([label, a.policy + (a.current ? " *" : ""), a.accountID, tokenState(a, now: now), a.hasRefreshToken ? "yes" : "no"])
                    }
                }
                writeOut(rows.count == 1 ? "No accounts\(policy.map { " under \($0)" } ?? ""). Sign in with: b2c signin" : table(rows) + "\n(* = current account of the policy)")
            }
        }
    }
}

/// "valid N min", "expired" or "none": the longest-lived access token of an account.
func tokenState(_ a: ListedAccount, now: Int) -> String {
    a.accessTokens.max { $0.expiresOn < $1.expiresOn }.map { $0.expiresOn > now ? "valid \(($0.expiresOn - now) / 60) min" : "expired" } ?? "none"
}

struct SwitchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "switch", abstract: "Make an account the current one of a policy.")
    @OptionGroup var options: ClientOptions
    @Option(help: "The policy.") var policy: String
    @Option(help: "Email, oid, account id or a unique prefix.") var account: String

    func run() async throws {
        let client = try options.makeClient()
        try await withClient(client) { c in
            let p = try c.policy(policy)
            let sel = try AccountSelection.select(policy: p.name, selector: account, store: c.store, signInCommand: c.signInCommand(policy: p.name))
            try c.store.setCurrent(policy: p.name, accountID: sel.account.id)
            writeOut("\(AccountSelection.email(sel.account) ?? sel.account.oid) is now the current account of \(p.name).")
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
    @Option(help: "Refresh when fewer than this many seconds are left.") var minValid = 300
    @Flag(help: "Refresh even when the cached token is fresh.") var forceRefresh = false
    @Option(help: "raw, bearer, header or json.") var format: Format = .raw

    var request: TokenRequest {
        TokenRequest(client: options.settings, policy: policy, account: account, api: api, scopes: scope, minValid: minValid,
                     forceRefresh: forceRefresh, format: format)
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
                guard i < arguments.count, !arguments[i].hasPrefix("-") else { return nil }
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
            case "--format":
                guard let f = TokenCommand.Format(rawValue: v) else { return nil }
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
        discussion: "In shared-device mode (deviceMode \"shared\" in the configuration) any sign-out forgets every account and ends the browser session.")
    @OptionGroup var options: ClientOptions
    @Option(help: "Only this policy's account.") var policy: String?
    @Option(help: "Email, oid, account id or a unique prefix (an email or oid signs the person out of every policy).") var account: String?
    @Flag(help: "Every account.") var all = false
    @Flag(help: "Also end the B2C session in the browser (the policy's end_session endpoint), so the next sign-in shows the form.") var browser = false
    @Flag(help: "With --browser: print the sign-out URL only; do not start a browser.") var noBrowser = false
    @Option(help: "Seconds to wait for the browser to come back from the sign-out page.") var timeout = 120

    func run() async throws {
        let client = try options.makeClient()
        let interrupt = cancelOnInterrupt()
        defer { interrupt.cancel() }
        let (removed, shared, ended) = try await withClient(client) { c -> ([Account], Bool, Bool?) in
            let shared = c.config.sharedDevice
            // What goes: in shared-device mode everything, whatever was named (the name must still be valid).
            if shared && !all && (policy != nil || account != nil) { _ = try c.signOut(policyName: policy, selector: account, all: false, dryRun: true) }
            let before = try c.store.accounts()
            let ids = try c.signOut(policyName: policy, selector: account, all: all || shared)
            let removed = before.filter { ids.contains($0.id) }
            var ended: Bool?
            if browser || shared {
                let policyName = removed.first?.policy ?? policy
                ended = try await c.endBrowserSession(policyName: policyName, ui: TerminalUI(openBrowser: !noBrowser), timeoutSeconds: timeout)
            }
            return (removed, shared, ended)
        }
        if shared { writeOut("Shared-device mode: every account on this device is signed out.") }
        if removed.isEmpty { writeOut("No accounts to sign out.") }
        for a in removed { writeOut("Signed out \(AccountSelection.email(a) ?? a.oid) from \(a.policy) (\(a.id)).") }
        switch ended {
        case true?: writeOut("The browser session is ended: the next sign-in shows the sign-in page.")
        case false?:
            throw CLIError("the accounts were forgotten here, but the browser did not come back from the sign-out page, so the browser session may still be open. Run `b2c signout --browser --all` again or close the browser.",
                           exitCode: ExitStatus.error)
        case nil: break
        }
        if !removed.isEmpty {
            writeErr("access tokens already issued stay valid until they expire (up to an hour)" + (ended == nil ? "; the browser session is untouched (add --browser to end it)" : ""))
        }
    }
}

struct WhoAmICommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "whoami", abstract: "Show the selected account, its person and its id-token claims.")
    @OptionGroup var options: ClientOptions
    @Option(help: "The policy; default: the signUpSignIn policy.") var policy: String?
    @Option(help: "Email, oid, account id or a unique prefix.") var account: String?
    @Option(help: "table or json (default: table on a terminal, json otherwise).") var output: OutputFormat?

    func run() async throws {
        let client = try options.makeClient()
        try await withClient(client) { c in
            let p = try policy.map { try c.policy($0) } ?? c.defaultPolicy()
            let sel = try AccountSelection.select(policy: p.name, selector: account, store: c.store, signInCommand: c.signInCommand(policy: p.name))
            if let n = sel.notice { writeErr(n) }
            let a = sel.account
            let person = try c.store.identity(tenantID: a.tenantID, oid: a.oid)
            switch output ?? .auto {
            case .json:
                writeOut(JSONValue.object([
                    "accountId": .string(a.id), "policy": .string(a.policy), "authority": .string(a.authority),
                    "person": ["tenantId": .string(a.tenantID), "oid": .string(a.oid), "name": person?.name.map { .string($0) } ?? .null,
                               "givenName": person?.givenName.map { .string($0) } ?? .null,
                               "familyName": person?.familyName.map { .string($0) } ?? .null,
                               "email": person?.email.map { .string($0) } ?? .null],
                    "claims": a.claims,
                ]).serialized(pretty: true))
            case .table:
                var rows = [["account", a.id], ["policy", a.policy], ["person", "\(person?.name ?? "-") <\(person?.email ?? a.oid)>"],
                            ["given / family name", "\(person?.givenName ?? "-") / \(person?.familyName ?? "-")"]]
                // The claims are those of this policy's id token as issued; the person's profile above is the latest seen under any policy.
                for (k, v) in (a.claims.objectValue ?? [:]).sorted(by: { $0.key < $1.key }) {
                    rows.append(["id-token claim \(k)", v.stringValue ?? v.serialized()])
                }
                writeOut(table(rows))
            }
        }
    }
}
