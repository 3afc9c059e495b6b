import ArgumentParser
import B2CFastPath
import B2CKit
import Foundation

struct TokenCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "token", abstract: "Print an access token, from the cache or refreshed silently.",
        discussion: """
            Examples:
              b2c token --api hello                      a person's token (the current account of the sign-in policy)
              b2c token --app --api hello                the app's own token (client credentials; the secret from
                                                         B2C_CLIENT_SECRET, --client-secret-stdin or clientSecretFile)
              b2c token --decode                         the token's claims instead of the token
            """)
    @OptionGroup var options: ClientOptions
    @Option(help: "The policy; default: the signUpSignIn policy.") var policy: String?
    @Option(help: "Email, oid, account id or a unique prefix.") var account: String?
    @Flag(help: "The app's own token (client credentials with its secret): no person, scope <App ID URI>/.default.") var app = false
    @Flag(help: "Print the token's header and claims (unverified) instead of the token.") var decode = false
    @Option(help: "An API (from the configuration) whose scopes to use.") var api: String?
    @Option(parsing: .singleValue, help: "A scope (repeatable); overrides --api.") var scope: [String] = []
    @Option(parsing: .unconditional, help: "Refresh when fewer than this many seconds are left (any integer).") var minValid = 300
    @Flag(help: "Refresh even when the cached token is fresh.") var forceRefresh = false
    @Option(help: "raw, bearer, header or json.") var format: TokenFormat?
    @Option(name: [.customShort("o"), .long], help: "The same as --format (json for a JSON object).") var output: TokenFormat?

    func validate() throws {
        if let format, let output, format != output {
            throw ValidationError("--format \(format.rawValue) and --output \(output.rawValue) disagree; give one.")
        }
        if app && account != nil { throw ValidationError("--account names a person; an app token (--app) has none.") }
        if app && scope.count > 1 { throw ValidationError("--app takes one --scope <App ID URI>/.default.") }
        if decode && (format ?? output).map({ $0 != .json && $0 != .raw }) == true {
            throw ValidationError("--decode prints claims: as a table, or with -o json.")
        }
    }

    var arguments: TokenArguments {
        TokenArguments(
            client: options.settings, policy: policy, account: account, api: api, scopes: scope, minValid: minValid,
            forceRefresh: forceRefresh, format: format ?? output ?? .raw, app: app, decode: decode)
    }

    func run() async throws { try await arguments.run() }
}

/// What `b2c token` was asked, as plain values.
struct TokenArguments: Equatable {
    var client = ClientSettings()
    var policy: String?
    var account: String?
    var api: String?
    var scopes: [String] = []
    var minValid = 300
    var forceRefresh = false
    var format: TokenFormat = .raw
    var app = false
    var decode = false

    func run() async throws {
        let client = try client.makeClient()
        if app { return try await runApp(client) }
        let generation = client.storeGeneration()
        let result = try await withClient(client) { c in
            try await c.acquireTokenSilently(
                policyName: policy, selector: account, scopes: try c.config.tokenScopes(api: api, scopes: scopes),
                minValid: minValid, forceRefresh: forceRefresh)
        }
        if let notice = result.notice { writeErr(notice) }
        let t = result.accessToken
        try write(
            t.secret, expiresOn: t.expiresOn, now: client.now(),
            json: [
                "scopes": .string(t.target), "accountId": .string(result.account.id), "policy": .string(result.account.policy),
                "fromCache": .bool(result.fromCache),
            ])
        fileFastAnswer(client, result, generationBefore: generation)
    }

    /// A cache hit that said nothing on stderr is filed for the fast path (`b2c` answers the same question again without
    /// the full client: Sources/b2c/main.swift), under the question the command line and the environment ask.
    func fileFastAnswer(_ client: B2CClient, _ result: SilentResult, generationBefore: Int?) {
        guard !decode, !StandardError.used.withLock({ $0 }) else { return }
        let environment = ProcessEnvironment.current()
        guard environment["B2C_FAST_PATH"] != "off",
            let question = TokenQuestion(
                arguments: Array(CommandLine.arguments.dropFirst()), environment: environment,
                workingDirectory: FileManager.default.currentDirectoryPath)
        else { return }
        client.fileFastAnswer(
            question: question.key, result: result, generationBefore: generationBefore,
            configurationFound: StandardError.foundConfiguration.withLock { $0 })
    }

    /// The token in the asked format (or its claims with `--decode`); `json` adds what identifies it.
    func write(_ secret: String, expiresOn: Int, now: Int, json extra: [String: TokenText.Field]) throws {
        if decode { return try Output.writeDecodedJWT(secret, format: format == .json ? .json : .table, now: now) }
        try Output.writeToken(secret, expiresOn: expiresOn, format: format, json: extra)
    }

    /// `--app`: the app's own token for `<App ID URI>/.default`.
    func runApp(_ client: B2CClient) async throws {
        let result = try await withClient(client) { c in
            try await c.acquireAppToken(
                resource: try c.config.appResource(api: api, scope: scopes.first), policyName: policy, minValid: minValid,
                forceRefresh: forceRefresh)
        }
        if let notice = result.notice { writeErr(notice) }
        let t = result.token
        try write(
            t.secret, expiresOn: t.expiresOn, now: client.now(),
            json: [
                "resource": .string(t.resource), "clientId": .string(t.clientID), "policy": .string(t.policy),
                "fromCache": .bool(result.fromCache),
            ])
    }

    /// The plain forms of `b2c token …`, read by the reader the fast path uses (`TokenCommandLine`) without ArgumentParser;
    /// nil leaves the command to ArgumentParser and its messages.
    static func fastParse(_ arguments: [String]) -> TokenArguments? {
        guard let line = TokenCommandLine(arguments) else { return nil }
        var r = TokenArguments()
        (r.forceRefresh, r.app, r.client.clientSecretStdin, r.client.verbose) = (
            line.forceRefresh, line.app, line.clientSecretStdin, line.verbose
        )
        (r.client.config, r.client.profile) = (line.config, line.profile)
        if let timeout = line.httpTimeout { r.client.httpTimeout = timeout }
        (r.policy, r.account, r.api, r.scopes, r.minValid, r.format) = (
            line.policy, line.account, line.api, line.scopes, line.minValid, line.format
        )
        // Combinations ArgumentParser refuses with a message go to it.
        if (r.client.config != nil && r.client.profile != nil) || (r.app && (r.account != nil || r.scopes.count > 1)) { return nil }
        return r
    }
}
