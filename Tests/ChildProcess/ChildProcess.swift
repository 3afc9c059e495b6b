import CChildProcess
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A child process of the test suite: the one way tests start programs (b2c, the emulator, Python clients, sqlite3).
///
/// Not Foundation's `Process`: its `run()` on Linux over-reads `/proc/self/fd` and crashes the whole suite now and then
/// (swift-corelibs-foundation#5472), and its children inherit the runner's ignored and blocked signals and every
/// descriptor another thread opened meanwhile, which kept pipes open and reader threads alive until the end of the run.
/// Here a child gets its own process group, default signals, and only descriptors 0, 1 and 2; the parent's pipe ends are
/// close-on-exec; and whatever is still running when the suite exits is killed with its group.
public final class ChildProcess: @unchecked Sendable {
    public enum TerminationReason: Sendable { case exit, uncaughtSignal }

    public let processIdentifier: pid_t
    public let currentDirectoryURL: URL?
    private let ended = NSCondition()
    private var waitStatus: Int32?

    /// Starts `executable`. `stdin`, `stdout` and `stderr` are descriptors the child gets as 0, 1 and 2 (nil: the test
    /// process's own); the caller closes its copies of the child's ends once this returns.
    public init(
        _ executable: URL, _ arguments: [String], environment: [String: String]? = nil, directory: URL? = nil,
        stdin: Int32? = nil, stdout: Int32? = nil, stderr: Int32? = nil
    ) throws {
        let environment = environment ?? ProcessInfo.processInfo.environment
        let argv = ([executable.path] + arguments).map { strdup($0) } + [nil]
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { for p in argv + envp { free(p) } }
        var pid: pid_t = 0
        let rc = Self.lock.withLock {
            cchild_spawn(executable.path, argv, envp, directory?.path, stdin ?? -1, stdout ?? -1, stderr ?? -1, &pid)
        }
        guard rc == 0 else { throw ChildProcessError(message: "cannot start \(executable.path): \(String(cString: strerror(rc)))") }
        processIdentifier = pid
        currentDirectoryURL = directory
        Self.lock.withLock { _ = Self.running.insert(pid) }
        Thread { [self] in reap() }.start()
    }

    private func reap() {
        var status: Int32 = 0
        while waitpid(processIdentifier, &status, 0) < 0 && errno == EINTR {}
        _ = Self.lock.withLock { Self.running.remove(processIdentifier) }
        ended.withLock {
            waitStatus = status
            ended.broadcast()
        }
    }

    public var isRunning: Bool { ended.withLock { waitStatus == nil } }

    public func waitUntilExit() {
        ended.withLock { while waitStatus == nil { ended.wait() } }
    }

    /// Waits up to `seconds`; true once the child has ended.
    public func waitUntilExit(seconds: Double) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        return ended.withLock {
            while waitStatus == nil { if !ended.wait(until: deadline) { break } }
            return waitStatus != nil
        }
    }

    /// The exit code, or the number of the signal that ended it (as Foundation's `Process` reports it).
    public var terminationStatus: Int32 {
        let s = ended.withLock { waitStatus ?? 0 }
        return s & 0x7f == 0 ? (s >> 8) & 0xff : s & 0x7f
    }

    public var terminationReason: TerminationReason {
        (ended.withLock { waitStatus ?? 0 }) & 0x7f == 0 ? .exit : .uncaughtSignal
    }

    public func terminate() { kill(processIdentifier, SIGTERM) }
    public func interrupt() { kill(processIdentifier, SIGINT) }

    /// SIGKILL to the child's whole process group (what a shell script started in the background too).
    public func killGroup() { kill(-processIdentifier, SIGKILL) }

    // Spawning under one lock keeps the registry exact; the at-exit handler kills every group still running.
    private static let lock = NSLock()
    nonisolated(unsafe) private static var running: Set<pid_t> = {
        atexit {
            let left = ChildProcess.lock.withLock { ChildProcess.running }
            for pid in left { kill(-pid, SIGKILL) }
        }
        return []
    }()
}

public struct ChildProcessError: Error, CustomStringConvertible {
    public var message: String
    public var description: String { message }
}

/// A descriptor the test process owns: closed once, by `close()` or when the last holder lets it go.
public final class Descriptor: @unchecked Sendable {
    public let fd: Int32
    private let lock = NSLock()
    private var open = true

    public init(_ fd: Int32) { self.fd = fd }

    public func close() {
        let first = lock.withLock {
            defer { open = false }
            return open
        }
        if first { _ = Glibc.close(fd) }
    }

    /// Writes all of `data` (false once the reader has gone).
    @discardableResult public func write(_ data: Data) -> Bool {
        data.withUnsafeBytes { raw in
            var offset = 0
            while offset < raw.count {
                let n = Glibc.write(fd, raw.baseAddress! + offset, raw.count - offset)
                if n < 0 && errno == EINTR { continue }
                if n <= 0 { return false }
                offset += n
            }
            return true
        }
    }

    deinit { close() }
}

/// A pipe whose two ends are close-on-exec in the test process (a child gets only the end it is given, as 0, 1 or 2).
public struct ChildPipe: Sendable {
    public let readEnd: Descriptor
    public let writeEnd: Descriptor

