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
        FileHandle.standardError.write(Data(prompt.utf8))
        var old = termios()
        let haveTerm = tcgetattr(STDIN_FILENO, &old) == 0
        if haveTerm {
            var quiet = old
            quiet.c_lflag &= ~tcflag_t(ECHO)
            savedTerminal.withLock { $0 = old }
            tcsetattr(STDIN_FILENO, TCSAFLUSH, &quiet)
        }
        defer {
            if haveTerm { tcsetattr(STDIN_FILENO, TCSAFLUSH, &old); savedTerminal.withLock { $0 = nil } }
            FileHandle.standardError.write(Data("\n".utf8))
        }
        guard let value = line() else { throw CLIError("cancelled: no password was typed", exitCode: ExitStatus.cancelled) }
        return value
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

/// The native-auth prompts of the CLI.
struct TerminalNativePrompter: NativePrompter {
    let passwordFromStdin: Bool
    let codesFromStdin: Bool

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
            FileHandle.standardError.write(
                Data("Enter the \(length.map { "\($0)-digit " } ?? "")code sent to \(label) (or 'resend'): ".utf8))
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
}
