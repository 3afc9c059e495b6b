import B2CFastPath
import B2CKit
import Dispatch
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Shows the URL and opens the browser: `$BROWSER` (a `:`-separated list; `%s` is the URL), then xdg-open / open.
/// With `--no-browser`, or when stdin is a terminal, it also reads the address the browser ended on from stdin (a browser on
/// another machine, an SSH session); when no browser can be started it asks for that address itself.
package struct TerminalUI: InteractionUI {
    let openBrowser: Bool
    /// Shows what the browser commands print (hidden otherwise: their complaints are not the person's business).
    let verbose: Bool

    /// Told when no browser could start and no one can paste the address: the wait ends then.
    private let gaveUp = Signal()

    package init(openBrowser: Bool, verbose: Bool = false) { self.openBrowser = openBrowser; self.verbose = verbose }

    package func unanswerable() -> AsyncStream<String>? { gaveUp.subscribe() }

    static let pasteHint = "paste here the address the browser ends on (http://localhost:…/?code=…), or press Ctrl-C"

    package func present(url: URL, purpose: String) async {
        writeErr("to \(purpose), open:\n  \(url.absoluteString)")
        if openBrowser {
            gaveUp.reset()
            let canPaste = isatty(STDIN_FILENO) == 1
            BrowserLauncher.open(url, verbose: verbose) { [gaveUp] tried in
                let what = tried.map { f in f.said.map { "\(f.why): \($0)" } ?? f.why }.joined(separator: "; ")
                guard canPaste else {
                    // No browser and no terminal to paste into: nothing can answer the wait, so it ends now (the flow
                    // fails, and every cleanup runs), with what the browser commands said (their words are the diagnosis:
                    // a scripted browser's reason, a missing desktop).
                    gaveUp.fire(
                        "could not start a browser (\(what)), and there is no terminal to paste the address into; fix the "
                            + "browser command, or run again with --no-browser to paste the address the browser ends on")
                    return
                }
                writeErr(
                    "could not start a browser (\(tried.map(\.why).joined(separator: ", "))): open the URL above in a browser on "
                        + "any machine, then \(Self.pasteHint)")
            }
        } else {
            writeErr("if the browser runs on another machine, \(Self.pasteHint)")
        }
    }

    package func progress(_ text: String) { writeErr(text) }

    package func pastedAnswers() -> AsyncStream<String>? {
        openBrowser && isatty(STDIN_FILENO) != 1 ? nil : StdinLines.shared.subscribe()
    }

    package func pastedAnswerRefused(_ reason: String) { writeErr(reason) }
}

/// Starts the browser in the background, trying each `$BROWSER` entry, then the platform's opener. An entry that cannot
/// start or exits non-zero makes way for the next; when none works, `failed` is told what was tried and the last line each
/// said on stderr. What the commands print is shown as it comes only with `verbose`.
enum BrowserLauncher {
    static func commands(environment: [String: String] = ProcessEnvironment.current()) -> [String] {
        var commands = (environment["BROWSER"] ?? "").split(separator: ":").map(String.init).filter { !$0.isEmpty }
        #if os(macOS)
        commands.append("open")
        #else
        commands.append("xdg-open")
        #endif
        return commands
    }

    /// A browser command that did not start: why, and the last line it wrote to stderr.
    struct Failure: Sendable {
        var why: String
        var said: String?
    }

    static func open(_ url: URL, verbose: Bool, failed: @escaping @Sendable ([Failure]) -> Void) {
        let commands = commands()
        Thread {
            var tried: [Failure] = []
            for command in commands {
                switch run(command, url: url, verbose: verbose) {
                case .started: return
                case .failed(let why, let said):
                    tried.append(Failure(why: "'\(command)' \(why)", said: said))
                    if verbose { writeErr("the browser command '\(command)' \(why)") }
                }
            }
            failed(tried)
        }.start()
    }

