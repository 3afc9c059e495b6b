import B2CProtocol
import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL

/// HTTP/1.1 requests on connections of the transport's own, straight to the server or through the environment's proxy.
///
/// The client makes one to three requests per run (a refresh is one), so AsyncHTTPClient's connection pool, request
/// state machines and logger metadata were set up once and used once or twice: `perf` put a third of a forced refresh's
/// first-time protocol-conformance scans in them, and the pool's key formatted for a log line that is never written
/// (bench/README.md, "the client's refresh"). What a request must do — the trust roots, the CA's own hosts, the body's
/// bound, no redirects, the deadline, failures in plain words — is `HTTPTransport.send`'s. Through a proxy, an https
/// route is a tunnel the proxy opens for a CONNECT, with TLS to the server inside it; an http route sends its requests to
/// the proxy with the whole URL as their target (RFC 9112, 3.2.2). A connection whose answer allows it is kept for the
/// route's next request (a sign-in's discovery, keys and token requests share one), one idle connection per route, closed
/// by `shutdown()`.
final class DirectRoutes: @unchecked Sendable {
    /// A route: scheme, host, port, whether the configuration's CA is trusted on it, and the proxy it goes through.
    struct Route: Equatable, Sendable {
        var tls: Bool
        var host: String
        var port: Int
        var withCA: Bool
        var proxy: NetworkEnvironment.Proxy? = nil
    }

    /// An exchange that did not finish: the deadline passed, the body outgrew the transport's bound, a kept connection
    /// had ended while it waited (then the request goes on a new one), or the proxy did not open the tunnel (it answered
    /// the CONNECT with another status, or with something other than HTTP, or not in time).
    enum Failure: Error, Equatable {
        case deadline
        case tooLarge
        case stale
        case proxyAnswered(Int)
        case proxyGarbled
        case proxySilent
    }

    /// How long a connection waits for the route's next request: a command's requests follow each other within it;
    /// past it (a person in the browser for minutes, a laptop asleep, a NAT that forgot the connection) a request
    /// written into a connection that silently died would wait its whole deadline. AsyncHTTPClient kept 60 s.
    static let idleLimit = TimeAmount.seconds(10)

    /// The answer: status, header fields in order, and the whole body.
    struct Answer: Sendable {
        var head: HTTPResponseHead
        var body: ByteBuffer
    }

    /// Guards `idle` and `contexts`. (A plain lock and plain fields: a generic box's or a dictionary's type, made when
    /// the transport is, cost every command, `accounts` and `--version` included, the runtime's metadata and conformance
    /// look-ups.)
    private let lock = NIOLock()
    /// The idle connection of each route that has one (a process has a route or two).
    private var idle: [(route: Route, connection: DirectConnection, since: NIODeadline)] = []
    /// `shutdown()` ran: connections are closed after their answer, not kept.
    private var closed = false
    /// The TLS contexts, made on first use: with the configuration's CA (for its own hosts), and without.
    private var contexts: (withCA: NIOSSLContext?, without: NIOSSLContext?) = (nil, nil)
    private let maxBody: Int

    init(maxBody: Int) { self.maxBody = maxBody }

    /// The TLS context with or without the configuration's CA, made by `make` the first time.
    func tlsContext(withCA: Bool, make: () throws -> NIOSSLContext) rethrows -> NIOSSLContext {
        try lock.withLock {
            if let existing = withCA ? contexts.withCA : contexts.without { return existing }
            let made = try make()
            if withCA { contexts.withCA = made } else { contexts.without = made }
            return made
        }
    }

    /// Sends `head` and `body` on the route's idle connection, or on a new one, and reads the answer whole before
    /// `deadline`. The connection goes back to the route when the answer allows it, and is closed otherwise.
    func exchange(
        _ route: Route, tls: NIOSSLContext?, connectTimeout: TimeAmount, head: HTTPRequestHead, body: ByteBuffer?,
        deadline: NIODeadline
    ) async throws -> Answer {
        let kept = lock.withLock { idle.firstIndex { $0.route == route }.map { idle.remove(at: $0) } }
        var answered: (connection: DirectConnection, answer: Answer, reusable: Bool)?
        if let kept, kept.connection.channel.isActive, .now() - kept.since < Self.idleLimit {
            // A kept connection that ended while it waited (its end read on the loop after the check above) is not the
            // request's failure: it goes on a new connection.
            do {
                let (answer, reusable) = try await kept.connection.exchange(head, body: body, deadline: deadline, reused: true)
                answered = (kept.connection, answer, reusable)
            } catch Failure.stale {}
        } else {
            kept?.connection.channel.close(promise: nil)
        }
        if answered == nil {
            let connection = try await DirectConnection.open(route, tls: tls, connectTimeout: connectTimeout, maxBody: maxBody)
            let (answer, reusable) = try await connection.exchange(head, body: body, deadline: deadline, reused: false)
            answered = (connection, answer, reusable)
        }
        let (connection, answer, reusable) = answered!
        let (isKept, displaced) = lock.withLock { () -> (Bool, DirectConnection?) in
            guard reusable, !closed else { return (false, nil) }
            let displaced = idle.firstIndex { $0.route == route }.map { idle.remove(at: $0).connection }
            idle.append((route, connection, .now()))
            return (true, displaced)
        }
        displaced?.channel.close(promise: nil)
        if !isKept { connection.channel.close(promise: nil) }
        return answer
    }

