import B2CKit
import Foundation
import Synchronization

/// Reading secrets and codes: from stdin for scripts (`--password-stdin`, `--otp-stdin`), else from the terminal
/// with echo off. Never from an argument, so they do not show up in `ps` or shell history.
enum Prompt {
    /// The terminal settings while echo is off, so that Ctrl-C can restore them before exiting.
    static let savedTerminal = Mutex<termios?>(nil)

    static func restoreTerminal() {
        if var t = savedTerminal.withLock({ $0 }) { tcsetattr(STDIN_FILENO, TCSAFLUSH, &t) }
    }

    static var stdinIsTerminal: Bool { isatty(STDIN_FILENO) == 1 }

    /// One line of stdin without its line ending; nil at end of input.
    static func line() -> String? {
        guard let l = readLine(strippingNewline: true) else { return nil }
        return l.hasSuffix("\r") ? String(l.dropLast()) : l
    }

    /// Asks on stderr and reads one line from the terminal without echo.
    static func secret(_ prompt: String) throws -> String {
        guard stdinIsTerminal else {
            throw CLIError("no terminal to ask for the password on; pipe it with --password-stdin", exitCode: ExitStatus.usage)
        }
        // Echo off (and what was typed before discarded, as getpass does) before the prompt shows: a line typed once the
        // prompt is on the screen must not fall into the flush (a test that answered at once hung that way under load).
        var old = termios()
        let haveTerm = tcgetattr(STDIN_FILENO, &old) == 0
        if haveTerm {
            var quiet = old
            quiet.c_lflag &= ~tcflag_t(ECHO)
            savedTerminal.withLock { $0 = old }
            tcsetattr(STDIN_FILENO, TCSAFLUSH, &quiet)
        }
        writePrompt(prompt)
        defer {
            if haveTerm { tcsetattr(STDIN_FILENO, TCSAFLUSH, &old); savedTerminal.withLock { $0 = nil } }
            writePrompt("\n")
        }
        guard let value = line() else { throw CLIError("cancelled: no password was typed", exitCode: ExitStatus.cancelled) }
        return value
    }

    /// A whole input file, `-` for stdin; one that cannot be read exits 64 saying which (`what`) and why.
    static func file(_ path: String, what: String) throws -> Data {
        if path == "-" { return FileHandle.standardInput.readDataToEndOfFile() }
        do { return try LocalFile.read(path) } catch {
            throw CLIError("cannot read \(what) \(path): the file \(error.reason)", exitCode: ExitStatus.usage)
        }
    }

    static func password(fromStdin: Bool, prompt: String) throws -> String {
        if fromStdin {
            guard let p = line(), !p.isEmpty else {
                throw CLIError("--password-stdin was given but stdin had no password line", exitCode: ExitStatus.usage)
            }
            return p
        }
        let p = try secret(prompt)
        guard !p.isEmpty else { throw CLIError("an empty password was typed; nothing was sent", exitCode: ExitStatus.usage) }
        return p
    }
}

/// The native-auth prompts of the CLI. With `--password-stdin` the password is stdin's first line (read before the flow
/// starts, so that codes from `--otp-stdin` follow it); at a terminal the questions are asked as they come.
struct TerminalNativePrompter: NativePrompter {
    let passwordFromStdin: Bool
    let codesFromStdin: Bool
    /// A password read ahead from stdin (sign-up, reset); nil: ask when needed.
    var presetPassword: String? = nil
    /// `--mfa-method`: a method id or channel (`email`, `sms`) to use without asking.
    var mfaMethod: String? = nil
    /// `--mfa-target`: the email address or phone number to register without asking.
    var mfaTarget: String? = nil
    /// The person's own address: what an email method registers when nothing else is given (the tenant knows it verified).
    var ownEmail: String? = nil

    func password(for username: String) async throws -> String {
        try Prompt.password(fromStdin: passwordFromStdin, prompt: "Password for \(username): ")
    }

    func code(sentTo label: String, length: Int?, attempt: Int, attemptsLeft: Int) async throws -> String? {
        if codesFromStdin {
            // Said once per code: a re-prompt after a wrong code reads the next line, but no new code was sent.
            if attempt == 1 { writeErr("\(Self.codeDescription(length)) was sent to \(label); reading it from stdin") }
        } else {
            guard Prompt.stdinIsTerminal else {
                throw CLIError(
                    "a code was sent to \(label) but there is no terminal to type it on; pipe codes with --otp-stdin",
                    exitCode: ExitStatus.usage)
            }
            writePrompt("Enter the \(length.map { "\($0)-digit " } ?? "")code sent to \(label) (or 'resend'): ")
        }
        guard let typed = Prompt.line()?.trimmingCharacters(in: .whitespaces) else {
            throw CLIError("cancelled: no code was entered; nothing was stored", exitCode: ExitStatus.cancelled)
        }
        if typed.lowercased() == "resend" { return nil }
        return typed
    }

    func codeResent(to label: String, length: Int?) {
        writeErr("a new code was sent to \(label); the previous one no longer works" + (codesFromStdin ? "; reading it from stdin" : ""))
    }

    /// "an 8-digit code", "a 6-digit code", "a code".
    static func codeDescription(_ length: Int?) -> String {
        guard let length else { return "a code" }
        let digits = String(length)
        let vowelSound = digits.hasPrefix("8") || digits == "11" || digits == "18"
        return "\(vowelSound ? "an" : "a") \(length)-digit code"
    }

