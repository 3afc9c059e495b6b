import Foundation
import Hummingbird
import Logging
import NIOCore
import NIOConcurrencyHelpers

/// The redirect listener of an interactive sign-in: 127.0.0.1 only, one redirect, then "you can close this window".
public final class LoopbackListener: Sendable {
    public let port: Int
    private let stream: AsyncStream<[String: String]>
    private let task: Task<Void, Error>

    struct Responder: HTTPResponder {
        typealias Context = BasicRequestContext
        let path: String
        let delivered: NIOLockedValueBox<Bool>
        let continuation: AsyncStream<[String: String]>.Continuation

        func respond(to request: Request, context: BasicRequestContext) async throws -> Response {
            func page(_ status: HTTPResponse.Status, _ title: String, _ text: String) -> Response {
                let html = """
                    <!DOCTYPE html><html><head><meta charset="utf-8"><title>b2c</title>
                    <style>body{font-family:system-ui,sans-serif;margin:80px auto;max-width:480px;color:#1f2937}</style></head>
                    <body><h1>\(title)</h1><p>\(text)</p></body></html>
                    """
                return Response(status: status, headers: [.contentType: "text/html; charset=utf-8", .cacheControl: "no-store"],
                                body: .init(byteBuffer: ByteBuffer(string: html)))
            }
            let requestPath = request.uri.path
            guard request.method == .get, requestPath == path || (path.isEmpty && requestPath == "/") else {
                return page(.notFound, "Not found", "This listener only receives the sign-in redirect.")
            }
            let first = delivered.withLockedValue { d -> Bool in
                if d { return false }
                d = true
                return true
            }
            guard first else {
                return page(.conflict, "Already done", "This sign-in has already received its answer. You can close this window.")
            }
            let params = (try? FormEncoding.parse(request.uri.query ?? "")) ?? [:]
            continuation.yield(params)
            continuation.finish()
            if params["error"] != nil {
                return page(.ok, "Sign-in did not complete", "b2c received the answer. You can close this window and return to the terminal.")
            }
            return page(.ok, "Signed in", "You can close this window and return to the terminal.")
        }
    }

    /// Listens on 127.0.0.1:`port` (0 = a free port) for `path` of the redirect URI.
    public static func start(port: Int, path: String) async throws -> LoopbackListener {
        let (stream, continuation) = AsyncStream<[String: String]>.makeStream()
        let (ready, readyContinuation) = AsyncStream<Int>.makeStream()
        var logger = Logger(label: "b2c.loopback")
        logger.logLevel = .critical
        let app = Application(
            responder: Responder(path: path.isEmpty ? "/" : path, delivered: NIOLockedValueBox(false), continuation: continuation),
            configuration: .init(address: .hostname("127.0.0.1", port: port), serverName: nil),
            onServerRunning: { channel in
                readyContinuation.yield(channel.localAddress?.port ?? 0)
                readyContinuation.finish()
            },
            logger: logger)
        let task = Task { try await app.run() }
        var bound = 0
        for await p in ready { bound = p; break }
        if bound == 0 {
            task.cancel()
            let reason: String
            do { try await task.value; reason = "unknown error" } catch { reason = "\(error)" }
            throw B2CError(.failed, "cannot listen for the redirect on 127.0.0.1:\(port): \(reason)")
        }
        return LoopbackListener(port: bound, stream: stream, task: task)
    }

    private init(port: Int, stream: AsyncStream<[String: String]>, task: Task<Void, Error>) {
        self.port = port; self.stream = stream; self.task = task
    }

    /// The redirect's query parameters, or nil on timeout.
    public func waitForRedirect(timeoutSeconds: Int) async -> [String: String]? {
        await withTaskGroup(of: [String: String]?.self) { group in
            group.addTask {
                for await params in self.stream { return params }
                return nil
            }
            group.addTask {
                try? await Task.sleep(nanoseconds: UInt64(timeoutSeconds) * 1_000_000_000)
                return nil
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first
        }
    }

    public func stop() async {
        task.cancel()
        _ = try? await task.value
    }
}
