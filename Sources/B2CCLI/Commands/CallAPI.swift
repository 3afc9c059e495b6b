import ArgumentParser
import B2CKit
import Foundation

struct CallAPICommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "call-api",
        abstract: "Call a protected web API with a token acquired silently for its scopes.",
        discussion: """
            Examples:
              b2c call-api --api hello
              b2c call-api /hello --account bob@contoso.com
              b2c call-api https://api.example.com/items -X POST -H 'X-Trace: 1' -d @item.json --api items
              b2c call-api --api graph /me -X PATCH -d '{"jobTitle":"Engineer"}' --scope User.ReadWrite
              B2C_CLIENT_SECRET=… b2c call-api --app /hello      as the app itself (client credentials)
            The status line goes to stderr, the body to stdout (pretty-printed when it is JSON).
            Exit codes: 0 for 2xx, 1 for other answers, 4 when a sign-in is needed, 5 for 5xx and network failures.
            """)
    @OptionGroup var options: ClientOptions
    @Argument(help: "A URL, or a path below the API's base URL (default: the API's base URL).") var target: String?
    @Option(help: "The configured API whose token to use (default: the API whose base URL covers the URL).") var api: String?
    @Option(
        parsing: .singleValue,
        help: "A scope of the person's token (repeatable), instead of the API's configured ones: e.g. User.ReadWrite for PATCH /me.")
    var scope: [String] = []
    @Option(help: "The policy; default: the signUpSignIn policy.") var policy: String?
    @Option(help: "Email, oid, account id or a unique prefix.") var account: String?
    @Flag(help: "Call as the app itself: its own token (client credentials with its secret), no person.") var app = false
    @Option(name: [.customShort("X"), .customLong("method")], help: "The HTTP method (default GET, or POST with -d).") var method: String?
    @Option(name: [.customShort("H"), .customLong("header")], parsing: .singleValue, help: "A header 'Name: value' (repeatable).")
    var header: [String] = []
    @Option(name: [.customShort("d"), .customLong("data")], help: "The body; @FILE reads a file, @- reads stdin.") var data: String?
    @Option(help: "Seconds to wait for the API.") var timeout = 30
    @Option(parsing: .singleValue, help: "Another host (host or host:port) the token may be sent to (repeatable).") var allowHost:
        [String] = []
    @Flag(help: "When a sign-in is needed, sign in in the browser and carry on.") var interactive = false
    @Option(help: "The largest response body to accept, in bytes.") var maxBody = 10 * 1024 * 1024
    @Option(
        name: [.customShort("o"), .long],
        help: "table or json: how a Microsoft Graph user (/me) is printed (default: table on a terminal, json otherwise).")
    var output: OutputFormat?

    func validate() throws {
        guard (1...3600).contains(timeout) else { throw ValidationError("--timeout must be between 1 and 3600 seconds.") }
        if let method, method.isEmpty || !method.allSatisfy({ $0.isLetter }) {
            throw ValidationError("-X must be an HTTP method such as GET or POST, not '\(method)'.")
        }
        for h in header {
            guard let colon = h.firstIndex(of: ":"), !h[..<colon].trimmingCharacters(in: .whitespaces).isEmpty else {
                throw ValidationError("-H '\(h)' is not 'Name: value'.")
            }
            if h[..<colon].trimmingCharacters(in: .whitespaces).caseInsensitiveCompare("Authorization") == .orderedSame {
                throw ValidationError("-H Authorization is not allowed: call-api sends the token itself.")
            }
        }
        guard maxBody > 0 else { throw ValidationError("--max-body must be positive.") }
        if app && (account != nil || interactive) {
            throw ValidationError("--app calls as the app: --account and --interactive name a person.")
        }
        if app && !scope.isEmpty {
            throw ValidationError("--app calls with the app's own token (<App ID URI>/.default): --scope is for a person's token.")
        }
        if let empty = scope.first(where: { $0.trimmingCharacters(in: .whitespaces).isEmpty || $0.contains(" ") }) {
            throw ValidationError("--scope takes one scope per option, not '\(empty)'.")
        }
    }

    func body() throws -> Data? {
        guard let data else { return nil }
        guard data.hasPrefix("@") else { return Data(data.utf8) }
        let path = String(data.dropFirst())
        if path == "-" { return FileHandle.standardInput.readDataToEndOfFile() }
        do { return try LocalFile.read(path) } catch {
            throw CLIError("cannot read -d @\(path): the file \(error.reason)", exitCode: ExitStatus.usage)
        }
    }

    func run() async throws {
        var req = APICallRequest(url: target, api: api)
        req.scopes = scope.isEmpty ? nil : scope
        req.policy = policy
        req.account = account
        req.app = app
        req.body = try body()
        req.method = method?.uppercased() ?? (req.body == nil ? "GET" : "POST")
        req.headers = header.map { h in
            let colon = h.firstIndex(of: ":")!
            return (h[..<colon].trimmingCharacters(in: .whitespaces), h[h.index(after: colon)...].trimmingCharacters(in: .whitespaces))
        }
        if let body = req.body, !req.headers.contains(where: { $0.0.caseInsensitiveCompare("Content-Type") == .orderedSame }) {
            req.headers.append(
                ("Content-Type", (try? JSONValue.parse(body)) != nil ? "application/json" : "application/x-www-form-urlencoded"))
        }
        req.timeoutSeconds = timeout
        req.allowHosts = allowHost
        req.maxBody = maxBody
        let client = try options.makeClient()
        let request = req
        let result =
            interactive
            ? try await withInteractiveClient(client) { c -> APICallResult in
                try await c.callAPI(request, ui: TerminalUI(openBrowser: true, verbose: options.verbose))
            }
            : try await withClient(client) { try await $0.callAPI(request) }
        for n in result.notices { writeErr(n) }
        let type = result.header("Content-Type") ?? "no content type"
        let who =
            result.account.map { "as \($0.email ?? $0.oid), \($0.policy)" } ?? "as the app \(client.config.clientID)"
        writeErr("HTTP \(result.status) · \(type) · \(result.body.count) bytes · \(result.url.absoluteString) (\(who))")
        if type.lowercased().contains("json"), let json = try? JSONValue.parse(result.body) {
            if (output ?? .auto) == .table, let user = Self.graphUser(json) {
                writeOut(table([["PROPERTY", "VALUE"]] + user))
            } else {
                writeOut(json.serialized(pretty: true))
            }
        } else {
            Output.writeBody(result.body)
        }
        switch result.status {
        case 200..<300: return
        case 500...: throw CLIError("the API answered HTTP \(result.status)", exitCode: ExitStatus.network)
        default: throw CLIError("the API answered HTTP \(result.status)", exitCode: ExitStatus.error)
        }
    }

    /// A Microsoft Graph user (`/me`, `/users/{id}`) as rows of its properties that have a value, in Graph's order.
    static func graphUser(_ json: JSONValue) -> [[String]]? {
        guard let o = json.objectValue, let context = o["@odata.context"]?.stringValue, context.contains("#users") else { return nil }
        let order = [
            "displayName", "givenName", "surname", "mail", "userPrincipalName", "id", "jobTitle", "mobilePhone", "businessPhones",
            "officeLocation", "preferredLanguage", "city", "state", "country", "postalCode", "streetAddress", "createdDateTime",
        ]
        let names = order.filter { o[$0] != nil } + o.keys.filter { !order.contains($0) && !$0.hasPrefix("@") }.sorted()
        return names.compactMap { name -> [String]? in
            switch o[name] {
            case .string(let s)?: return [name, s]
            case .array(let items)? where !items.isEmpty:
                return [name, items.map { $0.stringValue ?? $0.serialized() }.joined(separator: ", ")]
            case .number?, .bool?: return [name, o[name]!.serialized()]
            case .object(let inner)? where !inner.isEmpty: return [name, o[name]!.serialized()]
            default: return nil
            }
        }
    }
}
