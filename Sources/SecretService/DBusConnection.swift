#if canImport(Glibc)  // the Secret Service is a freedesktop (Linux, BSD) service; macOS has the Keychain
import Foundation
import Glibc

/// Where a bus listens. Only the Unix-socket transports are supported; that is
/// what session buses use on Linux.
enum BusAddress: Equatable, Sendable {
    case path(String)
    case abstract(String)

    /// Parses a D-Bus server address list (`;`-separated, values %-escaped),
    /// keeping the entries we can connect to, in order.
    static func parseList(_ list: String) -> [BusAddress] {
        list.split(separator: ";").compactMap { entry in
            guard let colon = entry.firstIndex(of: ":"), entry[..<colon] == "unix" else { return nil }
            var keys: [String: String] = [:]
            for pair in entry[entry.index(after: colon)...].split(separator: ",") {
                guard let eq = pair.firstIndex(of: "=") else { continue }
                keys[String(pair[..<eq])] = unescape(pair[pair.index(after: eq)...])
            }
            if let path = keys["path"] { return .path(path) }
            if let name = keys["abstract"] { return .abstract(name) }
            return nil
        }
    }

    /// Undoes the address format's %XX escaping.
    private static func unescape(_ text: Substring) -> String {
        var out: [UInt8] = []
        var bytes = Array(text.utf8)[...]
        while let byte = bytes.popFirst() {
            if byte == UInt8(ascii: "%"), bytes.count >= 2,
                let value = UInt8(String(decoding: bytes.prefix(2), as: UTF8.self), radix: 16)
            {
                out.append(value)
                bytes = bytes.dropFirst(2)
            } else {
                out.append(byte)
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// The session bus address: `$DBUS_SESSION_BUS_ADDRESS`, else the systemd
    /// user bus at `$XDG_RUNTIME_DIR/bus` when that socket exists (what libdbus
    /// and sd-bus fall back to).
    static func sessionBus(environment: [String: String]) -> String? {
        if let address = environment["DBUS_SESSION_BUS_ADDRESS"], !address.isEmpty { return address }
        if let runtime = environment["XDG_RUNTIME_DIR"], !runtime.isEmpty {
            var info = stat()
            let path = runtime + "/bus"
            if stat(path, &info) == 0, info.st_mode & S_IFMT == S_IFSOCK { return "unix:path=" + path }
        }
        return nil
    }
}

/// A deadline for one step; every blocking wait checks it so nothing hangs.
struct Deadline {
    let instant: ContinuousClock.Instant
    let what: String

    init(_ timeout: Duration, for what: String) {
        instant = .now.advanced(by: timeout)
        self.what = what
    }

    /// Milliseconds left for poll(2); throws once the deadline has passed.
    func remainingMilliseconds() throws -> Int32 {
        let left = ContinuousClock.now.duration(to: instant)
        guard left > .zero else { throw SecretServiceError.timeout(what) }
        let (seconds, attoseconds) = left.components
        return Int32(clamping: seconds * 1000 + attoseconds / 1_000_000_000_000_000 + 1)
    }
}

/// A minimal, blocking D-Bus client connection over a Unix socket. Not shared
/// between threads: each Secret Service operation opens its own.
final class DBusConnection {
    private let fd: Int32
    private let timeout: Duration
    private var inbox: [UInt8] = []
    private var lastSerial: UInt32 = 0
    private(set) var uniqueName = ""

    private init(fd: Int32, timeout: Duration) {
        self.fd = fd
        self.timeout = timeout
    }

    deinit { close(fd) }

    /// Connects to the first reachable address in `addressList`, authenticates
    /// and says Hello, each step bounded by `timeout`.
    static func open(addressList: String, timeout: Duration) throws -> DBusConnection {
        let addresses = BusAddress.parseList(addressList)
        guard !addresses.isEmpty else {
            throw SecretServiceError.noBus("no usable unix: address in \"\(addressList)\"")
        }
        var failures: [String] = []
        for address in addresses {
            do {
                let fd = try connectSocket(address, deadline: Deadline(timeout, for: "connecting to the session bus"))
                let connection = DBusConnection(fd: fd, timeout: timeout)
                try connection.authenticate()
                try connection.hello()
                return connection
            } catch SecretServiceError.noBus(let reason) {
                failures.append(reason)  // try the next address
            }
        }
        throw SecretServiceError.noBus(failures.joined(separator: "; "))
    }

    // MARK: Socket

    private static func connectSocket(_ address: BusAddress, deadline: Deadline) throws -> Int32 {
        var addr = sockaddr_un()
        addr.sun_family = sa_family_t(AF_UNIX)
        let (name, pathBytes): (String, [UInt8]) =
            switch address {
            case .path(let p): (p, Array(p.utf8) + [0])
            case .abstract(let a): ("@" + a, [0] + Array(a.utf8))
            }
        let capacity = MemoryLayout.size(ofValue: addr.sun_path)
        guard pathBytes.count <= capacity else { throw SecretServiceError.noBus("socket path too long: \(name)") }
        withUnsafeMutableBytes(of: &addr.sun_path) { $0.copyBytes(from: pathBytes) }
        let length = socklen_t(MemoryLayout<sockaddr_un>.offset(of: \.sun_path)! + pathBytes.count)

        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw SecretServiceError.noBus("socket(): \(errnoText())") }
        let result = withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, length) }
        }
        if result == 0 { return fd }
        let err = errno
        if err == EINPROGRESS || err == EAGAIN {
            // Unix sockets only get here when the listener's backlog is full.
            if (try? waitFor(fd, events: Int16(POLLOUT), deadline: deadline)) != nil, socketError(fd) == 0 { return fd }
        }
        close(fd)
        throw SecretServiceError.noBus("cannot connect to \(name): \(String(cString: strerror(err)))")
    }

    private static func socketError(_ fd: Int32) -> Int32 {
        var value: Int32 = 0
        var size = socklen_t(MemoryLayout<Int32>.size)
        return getsockopt(fd, SOL_SOCKET, SO_ERROR, &value, &size) == 0 ? value : errno
    }

    /// Waits until `fd` is ready for `events` or the deadline passes.
    private static func waitFor(_ fd: Int32, events: Int16, deadline: Deadline) throws {
        while true {
            var pfd = pollfd(fd: fd, events: events, revents: 0)
            let ready = poll(&pfd, 1, try deadline.remainingMilliseconds())
            if ready > 0 { return }
            if ready == 0 { throw SecretServiceError.timeout(deadline.what) }
            if errno != EINTR { throw SecretServiceError.protocol("poll(): \(errnoText())") }
        }
    }

    private func sendAll(_ bytes: [UInt8], deadline: Deadline) throws {
        var sent = 0
        while sent < bytes.count {
            let n = bytes[sent...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if n > 0 { sent += n; continue }
            if n < 0, errno == EINTR { continue }
            if n < 0, errno == EAGAIN || errno == EWOULDBLOCK {
                try Self.waitFor(fd, events: Int16(POLLOUT), deadline: deadline)
                continue
            }
            throw SecretServiceError.protocol("the bus connection broke while sending: \(errnoText())")
        }
    }

    /// Appends whatever arrives next to `inbox`, waiting at most until the deadline.
    private func receiveMore(deadline: Deadline) throws {
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            try Self.waitFor(fd, events: Int16(POLLIN), deadline: deadline)
            let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n > 0 { inbox += chunk[..<n]; return }
            if n == 0 { throw SecretServiceError.protocol("the bus closed the connection") }
            if errno != EINTR, errno != EAGAIN, errno != EWOULDBLOCK {
                throw SecretServiceError.protocol("the bus connection broke while receiving: \(errnoText())")
            }
        }
    }

    // MARK: Authentication (SASL EXTERNAL)

    private func readLine(deadline: Deadline) throws -> String {
        while true {
            if let end = inbox.indices.dropLast().first(where: { inbox[$0] == 13 && inbox[$0 + 1] == 10 }) {
                defer { inbox.removeFirst(end + 2) }
                return String(decoding: inbox[..<end], as: UTF8.self)
            }
            guard inbox.count < 16384 else { throw SecretServiceError.protocol("over-long line during bus authentication") }
            try receiveMore(deadline: deadline)
        }
    }

    /// The bus checks our uid against the socket's peer credentials, so the
    /// only thing to send is that uid, as hex-encoded ASCII decimal.
    private func authenticate() throws {
        let deadline = Deadline(timeout, for: "authenticating to the session bus")
        let hexUID = String(getuid()).utf8.map { String($0, radix: 16) }.joined()
        try sendAll([0] + Array("AUTH EXTERNAL \(hexUID)\r\n".utf8), deadline: deadline)
        let reply = try readLine(deadline: deadline)
        guard reply.hasPrefix("OK ") else {
            throw SecretServiceError.protocol("the session bus rejected authentication: \(reply)")
        }
        try sendAll(Array("BEGIN\r\n".utf8), deadline: deadline)
    }

    private func hello() throws {
        let reply = try call(
            destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus",
            interface: "org.freedesktop.DBus", member: "Hello")
        uniqueName = reply.first?.stringValue ?? ""
    }

    // MARK: Method calls

    /// Sends a method call and waits (bounded by the timeout) for the reply
    /// with the matching serial; other traffic such as signals is skipped.
    /// An ERROR reply becomes `SecretServiceError.dbusError`.
    func call(
        destination: String, path: String, interface: String, member: String,
        _ arguments: [DBusValue] = []
    ) throws -> [DBusValue] {
        let deadline = Deadline(timeout, for: "waiting for \(interface).\(member)")
        lastSerial &+= 1
        if lastSerial == 0 { lastSerial = 1 }
        let serial = lastSerial
        let message = DBusMessage(
            kind: .methodCall, serial: serial, path: path, interface: interface,
            member: member, destination: destination, body: arguments)
        try sendAll(message.encoded(), deadline: deadline)
        while true {
            guard let reply = try nextMessage(deadline: deadline), reply.replySerial == serial else { continue }
            switch reply.kind {
            case .methodReturn:
                return reply.body
            case .error:
                throw SecretServiceError.dbusError(
                    name: reply.errorName ?? "(unnamed)",
                    message: reply.body.first?.stringValue ?? "")
            default:
                continue
            }
        }
    }

    private func nextMessage(deadline: Deadline) throws -> DBusMessage? {
        while true {
            // Decoding counts against the deadline too: a bus that floods us with other traffic cannot keep us here.
            _ = try deadline.remainingMilliseconds()
            if let length = try DBusMessage.frameLength(of: inbox), inbox.count >= length {
                let frame = Array(inbox[..<length])
                inbox.removeFirst(length)
                return try DBusMessage.decode(frame)
            }
            try receiveMore(deadline: deadline)
        }
    }
}

private func errnoText() -> String { String(cString: strerror(errno)) }
#endif
