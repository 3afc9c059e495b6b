import ArgumentParser
import B2CKit
import Foundation

struct SignInCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "signin",
        abstract: "Sign in to a policy: in the browser (authorization code + PKCE, loopback redirect), with ROPC, or with native auth.",
        discussion: """
            Examples (the browser, ROPC, native auth):
              b2c signin [--policy B2C_1_susi]
              echo "$PASSWORD" | b2c signin --policy B2C_1_ROPC_Auth --username alice@contoso.com --password-stdin
              b2c signin --native --username alice@contoso.com [--password-stdin] [--otp-stdin] [--mfa-method email]
              b2c signin --device-code [-o json]        External ID: a code to type at the tenant's page, on any device
            Passwords and codes are never taken as arguments: they come from stdin or are typed without echo.
            With --no-browser, paste the address the browser ends on when the browser runs on another machine (SSH).
            """,
        aliases: ["login"])
    /// The authorize request's `prompt` values (OpenID Connect's, as B2C takes them).
    static let prompts = ["login", "select_account", "consent", "none"]
    @OptionGroup var options: ClientOptions
    @Option(help: "The policy (user flow) to sign in to; default: the signUpSignIn policy.") var policy: String?
    @Option(help: "login, select_account, consent or none.", completion: .list(SignInCommand.prompts)) var prompt: String?
    @Option(help: "Pre-fill the sign-in name.") var loginHint: String?
    @Option(help: "Go straight to one identity provider (domain_hint), such as facebook.com.") var domainHint: String?
    @Option(help: "The language of the tenant's pages (ui_locales), such as fr or 'fr en'.") var uiLocales: String?
    @OptionGroup var browser: BrowserOptions
    @Option(help: "An API (from the configuration) whose scopes to request.") var api: String?
    @Option(parsing: .singleValue, help: "A scope to request (repeatable); overrides --api.") var scope: [String] = []
    @Option(help: "Sign in without a browser as this user: ROPC (with a policy of role ropc) or, with --native, native auth.") var username:
        String?
    @Flag(help: "Read the password from the first line of stdin (ROPC or native auth).") var passwordStdin = false
    @Flag(help: "Entra External ID native auth (email + password, or email + one-time code) with the configuration's nativeAuth.")
    var native = false
    @Flag(help: "Native auth: read emailed codes line by line from stdin ('resend' asks for a new code); after the password line.")
    var otpStdin = false
    @Option(
        help: "Native auth: the second factor to use or register without asking: email, sms, or a method id.",
        completion: .list(["email", "sms"])) var mfaMethod: String?
    @Option(help: "Native auth: the email address or phone number (E.164) to register when the tenant asks for one.") var mfaTarget: String?
    @Flag(help: "External ID: sign in with a code typed at the tenant's page on any device (the device authorization grant).")
    var deviceCode = false
    @Option(
        name: [.customShort("o"), .long],
        help: "With --device-code: json prints the code and the page as one JSON line on stdout, for scripts (default: words on stderr).")
    var output: OutputFormat?

    func validate() throws {
        if native && username == nil { throw ValidationError("--native needs --username EMAIL.") }
        if (otpStdin || mfaMethod != nil || mfaTarget != nil) && !native {
            throw ValidationError("--otp-stdin, --mfa-method and --mfa-target are for native auth; add --native.")
        }
        if (passwordStdin || username != nil)
            && (prompt != nil || browser.noBrowser || loginHint != nil || domainHint != nil || uiLocales != nil)
        {
            throw ValidationError(
                "--prompt, --login-hint, --domain-hint, --ui-locales and --no-browser are for the browser sign-in, not with --username.")
        }
        for (name, value) in [("--domain-hint", domainHint), ("--ui-locales", uiLocales)] {
            if let value, value.isEmpty || value.contains(where: { $0.isNewline || $0 == "&" || $0 == "#" }) {
                throw ValidationError("\(name) '\(value)' is not a hint: give a domain or language tags.")
            }
        }
        if passwordStdin && username == nil { throw ValidationError("--password-stdin needs --username.") }
        if native && policy != nil { throw ValidationError("--native signs in with the configuration's nativeAuth; drop --policy.") }
        if deviceCode && (native || username != nil || passwordStdin || browser.noBrowser || prompt != nil || policy != nil) {
            throw ValidationError("--device-code is a sign-in of its own: drop --native, --username, --no-browser, --prompt and --policy.")
        }
        if output != nil && !deviceCode { throw ValidationError("-o is for --device-code's code and page.") }
        if let prompt, !Self.prompts.contains(prompt) {
            throw ValidationError("--prompt must be login, select_account, consent or none, not '\(prompt)'.")
        }
    }

    func run() async throws {
        if deviceCode { return try await signInWithDeviceCode() }
        if let username { return try await signInWithoutBrowser(username: username) }
        let client = try options.makeClient()
        let account = try await withInteractiveClient(client) { c -> Account in
            var opts = InteractiveOptions(
                prompt: prompt, loginHint: loginHint, port: browser.port, timeoutSeconds: browser.timeout,
                scopes: try c.config.resourceScopes(api: api, scopes: scope))
            opts.domainHint = domainHint
            opts.uiLocales = uiLocales
            return try await c.signInInteractively(
                policyName: policy,
                options: opts,
                ui: TerminalUI(openBrowser: !browser.noBrowser, verbose: options.verbose))
        }
        let who = account.email ?? account.oid
        writeOut("Signed in as \(who) under \(account.policy) (account \(account.id)).")
        warnIfPlaintext(client)
    }
}

