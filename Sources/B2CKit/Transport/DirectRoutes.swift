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
    /// the CONNECT with another status, with something other than HTTP, not in time, or closed the connection).
    enum Failure: Error, Equatable {
        case deadline
        case tooLarge
        case stale
        case proxyAnswered(Int, withCredentials: Bool)
        case proxyGarbled
        case proxySilent
        case proxyClosed
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
        // The handlers for HTTP, and the reader handed back: added when the connection is made, or, through a proxy, in
        // the same turn as the proxy's answer is read (so nothing the tunnel carries comes before them).
        let http: @Sendable (ChannelPipeline.SynchronousOperations, any EventLoop) throws -> NIOLoopBound<AnswerReader> = {
            pipeline, loop in
            let reader = AnswerReader(maxBody: maxBody)
            try pipeline.addHTTPClientHandlers()
            try pipeline.addHandler(reader)
            // TLS last, in front: it starts its handshake as it is added to an open connection.
            if let tls { try pipeline.addHandler(NIOSSLClientHandler(context: tls, serverHostname: serverName), position: .first) }
            return NIOLoopBound(reader, eventLoop: loop)
        }
        // Through a proxy, an https route's TLS and HTTP follow the proxy's answer to a CONNECT, which must come within the
        // connect timeout, counted from the start.
        let tunnel = route.tls ? route.proxy : nil
        let connect = tunnel.map { proxy -> (request: ByteBuffer, withCredentials: Bool) in
            let authority = Loopback.authority(route.host, port: route.port)
            let credentials = proxy.authorization.map { "Proxy-Authorization: \($0)\r\n" } ?? ""
            return (ByteBuffer(string: "CONNECT \(authority) HTTP/1.1\r\nHost: \(authority)\r\n\(credentials)\r\n"), !credentials.isEmpty)
        }
        // Each channel the connect tries (one per address of the name, as Happy Eyeballs races them) gets its own
        // handlers and its own promise of a reader; the one that connects is the one awaited.
        let readers = NIOLockedValueBox<[ObjectIdentifier: EventLoopPromise<NIOLoopBound<AnswerReader>>]>([:])
        let started = NIODeadline.now()
        let channel = try await ClientBootstrap(group: loop)
            .connectTimeout(connectTimeout)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    let ready = channel.eventLoop.makePromise(of: NIOLoopBound<AnswerReader>.self)
                    readers.withLockedValue { $0[ObjectIdentifier(channel)] = ready }
                    let pipeline = channel.pipeline.syncOperations
                    do {
                        if let connect {
                            try pipeline.addHandler(
                                TunnelOpener(request: connect.request, withCredentials: connect.withCredentials, ready: ready, then: http))
                        } else {
                            ready.succeed(try http(pipeline, channel.eventLoop))
                        }
                    } catch {
                        ready.fail(error)
                        throw error
                    }
                }
            }
            .connect(host: route.proxy?.host ?? route.host, port: route.proxy?.port ?? route.port).get()
        guard let ready = readers.withLockedValue({ $0[ObjectIdentifier(channel)] }) else {
            channel.close(promise: nil)
            throw ChannelPipelineError.notFound  // unreachable: the bootstrap initializes every channel it connects
        }
        let timer = connect.map { _ in
            loop.scheduleTask(deadline: started + connectTimeout) { ready.fail(DirectRoutes.Failure.proxySilent) }
        }
        defer { timer?.cancel() }
        do {
            let reader = try await withTaskCancellationHandler {
                try await ready.futureResult.get()
            } onCancel: {
                ready.fail(CancellationError())
            }
            return DirectConnection(channel: channel, reader: reader)
        } catch {
            channel.close(promise: nil)
            throw error
        }
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

/// Sends the CONNECT when the connection to the proxy is made, and reads the proxy's answer up to the empty line that
/// ends it (informational answers skipped): a 2xx opens the tunnel, and in the same turn this handler leaves the pipeline
/// and the handlers for what the tunnel carries take its place; any other status (whatever body follows it), bytes that
/// are not an HTTP/1 answer, bytes after a 2xx's head (TLS begins with the client's hello), a head longer than 8 KiB, or
/// the connection's end fail it.
final class TunnelOpener: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private let request: ByteBuffer
    private let withCredentials: Bool
    private let ready: EventLoopPromise<NIOLoopBound<AnswerReader>>
    private let then: (ChannelPipeline.SynchronousOperations, any EventLoop) throws -> NIOLoopBound<AnswerReader>
    private var received: [UInt8] = []
    private var sent = false, done = false

    init(
        request: ByteBuffer, withCredentials: Bool, ready: EventLoopPromise<NIOLoopBound<AnswerReader>>,
        then: @escaping (ChannelPipeline.SynchronousOperations, any EventLoop) throws -> NIOLoopBound<AnswerReader>
    ) {
        self.request = request
        self.withCredentials = withCredentials
        self.ready = ready
        self.then = then
    }

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { send(context) }
    }

    func channelActive(context: ChannelHandlerContext) {
        send(context)
        context.fireChannelActive()
    }

    private func send(_ context: ChannelHandlerContext) {
        guard !sent else { return }
        sent = true
        context.writeAndFlush(wrapOutboundOut(request), promise: nil)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !done else { return }
        received += unwrapInboundIn(data).readableBytesView
        while let end = Self.endOfHead(received) {
            guard let status = Self.status(received) else { return fail(context, DirectRoutes.Failure.proxyGarbled) }
            if (100..<200).contains(status) {
                received.removeFirst(end)
                continue
            }
            guard (200..<300).contains(status) else {
                return fail(context, DirectRoutes.Failure.proxyAnswered(status, withCredentials: withCredentials))
            }
            guard end == received.count else { return fail(context, DirectRoutes.Failure.proxyGarbled) }
            done = true
            let pipeline = context.pipeline.syncOperations, channel = context.channel
            pipeline.removeHandler(context: context, promise: nil)
            do {
                ready.succeed(try then(pipeline, channel.eventLoop))
            } catch {
                ready.fail(error)
                channel.close(promise: nil)
            }
            return
        }
        if received.count > 8192 { fail(context, DirectRoutes.Failure.proxyGarbled) }
    }

    func channelInactive(context: ChannelHandlerContext) {
        if !done { ready.fail(DirectRoutes.Failure.proxyClosed) }
        done = true
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        fail(context, error)
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        if !done { ready.fail(DirectRoutes.Failure.proxyClosed) }
        done = true
    }

    private func fail(_ context: ChannelHandlerContext, _ error: any Error) {
        if !done { ready.fail(error) }
        done = true
        context.close(promise: nil)
    }

    /// The status of an HTTP/1 answer's first line ("HTTP/1.1 407 …"), nil for anything else.
    static func status(_ bytes: [UInt8]) -> Int? {
        guard bytes.count >= 12, bytes.starts(with: Array("HTTP/1.".utf8)), bytes[8] == UInt8(ascii: " "),
            bytes[9..<12].allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) })
        else { return nil }
        return bytes[9..<12].reduce(0) { $0 * 10 + Int($1 - UInt8(ascii: "0")) }
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
