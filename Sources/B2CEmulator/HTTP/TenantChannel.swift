import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdCore
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOHTTPTypes
import NIOHTTPTypesHTTP1

/// An HTTP/1 connection of the tenant. Hummingbird's own HTTP/1 channel wraps each connection in an async channel and
/// reads every request part through an async sequence; here a channel handler gathers a request (head and body) and
/// the tenant's responder answers it in a task of its own, which writes the answer back on the connection's event loop.
/// The responder — the request log, the authority prefix, the router and every middleware — is the same one either way:
/// only how the bytes reach it changed (bench/README.md, "the connection's own costs": a third of what a grant spent
/// outside RSA was the async channel's).
///
/// The pipeline: NIO's HTTP/1 codec, the HTTP-types conversion, the whole-request deadline, Hummingbird's
/// connection-state handler (a graceful stop closes idle connections and ends busy ones after their answer), then
/// `TenantRequestHandler`, which also keeps pipelined requests in order and answers one that does not parse with 400.
/// (NIO's own pipelining helper stops reading the connection while each request is answered: two `epoll_ctl` calls per
/// request, which the async channel did not make.)
struct TenantHTTPChannel: ServerChildChannel {
    struct Value: ServerChildChannelValue {
        let channel: any Channel
    }

    let respond: @Sendable (Request, any Channel) async -> Response
    let readTimeout: TimeAmount
    /// The most body a request keeps, by its head (`Request.bodyLimit(for:)`).
    let bodyLimit: @Sendable (HTTPRequest) -> Int

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        channel.eventLoop.makeCompletedFuture {
            let pipeline = channel.pipeline.syncOperations
            try pipeline.configureHTTPServerPipeline(
                withPipeliningAssistance: false, withErrorHandling: false, withOutboundHeaderValidation: false,
                withEncoderConfiguration: .init(), withDecoderLimitConfiguration: Self.decoderLimits)
            try pipeline.addHandler(HTTP1ToHTTPServerCodec(secure: false))
            try pipeline.addHandler(RequestDeadlineHandler(timeout: readTimeout))
            try pipeline.addHandler(HTTPConnectionStateHandler(idleTimeout: nil, logger: logger))
            try pipeline.addHandler(TenantRequestHandler(respond: respond, bodyLimit: bodyLimit))
            return Value(channel: channel)
        }
    }

    /// Hummingbird's HTTP/1 limits: 80 KiB for a header field and for all of them, 1,000 fields.
    static let decoderLimits = {
        var limits = NIOHTTPDecoderLimitConfiguration()
        limits.maxHeaderFieldSize = 80 * 1024
        limits.maxHeaderListSize = 80 * 1024
        limits.maxHeaderFieldCount = 1000
        return limits
    }()

    /// The connection lives until it closes; a cancelled server closes its input (as Hummingbird's channel did), so that
    /// the requests read are answered and the connection ends.
    func handle(value: Value, logger: Logger) async {
        await withTaskCancellationHandler {
            try? await value.channel.closeFuture.get()
        } onCancel: {
            value.channel.close(mode: .input, promise: nil)
        }
    }
}

