@testable import B2CKit
import Foundation
import NIOCore
import NIOEmbedded
import Testing

/// The transport's own connections: a connection kept for the route's next request while the server allows it, the
/// environment's proxy, and every way an exchange can end badly said in plain words. The server is Python's, over real
/// loopback TCP: each answer names the client port it came from, so a test sees which connection carried it.
@Suite struct DirectRoutesTests {
    final class ScriptedServer: @unchecked Sendable {
        let process: LiveProcess
        let port: Int

        init() async throws {
            let script = """
                import http.server, json, socket, sys, time
                class H(http.server.BaseHTTPRequestHandler):
                    protocol_version = "HTTP/1.1"
                    def answer(self, body, close=False):
                        self.send_response(200)
                        self.send_header("Content-Type", "application/json")
                        self.send_header("Content-Length", str(len(body)))
                        if close: self.send_header("Connection", "close")
                        self.end_headers()
                        self.wfile.write(body)
                    def do_GET(self):
                        port = json.dumps({"port": self.client_address[1]}).encode()
                        if self.path == "/port": self.answer(port)
                        elif self.path == "/close": self.answer(port, close=True)
                        elif self.path == "/then-close": self.answer(port); self.close_connection = True
                        elif self.path == "/big": self.answer(b"x" * 4096)
                        elif self.path == "/continue":
                            self.wfile.write(b"HTTP/1.1 100 Continue\\r\\n\\r\\n"); self.answer(port)
                        elif self.path == "/drop":
                            self.close_connection = True
                            self.connection.shutdown(socket.SHUT_RDWR)
                        elif self.path == "/hang": time.sleep(30)
                    def do_POST(self):
                        body = self.rfile.read(int(self.headers["Content-Length"]))
                        self.answer(json.dumps({"got": body.decode(), "host": self.headers["Host"]}).encode())
                    def log_message(self, *a): pass
                s = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
                s.daemon_threads = True
                print(s.server_address[1], flush=True)
                s.serve_forever()
                """
            let started = try LiveProcess(
                URL(fileURLWithPath: "/usr/bin/python3"), ["-c", script], environment: ProcessInfo.processInfo.environment)
            let deadline = Date().addingTimeInterval(10)
            while Int(started.stdout.trimmingCharacters(in: .whitespacesAndNewlines)) == nil && Date() < deadline {
                try await Task.sleep(nanoseconds: 20_000_000)
            }
            process = started
            port = Int(started.stdout.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0
        }

        func url(_ path: String) -> URL { URL(string: "http://127.0.0.1:\(port)\(path)")! }
        func stop() { process.signal(SIGKILL) }
    }

    /// The client port an answer came from.
    static func port(_ result: HTTPResult) throws -> Int {
        try #require(JSONValue.parse(result.body)["port"]?.lenientInt)
    }

    @Test func aRoutesRequestsShareAConnectionWhileTheServerKeepsIt() async throws {
        let server = try await ScriptedServer()
        defer { server.stop() }
        let transport = try HTTPTransport(caFile: nil, environment: [:])
        let first = try Self.port(try await transport.get(server.url("/port")))
        #expect(try Self.port(try await transport.get(server.url("/port"))) == first)
        // `Connection: close` in the answer: that connection is done, and the next request opens another.
        #expect(try Self.port(try await transport.get(server.url("/close"))) == first)
        let second = try Self.port(try await transport.get(server.url("/port")))
        #expect(second != first)
        // A kept connection the server closed meanwhile is not used again.
        #expect(try Self.port(try await transport.get(server.url("/then-close"))) == second)
        // (Time for the client's event loop to read the server's close: the connection is then no longer offered.)
        try await Task.sleep(nanoseconds: 1_000_000_000)
        #expect(try Self.port(try await transport.get(server.url("/port"))) != second)
        // An informational answer (100 Continue) before the real one is skipped.
        #expect(try await transport.get(server.url("/continue")).status == 200)
        // A form POST: its body and the Host field as sent.
        let posted = try JSONValue.parse(try await transport.postForm(server.url("/form"), [("a", "b c")]).body)
        #expect(posted["got"]?.stringValue == "a=b%20c" && posted["host"]?.stringValue == "127.0.0.1:\(server.port)", "\(posted)")
        // A caller's framing field (call-api's -H) does not describe the body: the transport's own does.
        let framed = try await transport.send(.POST, server.url("/form"), headers: [("Content-Length", "999")], body: Data("x=1".utf8))
        #expect(try JSONValue.parse(framed.body)["got"]?.stringValue == "x=1")
        await transport.shutdown()
    }

