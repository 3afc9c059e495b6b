import ChildProcess
import Foundation
import Glibc
@testable import SecretService

/// True when run-tests.sh has put us inside a D-Bus session with an unlocked
/// gnome-keyring; the suites that need a real Secret Service check this.
let keyringSessionAvailable = ProcessInfo.processInfo.environment["SECRETSERVICE_TEST_KEYRING"] == "1"

/// Path of an executable on PATH, or nil.
func which(_ name: String) -> String? {
    let dirs = (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":")
    return dirs.map { "\($0)/\(name)" }.first { FileManager.default.isExecutableFile(atPath: $0) }
}

/// Runs a command under coreutils `timeout` (so a test can never hang on it) and
/// returns its exit status and stdout.
@discardableResult
func run(_ arguments: [String], stdin: Data? = nil, seconds: Int = 10) throws -> (status: Int32, stdout: Data) {
    let r = try ChildProcess.run(
        URL(fileURLWithPath: "/usr/bin/timeout"), ["-s", "KILL", String(seconds)] + arguments, input: stdin ?? Data())
    return (r.status, r.stdout)
}

/// Milliseconds taken by `body`, whatever it throws.
func milliseconds(_ body: () throws -> Void) -> (ms: Double, error: Error?) {
    let start = ContinuousClock.now
    var caught: Error?
    do { try body() } catch { caught = error }
    let elapsed = ContinuousClock.now - start
    let (s, atto) = elapsed.components
    return (Double(s) * 1000 + Double(atto) / 1e15, caught)
}

func temporaryDirectory() throws -> String {
    let path = NSTemporaryDirectory() + "ss-test-" + UUID().uuidString.prefix(8)
    try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    return path
}

/// A private dbus-daemon for one test, e.g. a bus where no Secret Service is
/// registered or activatable.
final class PrivateBus {
    let process: ChildProcess
    let address: String
    private let directory: String

    /// `listen` is a D-Bus listen address (default: a socket in a fresh
    /// temporary directory); `serviceDirs` adds the standard session service
    /// directories, so that gnome-keyring is activatable.
    init(listen: String? = nil, serviceDirs: Bool = false, environment: [String: String]? = nil) throws {
        directory = try temporaryDirectory()
        let config = directory + "/bus.conf"
        let listen = listen ?? "unix:dir=" + directory
        try """
        <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
         "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
        <busconfig>
          <type>session</type>
          <listen>\(listen)</listen>
          <auth>EXTERNAL</auth>
          \(serviceDirs ? "<standard_session_servicedirs/>" : "")
          <policy context="default">
            <allow send_destination="*" eavesdrop="true"/>
            <allow eavesdrop="true"/>
            <allow own="*"/>
          </policy>
        </busconfig>
        """.write(toFile: config, atomically: true, encoding: .utf8)
        guard let daemon = which("dbus-daemon") else { throw SkipReason("dbus-daemon is not installed") }
        let output = try ChildPipe(), null = Descriptor(open("/dev/null", O_WRONLY | O_CLOEXEC))
        process = try ChildProcess(
            URL(fileURLWithPath: daemon), ["--config-file=" + config, "--nofork", "--print-address=1"], environment: environment,
            stdout: output.writeEnd.fd, stderr: null.fd)
        output.writeEnd.close()
        null.close()
        do {
            address = try readLine(output.readEnd.fd, within: .seconds(5))
        } catch {
            process.killGroup()
            throw error
        }
    }

    /// SIGKILL to its group: the daemon and the services it activated.
    func stop() {
        process.killGroup()
        process.waitUntilExit()
        try? FileManager.default.removeItem(atPath: directory)
    }
}

struct SkipReason: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// Reads one line from `fd`, giving up after `limit`.
func readLine(_ fd: Int32, within limit: Duration) throws -> String {
    let deadline = Deadline(limit, for: "reading a line")
    var bytes: [UInt8] = []
    var byte: UInt8 = 0
    while true {
        var pfd = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        guard poll(&pfd, 1, try deadline.remainingMilliseconds()) > 0, read(fd, &byte, 1) == 1 else {
            throw SkipReason("no line read")
        }
        if byte == 10 { return String(decoding: bytes, as: UTF8.self) }
        bytes.append(byte)
    }
}

/// A Unix socket that plays a broken bus: it listens, and (when `script` is
/// given) serves one client by answering the first line with `script`'s bytes
/// and then staying silent until the client goes away.
final class FakeBus {
    let path: String
    private let fd: Int32
    private let ownedDirectory: String?

    init(answer script: [UInt8]? = nil, in directory: String? = nil, name: String = "bus.sock") throws {
        ownedDirectory = directory == nil ? try temporaryDirectory() : nil
        path = (directory ?? ownedDirectory!) + "/" + name
        fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        var addr = sockaddr_un()
        addr.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &addr.sun_path) { $0.copyBytes(from: Array(path.utf8) + [0]) }
        let bound = withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard bound == 0, listen(fd, 4) == 0 else { throw SkipReason("cannot listen on \(path)") }
        guard let script else { return }  // never accept: the kernel still completes connect()
        let listener = fd
        Thread.detachNewThread {
            let client = accept(listener, nil, nil)
            guard client >= 0 else { return }
            var buffer = [UInt8](repeating: 0, count: 4096)
            var answered = false
            while true {
                let n = read(client, &buffer, buffer.count)
                if n <= 0 { break }
                if !answered, buffer[..<n].contains(10) {
                    _ = write(client, script, script.count)
                    answered = true
                }
            }
            close(client)
        }
    }

    var address: String { "unix:path=" + path }

    func stop() {
        shutdown(fd, Int32(SHUT_RDWR))
        close(fd)
        unlink(path)
        if let ownedDirectory { try? FileManager.default.removeItem(atPath: ownedDirectory) }
    }
}