    public init() throws {
        var fds: [Int32] = [-1, -1]
        guard cchild_pipe(&fds) == 0 else {
            throw ChildProcessError(message: "cannot make a pipe: \(String(cString: strerror(errno)))")
        }
        readEnd = Descriptor(fds[0])
        writeEnd = Descriptor(fds[1])
    }
}

/// Reads `descriptor` to its end on a thread of its own (never the cooperative pool's, which in-process tenants need),
/// handing each chunk to `append`, then closes it and calls `end`.
public func drain(_ descriptor: Descriptor, then end: (@Sendable () -> Void)? = nil, _ append: @escaping @Sendable (Data) -> Void) {
    Thread {
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = buffer.withUnsafeMutableBytes { read(descriptor.fd, $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { break }
            append(Data(buffer[0..<n]))
        }
        descriptor.close()
        end?()
    }.start()
}

/// What a finished child said.
public struct ChildResult: Sendable {
    public var status: Int32
    public var stdout: Data
    public var stderr: Data
    public var output: String { String(decoding: stdout, as: UTF8.self) }
    public var errors: String { String(decoding: stderr, as: UTF8.self) }
}

extension ChildProcess {
    /// Runs a program to its end with `input` as its whole stdin, collecting stdout and stderr (blocking this thread).
    public static func run(
        _ executable: URL, _ arguments: [String], environment: [String: String]? = nil, directory: URL? = nil, input: Data? = nil
    ) throws -> ChildResult {
        let stdin = try ChildPipe(), stdout = try ChildPipe(), stderr = try ChildPipe()
        let child = try ChildProcess(
            executable, arguments, environment: environment, directory: directory,
            stdin: stdin.readEnd.fd, stdout: stdout.writeEnd.fd, stderr: stderr.writeEnd.fd)
        stdin.readEnd.close()
        stdout.writeEnd.close()
        stderr.writeEnd.close()
        final class Collected: @unchecked Sendable {
            let lock = NSLock()
            var out = Data(), err = Data()
        }
        let collected = Collected(), done = DispatchGroup()
        done.enter()
        drain(stdout.readEnd, then: { done.leave() }) { d in collected.lock.withLock { collected.out += d } }
        done.enter()
        drain(stderr.readEnd, then: { done.leave() }) { d in collected.lock.withLock { collected.err += d } }
        if let input { stdin.writeEnd.write(input) }
        stdin.writeEnd.close()
        done.wait()
        child.waitUntilExit()
        return collected.lock.withLock { ChildResult(status: child.terminationStatus, stdout: collected.out, stderr: collected.err) }
    }

    /// The same on a thread of its own, for async callers, in one of `ChildSlots`' places.
    public static func runOffThePool(
        _ executable: URL, _ arguments: [String], environment: [String: String]? = nil, directory: URL? = nil, input: Data? = nil
    ) async throws -> ChildResult {
        try await ChildSlots.shared.withPlace {
            try await withCheckedThrowingContinuation { continuation in
                Thread {
                    continuation.resume(
                        with: Result { try run(executable, arguments, environment: environment, directory: directory, input: input) })
                }.start()
            }
        }
    }
}

extension ChildProcess {
    /// Starts a program whose first line on stdout says where it serves, and reads that line (stderr: the test's own) on a
    /// thread of its own: a Python service that makes its certificates first can take seconds under load, and the
    /// cooperative pool's two threads on a two-core machine are what every in-process tenant of the suite answers with.
    public static func startServing(_ executable: URL, _ args: [String]) async throws -> (ChildProcess, String) {
        let out = try ChildPipe()
        let p = try ChildProcess(executable, args, stdout: out.writeEnd.fd)
        out.writeEnd.close()
        let line = await withCheckedContinuation { (continuation: CheckedContinuation<Data, Never>) in
            Thread {
                var line = Data()
                var buffer = [UInt8](repeating: 0, count: 4096)
                while !line.contains(UInt8(ascii: "\n")) {
                    let n = buffer.withUnsafeMutableBytes { read(out.readEnd.fd, $0.baseAddress, $0.count) }
                    if n < 0 && errno == EINTR { continue }
                    if n <= 0 { break }
                    line += buffer[0..<n]
                }
                continuation.resume(returning: line)
            }.start()
        }
        // The rest of what it prints is read and dropped, so that a full pipe never stops it.
        drain(out.readEnd) { _ in }
        return (p, String(decoding: line, as: UTF8.self))
    }
}

/// Places for children that run to their end. Swift Testing starts every test at once, and on a two-core machine a hundred
/// b2c processes at a time (seen: 119 children, 1,300 descriptors, 570 threads a minute in) starve the in-process tenants
/// that answer them until their clients time out; a few places keep the machine busy without that.
public actor ChildSlots {
    public static let shared = ChildSlots(places: 6)
    private var free: Int
    private var waiting: [CheckedContinuation<Void, Never>] = []

    public init(places: Int) { free = places }

    /// Runs `body` in a place of its own (waiting without holding a thread until one is free).
    public nonisolated func withPlace<T: Sendable>(_ body: @Sendable () async throws -> T) async rethrows -> T {
        await acquire()
        do {
            let out = try await body()
            await release()
            return out
        } catch {
            await release()
            throw error
        }
    }

    private func acquire() async {
        if free > 0 {
            free -= 1
        } else {
            await withCheckedContinuation { waiting.append($0) }
        }
    }

    private func release() {
        if waiting.isEmpty { free += 1 } else { waiting.removeFirst().resume() }
    }
}