    func notice(_ text: String) { writeErr(text) }

    /// A new password: the one read from stdin (a refusal then ends the command, since stdin cannot be asked again), or
    /// typed twice without echo.
    func newPassword(for username: String, problem: String?) async throws -> String {
        if let presetPassword {
            if let problem {
                let said = problem.hasSuffix(".") ? String(problem.dropLast()) : problem
                throw CLIError("\(said); nothing was changed", exitCode: ExitStatus.error)
            }
            return presetPassword
        }
        if let problem { writeErr(problem) }
        guard Prompt.stdinIsTerminal else {
            throw CLIError(
                "a new password is needed but there is no terminal to type it on; pipe it with --password-stdin", exitCode: ExitStatus.usage
            )
        }
        for _ in 0..<3 {
            let first = try Prompt.password(fromStdin: false, prompt: "New password for \(username): ")
            if try Prompt.secret("Type it again: ") == first { return first }
            writeErr("the two passwords differ; type them again")
        }
        throw CLIError("the passwords typed did not match three times; nothing was changed", exitCode: ExitStatus.usage)
    }

    /// A required sign-up attribute, typed at the terminal (its label, type and pattern shown); without a terminal the
    /// error names the `--attribute` to give.
    func attribute(_ attribute: NativeAttribute, problem: String?) async throws -> String {
        guard Prompt.stdinIsTerminal && !codesFromStdin && !passwordFromStdin else {
            throw CLIError(
                "the tenant requires the attribute \(attribute.name) (\(attribute.type))\(problem.map { ": \($0)" } ?? ""); "
                    + "give it with --attribute \(attribute.name)=VALUE", exitCode: ExitStatus.usage)
        }
        if let problem { writeErr("\(attribute.label ?? attribute.name): \(problem)") }
        var hint = attribute.type
        if !attribute.options.isEmpty { hint = attribute.options.joined(separator: "|") }
        if attribute.type.lowercased() == "boolean" { hint = "true|false" }
        while true {
            writePrompt("\(attribute.label ?? attribute.name) (\(hint)): ")
            guard let typed = Prompt.line()?.trimmingCharacters(in: .whitespaces) else {
                throw CLIError("cancelled: no value was entered; nothing was stored", exitCode: ExitStatus.cancelled)
            }
            if let regex = attribute.regex, typed.range(of: regex, options: .regularExpression) == nil {
                writeErr("that does not match the pattern the tenant gives (\(regex)); type it again")
                continue
            }
            if !typed.isEmpty { return typed }
        }
    }

    /// The method named by `--mfa-method` (id or channel), the only one offered, or one chosen by number at the terminal.
    func chooseMethod(_ methods: [NativeMethod], registering: Bool) async throws -> NativeMethod {
        let described = methods.map { "\($0.channel)\($0.loginHint.map { " (\($0))" } ?? "")" }
        if let wanted = mfaMethod {
            guard let m = methods.first(where: { $0.id == wanted || $0.channel.caseInsensitiveCompare(wanted) == .orderedSame }) else {
                throw CLIError(
                    "--mfa-method \(wanted) is not one the tenant offers; it offers: \(described.joined(separator: ", "))",
                    exitCode: ExitStatus.usage)
            }
            return m
        }
        if methods.count == 1 { return methods[0] }
        let what = registering ? "a method for the second factor to be registered" : "a second factor"
        guard Prompt.stdinIsTerminal && !codesFromStdin && !passwordFromStdin else {
            throw CLIError(
                "the tenant asks for \(what); choose one with --mfa-method (\(methods.map(\.channel).joined(separator: " or ")))",
                exitCode: ExitStatus.usage)
        }
        writeErr("The tenant asks for \(what):")
        for (i, d) in described.enumerated() { writeErr("  \(i + 1). \(d)") }
        while true {
            writePrompt("Choose 1-\(methods.count): ")
            guard let typed = Prompt.line() else { throw CLIError("cancelled: no method was chosen", exitCode: ExitStatus.cancelled) }
            if let n = Int(typed.trimmingCharacters(in: .whitespaces)), (1...methods.count).contains(n) { return methods[n - 1] }
        }
    }

    func registrationTarget(for method: NativeMethod) async throws -> String {
        if let mfaTarget { return mfaTarget }
        let what = method.channel == "sms" ? "phone number (E.164, such as +14255550123)" : "email address"
        guard Prompt.stdinIsTerminal && !codesFromStdin && !passwordFromStdin else {
            if method.channel == "email", let ownEmail { return ownEmail }
            throw CLIError(
                "the tenant asks to register a \(method.channel) method before signing in; give the \(what) with --mfa-target",
                exitCode: ExitStatus.usage)
        }
        let offered = method.channel == "email" ? ownEmail : nil
        writePrompt("The tenant asks you to register a \(what) for the second factor\(offered.map { " [\($0)]" } ?? ""): ")
        guard let typed = Prompt.line()?.trimmingCharacters(in: .whitespaces) else {
            throw CLIError("cancelled: nothing was entered", exitCode: ExitStatus.cancelled)
        }
        if typed.isEmpty, let offered { return offered }
        guard !typed.isEmpty else { throw CLIError("cancelled: nothing was entered", exitCode: ExitStatus.cancelled) }
        return typed
    }
}
