import ArgumentParser
import B2CKit
import Dispatch
import Foundation

/// Shows the URL and opens the browser: `$BROWSER` (a `:`-separated list; `%s` is the URL), then xdg-open / open.
/// With `--no-browser` it also reads, from stdin, the address the browser ended on (for a browser on another machine).
struct TerminalUI: InteractionUI {
    let openBrowser: Bool

    func present(url: URL, purpose: String) async {
        writeErr("to \(purpose), open:\n  \(url.absoluteString)")
        if openBrowser {
            BrowserLauncher.open(url)
        } else {
            writeErr("if the browser runs on another machine, paste here the address it ends on (http://localhost:…/?code=…)")
        }
    }

    func progress(_ text: String) { writeErr(text) }

    func pastedAnswers() -> AsyncStream<String>? { openBrowser ? nil : StdinLines.shared.subscribe() }

    func pastedAnswerRefused(_ reason: String) { writeErr(reason) }
}

/// Starts the browser in the background, trying each `$BROWSER` entry, then the platform's opener. An entry that cannot
/// start or exits non-zero makes way for the next; when none works, the person is told to open the URL (which is printed)
/// and the wait goes on.
enum BrowserLauncher {
    static func commands(environment: [String: String] = ProcessInfo.processInfo.environment) -> [String] {
        var commands = (environment["BROWSER"] ?? "").split(separator: ":").map(String.init).filter { !$0.isEmpty }
        #if os(macOS)
        commands.append("open")
        #else
        commands.append("xdg-open")
        #endif
        return commands
    }

    static func open(_ url: URL) {
        let commands = commands()
        Thread {
            for (i, command) in commands.enumerated() {
                switch run(command, url: url) {
                case .started: return
                case .failed(let why): writeErr("the browser command '\(command)' \(why)" + (i < commands.count - 1 ? "; trying the next one" : ""))
                }
            }
            writeErr("could not start a browser; open the URL above yourself (the sign-in keeps waiting)")
        }.start()
    }

    enum Outcome { case started, failed(String) }

    /// Runs one entry and waits for it: exit 0 (a launcher that handed the URL over, or a browser that finished) or still
    /// running is a start; a non-zero exit or a failure to start is not.
    static func run(_ command: String, url: URL) -> Outcome {
        // The URL is passed as "$1", never spliced into the shell text.
        let line = command.contains("%s") ? command.replacingOccurrences(of: "%s", with: "\"$1\"") : "\(command) \"$1\""
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/bin/sh")
        p.arguments = ["-c", line, "sh", url.absoluteString]
        p.standardInput = FileHandle.nullDevice
        p.standardOutput = FileHandle.standardError
        p.standardError = FileHandle.standardError
        do { try p.run() } catch { return .failed("could not start (\(error.localizedDescription))") }
        p.waitUntilExit()
        if p.terminationReason == .uncaughtSignal { return .failed("was killed by signal \(p.terminationStatus)") }
        switch p.terminationStatus {
        case 0: return .started
        case 126, 127: return .failed("was not found or could not run (exit \(p.terminationStatus))")
        default: return .failed("failed (exit \(p.terminationStatus))")
        }
    }
}

/// Lines of stdin, read once by one thread for the whole process and handed to whoever listens now (one sign-in after
/// another may wait for a pasted address; a line nobody waits for is dropped).
final class StdinLines: @unchecked Sendable {
    static let shared = StdinLines()
    private let lock = NSLock()
    private var current: AsyncStream<String>.Continuation?
    private var started = false
    private var ended = false

    func subscribe() -> AsyncStream<String> {
        let (stream, continuation) = AsyncStream<String>.makeStream()
        let startReader = lock.withLock { () -> Bool in
            current?.finish()
            current = continuation
            if ended { continuation.finish() }
            defer { started = true }
            return !started
        }
        if startReader {
            Thread { [self] in
                while let line = Prompt.line() {
                    let target = lock.withLock { current }
                    target?.yield(line)
                }
                lock.withLock {
                    ended = true
                    current?.finish()
                }
            }.start()
        }
        return stream
    }
}

/// Ctrl-C (and SIGTERM) during an interactive flow: say so and exit 2; nothing has been written yet. `cleanup` runs first.
func cancelOnInterrupt(message: String? = nil, cleanup: (@Sendable () -> Void)? = nil) -> [DispatchSourceSignal] {
    [SIGINT, SIGTERM].map { sig in
        signal(sig, SIG_IGN)
        let source = DispatchSource.makeSignalSource(signal: sig, queue: .global())
        source.setEventHandler {
            Prompt.restoreTerminal()
            cleanup?()
            writeErr(message ?? "cancelled (\(sig == SIGINT ? "Ctrl-C" : "SIGTERM")); nothing was stored")
            Foundation.exit(ExitStatus.cancelled)
        }
        source.resume()
        return source
    }
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
            With --no-browser, paste the address the browser ends on when the browser runs on another machine (SSH).
            """,
        aliases: ["login"])
    @OptionGroup var options: ClientOptions
    @Option(help: "The policy (user flow) to sign in to; default: the signUpSignIn policy.") var policy: String?
    @Option(help: "login, select_account, consent or none.") var prompt: String?
    @Option(help: "Pre-fill the sign-in name.") var loginHint: String?
    @Flag(help: "Print the URL only; do not start a browser.") var noBrowser = false
    @Option(help: "Port of the loopback redirect listener (0 = any free port).") var port = 0
    @Option(help: "Seconds to wait for the browser, in all (the forgot-password detour included).") var timeout = 300
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
        defer { interrupt.forEach { $0.cancel() } }
        let account = try await withClient(client) { c -> Account in
            let p = try c.target(policy)
            guard p.policy != nil else {
                throw CLIError("\(p.name) is the native-auth configuration; sign in to it with --native --username EMAIL", exitCode: ExitStatus.usage)
            }
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
        defer { interrupt.forEach { $0.cancel() } }
        let account = try await withClient(client) { c -> Account in
            let scopes = try c.resourceScopes(api: api, scopes: scope)
            if native {
                let mode: NativeMode = passwordStdin ? .password : otpStdin ? .otp : .auto
                return try await c.signInNative(username: username, mode: mode, scopes: scopes,
                                                prompter: TerminalNativePrompter(passwordFromStdin: passwordStdin, codesFromStdin: otpStdin))
            }
            let p = try c.passwordPolicy(policy)
            let password = try Prompt.password(fromStdin: passwordStdin, prompt: "Password for \(username): ")
            return try await c.signInWithPassword(policyName: p.name, username: username, password: password, scopes: scopes)
        }
        let who = AccountSelection.email(account) ?? account.oid
        writeOut("Signed in as \(who) under \(account.policy) (account \(account.id)).")
    }
}
