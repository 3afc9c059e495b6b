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
/// The pipeline: NIO's HTTP/1 codec with its pipelining helper (a second request on a connection waits until the first
/// is answered, as before) and its protocol-error handler (a request that does not parse gets 400 and the connection
/// is closed, as before), the HTTP-types conversion, the whole-request deadline, Hummingbird's connection-state handler
/// (a graceful stop closes idle connections and ends busy ones after their answer), then `TenantRequestHandler`.
struct TenantHTTPChannel: ServerChildChannel {
    struct Value: ServerChildChannelValue {
        let channel: any Channel
    }

    let respond: @Sendable (Request, any Channel) async -> Response
    let readTimeout: TimeAmount

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        channel.eventLoop.makeCompletedFuture {
            let pipeline = channel.pipeline.syncOperations
            try pipeline.configureHTTPServerPipeline(
                withPipeliningAssistance: true, withErrorHandling: true, withOutboundHeaderValidation: false,
                withEncoderConfiguration: .init(), withDecoderLimitConfiguration: .init())
            try pipeline.addHandler(HTTP1ToHTTPServerCodec(secure: false))
            try pipeline.addHandler(RequestDeadlineHandler(timeout: readTimeout))
            try pipeline.addHandler(HTTPConnectionStateHandler(idleTimeout: nil, logger: logger))
            try pipeline.addHandler(TenantRequestHandler(respond: respond))
            return Value(channel: channel)
        }
    }

    func handle(value: Value, logger: Logger) async {
        try? await value.channel.closeFuture.get()
    }
}

/// Gathers a request and hands it to the responder; writes the answer (head, body, end) with one flush.
final class TenantRequestHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias OutboundOut = HTTPResponsePart

    /// The most body a request keeps: one byte more than the largest any endpoint reads (a custom policy's XML), so that
    /// the endpoint's own limit still sees a body that is too long and answers 413 in its API's words; the rest of such
    /// a body is read and dropped.
    static let bodyLimit = PolicyXML.maximumBytes + 1

    private let respond: @Sendable (Request, any Channel) async -> Response
    private var head: HTTPRequest?
    private var body: ByteBuffer?
    /// A request is being answered (NIO's pipelining helper holds the next one until it is).
    private var answering = false
    /// The client has closed its side: the connection ends after the answer in progress, if any.
    private var inputClosed = false

    init(respond: @escaping @Sendable (Request, any Channel) async -> Response) { self.respond = respond }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let next):
            head = next
            body = nil
        case .body(var part):
            guard body != nil else {
                body = part.readableBytes <= Self.bodyLimit ? part : part.getSlice(at: part.readerIndex, length: Self.bodyLimit)!
                return
            }
            let room = Self.bodyLimit - body!.readableBytes
            if room > 0 { body!.writeImmutableBuffer(part.readSlice(length: min(room, part.readableBytes))!) }
        case .end:
            guard let head else { return }
            self.head = nil
            let request = Request(head: head, body: RequestBody(buffer: body ?? ByteBuffer()))
            body = nil
            answering = true
            // `Connection: close`: the answer is the connection's last (Hummingbird's HTTP/1 channel did the same).
            let closing = head.headerFields[.connection]?.lowercased() == "close"
            let answer = Answer(
                request: request, closing: closing, channel: context.channel,
                handler: NIOLoopBound((self, context), eventLoop: context.eventLoop), respond: respond)
            Task { await answer.run() }
        }
    }

    /// A half-close (the client shut down its sending side; the server allows it, as Hummingbird's did): the requests
    /// before it are answered, then the connection is closed. NIO's pipelining helper passes the event on after the
    /// requests read before it.
    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if let event = event as? ChannelEvent, event == .inputClosed {
            inputClosed = true
            if !answering { context.close(promise: nil) }
        }
        context.fireUserInboundEventTriggered(event)
    }

    func errorCaught(context: ChannelHandlerContext, error: Error) {
        context.close(promise: nil)
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
        context.write(NIOAny(HTTPResponsePart.head(head)), promise: nil)
        for buffer in parts.buffers { context.write(NIOAny(HTTPResponsePart.body(buffer)), promise: nil) }
        context.writeAndFlush(NIOAny(HTTPResponsePart.end(parts.trailers)), promise: nil)
        // (Writing the end lets NIO's pipelining helper hand over the next request, and the half-close after it: a request
        // handed over then is answered before the connection closes.)
        if closing || (inputClosed && !answering) { context.close(promise: nil) }
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
