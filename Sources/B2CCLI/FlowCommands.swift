import ArgumentParser
import B2CKit
import Foundation

/// Options of the browser flows other than sign-in.
struct BrowserFlowOptions: ParsableArguments {
    @Option(help: "Email, oid, account id or a unique prefix of the person (default: the current account of the sign-in policy).")
    var account: String?
    @Option(help: "The policy to run (default: the first of its role in the configuration).") var policy: String?
    @Flag(help: "Print the URL only; do not start a browser.") var noBrowser = false
    @Option(help: "Port of the loopback redirect listener (0 = any free port).") var port = 0
    @Option(help: "Seconds to wait for the browser.") var timeout = 300

    func validate() throws {
        guard (0...65535).contains(port) else { throw ValidationError("--port must be between 0 and 65535.") }
        guard timeout > 0 else { throw ValidationError("--timeout must be a positive number of seconds.") }
    }

    var interactive: InteractiveOptions { InteractiveOptions(port: port, timeoutSeconds: timeout) }
}

struct EditProfileCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "edit-profile",
        abstract: "Edit the profile of a signed-in person in the browser (the editProfile policy); every policy then shows the new name.")
    @OptionGroup var options: ClientOptions
    @OptionGroup var flow: BrowserFlowOptions

    func run() async throws {
        let client = try options.makeClient()
        let interrupt = cancelOnInterrupt()
        defer { interrupt.cancel() }
        let result = try await withClient(client) { c in
            try await c.editProfile(selector: flow.account, policyName: flow.policy, options: flow.interactive, ui: TerminalUI(openBrowser: !flow.noBrowser))
        }
        let who = AccountSelection.email(result.account) ?? result.account.oid
        writeOut("Profile of \(who) saved under \(result.account.policy).")
        let fields: [(String, String?, String?)] = [("name", result.before?.name, result.after?.name),
                                                    ("given name", result.before?.givenName, result.after?.givenName),
                                                    ("family name", result.before?.familyName, result.after?.familyName)]
        for (label, old, new) in fields {
            if old != new { writeOut("  \(label): \(old ?? "-") → \(new ?? "-")") } else { writeOut("  \(label): \(new ?? "-") (unchanged)") }
        }
    }
}

struct ResetPasswordCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "reset-password",
        abstract: "Reset a person's password in the browser (the resetPassword policy).",
        discussion: "The tenant revokes the person's refresh tokens on a reset; their other accounts stay listed and need a new sign-in.")
    @OptionGroup var options: ClientOptions
    @OptionGroup var flow: BrowserFlowOptions

    func run() async throws {
        let client = try options.makeClient()
        let interrupt = cancelOnInterrupt()
        defer { interrupt.cancel() }
        let (account, dropped, commands) = try await withClient(client) { c -> (Account, [String], [String]) in
            let (account, dropped) = try await c.resetPassword(selector: flow.account, policyName: flow.policy, options: flow.interactive,
                                                              ui: TerminalUI(openBrowser: !flow.noBrowser))
            let others = try dropped.compactMap { try c.store.account(id: $0) }
            return (account, dropped, others.map { c.signInCommand(policy: $0.policy, loginHint: AccountSelection.email($0)) })
        }
        let who = AccountSelection.email(account) ?? account.oid
        writeOut("Password of \(who) reset under \(account.policy).")
        if !dropped.isEmpty {
            writeOut("The tenant revoked the other sign-ins of \(who); to use them again run:")
            for c in commands { writeOut("  \(c)") }
        }
    }
}