extension SignInCommand {
    /// ROPC or native auth: no browser, the password or code from stdin or the terminal.
    func signInWithoutBrowser(username: String) async throws {
        let client = try options.makeClient()
        let account = try await withInteractiveClient(client) { c -> Account in
            let scopes = try c.config.resourceScopes(api: api, scopes: scope)
            if native {
                // Both from stdin: the password is the first line and the codes (a second factor's) the next ones.
                let mode: NativeMode = passwordStdin ? .password : otpStdin ? .otp : .auto
                return try await c.signInNative(
                    username: username, mode: mode, scopes: scopes,
                    prompter: TerminalNativePrompter(
                        passwordFromStdin: passwordStdin, codesFromStdin: otpStdin, mfaMethod: mfaMethod, mfaTarget: mfaTarget,
                        ownEmail: username))
            }
            let p = try c.config.passwordPolicy(policy)
            let password = try Prompt.password(fromStdin: passwordStdin, prompt: "Password for \(username): ")
            return try await c.signInWithPassword(policyName: p.name, username: username, password: password, scopes: scopes)
        }
        let who = account.email ?? account.oid
        writeOut("Signed in as \(who) under \(account.policy) (account \(account.id)).")
        warnIfPlaintext(client)
    }
}

extension SignInCommand {
    /// The device authorization grant: the code and the page said (words on stderr, or one JSON line), then the poll.
    func signInWithDeviceCode() async throws {
        let client = try options.makeClient()
        let json = output == .json
        let account = try await withInteractiveClient(client) { c -> Account in
            try await c.signInWithDeviceCode(scopes: try c.config.resourceScopes(api: api, scopes: scope)) { prompt in
                if json {
                    let line: JSONValue = [
                        "user_code": .string(prompt.userCode), "verification_uri": .string(prompt.verificationURI),
                        "expires_in": JSONValue(prompt.expiresIn), "message": .string(prompt.message),
                    ]
                    writeOut(line.serialized())
                } else {
                    writeErr(
                        "To sign in, open \(prompt.verificationURI) on any device and enter the code \(prompt.userCode) "
                            + "(it expires in \(prompt.expiresIn / 60) minutes). Waiting… (Ctrl-C cancels)")
                }
            }
        }
        let who = account.email ?? account.oid
        if json {
            let line: JSONValue = ["signedIn": .string(who), "account": .string(account.id), "policy": .string(account.policy)]
            writeOut(line.serialized())
        } else {
            writeOut("Signed in as \(who) under \(account.policy) (account \(account.id)).")
        }
        warnIfPlaintext(client)
    }
}
