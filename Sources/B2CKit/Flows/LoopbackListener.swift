import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOPosix

/// The redirect listener of an interactive sign-in: the loopback addresses the redirect URI's host names (both, for
/// `localhost`), on one port, closing idle connections. It takes the one answer whose `state` is this
/// sign-in's (from the browser, or pasted by the person when the browser runs elsewhere); an answer with another state
/// (an old tab, a forged link) gets a page that says so, and the listener keeps waiting.
///
/// A plain NIO HTTP/1 server (NIOHTTP1 is linked for the HTTP client anyway): one page per connection, then the
/// connection is closed. It was Hummingbird, whose modules (and Configuration, HTTPTypes, NIOFileSystem…) were about a
/// tenth of the client's protocol-conformance records, which the Swift runtime scans on every first use of a generic
/// type: a share of every command's start (bench/README.md, item 3).
package final class LoopbackListener: Sendable {
    /// The port it listens on: the one asked for, or the one chosen when asked for any.
    public let port: Int
    private let inbox: Inbox
    private let channels: [any Channel]

    /// What an answer did: taken (the sign-in goes on with it), or refused and why.
    public enum Delivery: Sendable, Equatable {
        case accepted
        case alreadyAnswered
        case wrongState
        case notAnAnswer
    }

    /// The single answer, kept until the flow reads it; answers are checked against the expected state here.
    final class Inbox: Sendable {
        let expectedState: String
        /// The end-session redirect carries only `state`; a sign-in answer has a code or an error too.
        let acceptsBareState: Bool
        private let delivered = NIOLockedValueBox(false)
        private let stream: AsyncStream<[String: String]>
        private let continuation: AsyncStream<[String: String]>.Continuation

        init(expectedState: String, acceptsBareState: Bool) {
            self.expectedState = expectedState
            self.acceptsBareState = acceptsBareState
            (stream, continuation) = AsyncStream<[String: String]>.makeStream()
        }

        func deliver(_ params: [String: String]) -> Delivery {
            guard params["code"] != nil || params["error"] != nil || (acceptsBareState && params["state"] != nil) else {
                return .notAnAnswer
            }
            guard params["state"] == expectedState else { return .wrongState }
            let first = delivered.withLockedValue { d -> Bool in
                defer { d = true }
                return !d
            }
            guard first else { return .alreadyAnswered }
            continuation.yield(params)
            continuation.finish()
            return .accepted
        }

        func next() async -> [String: String]? {
            for await params in stream { return params }
            return nil
        }
    }

    /// The page a request gets: the redirect path with an answer for this sign-in is taken; anything else is told why not.
    static func page(method: HTTPMethod, uri: String, path: String, inbox: Inbox) -> (HTTPResponseStatus, title: String, text: String) {
        let parts = uri.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)
        let requestPath = String(parts[0].split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false)[0])
        guard method == .GET, requestPath == path || (path.isEmpty && requestPath == "/") else {
            return (.notFound, "Not found", "This listener only receives the sign-in redirect.")
        }
        let query = parts.count > 1 ? String(parts[1].split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false)[0]) : ""
        let params = (try? FormEncoding.parse(query)) ?? [:]
        switch inbox.deliver(params) {
        case .accepted:
            if params["code"] == nil && params["error"] == nil {
                return (.ok, "Signed out", "You can close this window and return to the terminal.")
            }
            if params["error"] != nil {
                return (.ok, "Sign-in did not complete", "b2c received the answer. You can close this window and return to the terminal.")
            }
            return (.ok, "Signed in", "You can close this window and return to the terminal.")
        case .alreadyAnswered:
            return (.conflict, "Already done", "This sign-in has already received its answer. You can close this window.")
        case .wrongState, .notAnAnswer:
            return (
                .badRequest, "Not for this sign-in",
                "This answer does not belong to the sign-in in progress (an older tab, or a link from elsewhere); b2c ignored it "
                    + "and is still waiting. Finish the sign-in in the window that b2c opened, or close this one."
            )
        }
    }

    /// The fixed page around a title and a text of `page(...)` (constants of this file: nothing from the request is in it).
    static func html(title: String, text: String) -> String {
        """
        <!DOCTYPE html><html><head><meta charset="utf-8"><title>b2c</title>
        <style>body{font-family:system-ui,sans-serif;margin:80px auto;max-width:480px;color:#1f2937}</style></head>
        <body><h1>\(title)</h1><p>\(text)</p></body></html>
        """
    }

    /// One connection: reads a request, answers it with its page, closes. A connection silent for `idleTimeout` is closed.
    final class Connection: ChannelInboundHandler, RemovableChannelHandler {
        typealias InboundIn = HTTPServerRequestPart
        typealias OutboundOut = HTTPServerResponsePart
        let path: String
        let inbox: Inbox
        private var head: HTTPRequestHead?

        init(path: String, inbox: Inbox) {
            self.path = path
            self.inbox = inbox
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            switch unwrapInboundIn(data) {
            case .head(let request): head = request
            case .body: break  // a redirect is a GET; a body is not read
            case .end:
                guard let request = head else { return }
                head = nil
                let (status, title, text) = LoopbackListener.page(method: request.method, uri: request.uri, path: path, inbox: inbox)
                let body = context.channel.allocator.buffer(string: LoopbackListener.html(title: title, text: text))
                let headers = HTTPHeaders([
                    ("Content-Type", "text/html; charset=utf-8"), ("Cache-Control", "no-store"),
                    ("Content-Length", String(body.readableBytes)), ("Connection", "close"),
                ])
                context.write(
                    wrapOutboundOut(.head(HTTPResponseHead(version: request.version, status: status, headers: headers))), promise: nil)
                context.write(wrapOutboundOut(.body(.byteBuffer(body))), promise: nil)
                context.writeAndFlush(wrapOutboundOut(.end(nil))).assumeIsolated().whenComplete { _ in context.close(promise: nil) }
            }
        }

        func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
            if event is IdleStateHandler.IdleStateEvent {
                context.close(promise: nil)
            } else {
                context.fireUserInboundEventTriggered(event)
            }
        }

        func errorCaught(context: ChannelHandlerContext, error: Error) { context.close(promise: nil) }
    }

    /// The addresses a redirect URI's host names: `localhost` is both loopback addresses, since a browser may try either
    /// (and tries ::1 first where /etc/hosts says `::1 localhost`): listening on only one would let another local user
    /// take the other and receive the answer.
    static func addresses(forRedirectHost host: String?) -> [String] {
        switch Loopback.bareHost(host ?? "localhost") {
        case "::1": ["::1"]
        case "localhost": ["127.0.0.1", "::1"]
        default: ["127.0.0.1"]
        }
    }

    /// A connection that sends nothing for this long is closed: idle half-requests must not keep the answer out.
    static let idleTimeout: TimeAmount = .seconds(5)

    /// Listens on `port` (0 = a free port) of each loopback address the redirect host names, for `path` of the redirect
    /// URI. A port that is taken (on either address), or any other failure to listen, is an error at once; with port 0 a
    /// port taken on the second address is given up for another.
    public static func start(
        port: Int, path: String, expectedState: String, acceptsBareState: Bool = false, redirectHost: String? = "localhost"
    ) async throws -> LoopbackListener {
        let inbox = Inbox(expectedState: expectedState, acceptsBareState: acceptsBareState)
        let addresses = addresses(forRedirectHost: redirectHost)
        var lastFailure: Error?
        for _ in 0..<(port == 0 ? 8 : 1) {
            do {
                return try await listen(port: port, addresses: addresses, path: path, inbox: inbox)
            } catch let e as SecondAddressTaken where port == 0 {
                lastFailure = e.underlying
            }
        }
        throw B2CError(.failed, listenFailure(port: port, host: addresses.last ?? "127.0.0.1", lastFailure))
    }

    struct SecondAddressTaken: Error { var underlying: Error? }

    private static func listen(port: Int, addresses: [String], path: String, inbox: Inbox) async throws -> LoopbackListener {
        let first: any Channel
        do { first = try await bind(address: addresses[0], port: port, path: path, inbox: inbox) } catch {
            throw B2CError(.failed, listenFailure(port: port, host: addresses[0], error))
        }
        guard let bound = first.localAddress?.port, bound > 0 else {
            try? await first.close()
            throw B2CError(.failed, listenFailure(port: port, host: addresses[0], nil))
        }
        var channels = [first]
        for address in addresses.dropFirst() {
            do {
                channels.append(try await bind(address: address, port: bound, path: path, inbox: inbox))
            } catch {
                // No such address here (no IPv6): then no browser reaches it either.
                if let io = error as? IOError, io.errnoCode == EADDRNOTAVAIL || io.errnoCode == EAFNOSUPPORT { continue }
                if let f = error as? SocketAddressError, "\(f)".contains("nknown") { continue }
                for channel in channels { try? await channel.close() }
                if port == 0 { throw SecondAddressTaken(underlying: error) }
                throw B2CError(.failed, listenFailure(port: port, host: address, error))
            }
        }
        return LoopbackListener(port: bound, inbox: inbox, channels: channels)
    }

    /// A listening socket on `address:port` whose connections are answered by `Connection`.
    private static func bind(address: String, port: Int, path: String, inbox: Inbox) async throws -> any Channel {
        let path = path.isEmpty ? "/" : path
        let idle = idleTimeout
        return try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.configureHTTPServerPipeline(withErrorHandling: true)
                    try channel.pipeline.syncOperations.addHandler(IdleStateHandler(readTimeout: idle))
                    try channel.pipeline.syncOperations.addHandler(Connection(path: path, inbox: inbox))
                }
            }
            .bind(host: address, port: port).get()
    }

    /// "port 8400 is in use" rather than NIO's text.
    static func listenFailure(port: Int, host: String = "127.0.0.1", _ error: Error?) -> String {
        let at = host.contains(":") ? "[\(host)]" : host
        if let io = error as? IOError, io.errnoCode == EADDRINUSE {
            return port == 0
                ? "cannot listen for the redirect: every free port tried on 127.0.0.1 was taken on \(at) by another process. Try again, "
                    + "or choose a port with --port."
                : "cannot listen for the redirect: port \(port) on \(at) is in use. Choose another port, or 0 for any free port."
        }
        if let io = error as? IOError, io.errnoCode == EACCES {
            return "cannot listen for the redirect: port \(port) on \(at) needs privileges. Choose a port above 1023, or 0."
        }
        return "cannot listen for the redirect on \(at):\(port): \(error.map { "\($0)" } ?? "the server did not start")"
    }

    private init(port: Int, inbox: Inbox, channels: [any Channel]) {
        self.port = port; self.inbox = inbox; self.channels = channels
    }

    /// An answer the person pasted (the URL the browser ended on, when the browser runs on another machine): checked
    /// like one that arrives over the loopback.
    public func deliver(pastedURL text: String) -> Delivery {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard let components = URLComponents(string: trimmed) else { return .notAnAnswer }
        var params = (try? FormEncoding.parse(components.percentEncodedQuery ?? "")) ?? [:]
        if let fragment = components.percentEncodedFragment, let more = try? FormEncoding.parse(fragment) {
            params.merge(more) { first, _ in first }
        }
        return inbox.deliver(params)
    }

    /// The redirect's parameters, or nil when `deadline` passes first.
    public func waitForRedirect(until deadline: ContinuousClock.Instant) async -> [String: String]? {
        await withTaskGroup(of: [String: String]?.self) { group in
            group.addTask { await self.inbox.next() }
            group.addTask {
                try? await Task.sleep(until: deadline, clock: .continuous)
                return nil
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first
        }
    }

    /// Stops listening on every address (a connection already accepted still gets its page, then closes).
    public func stop() async {
        for channel in channels { try? await channel.close() }
    }
}