struct CallAPICommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "call-api",
        abstract: "Call a protected web API with a token acquired silently for its scopes.",
        discussion: """
            Examples:
              b2c call-api --api hello
              b2c call-api /hello --account bob@contoso.com
              b2c call-api https://api.example.com/items -X POST -H 'X-Trace: 1' -d @item.json --api items
            The status line goes to stderr, the body to stdout (pretty-printed when it is JSON).
            Exit codes: 0 for 2xx, 1 for other answers, 4 when a sign-in is needed, 5 for 5xx and network failures.
            """)
    @OptionGroup var options: ClientOptions
    @Argument(help: "A URL, or a path below the API's base URL (default: the API's base URL).") var target: String?
    @Option(help: "The configured API whose token to use (default: the API whose base URL covers the URL).") var api: String?
    @Option(help: "The policy; default: the signUpSignIn policy.") var policy: String?
    @Option(help: "Email, oid, account id or a unique prefix.") var account: String?
    @Option(name: [.customShort("X"), .customLong("method")], help: "The HTTP method (default GET, or POST with -d).") var method: String?
    @Option(name: [.customShort("H"), .customLong("header")], parsing: .singleValue, help: "A header 'Name: value' (repeatable).") var header: [String] = []
    @Option(name: [.customShort("d"), .customLong("data")], help: "The body; @FILE reads a file, @- reads stdin.") var data: String?
    @Option(help: "Seconds to wait for the API.") var timeout = 30
    @Option(parsing: .singleValue, help: "Another host (host or host:port) the token may be sent to (repeatable).") var allowHost: [String] = []
    @Flag(help: "When a sign-in is needed, sign in in the browser and carry on.") var interactive = false
    @Option(help: "The largest response body to accept, in bytes.") var maxBody = 10 * 1024 * 1024

    func validate() throws {
        guard (1...3600).contains(timeout) else { throw ValidationError("--timeout must be between 1 and 3600 seconds.") }
        if let method, method.isEmpty || !method.allSatisfy({ $0.isLetter }) { throw ValidationError("-X must be an HTTP method such as GET or POST, not '\(method)'.") }
        for h in header {
            guard let colon = h.firstIndex(of: ":"), !h[..<colon].trimmingCharacters(in: .whitespaces).isEmpty else {
                throw ValidationError("-H '\(h)' is not 'Name: value'.")
            }
            if h[..<colon].trimmingCharacters(in: .whitespaces).caseInsensitiveCompare("Authorization") == .orderedSame {
                throw ValidationError("-H Authorization is not allowed: call-api sends the token itself.")
            }
        }
        guard maxBody > 0 else { throw ValidationError("--max-body must be positive.") }
    }

    func body() throws -> Data? {
        guard let data else { return nil }
        guard data.hasPrefix("@") else { return Data(data.utf8) }
        let path = String(data.dropFirst())
        if path == "-" { return FileHandle.standardInput.readDataToEndOfFile() }
        do { return try Data(contentsOf: URL(fileURLWithPath: path)) } catch {
            throw CLIError("cannot read -d @\(path): \(error.localizedDescription)", exitCode: ExitStatus.usage)
        }
    }

    func run() async throws {
        var req = APICallRequest(target: target, api: api)
        req.policy = policy
        req.account = account
        req.body = try body()
        req.method = method?.uppercased() ?? (req.body == nil ? "GET" : "POST")
        req.headers = header.map { h in
            let colon = h.firstIndex(of: ":")!
            return (h[..<colon].trimmingCharacters(in: .whitespaces), h[h.index(after: colon)...].trimmingCharacters(in: .whitespaces))
        }
        if let body = req.body, !req.headers.contains(where: { $0.0.caseInsensitiveCompare("Content-Type") == .orderedSame }) {
            req.headers.append(("Content-Type", (try? JSONValue.parse(body)) != nil ? "application/json" : "application/x-www-form-urlencoded"))
        }
        req.timeoutSeconds = timeout
        req.allowHosts = allowHost
        req.maxBody = maxBody
        let client = try options.makeClient()
        let result = try await withClient(client) { c -> APICallResult in
            do {
                return try await c.callAPI(req)
            } catch let e as B2CError where e.kind == .interactionRequired && interactive {
                let t = try c.target(policy)
                guard t.policy?.role == .signUpSignIn || t.policy?.role == .signIn else { throw e }
                writeErr("\(e.message); signing in in the browser (--interactive)")
                let interrupt = cancelOnInterrupt()
                defer { interrupt.cancel() }
                let hint = account.flatMap { $0.contains("@") ? $0 : nil }
                let api = try c.resolveAPICall(req).1
                let signedIn = try await c.signInInteractively(policyName: t.name, options: InteractiveOptions(loginHint: hint, scopes: api.scopes),
                                                               ui: TerminalUI(openBrowser: true))
                req.account = signedIn.id
                return try await c.callAPI(req)
            }
        }
        for n in result.notices { writeErr(n) }
        let type = result.header("Content-Type") ?? "no content type"
        let who = AccountSelection.email(result.account) ?? result.account.oid
        writeErr("HTTP \(result.status) · \(type) · \(result.body.count) bytes · \(result.url.absoluteString) (as \(who), \(result.account.policy))")
        if type.lowercased().contains("json"), let json = try? JSONValue.parse(result.body) {
            writeOut(json.serialized(pretty: true))
        } else if !result.body.isEmpty {
            FileHandle.standardOutput.write(result.body)
            if result.body.last != UInt8(ascii: "\n"), isatty(STDOUT_FILENO) == 1 { FileHandle.standardOutput.write(Data("\n".utf8)) }
        }
        switch result.status {
        case 200..<300: return
        case 500...: throw CLIError("the API answered HTTP \(result.status)", exitCode: ExitStatus.network)
        default: throw CLIError("the API answered HTTP \(result.status)", exitCode: ExitStatus.error)
        }
    }
}

struct DeviceCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "device", abstract: "Show the device mode (personal or shared) and what sign-out does in it.")
    @OptionGroup var options: ClientOptions
    @Option(help: "table or json (default: table on a terminal, json otherwise).") var output: OutputFormat?

    func run() async throws {
        let client = try options.makeClient()
        try await withClient(client) { c in
            let accounts = try c.store.accounts()
            let people = Set(accounts.map { "\($0.tenantID)/\($0.oid)" }).count
            let shared = c.config.sharedDevice
            let meaning = shared
                ? "signing out any account signs out every account on this device and ends the browser session"
                : "signing out forgets only the accounts named; --browser also ends the browser session"
            switch output ?? .auto {
            case .json:
                writeOut(JSONValue.object(["mode": .string(shared ? "shared" : "personal"), "config": .string(c.config.source),
                                           "store": .string(c.store.path), "accounts": JSONValue(accounts.count), "people": JSONValue(people),
                                           "signOut": .string(meaning)]).serialized(pretty: true))
            case .table:
                writeOut(table([["mode", shared ? "shared" : "personal"], ["config", c.config.source], ["store", c.store.path],
                                ["signed in", "\(people) \(people == 1 ? "person" : "people"), \(accounts.count) account\(accounts.count == 1 ? "" : "s")"],
                                ["sign-out", meaning]]))
            }
        }
    }
}