    /// Closes the idle connections.
    func shutdown() {
        let kept = lock.withLock {
            defer { (idle, closed) = ([], true) }
            return idle
        }
        for entry in kept { entry.connection.channel.close(promise: nil) }
    }
}

/// One connection: its channel and the handler that reads its answers.
struct DirectConnection: Sendable {
    let channel: any Channel
    let reader: NIOLoopBound<AnswerReader>

    static func open(
        _ route: DirectRoutes.Route, tls: NIOSSLContext?, connectTimeout: TimeAmount, maxBody: Int
    ) async throws -> DirectConnection {
        let loop = MultiThreadedEventLoopGroup.singleton.next()
        // SNI and the certificate's name: a host name; an IP address is checked against the certificate's addresses.
        let serverName = IPBytes.parse(route.host) == nil ? route.host : nil
        let handlers: @Sendable (ChannelPipeline.SynchronousOperations) throws -> Void = { pipeline in
            if let tls { try pipeline.addHandler(NIOSSLClientHandler(context: tls, serverHostname: serverName)) }
            try pipeline.addHTTPClientHandlers()
            try pipeline.addHandler(AnswerReader(maxBody: maxBody))
        }
        // Through a proxy, TLS and HTTP follow the proxy's answer to the CONNECT.
        let tunnel = route.tls ? route.proxy : nil
        let channel = try await ClientBootstrap(group: loop)
            .connectTimeout(connectTimeout)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture { if tunnel == nil { try handlers(channel.pipeline.syncOperations) } }
            }
            .connect(host: route.proxy?.host ?? route.host, port: route.proxy?.port ?? route.port).get()
        do {
            if let tunnel { try await openTunnel(channel, to: route, through: tunnel, within: connectTimeout, then: handlers) }
            let reader = try await channel.eventLoop.submit {
                NIOLoopBound(try channel.pipeline.syncOperations.handler(type: AnswerReader.self), eventLoop: channel.eventLoop)
            }.get()
            return DirectConnection(channel: channel, reader: reader)
        } catch {
            channel.close(promise: nil)
            throw error
        }
    }

    /// Asks the proxy on `channel` for a tunnel to the route's host and port (with the proxy URL's user, if any), waits
    /// `limit` for its answer, then adds `handlers` for what goes through the tunnel.
    private static func openTunnel(
        _ channel: any Channel, to route: DirectRoutes.Route, through proxy: NetworkEnvironment.Proxy, within limit: TimeAmount,
        then handlers: @escaping @Sendable (ChannelPipeline.SynchronousOperations) throws -> Void
    ) async throws {
        let loop = channel.eventLoop
        let opened = loop.makePromise(of: Void.self)
        let authority = (route.host.contains(":") ? "[\(route.host)]" : route.host) + ":\(route.port)"
        let credentials = proxy.authorization.map { "Proxy-Authorization: \($0)\r\n" } ?? ""
        let request = "CONNECT \(authority) HTTP/1.1\r\nHost: \(authority)\r\n\(credentials)\r\n"
        try await loop.submit {
            try channel.pipeline.syncOperations.addHandler(TunnelOpener(opened: opened))
            channel.writeAndFlush(ByteBuffer(string: request), promise: nil)
        }.get()
        let timer = loop.scheduleTask(in: limit) { opened.fail(DirectRoutes.Failure.proxySilent) }
        defer { timer.cancel() }
        try await opened.futureResult.get()
        try await loop.submit { try handlers(channel.pipeline.syncOperations) }.get()
    }

    /// One request and its answer; `reusable`: the request was written whole and the answer leaves the connection open
    /// for another. `reused`: the connection was kept from an earlier request (one that ended meanwhile fails `.stale`).
    func exchange(
        _ head: HTTPRequestHead, body: ByteBuffer?, deadline: NIODeadline, reused: Bool
    ) async throws -> (DirectRoutes.Answer, reusable: Bool) {
        let loop = channel.eventLoop, channel = self.channel, reader = self.reader
        let answered = loop.makePromise(of: (DirectRoutes.Answer, Bool).self)
        loop.execute {
            guard reader.value.expect(answered, keepAlive: head.isKeepAlive, reused: reused) else { return }
            channel.write(HTTPClientRequestPart.head(head), promise: nil)
            if let body { channel.write(HTTPClientRequestPart.body(.byteBuffer(body)), promise: nil) }
            channel.writeAndFlush(HTTPClientRequestPart.end(nil)).whenComplete { result in
                switch result {
                case .success: reader.value.requestWritten()
                case .failure(let error): answered.fail(error)
                }
            }
        }
        let timer = loop.scheduleTask(deadline: deadline) { answered.fail(DirectRoutes.Failure.deadline) }
        answered.futureResult.whenComplete { result in
            timer.cancel()
            if case .failure = result { channel.close(promise: nil) }
        }
        let (answer, reusable) = try await withTaskCancellationHandler {
            try await answered.futureResult.get()
        } onCancel: {
            answered.fail(CancellationError())
        }
        return (answer, reusable)
    }
}

