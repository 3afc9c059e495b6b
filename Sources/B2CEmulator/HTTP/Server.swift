import B2CProtocol
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdCore
import HummingbirdTLS
import Logging
import NIOCore
import NIOPosix
import NIOSSL
import ServiceLifecycle

/// A running emulator: its base URL and a way to stop it.
public final class EmulatorServer: Sendable {
    public let emulator: B2CEmulator
    public let host: String
    public let port: Int
    public let tls: EmulatorTLS?
    private let group: ServiceGroup
    private let task: Task<Void, Error>

    /// The URL clients use: on a wildcard address (0.0.0.0, ::) the loopback address, which always reaches it.
    public var baseURL: String {
        let reachable = host == "0.0.0.0" ? "127.0.0.1" : host == "::" ? "::1" : host
        let h = reachable.contains(":") ? "[\(reachable)]" : reachable
        return "\(tls == nil ? "http" : "https")://\(h):\(port)"
    }

    /// Starts serving on `host:port` (port 0 = ephemeral). With `handleSignals`, SIGINT/SIGTERM stop it gracefully.
    /// `limits`: how long a client may take to send a request, and how many are served at once.
    public static func start(
        _ emulator: B2CEmulator, host: String = "127.0.0.1", port: Int = 0, tls: EmulatorTLS? = nil,
        handleSignals: Bool = false, logger: Logger? = nil, limits: ConnectionLimits = .init()
    ) async throws -> EmulatorServer {
        let log = logger ?? Logger(label: "b2c.emulator") { _ in QuietLogHandler() }
        let responder = emulator.responder(scheme: tls == nil ? "http" : "https", logger: logger)
        let (stream, continuation) = AsyncStream<Int>.makeStream()
        let respond: @Sendable (Request, any Channel) async -> Response = { request, channel in
            let context = EmulatorRequestContext(source: .init(channel: channel, logger: log))
            // What the endpoints throw is answered by ErrorMiddleware; what gets past it is the framework's 500. (No request
            // id in the context's logger, which Hummingbird's application set: nothing logs through it.)
            do { return try await responder.respond(to: request, context: context) } catch {
                log.debug("unrecognised error", metadata: ["error.type": "\(type(of: error))"])
                return Response(status: .internalServerError)
            }
        }
        let http1 = TenantHTTPChannel(respond: respond, readTimeout: TimeAmount(limits.readTimeout), bodyLimit: Request.bodyLimit(for:))
        let configuration = ServerConfiguration(
            address: .hostname(host, port: port),
            availableConnectionsDelegate: MaximumAvailableConnections(limits.maxConnections, logger: log))
        let onServerRunning: @Sendable (any Channel) async -> Void = { channel in
            await ConnectionLimits.prepare(listener: channel)
            continuation.yield(channel.localAddress?.port ?? 0)
            continuation.finish()
        }
        let app =
            try tls.map {
                try TLSChannel(http1, tlsConfiguration: $0.serverConfiguration).server(
                    configuration: configuration, onServerRunning: onServerRunning, eventLoopGroup: MultiThreadedEventLoopGroup.singleton,
                    logger: log)
            }
            ?? http1.server(
                configuration: configuration, onServerRunning: onServerRunning, eventLoopGroup: MultiThreadedEventLoopGroup.singleton,
                logger: log)
        let group = ServiceGroup(
            configuration: .init(
                services: [app], gracefulShutdownSignals: handleSignals ? [.sigterm, .sigint] : [],
                logger: log))
        // When the server cannot start, the group ends without "running": finishing the stream then ends the wait.
        let task = Task {
            defer { continuation.finish() }
            try await group.run()
        }
        var bound: Int?
        for await p in stream { bound = p; break }
        guard let bound, bound > 0 else {
            task.cancel()
            var failure: Error?
            do { try await task.value } catch { failure = error }
            throw EmulatorStartError(
                message: "cannot listen on \(host.contains(":") ? "[\(host)]" : host):\(port): \(Self.reason(failure))",
                portInUse: (failure as? IOError)?.errnoCode == EADDRINUSE)
        }
        let server = EmulatorServer(emulator: emulator, host: host, port: bound, tls: tls, group: group, task: task)
        var names = ["127.0.0.1:\(bound)", "localhost:\(bound)", "[::1]:\(bound)"]
        if !["127.0.0.1", "localhost", "::1", "0.0.0.0", "::"].contains(host) { names.append("\(host):\(bound)") }
        emulator.addServedHosts(names)
        emulator.answer(to: [host] + (tls?.hostNames ?? []))
        return server
    }

    private init(emulator: B2CEmulator, host: String, port: Int, tls: EmulatorTLS?, group: ServiceGroup, task: Task<Void, Error>) {
        self.emulator = emulator; self.host = host; self.port = port; self.tls = tls; self.group = group; self.task = task
    }

    /// Waits until the server stops (signal or `stop()`), then writes the token log's waiting entries.
    public func wait() async throws {
        defer { emulator.store.requests.flush() }
        try await task.value
    }

    public func stop() async {
        await group.triggerGracefulShutdown()
        _ = try? await task.value
        emulator.store.requests.flush()
    }
}

extension EmulatorServer {
    /// Why listening failed, in words.
    static func reason(_ error: Error?) -> String {
        guard let error else { return "the server stopped before it was ready" }
        if let io = error as? IOError {
            switch io.errnoCode {
            case EADDRINUSE: return "the port is in use (choose another, or --port 0 for any free port)"
            case EADDRNOTAVAIL: return "the address is not one of this machine's"
            case EACCES: return "the port needs privileges (choose one above 1023)"
            default: return "\(String(cString: strerror(io.errnoCode))) (errno \(io.errnoCode))"
            }
        }
        if error is SocketAddressError.UnknownHost { return "the host name is unknown (it does not resolve to an address)" }
        return "\(error)"
    }
}

/// The quiet server's log (no `--verbose`, no `--log-format`): a critical message on stderr, nothing else. Metadata is
/// kept as given and rendered only for a message it writes (swift-log's stream handler rendered the request id
/// Hummingbird's application set on every request: 0.7 % of a client-credentials grant's time).
struct QuietLogHandler: LogHandler {
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .critical
    /// Where a line goes (stderr; a test's capture).
    var write: @Sendable (String) -> Void = { FileHandle.standardError.write(Data($0.utf8)) }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        guard event.level >= logLevel else { return }
        let fields = metadata.merging(event.metadata ?? [:]) { $1 }
        let context =
            fields.isEmpty ? "" : " (" + fields.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ") + ")"
        write("b2c-emulator: \(event.message)\(context)\n")
    }
}

public struct EmulatorStartError: Error, CustomStringConvertible {
    public let message: String
    /// Another program listens on the port.
    public var portInUse = false
    public var description: String { message }
}

/// Which peers count as "this machine" for the admin surface.
public enum PeerAddress {
    public static func isLoopback(_ address: SocketAddress?) -> Bool {
        guard let address else { return false }
        if case .unixDomainSocket = address { return true }
        return isLoopback(ip: address.ipAddress ?? "")
    }

    /// 127.0.0.0/8, ::1 and IPv4-mapped 127.x.
    public static func isLoopback(ip: String) -> Bool {
        let ip = ip.lowercased()
        if ip == "0:0:0:0:0:0:0:1" { return true }
        // An address, never a name: "localhost" here would be a spoofable string, not a peer.
        guard ip != "localhost" else { return false }
        return Loopback.isHost(ip.hasPrefix("::ffff:") ? String(ip.dropFirst(7)) : ip)
    }
}
