import ArgumentParser
import B2CKit
import Foundation

struct ResetPasswordCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "reset-password",
        abstract: "Reset a person's password in the browser (the resetPassword policy), or with --native without one.",
        discussion: """
            Examples (the browser, native auth):
              b2c reset-password [--account alice@contoso.com]
              b2c reset-password --native --username alice@contoso.com [--otp-stdin] [--password-stdin]
            Native auth (Entra External ID) sends a code to the address, asks for the new password (typed twice, or the first \
            line of stdin), and signs the person in with it. The tenant revokes the person's refresh tokens on a reset; their \
            other accounts stay listed and need a new sign-in.
            """)
    @OptionGroup var options: ClientOptions
    @OptionGroup var flow: BrowserFlowOptions
    @Flag(help: "Reset without a browser through Entra External ID native auth (needs --username).") var native = false
    @Option(help: "With --native: the person's email address.") var username: String?
    @Flag(help: "With --native: read the new password from the first line of stdin.") var passwordStdin = false
    @Flag(help: "With --native: read the emailed codes from stdin, one per line (after the password line).") var otpStdin = false
    @Option(
        help: "With --native: the second factor to use or register when the tenant asks: email, sms, or a method id.",
        completion: .list(["email", "sms"])) var mfaMethod: String?
    @Option(help: "With --native: the email address or phone number (E.164) to register when the tenant asks.") var mfaTarget: String?
    @Option(help: "With --native: an API (from the configuration) whose scopes to request.") var api: String?
    @Option(parsing: .singleValue, help: "With --native: a scope to request (repeatable).") var scope: [String] = []

    func validate() throws {
        if native && username == nil { throw ValidationError("--native needs --username EMAIL.") }
        if !native && (username != nil || passwordStdin || otpStdin || api != nil || !scope.isEmpty || mfaMethod != nil || mfaTarget != nil)
        {
            throw ValidationError(
                "--username, --password-stdin, --otp-stdin, --mfa-method, --mfa-target, --api and --scope are for --native.")
        }
        if native && (flow.account != nil || flow.policy != nil || flow.noBrowser) {
            throw ValidationError("--account, --policy and --no-browser are for the browser reset, not with --native.")
        }
    }

    func run() async throws {
        if native, let username { return try await resetNatively(username: username) }
        let client = try options.makeClient()
        let (account, dropped, remedies) = try await withInteractiveClient(client) { c -> (Account, [Account], [Remedy]) in
            let (account, dropped) = try await c.resetPassword(
                selector: flow.account, policyName: flow.policy, options: flow.interactive,
                ui: TerminalUI(openBrowser: !flow.noBrowser, verbose: options.verbose))
            return (account, dropped, c.signInRemedies(for: dropped))
        }
        let commands = remedies.compactMap { remedy -> String? in
            guard case let .signIn(policy, method, hint) = remedy else { return nil }
            return CLIError.signInCommandLine(policy: policy, method: method, loginHint: hint)
        }
        let who = account.email ?? account.oid
        writeOut("Password of \(who) reset under \(account.policy).")
        // B2C revokes the person's refresh tokens on a reset: every sign-in made before it is over, here and elsewhere.
        if dropped.isEmpty {
            writeOut("The reset revoked the earlier sign-ins of \(who) (their refresh tokens); none was kept on this machine.")
        } else {
            writeOut("The reset revoked the earlier sign-ins of \(who) (their refresh tokens); to use them again here run:")
            for c in commands { writeOut("  \(c)") }
        }
    }
}

extension ResetPasswordCommand {
    func resetNatively(username: String) async throws {
        let client = try options.makeClient()
        let preset = passwordStdin ? try Prompt.password(fromStdin: true, prompt: "") : nil
        let account = try await withInteractiveClient(client) { c -> Account in
            try await c.resetPasswordNative(
                username: username, scopes: try c.config.resourceScopes(api: api, scopes: scope),
                prompter: TerminalNativePrompter(
                    passwordFromStdin: passwordStdin, codesFromStdin: otpStdin, presetPassword: preset, mfaMethod: mfaMethod,
                    mfaTarget: mfaTarget, ownEmail: username))
        }
        let who = account.email ?? account.oid
        writeOut("Password of \(who) reset; signed in with it under \(account.policy) (account \(account.id)).")
        writeOut("The reset revoked the earlier sign-ins of \(who) elsewhere (their refresh tokens).")
        warnIfPlaintext(client)
    }
}
