import Foundation
import ServiceLifecycle
import Hummingbird
import Logging
import NIOCore
import NIOConcurrencyHelpers

/// The redirect listener of an interactive sign-in: the loopback addresses the redirect URI's host names (both, for
/// `localhost`), on one port, closing idle connections. It takes the one answer whose `state` is this
/// sign-in's (from the browser, or pasted by the person when the browser runs elsewhere); an answer with another state
/// (an old tab, a forged link) gets a page that says so, and the listener keeps waiting.
package final class LoopbackListener: Sendable {
    /// The port it listens on: the one asked for, or the one chosen when asked for any.
    public let port: Int
    private let inbox: Inbox
    private let tasks: [Task<Void, Error>]
    private let groups: [ServiceGroup]

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

    struct Responder: HTTPResponder {
        typealias Context = BasicRequestContext
        let path: String
        let inbox: Inbox

        func respond(to request: Request, context: BasicRequestContext) async throws -> Response {
            func page(_ status: HTTPResponse.Status, _ title: String, _ text: String) -> Response {
                let html = """
                    <!DOCTYPE html><html><head><meta charset="utf-8"><title>b2c</title>
                    <style>body{font-family:system-ui,sans-serif;margin:80px auto;max-width:480px;color:#1f2937}</style></head>
                    <body><h1>\(title)</h1><p>\(text)</p></body></html>
                    """
                return Response(
                    status: status, headers: [.contentType: "text/html; charset=utf-8", .cacheControl: "no-store"],
                    body: .init(byteBuffer: ByteBuffer(string: html)))
            }
            let requestPath = request.uri.path
            guard request.method == .get, requestPath == path || (path.isEmpty && requestPath == "/") else {
                return page(.notFound, "Not found", "This listener only receives the sign-in redirect.")
            }
            let params = (try? FormEncoding.parse(request.uri.query ?? "")) ?? [:]
            switch inbox.deliver(params) {
            case .accepted:
                if params["code"] == nil && params["error"] == nil {
                    return page(.ok, "Signed out", "You can close this window and return to the terminal.")
                }
                if params["error"] != nil {
                    return page(
                        .ok, "Sign-in did not complete", "b2c received the answer. You can close this window and return to the terminal.")
                }
                return page(.ok, "Signed in", "You can close this window and return to the terminal.")
            case .alreadyAnswered:
                return page(.conflict, "Already done", "This sign-in has already received its answer. You can close this window.")
            case .wrongState, .notAnAnswer:
                return page(
                    .badRequest, "Not for this sign-in",
                    "This answer does not belong to the sign-in in progress (an older tab, or a link from elsewhere); b2c ignored it "
                        + "and is still waiting. Finish the sign-in in the window that b2c opened, or close this one.")
            }
        }
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
        var logger = Logger(label: "b2c.loopback")
        logger.logLevel = .critical
        let (first, firstTask, firstGroup) = try await serve(address: addresses[0], port: port, path: path, inbox: inbox, logger: logger)
        guard first.bound > 0 else { throw B2CError(.failed, listenFailure(port: port, host: addresses[0], first.failure)) }
        var groups = [firstGroup], tasks = [firstTask]
        for address in addresses.dropFirst() {
            let (other, task, group) = try await serve(address: address, port: first.bound, path: path, inbox: inbox, logger: logger)
            if other.bound > 0 {
                groups.append(group)
                tasks.append(task)
                continue
            }
            // No such address here (no IPv6): then no browser reaches it either.
            if let io = other.failure as? IOError, io.errnoCode == EADDRNOTAVAIL || io.errnoCode == EAFNOSUPPORT { continue }
            if let f = other.failure as? SocketAddressError, "\(f)".contains("nknown") { continue }
            await firstGroup.triggerGracefulShutdown()
            _ = try? await firstTask.value
            if port == 0 { throw SecondAddressTaken(underlying: other.failure) }
            throw B2CError(.failed, listenFailure(port: port, host: address, other.failure))
        }
        return LoopbackListener(port: first.bound, inbox: inbox, tasks: tasks, groups: groups)
    }

    /// One server on `address:port`; `bound` is 0 (with the reason) when it could not listen.
    private static func serve(
        address: String, port: Int, path: String, inbox: Inbox, logger: Logger
    ) async throws -> ((bound: Int, failure: Error?), Task<Void, Error>, ServiceGroup) {
        let (ready, readyContinuation) = AsyncStream<Int>.makeStream()
        let app = Application(
            responder: Responder(path: path.isEmpty ? "/" : path, inbox: inbox),
            server: .http1(configuration: .init(idleTimeout: idleTimeout)),
            configuration: .init(address: .hostname(address, port: port), serverName: nil),
            onServerRunning: { channel in
                readyContinuation.yield(channel.localAddress?.port ?? 0)
                readyContinuation.finish()
            },
            logger: logger)
        // Stopped by a graceful shutdown, never by cancelling the serving task: a cancelled NIO server can drop a
        // connection it has accepted but not yet served, which traps ("Deinited NIOAsyncWriter without calling finish()",
        // apple/swift-nio#2637) — a browser that connects as the listener stops would crash b2c.
        let group = ServiceGroup(configuration: .init(services: [app], gracefulShutdownSignals: [], logger: logger))
        // When the server cannot start, `run` throws and "running" never comes: finishing the stream then ends the wait.
        let task = Task {
            defer { readyContinuation.finish() }
            try await group.run()
        }
        var bound = 0
        for await p in ready { bound = p; break }
        guard bound > 0 else {
            task.cancel()
            let failure: Error?
            do { try await task.value; failure = nil } catch { failure = error }
            return ((0, failure), task, group)
        }
        return ((bound, nil), task, group)
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

    private init(port: Int, inbox: Inbox, tasks: [Task<Void, Error>], groups: [ServiceGroup]) {
        self.port = port; self.inbox = inbox; self.tasks = tasks; self.groups = groups
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

    /// Stops listening on every address and waits until the servers have shut down.
    public func stop() async {
        for group in groups { await group.triggerGracefulShutdown() }
        for task in tasks { _ = try? await task.value }
    }
}
