import ArgumentParser
import B2CCLI
import Foundation

/// `serve --ready-file FILE` says there how its start went — `starting PID`, then `ready PID URL` once it listens (and its
/// configuration is written), or `failed PID REASON` — and removes it when it stops; `b2c-emulator wait FILE` reads it.
/// So a script that starts a tenant in the background never waits for one that failed, or for one that is gone.
struct ReadyFile: Sendable {
    let path: String

    enum State: Equatable {
        case starting(pid: Int32)
        case ready(pid: Int32, url: String)
        case failed(pid: Int32, reason: String)
    }

    func write(_ state: State) {
        let text =
            switch state {
            case .starting(let pid): "starting \(pid)\n"
            case .ready(let pid, let url): "ready \(pid) \(url)\n"
            case .failed(let pid, let reason): "failed \(pid) \(reason.replacingOccurrences(of: "\n", with: " "))\n"
            }
        // Written whole (a reader never sees half a line): a file beside it, then renamed over it.
        let temporary = path + ".\(getpid()).tmp"
        guard FileManager.default.createFile(atPath: temporary, contents: Data(text.utf8)) else { return }
        if rename(temporary, path) != 0 { unlink(temporary) }
    }

    func remove() { unlink(path) }

    /// The state the file says, or nil when there is none (yet) or it is not one of ours.
    func read() -> State? {
        guard let data = FileManager.default.contents(atPath: path) else { return nil }
        let line = String(decoding: data, as: UTF8.self).split(separator: "\n").first.map(String.init) ?? ""
        let words = line.split(separator: " ", maxSplits: 2).map(String.init)
        guard words.count >= 2, let pid = Int32(words[1]) else { return nil }
        switch words[0] {
        case "starting": return .starting(pid: pid)
        case "ready" where words.count == 3: return .ready(pid: pid, url: words[2])
        case "failed": return .failed(pid: pid, reason: words.count == 3 ? words[2] : "(no reason given)")
        default: return nil
        }
    }
}

/// `b2c-emulator wait FILE`: until the tenant that `serve --ready-file FILE` started is ready (exit 0, its URL on stdout),
/// could not start (exit 1, its reason), went away, or `--timeout` passed (exit 1 each, with what happened).
struct WaitCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "wait",
        abstract: "Wait until a tenant started with serve --ready-file is ready, or say why it is not.",
        discussion: """
            Examples:
              b2c-emulator serve --config-out policies.json --ready-file tenant.ready > tenant.log &
              b2c-emulator wait tenant.ready
            Prints the tenant's URL when it listens (and has written --config-out). Exit codes: 0 ready; 1 the tenant could \
            not start (its reason), stopped before it was ready, or did not get ready within --timeout; 64 a bad option.
            """)

    @Argument(help: ArgumentHelp("The file serve --ready-file writes.", valueName: "file")) var file: String
    @Option(help: ArgumentHelp("Seconds to wait at most.", valueName: "seconds")) var timeout = 30

    func validate() throws {
        guard (1...3600).contains(timeout) else { throw ValidationError("--timeout must be between 1 and 3600 seconds, got \(timeout).") }
    }

    func run() async throws {
        let ready = ReadyFile(path: file)
        let deadline = ContinuousClock.now + .seconds(timeout)
        var seen: ReadyFile.State?
        while ContinuousClock.now < deadline {
            seen = ready.read() ?? seen
            switch seen {
            case .ready(let pid, let url) where Self.isAlive(pid):
                writeOut(url + "\n")
                return
            case .failed(_, let reason):
                throw CLIError("the tenant could not start: \(reason)", exitCode: ExitStatus.error)
            case .starting(let pid) where !Self.isAlive(pid), .ready(let pid, _) where !Self.isAlive(pid):
                throw CLIError(
                    "the tenant that wrote \(file) (pid \(pid)) is gone: it stopped before it was ready, or this file is an old "
                        + "one; see its log", exitCode: ExitStatus.error)
            default:
                try await Task.sleep(for: .milliseconds(50))
            }
        }
        let what =
            seen == nil
            ? "no tenant wrote \(file) within \(timeout) s (was it started with --ready-file \(file)?)"
            : "the tenant did not get ready within \(timeout) s"
        throw CLIError(what, exitCode: ExitStatus.error)
    }

    /// Whether a process of that id runs (or is ours to signal: EPERM means it exists).
    static func isAlive(_ pid: Int32) -> Bool { kill(pid, 0) == 0 || errno == EPERM }
}
