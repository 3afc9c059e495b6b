import B2CKit
import Dispatch
import Foundation

/// Shows the URL and opens the browser: `$BROWSER` (a `:`-separated list; `%s` is the URL), then xdg-open / open.
/// With `--no-browser`, or when stdin is a terminal, it also reads the address the browser ended on from stdin (a browser on
/// another machine, an SSH session); when no browser can be started it asks for that address itself.
package struct TerminalUI: InteractionUI {
    let openBrowser: Bool
    /// Shows what the browser commands print (hidden otherwise: their complaints are not the person's business).
    let verbose: Bool

    package init(openBrowser: Bool, verbose: Bool = false) { self.openBrowser = openBrowser; self.verbose = verbose }

    static let pasteHint = "paste here the address the browser ends on (http://localhost:…/?code=…), or press Ctrl-C"

    package func present(url: URL, purpose: String) async {
        writeErr("to \(purpose), open:\n  \(url.absoluteString)")
        if openBrowser {
            let canPaste = isatty(STDIN_FILENO) == 1
            BrowserLauncher.open(url, verbose: verbose) { tried in
                writeErr(
                    "could not start a browser (\(tried.joined(separator: ", "))): open the URL above in a browser on any machine, "
                        + (canPaste ? "then \(Self.pasteHint)" : "or run again with --no-browser to paste the address it ends on"))
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
/// start or exits non-zero makes way for the next; when none works, `failed` is told what was tried (the URL is printed
/// and the wait goes on). What the commands print is shown only with `verbose`.
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

    static func open(_ url: URL, verbose: Bool, failed: @escaping @Sendable ([String]) -> Void) {
        let commands = commands()
        Thread {
            var tried: [String] = []
            for command in commands {
                switch run(command, url: url, verbose: verbose) {
                case .started: return
                case .failed(let why):
                    tried.append("'\(command)' \(why)")
                    if verbose { writeErr("the browser command '\(command)' \(why)") }
                }
            }
            failed(tried)
        }.start()
    }

    enum Outcome { case started, failed(String) }

    /// Runs one entry and waits for it: exit 0 (a launcher that handed the URL over, or a browser that finished) or still
    /// running is a start; a non-zero exit or a failure to start is not.
    static func run(_ command: String, url: URL, verbose: Bool) -> Outcome {
        // The URL is passed as "$1", never spliced into the shell text.
        let line = command.contains("%s") ? command.replacingOccurrences(of: "%s", with: "\"$1\"") : "\(command) \"$1\""
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/bin/sh")
        p.arguments = ["-c", line, "sh", url.absoluteString]
        p.standardInput = FileHandle.nullDevice
        p.standardOutput = verbose ? FileHandle.standardError : FileHandle.nullDevice
        p.standardError = verbose ? FileHandle.standardError : FileHandle.nullDevice
        do { try p.run() } catch { return .failed("could not start") }
        p.waitUntilExit()
        if p.terminationReason == .uncaughtSignal { return .failed("was killed by signal \(p.terminationStatus)") }
        switch p.terminationStatus {
        case 0: return .started
        case 126, 127: return .failed("was not found")
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
