import ArgumentParser
import B2CKit
import Foundation

struct SignUpCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "signup",
        abstract: "Sign a new person up without a browser (Entra External ID native auth), then keep them signed in.",
        discussion: """
            Example:
              b2c signup --username erin@contoso.com [--attribute displayName=Erin ...]
            The tenant sends a code to the address; then it asks for a password (typed twice, or the first line of stdin with \
            --password-stdin) and every attribute its user flow requires that --attribute did not give (asked at a terminal).
            With --otp-stdin the codes are the next lines of stdin. Sign-up in the browser is the sign-in page's \
            "Sign up now" link: b2c signin.
            """)
    @OptionGroup var options: ClientOptions
    @Option(help: "The new person's email address.") var username: String
    @Flag(help: "Native auth (the only way to sign up without a browser; the default).") var native = false
    @Option(
        name: .customLong("attribute"), parsing: .singleValue,
        help: ArgumentHelp(
            "An attribute the tenant collects, as NAME=VALUE (repeatable), such as displayName=Erin.", valueName: "name=value"))
    var attributes: [String] = []
    @Flag(help: "Sign up without a password: the person signs in with emailed codes.") var passwordless = false
    @Flag(help: "Read the new password from the first line of stdin.") var passwordStdin = false
    @Flag(help: "Read the emailed codes from stdin, one per line ('resend' asks for a new one).") var otpStdin = false
    @Option(help: "A second factor the tenant asks the new account to register: email or sms.", completion: .list(["email", "sms"]))
    var mfaMethod: String?
    @Option(help: "The email address or phone number (E.164) to register (default: the new account's address).") var mfaTarget: String?
    @Option(help: "An API (from the configuration) whose scopes to request.") var api: String?
    @Option(parsing: .singleValue, help: "A scope to request (repeatable); overrides --api.") var scope: [String] = []

    func validate() throws {
        if passwordless && passwordStdin { throw ValidationError("--passwordless signs up without a password; drop --password-stdin.") }
        _ = try parsedAttributes()
    }

    func parsedAttributes() throws -> [String: String] {
        var out: [String: String] = [:]
        for a in attributes {
            guard let eq = a.firstIndex(of: "="), eq != a.startIndex else {
                throw ValidationError("--attribute '\(a)' is not NAME=VALUE (such as displayName=Erin).")
            }
            let name = String(a[..<eq])
            guard out[name] == nil else { throw ValidationError("--attribute \(name) is given twice.") }
            out[name] = String(a[a.index(after: eq)...])
        }
        return out
    }

    func run() async throws {
        let client = try options.makeClient()
        let attrs = try parsedAttributes()
        let preset = passwordStdin ? try Prompt.password(fromStdin: true, prompt: "") : nil
        let account = try await withInteractiveClient(client) { c -> Account in
            try await c.signUpNative(
                username: username, mode: passwordless ? .otp : .auto, attributes: attrs,
                scopes: try c.config.resourceScopes(api: api, scopes: scope),
                prompter: TerminalNativePrompter(
                    passwordFromStdin: passwordStdin, codesFromStdin: otpStdin, presetPassword: preset, mfaMethod: mfaMethod,
                    mfaTarget: mfaTarget, ownEmail: username))
        }
        let who = account.email ?? account.oid
        writeOut("Signed up and signed in as \(who) under \(account.policy) (account \(account.id)).")
        warnIfPlaintext(client)
    }
}
