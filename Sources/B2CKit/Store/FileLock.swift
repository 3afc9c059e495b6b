import Foundation

/// An exclusive, cross-process lock on a file in the store directory (flock): used to make refreshes single-flight.
/// The holder writes its process id into the file, so that a wait that runs out can say who holds the lock.
package final class FileLock {
    private let fd: Int32

    /// Waits for the lock; with `timeoutSeconds`, at most that long, then throws `LockTimeout` naming the holder.
    public init(path: String, timeoutSeconds: Double? = nil) throws {
        fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard fd >= 0 else { throw B2CError.store("cannot open the lock file '\(path)': \(String(cString: strerror(errno)))") }
        let deadline = timeoutSeconds.map { Date().addingTimeInterval($0) }
        var pause: UInt32 = 2_000
        while flock(fd, deadline == nil ? LOCK_EX : LOCK_EX | LOCK_NB) != 0 {
            let failure = errno
            if failure == EINTR { continue }
            guard failure == EWOULDBLOCK, let deadline else {
                close(fd)
                throw B2CError.store("cannot lock '\(path)': \(String(cString: strerror(failure)))")
            }
            guard Date() < deadline else {
                let holder = Self.holder(fd)
                close(fd)
                throw LockTimeout(path: path, seconds: timeoutSeconds ?? 0, holder: holder)
            }
            usleep(pause)
            pause = min(pause * 2, 100_000)
        }
        let mark = "\(getpid())\n"
        _ = ftruncate(fd, 0)
        _ = mark.withCString { pwrite(fd, $0, strlen($0), 0) }
    }

    deinit {
        flock(fd, LOCK_UN)
        close(fd)
    }

    /// The process the lock file names, with its command and whether it is stopped (Ctrl-Z), from /proc.
    static func holder(_ fd: Int32) -> LockTimeout.Holder? {
        var buffer = [UInt8](repeating: 0, count: 32)
        let n = pread(fd, &buffer, buffer.count, 0)
        guard n > 0, let pid = Int32(String(decoding: buffer[0..<n], as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)),
            pid > 0
        else { return nil }
        let stat = (try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)) ?? ""
        // "pid (comm) S …": the state follows the last ')'.
        let state = stat.lastIndex(of: ")").map { stat[stat.index($0, offsetBy: 2)...].first } ?? nil
        let command = (try? String(contentsOfFile: "/proc/\(pid)/cmdline", encoding: .utf8))?
            .split(separator: "\0").prefix(3).joined(separator: " ")
        return LockTimeout.Holder(pid: pid, command: command, stopped: state == "T" || state == "t")
    }
}

/// A lock that another process held for longer than the wait allows.
package struct LockTimeout: Error, CustomStringConvertible {
    /// The process the lock file names.
    public struct Holder: Sendable {
        /// Its process id.
        public var pid: Int32
        /// The first words of its command line, when /proc shows them.
        public var command: String?
        /// Whether it is stopped (Ctrl-Z).
        public var stopped: Bool
    }

    /// The lock file.
    public var path: String
    /// How long the wait was allowed to be.
    public var seconds: Double
    /// Who holds the lock, when the file names a process.
    public var holder: Holder?

    /// Who held the lock for how long, and what to do about it.
    public var description: String {
        let who =
            holder.map { h in
                "process \(h.pid)" + (h.command.map { " (\($0))" } ?? "")
                    + (h.stopped
                        ? ", which is stopped (Ctrl-Z): resume it with `fg` or end it" : ", which may be stuck: wait for it or end it")
            } ?? "another process"
        return "waited \(Int(seconds)) s for \(who) to finish refreshing the same account (lock \(path))"
    }
}