/// Gathers each answer (skipping informational heads), bounded; the connection's end before an answer is whole fails it.
final class AnswerReader: ChannelInboundHandler {
    typealias InboundIn = HTTPClientResponsePart

    private let maxBody: Int
    private var answered: EventLoopPromise<(DirectRoutes.Answer, Bool)>?
    private var requestKeepsAlive = false
    /// The request's last part is written (an answer that comes before that leaves the connection unusable).
    private var requestEnded = false
    private var head: HTTPResponseHead?
    private var body = ByteBuffer()
    /// What ended the connection while no answer was awaited (a TLS handshake that failed before the request was
    /// written): the next request fails with it, not with the closed channel it would find.
    private var ended: (any Error)?

    init(maxBody: Int) { self.maxBody = maxBody }

    /// The next answer completes `promise`; `keepAlive`: the request asked to keep the connection. False (the promise
    /// failed) when the connection has ended: with what ended it, or `.stale` on a connection kept from a request before.
    func expect(_ promise: EventLoopPromise<(DirectRoutes.Answer, Bool)>, keepAlive: Bool, reused: Bool) -> Bool {
        if let ended {
            promise.fail(reused ? DirectRoutes.Failure.stale : ended)
            return false
        }
        answered = promise
        requestKeepsAlive = keepAlive
        requestEnded = false
        head = nil
        body.clear()
        return true
    }

    func requestWritten() { requestEnded = true }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let next):
            // 1xx answers (a 100 Continue) come before the real one.
            if next.status.code >= 200 || next.status == .switchingProtocols { head = next }
        case .body(var part):
            guard head != nil else { return }
            guard body.readableBytes + part.readableBytes <= maxBody else {
                answered?.fail(DirectRoutes.Failure.tooLarge)
                answered = nil
                return context.close(promise: nil)
            }
            body.writeBuffer(&part)
        case .end:
            guard let head, let answered else { return }
            self.answered = nil
            // Kept only when both sides said so, the request was written whole, and the protocol is still HTTP/1.1.
            let reusable = requestKeepsAlive && requestEnded && head.isKeepAlive && head.status != .switchingProtocols
            answered.succeed((DirectRoutes.Answer(head: head, body: body), reusable))
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        fail(ChannelError.eof)
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        fail(error)
        context.close(promise: nil)
    }

    private func fail(_ error: any Error) {
        if let answered {
            answered.fail(error)
            self.answered = nil
        } else if ended == nil {
            ended = error
        }
    }
}

/// Reads the proxy's answer to a CONNECT up to the empty line that ends it, then leaves the pipeline: a 2xx opens the
/// tunnel; any other status, bytes that are not an HTTP/1 answer, or a head longer than 8 KiB fail it. Nothing may
/// follow the answer before the client speaks: TLS begins with the client's hello.
final class TunnelOpener: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer

    private let opened: EventLoopPromise<Void>
    private var received: [UInt8] = []

    init(opened: EventLoopPromise<Void>) { self.opened = opened }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        received += unwrapInboundIn(data).readableBytesView
        guard let end = Self.endOfHead(received) else {
            if received.count > 8192 { finish(context, .failure(DirectRoutes.Failure.proxyGarbled)) }
            return
        }
        let prefix = Array("HTTP/1.".utf8)
        guard received.count >= 12, received.starts(with: prefix), received[8] == UInt8(ascii: " "),
            let status = Int(String(decoding: received[9..<12], as: UTF8.self)), end == received.count
        else { return finish(context, .failure(DirectRoutes.Failure.proxyGarbled)) }
        finish(context, (200..<300).contains(status) ? .success(()) : .failure(DirectRoutes.Failure.proxyAnswered(status)))
    }

    func channelInactive(context: ChannelHandlerContext) {
        opened.fail(ChannelError.eof)
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        opened.fail(error)
        context.close(promise: nil)
    }

    private func finish(_ context: ChannelHandlerContext, _ result: Result<Void, any Error>) {
        context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
        opened.completeWith(result)
    }

    /// The index just past the first CR LF CR LF, if the bytes hold one.
    static func endOfHead(_ bytes: [UInt8]) -> Int? {
        guard bytes.count >= 4 else { return nil }
        for i in 3..<bytes.count
        where bytes[i] == 10 && bytes[i - 1] == 13 && bytes[i - 2] == 10 && bytes[i - 3] == 13 {
            return i + 1
        }
        return nil
    }
}
