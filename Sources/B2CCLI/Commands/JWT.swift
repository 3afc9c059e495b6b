import ArgumentParser
import B2CKit
import Foundation

struct JWTCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "jwt", abstract: "Look inside a token: its claims (decode), or whether an API would accept it (verify).",
        subcommands: [JWTDecodeCommand.self, JWTVerifyCommand.self])
}

/// The token to look at: the argument, or standard input for `-` or none. A pasted `Bearer …` or
/// `Authorization: Bearer …` is taken as the token it carries.
struct TokenInput: ParsableArguments {
    @Argument(help: "The token, or - (the default) to read it from standard input, e.g. `b2c token | b2c jwt decode`.")
    var token: String?

    func read() throws -> String {
        let raw: String
        if let token, token != "-" {
            writeErr("note: a token given as an argument shows in `ps` and the shell history; prefer `b2c token | b2c jwt …`")
            raw = token
        } else {
            if isatty(STDIN_FILENO) == 1 { writeErr("reading the token from standard input (paste it, then Ctrl-D)") }
            raw = String(decoding: FileHandle.standardInput.readDataToEndOfFile(), as: UTF8.self)
        }
        var text = raw.trimmingCharacters(in: .whitespacesAndNewlines)
        for prefix in ["Authorization:", "Bearer "] where text.lowercased().hasPrefix(prefix.lowercased()) {
            text = String(text.dropFirst(prefix.count)).trimmingCharacters(in: .whitespaces)
        }
        guard !text.isEmpty else { throw CLIError("no token given (an argument, or on standard input)", exitCode: ExitStatus.usage) }
        return text
    }
}

struct JWTDecodeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "decode", abstract: "Print a token's header and claims, with times as dates. Nothing is verified.",
        discussion: """
            Examples:
              b2c token | b2c jwt decode
              b2c jwt decode -o json < token.txt
            Exit codes: 0 decoded, 1 not a JWT (the message says which part is wrong), 64 no token.
            """)
    @OptionGroup var input: TokenInput
    @OptionGroup var output: OutputOptions

    func run() throws {
        try Output.writeDecodedJWT(try input.read(), format: output.format, now: Int(Date().timeIntervalSince1970))
    }
}

struct JWTVerifyCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "verify", abstract: "Check a token as an API would: signature, issuer, audience, lifetime, policy.",
        discussion: """
            The policy's discovery document and key set are fetched (the policy the token names, or --policy); each failed \
            check says why in B2C terms (a key of the other policy type, another issuer host, an id token where an access \
            token was expected).
            Examples:
              b2c token --api hello | b2c jwt verify --api hello
              b2c jwt verify --policy B2C_1A_signup_signin < token.txt
            With the tenant down, the cached discovery document and key set are used (said on stderr), whatever their age.
            Exit codes: 0 valid, 1 invalid (every reason listed), 3 configuration, 5 the tenant could not be reached and \
            nothing of it is cached.
            """)
    @OptionGroup var options: ClientOptions
    @OptionGroup var input: TokenInput
    @Option(help: "Check against this policy (default: the policy the token names).") var policy: String?
    @Option(
        help: ArgumentHelp(
            "The configured API the token is meant for: a person's token must have one of its scopes in scp, an app-only token "
                + "application permissions; never an id token.")) var api: String?
    @Option(help: "The exact aud expected (the API's application id).") var audience: String?
    @OptionGroup var output: OutputOptions

    func run() async throws {
        let token = try input.read()
        let client = try options.makeClient()
        let result = try await withClient(client) { c in
            try await c.verifyToken(token, policyName: policy, api: api, audience: audience)
        }
        if let why = result.tenantUnreachable {
            let when = result.keysFetchedAt.map { " cached \(Output.dateAndRelative($0, now: client.now()))" } ?? ""
            writeErr("the tenant could not be reached (\(why)); the token was checked with the discovery document and key set\(when)")
        }
        switch output.format {
        case .json:
            writeOut(
                JSONValue.object([
                    "keys": [
                        "fetchedAt": result.keysFetchedAt.map { JSONValue($0) } ?? .null, "fromCache": .bool(result.keysFromCache),
                        "tenantUnreachable": result.tenantUnreachable.map { .string($0) } ?? .null,
                    ],
                    "valid": .bool(result.valid), "policy": .string(result.policy), "subject": .string(result.subject.rawValue),
                    "checks": .array(result.checks.map { ["name": .string($0.name), "ok": .bool($0.ok), "detail": .string($0.detail)] }),
                    "claims": .object(result.claims),
                ]).serialized(pretty: true))
        case .table:
            writeOut(table(result.checks.map { [$0.ok ? "ok" : "FAIL", $0.name, $0.detail] }))
        }
        guard result.valid else {
            let failed = result.checks.filter { !$0.ok }
            throw CLIError(
                "the token is not valid for \(result.policy) (\(result.subject.phrase)): "
                    + failed.map { "\($0.name) \($0.detail)" }.joined(separator: "; "),
                exitCode: ExitStatus.error)
        }
        writeErr("the token is valid for \(result.policy) (\(result.subject.phrase))")
    }
}