    /// A connection waits `idleLimit` for the route's next request (after it, one that died silently — a laptop asleep,
    /// a NAT that forgot it — would hold a request for its whole deadline); after `shutdown()` none is kept.
    @Test func aConnectionIsKeptForALimitedTimeAndNotAfterShutdown() async throws {
        let server = try await ScriptedServer()
        defer { server.stop() }
        let transport = try HTTPTransport(caFile: nil, environment: [:])
        let first = try Self.port(try await transport.get(server.url("/port")))
        try await Task.sleep(nanoseconds: UInt64(DirectRoutes.idleLimit.nanoseconds) + 500_000_000)
        let second = try Self.port(try await transport.get(server.url("/port")))
        #expect(second != first)
        await transport.shutdown()
        let third = try Self.port(try await transport.get(server.url("/port")))
        #expect(third != second)
        #expect(try Self.port(try await transport.get(server.url("/port"))) != third)
    }

    @Test func everyWayAnExchangeEndsBadlyIsSaidInPlainWords() async throws {
        let server = try await ScriptedServer()
        defer { server.stop() }
        // (The default timeout for every request but the one that never gets an answer: a loaded machine is slow.)
        let transport = try HTTPTransport(caFile: nil, maxBody: 1024, environment: [:])
        func failure(_ path: String, timeoutSeconds: Int? = nil) async -> String {
            do {
                _ = try await transport.send(.GET, server.url(path), timeoutSeconds: timeoutSeconds)
                return "no failure"
            } catch {
                return "\(error)"
            }
        }
        // A host that decodes to a space (URL percent-decodes it) never reaches a request line.
        var spaced = "no failure"
        do { _ = try await transport.get(try #require(URL(string: "http://a%20b.test:\(server.port)/port"))) } catch { spaced = "\(error)" }
        #expect(spaced.contains("has a host name with a space or a control character in it"), "\(spaced)")
        let big = await failure("/big")
        #expect(big == "127.0.0.1 sent a response larger than 1 KiB; refusing it", "\(big)")
        let dropped = await failure("/drop")
        #expect(dropped.contains("closed the connection before it answered"), "\(dropped)")
        let hung = await failure("/hang", timeoutSeconds: 1)
        #expect(hung.hasPrefix("127.0.0.1 did not answer within 1 s"), "\(hung)")
        // The connections those failures used are gone; the route still answers. (`/close`: no connection is kept.)
        #expect(try await transport.get(server.url("/close")).status == 200)
        server.stop()
        // (Until the killed server's listening socket is gone.)
        var refused = ""
        for _ in 0..<50 {
            refused = await failure("/port")
            if refused.contains("connection refused") { break }
            try await Task.sleep(nanoseconds: 100_000_000)
        }
        #expect(refused.contains("nothing listens on 127.0.0.1:\(server.port) (connection refused)"), "\(refused)")
        await transport.shutdown()
    }

    /// Through the environment's proxy: plain http with the whole URL as the request's target and the proxy URL's user and
    /// password for the proxy; https in a tunnel the proxy opens for a CONNECT, which carries the proxy URL's user and
    /// password (the whole exchange through the tunnel is FirstMinutesTests'
    /// `proxiesFromTheEnvironmentCarryTheRequestsAndNoProxyBypassesThem`); and every way a proxy can refuse the tunnel,
    /// said in plain words. The proxy (Tests/support/connect_proxy.py) reaches names under .test at 127.0.0.1, so only it
    /// can reach them, and refuses by the name asked for.
    @Test func requestsGoThroughTheEnvironmentsProxyAndItsRefusalsAreSaidInPlainWords() async throws {
        let server = try await ScriptedServer()
        defer { server.stop() }
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("b2c-proxy-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let log = dir.appendingPathComponent("proxy.log").path
        let proxy = try LiveProcess(
            URL(fileURLWithPath: "/usr/bin/python3"), [packageRoot.appendingPathComponent("Tests/support/connect_proxy.py").path, log],
            environment: [:])
        defer { proxy.signal(SIGKILL) }
        try await proxy.waitForOutput("\n")
        let port = proxy.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        // (The default timeout for every request but the one the proxy never answers: a loaded machine is slow, and two
        // Python processes stand between the client and its answer.)
        let transport = try HTTPTransport(
            caFile: nil, environment: ["HTTP_PROXY": "http://ann:p%40ss@127.0.0.1:\(port)", "HTTPS_PROXY": "http://127.0.0.1:\(port)"])
        let withUser = try HTTPTransport(caFile: nil, environment: ["HTTPS_PROXY": "http://bo:pw@127.0.0.1:\(port)"])
        let form = try #require(URL(string: "http://b2c.test:\(server.port)/form"))
        let posted = try JSONValue.parse(try await transport.postForm(form, [("a", "b c")]).body)
        #expect(posted["got"]?.stringValue == "a=b%20c" && posted["host"]?.stringValue == "b2c.test:\(server.port)", "\(posted)")
        // The proxy ended that connection after its answer: the next request opens another. (Time for the client's event
        // loop to read the end: the connection is then no longer offered.)
        try await Task.sleep(nanoseconds: 1_000_000_000)
        let again = try JSONValue.parse(try await transport.postForm(form, [("x", "1")]).body)
        #expect(again["got"]?.stringValue == "x=1", "\(again)")
        func failure(_ url: String, through: HTTPTransport? = nil, timeoutSeconds: Int? = nil) async -> String {
            do {
                _ = try await (through ?? transport).send(.GET, try #require(URL(string: url)), timeoutSeconds: timeoutSeconds)
                return "no failure"
            } catch {
                return "\(error)"
            }
        }
        let refused = await failure("https://refuse.test/x")
        #expect(
            refused.contains("the proxy 127.0.0.1:\(port) refused the connection to refuse.test")
                && refused.contains("it requires authentication (put user:password in the proxy URL)"), "\(refused)")
        let rejected = await failure("https://refuse.test/y", through: withUser)
        #expect(rejected.contains("it did not accept the proxy URL's user and password"), "\(rejected)")
        let denied = await failure("https://deny.test/x")
        #expect(denied.contains("it answered the CONNECT with HTTP 403"), "\(denied)")
        let garbled = await failure("https://garble.test/x")
        #expect(garbled.contains("its answer to the CONNECT was not HTTP"), "\(garbled)")
        let silent = await failure("https://silent.test/x", timeoutSeconds: 3)
        #expect(silent.contains("it did not answer the CONNECT in time"), "\(silent)")
        let closed = await failure("https://close.test/x")
        #expect(closed.contains("it closed the connection without answering the CONNECT"), "\(closed)")
        // A tunnel opened and then ended: the server's end of it, said as such (never a pipeline's internals).
        let dropped = await failure("https://drop.test/x")
        #expect(
            dropped.contains("drop.test") && (dropped.contains("closed the connection") || dropped.contains("TLS with drop.test failed")),
            "\(dropped)")
        await transport.shutdown()
        await withUser.shutdown()
        // ann:p@ss as Basic credentials on the plain requests; bo:pw on the CONNECT; none on a CONNECT of a proxy URL
        // without a user.
        let seen = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
        #expect(seen.contains("POST http://b2c.test:\(server.port)/form Basic YW5uOnBAc3M=\n"), "\(seen)")
        #expect(seen.contains("CONNECT refuse.test:443 -\n"), "\(seen)")
        #expect(seen.contains("CONNECT refuse.test:443 Basic Ym86cHc=\n"), "\(seen)")
    }

    /// The proxy's answer to a CONNECT as the opener reads it, byte by byte where it matters: the request written when
    /// the connection is active, informational answers skipped, a head split across reads, a refusal whatever its body,
    /// bytes after a 2xx, a head that never ends.
    @Test func theTunnelOpenerReadsTheProxysAnswer() throws {
        func opened(_ parts: [String], withCredentials: Bool = false) throws -> (Result<Void, any Error>, written: String, left: Bool) {
            let channel = EmbeddedChannel()
            let ready = channel.eventLoop.makePromise(of: NIOLoopBound<AnswerReader>.self)
            let opener = TunnelOpener(
                request: ByteBuffer(string: "CONNECT h:443 HTTP/1.1\r\n\r\n"), withCredentials: withCredentials, ready: ready
            ) { pipeline, loop in
                let reader = AnswerReader(maxBody: 16)
                try pipeline.addHandler(reader)
                return NIOLoopBound(reader, eventLoop: loop)
            }
            try channel.pipeline.syncOperations.addHandler(opener)
            try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 1)).wait()
            var written = ""
            if let out = try channel.readOutbound(as: ByteBuffer.self) { written = String(buffer: out) }
            for part in parts where channel.isActive { try channel.writeInbound(ByteBuffer(string: part)) }
            nonisolated(unsafe) var result: Result<Void, any Error>?
            ready.futureResult.whenComplete { result = $0.map { _ in () } }
            let left = (try? channel.pipeline.syncOperations.handler(type: TunnelOpener.self)) == nil
            _ = try? channel.finish()
            return (try #require(result), written, left)
        }
        func failure(_ r: Result<Void, any Error>) -> DirectRoutes.Failure? {
            if case .failure(let e) = r { return e as? DirectRoutes.Failure }
            return nil
        }
        let open = try opened(["HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 Conn", "ection established\r\n\r\n"])
        #expect(open.written == "CONNECT h:443 HTTP/1.1\r\n\r\n")
        #expect((try? open.0.get()) != nil && open.left)
        #expect(
            failure(try opened(["HTTP/1.1 407 Proxy Authentication Required\r\n\r\n<html>denied</html>"]).0)
                == .proxyAnswered(407, withCredentials: false))
        #expect(
            failure(try opened(["HTTP/1.0 403 Forbidden\r\n\r\n"], withCredentials: true).0) == .proxyAnswered(403, withCredentials: true))
        #expect(failure(try opened(["HTTP/1.1 200 OK\r\n\r\nsurprise"]).0) == .proxyGarbled)
        #expect(failure(try opened(["SSH-2.0-OpenSSH\r\n\r\n"]).0) == .proxyGarbled)
        #expect(failure(try opened([String(repeating: "a", count: 8193)]).0) == .proxyGarbled)
        #expect(failure(try opened(["HTTP/1.1 200 OK\r\n"]).0) == .proxyClosed)  // the channel ends before the head does
    }

    /// A connection that ends before its request is written (a TLS handshake refused, on a loaded machine, before the
    /// request's task ran) fails that request with what ended it, not with the closed channel it then finds: the
    /// message says "unknown authority", not "closed the connection".
    @Test func whatEndedAConnectionBeforeItsRequestIsWhatTheRequestReports() throws {
        struct Refused: Error, Equatable {}
        let reader = AnswerReader(maxBody: 1024)
        let channel = EmbeddedChannel(handler: reader)
        channel.pipeline.fireErrorCaught(Refused())
        let answered = channel.eventLoop.makePromise(of: (DirectRoutes.Answer, Bool).self)
        nonisolated(unsafe) var failure: (any Error)?
        answered.futureResult.whenFailure { failure = $0 }
        _ = reader.expect(answered, keepAlive: true, reused: false)
        #expect(failure is Refused, "\(String(describing: failure))")
        _ = try? channel.finish()
    }
}
