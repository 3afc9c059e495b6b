import ArgumentParser
import B2CKit
import Dispatch
import Foundation

/// Shows the URL and opens the browser: `$BROWSER` (a `:`-separated list; `%s` is the URL), then xdg-open / open.
struct TerminalUI: InteractionUI {
    let openBrowser: Bool

    func present(url: URL, purpose: String) async {
        writeErr("to \(purpose), open:\n  \(url.absoluteString)")
        guard openBrowser else { return }
        var commands: [String] = []
        if let env = ProcessInfo.processInfo.environment["BROWSER"], !env.isEmpty {
            commands = env.split(separator: ":").map(String.init)
        }
        #if os(macOS)
        commands.append("open")
        #else
        commands.append("xdg-open")
        #endif
        for command in commands {
            // The URL is passed as "$1", never spliced into the shell text.
            let line = command.contains("%s") ? command.replacingOccurrences(of: "%s", with: "\"$1\"") : "\(command) \"$1\""
            let p = Process()
            p.executableURL = URL(fileURLWithPath: "/bin/sh")
            p.arguments = ["-c", "exec \(line)", "sh", url.absoluteString]
            p.standardInput = FileHandle.nullDevice
            p.standardOutput = FileHandle.standardError
            do {
                try p.run()
                return
            } catch {
                continue
            }
        }
        writeErr("could not start a browser; open the URL above yourself")
    }

    func progress(_ text: String) { writeErr(text) }
}

/// Ctrl-C during an interactive flow: say so and exit 2; nothing has been written yet.
func cancelOnInterrupt() -> DispatchSourceSignal {
    signal(SIGINT, SIG_IGN)
    let source = DispatchSource.makeSignalSource(signal: SIGINT, queue: .global())
    source.setEventHandler {
        Prompt.restoreTerminal()
        writeErr("cancelled (Ctrl-C); nothing was stored")
        Foundation.exit(ExitStatus.cancelled)
    }
    source.resume()
    return source
}

struct SignInCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "signin",
        abstract: "Sign in to a policy: in the browser (authorization code + PKCE, loopback redirect), with ROPC, or with native auth.",
        discussion: """
            Browser:     b2c signin [--policy B2C_1_susi]
            ROPC:        echo "$PASSWORD" | b2c signin --policy B2C_1_ROPC_Auth --username alice@contoso.com --password-stdin
            Native auth: b2c signin --native --username alice@contoso.com [--password-stdin | --otp-stdin]
            Passwords and codes are never taken as arguments: they come from stdin or are typed without echo.
            """)
    @OptionGroup var options: ClientOptions
    @Option(help: "The policy (user flow) to sign in to; default: the signUpSignIn policy.") var policy: String?
    @Option(help: "login, select_account, consent or none.") var prompt: String?
    @Option(help: "Pre-fill the sign-in name.") var loginHint: String?
    @Flag(help: "Print the URL only; do not start a browser.") var noBrowser = false
    @Option(help: "Port of the loopback redirect listener (0 = any free port).") var port = 0
    @Option(help: "Seconds to wait for the browser.") var timeout = 300
    @Option(help: "An API (from the configuration) whose scopes to request.") var api: String?
    @Option(parsing: .singleValue, help: "A scope to request (repeatable); overrides --api.") var scope: [String] = []
    @Option(help: "Sign in without a browser as this user: ROPC (with a policy of role ropc) or, with --native, native auth.") var username: String?
    @Flag(help: "Read the password from the first line of stdin (ROPC or native auth).") var passwordStdin = false
    @Flag(help: "Entra External ID native auth (email + password, or email + one-time code) with the configuration's nativeAuth.") var native = false
    @Flag(help: "Native auth with an emailed one-time code, read line by line from stdin ('resend' asks for a new code).") var otpStdin = false

    func validate() throws {
        if native && username == nil { throw ValidationError("--native needs --username EMAIL.") }
        if passwordStdin && otpStdin { throw ValidationError("--password-stdin and --otp-stdin exclude each other; give one.") }
        if otpStdin && !native { throw ValidationError("--otp-stdin is for native auth; add --native.") }
        if (passwordStdin || username != nil) && (prompt != nil || noBrowser || loginHint != nil) {
            throw ValidationError("--prompt, --login-hint and --no-browser are for the browser sign-in, not with --username.")
        }
        if passwordStdin && username == nil { throw ValidationError("--password-stdin needs --username.") }
        if native && policy != nil { throw ValidationError("--native signs in with the configuration's nativeAuth; drop --policy.") }
        if let prompt, !["login", "select_account", "consent", "none"].contains(prompt) {
            throw ValidationError("--prompt must be login, select_account, consent or none, not '\(prompt)'.")
        }
        guard (0...65535).contains(port) else { throw ValidationError("--port must be between 0 and 65535.") }
        guard timeout > 0 else { throw ValidationError("--timeout must be a positive number of seconds.") }
    }

    func run() async throws {
        if let username { return try await signInWithoutBrowser(username: username) }
        let client = try options.makeClient()
        let interrupt = cancelOnInterrupt()
        defer { interrupt.cancel() }
        let account = try await withClient(client) { c -> Account in
            let p = try policy.map { try c.policy($0) } ?? c.defaultPolicy()
            let scopes = try c.resourceScopes(api: api, scopes: scope)
            return try await c.signInInteractively(
                policyName: p.name,
                options: InteractiveOptions(prompt: prompt, loginHint: loginHint, port: port, timeoutSeconds: timeout, scopes: scopes),
                ui: TerminalUI(openBrowser: !noBrowser))
        }
        let who = AccountSelection.email(account) ?? account.oid
        writeOut("Signed in as \(who) under \(account.policy) (account \(account.id)).")
    }
}

extension SignInCommand {
    /// ROPC or native auth: no browser, the password or code from stdin or the terminal.
    func signInWithoutBrowser(username: String) async throws {
        let client = try options.makeClient()
        let interrupt = cancelOnInterrupt()
        defer { interrupt.cancel() }
        let account = try await withClient(client) { c -> Account in
            let scopes = try c.resourceScopes(api: api, scopes: scope)
            if native {
                let mode: NativeMode = passwordStdin ? .password : otpStdin ? .otp : .auto
                return try await c.signInNative(username: username, mode: mode, scopes: scopes,
                                                prompter: TerminalNativePrompter(passwordFromStdin: passwordStdin, codesFromStdin: otpStdin))
            }
            let policyName: String
            if let policy { policyName = policy } else {
                guard let ropc = c.config.policies(role: .ropc).first else {
                    throw B2CError(.configuration, "--username signs in with ROPC, but \(c.config.source) has no policy of role ropc (or use --native)")
                }
                policyName = ropc.name
            }
            let p = try c.policy(policyName)
            guard p.role == .ropc else {
                throw B2CError(.usage, "--username needs a policy of role ropc; \(p.name) has role \(p.role.rawValue). Sign in to it in the browser, or use --native")
            }
            let password = try Prompt.password(fromStdin: passwordStdin, prompt: "Password for \(username): ")
            return try await c.signInWithPassword(policyName: p.name, username: username, password: password, scopes: scopes)
        }
        let who = AccountSelection.email(account) ?? account.oid
        writeOut("Signed in as \(who) under \(account.policy) (account \(account.id)).")
    }
}