/// Gathers a request and hands it to the responder; writes the answer (head, body, end) with one flush. Requests that
/// arrive while one is answered (a pipelining client's) wait their turn, answered in the order they came; a request that
/// does not parse is answered 400 in its turn, and the connection is closed.
final class TenantRequestHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    /// Requests read whole that may wait behind the one being answered; with this many waiting, the connection is not
    /// read until they are answered (a connection holds at most three requests' bodies: answered, waiting, being read).
    static let waitingLimit = 1

    private let respond: @Sendable (Request, any Channel) async -> Response
    private let bodyLimit: @Sendable (HTTPRequest) -> Int
    /// The request being read, and the most of its body kept (the rest is read and dropped).
    private var head: HTTPRequest?
    private var limit = 0
    private var body: ByteBuffer?
    /// A request is being answered.
    private var answering = false
    /// Requests read whole, waiting for the one being answered, and whether each is its connection's last.
    private var waiting: [(request: Request, closing: Bool)] = []
    /// A read NIO asked for while `waiting` was full, passed on once it is not.
    private var readHeld = false
    /// What follows the answers owed: a 400 for a request that did not parse, or the end of a half-closed connection.
    private var badRequest = false
    private var inputClosed = false

    init(respond: @escaping @Sendable (Request, any Channel) async -> Response, bodyLimit: @escaping @Sendable (HTTPRequest) -> Int) {
        self.respond = respond
        self.bodyLimit = bodyLimit
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let next):
            head = next
            body = nil
            limit = bodyLimit(next)
        case .body(var part):
            guard body != nil else {
                body = part.readableBytes <= limit ? part : part.getSlice(at: part.readerIndex, length: limit)!
                return
            }
            let room = limit - body!.readableBytes
            if room > 0 { body!.writeImmutableBuffer(part.readSlice(length: min(room, part.readableBytes))!) }
        case .end:
            guard let head else { return }
            self.head = nil
            let request = Request(head: head, body: RequestBody(buffer: body ?? ByteBuffer()))
            body = nil
            // `Connection: close`: the answer is the connection's last (Hummingbird's HTTP/1 channel did the same).
            let closing = head.headerFields[.connection]?.lowercased() == "close"
            if answering || badRequest {
                waiting.append((request, closing))
            } else {
                answer(request, closing: closing, context: context)
            }
        }
    }

    func read(context: ChannelHandlerContext) {
        if waiting.count >= Self.waitingLimit { readHeld = true } else { context.read() }
    }

    /// A half-close (the client shut down its sending side; the server allows it, as Hummingbird's did): the requests
    /// before it are answered, then the connection is closed.
    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if let event = event as? ChannelEvent, event == .inputClosed {
            inputClosed = true
            if !answering && waiting.isEmpty && !badRequest { context.close(promise: nil) }
        }
        context.fireUserInboundEventTriggered(event)
    }

    func errorCaught(context: ChannelHandlerContext, error: Error) {
        guard error is HTTPParserError, !badRequest else { return context.close(promise: nil) }
        badRequest = true
        if !answering { next(context) }
    }

    private func answer(_ request: Request, closing: Bool, context: ChannelHandlerContext) {
        answering = true
        let answer = Answer(
            request: request, closing: closing, channel: context.channel,
            handler: NIOLoopBound((self, context), eventLoop: context.eventLoop), respond: respond)
        Task { await answer.run() }
    }

    /// One request's answer: the responder's response, then its parts written on the connection's loop.
    struct Answer: Sendable {
        let request: Request
        let closing: Bool
        let channel: any Channel
        let handler: NIOLoopBound<(TenantRequestHandler, ChannelHandlerContext)>
        let respond: @Sendable (Request, any Channel) async -> Response

        func run() async {
            var response = await respond(request, channel)
            response.headers[.date] = HTTPDateFormat.now()
            let head = response.head, parts = await ResponseParts.of(response.body)
            // With the event loops as Swift's global executor (`b2c-emulator serve`) the task runs on the connection's
            // own loop; otherwise (the tests' default executor) the answer goes there.
            let loop = handler.eventLoop, handler = self.handler, closing = self.closing
            if loop.inEventLoop {
                handler.value.0.write(head, parts, closing: closing, to: handler.value.1)
            } else {
                loop.execute { handler.value.0.write(head, parts, closing: closing, to: handler.value.1) }
            }
        }
    }

    fileprivate func write(_ head: HTTPResponse, _ parts: ResponseParts, closing: Bool, to context: ChannelHandlerContext) {
        answering = false
        guard context.channel.isActive else { return }
        guard !parts.failed else { return context.close(promise: nil) }
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        for buffer in parts.buffers { context.write(wrapOutboundOut(.body(buffer)), promise: nil) }
        // The connection's last answer: `Connection: close`, or a half-closed client's last request.
        guard closing || (inputClosed && waiting.isEmpty && !badRequest) else {
            context.writeAndFlush(wrapOutboundOut(.end(parts.trailers)), promise: nil)
            return next(context)
        }
        Self.writeLast(.end(parts.trailers), context)
    }

    /// Writes a connection's last part, and closes the connection once it is out (a close at once drops what the socket
    /// has not taken yet: a slow reader would get a cut answer).
    private static func writeLast(_ part: HTTPResponsePart, _ context: ChannelHandlerContext) {
        let written = context.eventLoop.makePromise(of: Void.self)
        context.writeAndFlush(NIOAny(part), promise: written)
        written.futureResult.assumeIsolated().whenComplete { _ in context.close(promise: nil) }
    }

    /// What comes after an answer that was not the connection's last: the next waiting request, else the 400 owed.
    private func next(_ context: ChannelHandlerContext) {
        if !waiting.isEmpty {
            let (request, closing) = waiting.removeFirst()
            if readHeld, waiting.count < Self.waitingLimit {
                readHeld = false
                context.read()
            }
            return answer(request, closing: closing, context: context)
        }
        if badRequest {
            // As Hummingbird's channel answered a request its parser refused.
            context.write(
                wrapOutboundOut(.head(HTTPResponse(status: .badRequest, headerFields: [.connection: "close", .contentLength: "0"]))),
                promise: nil)
            return Self.writeLast(.end(nil), context)
        }
        if readHeld {
            readHeld = false
            context.read()
        }
    }
}

/// A response body as written: its buffers and trailing fields. An endpoint's body is one buffer, or a closure that
/// writes a few (nothing the tenant answers is streamed), so it is gathered before the head is written.
final class ResponseParts: @unchecked Sendable {
    var buffers: [ByteBuffer] = []
    var trailers: HTTPFields?
    /// The body's writer threw: the answer cannot be whole, and the connection is closed instead (as Hummingbird's
    /// channel ended it), so that the client is not left waiting for the bytes its head promised.
    var failed = false

    static func of(_ body: ResponseBody) async -> ResponseParts {
        let parts = ResponseParts()
        do { try await body.write(Writer(parts: parts)) } catch { parts.failed = true }
        return parts
    }

    struct Writer: ResponseBodyWriter {
        let parts: ResponseParts
        mutating func write(_ buffer: ByteBuffer) async throws { parts.buffers.append(buffer) }
        consuming func finish(_ trailingHeaders: HTTPFields?) async throws { parts.trailers = trailingHeaders }
    }
}

/// The `Date` field of every answer (RFC 9110's IMF-fixdate), made once a second.
public enum HTTPDateFormat {
    private static let cache = NIOLockedValueBox<(second: Int, text: String)>((-1, ""))

    static func now() -> String {
        let second = time(nil)
        return cache.withLockedValue { cached in
            if cached.second != second { cached = (second, imfFixdate(second)) }
            return cached.text
        }
    }

    /// `second` (since 1970, UTC) as `Sun, 06 Nov 1994 08:49:37 GMT`.
    public static func imfFixdate(_ second: Int) -> String {
        var t = second, parts = tm()
        gmtime_r(&t, &parts)
        let days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        func two(_ n: Int32) -> String { n < 10 ? "0\(n)" : "\(n)" }
        return "\(days[Int(parts.tm_wday)]), \(two(parts.tm_mday)) \(months[Int(parts.tm_mon)]) \(parts.tm_year + 1900) "
            + "\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec)) GMT"
    }
}
