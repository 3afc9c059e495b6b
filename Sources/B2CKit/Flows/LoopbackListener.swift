import Foundation
import ServiceLifecycle
import Hummingbird
import Logging
import NIOCore
import NIOConcurrencyHelpers

/// The redirect listener of an interactive sign-in: 127.0.0.1 only. It takes the one answer whose `state` is this
/// sign-in's (from the browser, or pasted by the person when the browser runs elsewhere); an answer with another state
/// (an old tab, a forged link) gets a page that says so, and the listener keeps waiting.
public final class LoopbackListener: Sendable {
    public let port: Int
    private let inbox: Inbox
    private let task: Task<Void, Error>
    private let group: ServiceGroup

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

    /// Listens on 127.0.0.1:`port` (0 = a free port) for `path` of the redirect URI. A port that is taken, or any other
    /// failure to listen, is an error at once.
    public static func start(
        port: Int, path: String, expectedState: String, acceptsBareState: Bool = false
    ) async throws -> LoopbackListener {
        let inbox = Inbox(expectedState: expectedState, acceptsBareState: acceptsBareState)
        var logger = Logger(label: "b2c.loopback")
        logger.logLevel = .critical
        let (ready, readyContinuation) = AsyncStream<Int>.makeStream()
        let app = Application(
            responder: Responder(path: path.isEmpty ? "/" : path, inbox: inbox),
            configuration: .init(address: .hostname("127.0.0.1", port: port), serverName: nil),
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
            throw B2CError(.failed, listenFailure(port: port, failure))
        }
        return LoopbackListener(port: bound, inbox: inbox, task: task, group: group)
    }

    /// "port 8400 is in use" rather than NIO's text.
    static func listenFailure(port: Int, _ error: Error?) -> String {
        if let io = error as? IOError, io.errnoCode == EADDRINUSE {
            return "cannot listen for the redirect: port \(port) on 127.0.0.1 is in use. Choose another port, or 0 for any free port."
        }
        if let io = error as? IOError, io.errnoCode == EACCES {
            return "cannot listen for the redirect: port \(port) on 127.0.0.1 needs privileges. Choose a port above 1023, or 0."
        }
        return "cannot listen for the redirect on 127.0.0.1:\(port): \(error.map { "\($0)" } ?? "the server did not start")"
    }

    private init(port: Int, inbox: Inbox, task: Task<Void, Error>, group: ServiceGroup) {
        self.port = port; self.inbox = inbox; self.task = task; self.group = group
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

    public func stop() async {
        await group.triggerGracefulShutdown()
        _ = try? await task.value
    }
}