    enum Outcome { case started, failed(String, said: String?) }

    /// A file open for reading and writing whose name is already gone (0600 while it had one).
    static func unnamedFile() -> FileHandle? {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("b2c-browser-\(UUID().uuidString)").path
        #if canImport(Glibc)
        let fd = Glibc.open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        #else
        let fd = Darwin.open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        #endif
        guard fd >= 0 else { return nil }
        unlink(path)
        return FileHandle(fileDescriptor: fd, closeOnDealloc: true)
    }

    /// The last non-empty line of what a command wrote, without terminal control characters (`Terminal.isControl`), at
    /// most 300 characters.
    static func lastLine(_ data: Data) -> String? {
        let text = String(decoding: data.suffix(4096), as: UTF8.self)
        guard let line = text.split(whereSeparator: \.isNewline).last(where: { !$0.trimmingCharacters(in: .whitespaces).isEmpty })
        else { return nil }
        let clean = String(String.UnicodeScalarView(line.unicodeScalars.filter { !Terminal.isControl($0) && $0 != "\t" }))
        return String(clean.trimmingCharacters(in: .whitespaces).prefix(300))
    }

    /// Runs one entry and waits for it: exit 0 (a launcher that handed the URL over, or a browser that finished) or still
    /// running is a start; a non-zero exit or a failure to start is not.
    static func run(_ command: String, url: URL, verbose: Bool) -> Outcome {
        // The URL is passed as "$1", never spliced into the shell text.
        let line = command.contains("%s") ? command.replacingOccurrences(of: "%s", with: "\"$1\"") : "\(command) \"$1\""
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/bin/sh")
        p.arguments = ["-c", line, "sh", url.absoluteString]
        p.standardInput = FileHandle.nullDevice
        // Its stderr goes to an unnamed file (removed at once, open while we hold it), read back only if it fails: no pipe
        // to fill, nothing left behind by a browser that outlives b2c.
        let errors = Self.unnamedFile()
        p.standardOutput = verbose ? FileHandle.standardError : FileHandle.nullDevice
        p.standardError = verbose ? FileHandle.standardError : (errors ?? FileHandle.nullDevice)
        do { try p.run() } catch { return .failed("could not start", said: nil) }
        p.waitUntilExit()
        let said = errors.flatMap { file -> String? in
            try? file.seek(toOffset: 0)
            return (try? file.readToEnd()).flatMap { $0.map(lastLine) ?? nil }
        }
        try? errors?.close()
        if p.terminationReason == .uncaughtSignal { return .failed("was killed by signal \(p.terminationStatus)", said: said) }
        switch p.terminationStatus {
        case 0: return .started
        case 126, 127: return .failed("was not found", said: nil)
        default: return .failed("failed (exit \(p.terminationStatus))", said: said)
        }
    }
}

/// A one-shot message to whoever listens now (one sign-in after another may wait on the same terminal); fired before
/// anyone listens, it waits for the next listener (the browser can fail before the flow starts its wait).
final class Signal: @unchecked Sendable {
    private let lock = NSLock()
    private var current: AsyncStream<String>.Continuation?
    private var pending: String?

    func subscribe() -> AsyncStream<String> {
        let (stream, continuation) = AsyncStream<String>.makeStream()
        lock.withLock {
            current?.finish()
            current = continuation
            if let pending {
                continuation.yield(pending)
                continuation.finish()
                current = nil
                self.pending = nil
            }
        }
        return stream
    }

    func fire(_ message: String) {
        lock.withLock {
            guard let current else {
                pending = message
                return
            }
            current.yield(message)
            current.finish()
            self.current = nil
        }
    }

    /// Forgets a message nobody heard (a new browser is about to be opened).
    func reset() { lock.withLock { pending = nil } }
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
package func cancelOnInterrupt(message: String? = nil, cleanup: (@Sendable () -> Void)? = nil) -> [DispatchSourceSignal] {
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
