import B2CEmulator
import Foundation
import TestSupport
import Testing

/// The tenant's HTTP/1 connections (Sources/B2CEmulator/HTTP/TenantChannel.swift): what a client on the wire sees when
/// it pipelines, sends what does not parse, sends a body larger than any endpoint reads, or is connected when the tenant
/// stops. Raw TCP, so that the bytes are exactly the test's.
@Suite struct TenantConnectionTests {
    static let token = "/contoso.onmicrosoft.com/B2C_1_susi/oauth2/v2.0/token"

    static func withTenant(_ body: (EmulatorServer) async throws -> Void) async throws {
        try await LocalTenantServer.with { try await body($0.server) }
    }

    /// Two requests in one write: both are answered, in the order they were sent, on the same connection.
    @Test func pipelinedRequestsAreAnsweredInOrder() async throws {
        try await Self.withTenant { server in
            let client = try RawClient(port: server.port)
            let discovery = "/contoso.onmicrosoft.com/B2C_1_susi/v2.0/.well-known/openid-configuration"
            #expect(
                client.send(
                    "GET \(discovery) HTTP/1.1\r\nHost: 127.0.0.1:\(server.port)\r\n\r\n"
                        + "GET /health HTTP/1.1\r\nHost: 127.0.0.1:\(server.port)\r\n\r\n"))
            let answers = await client.read(until: "\"ok\"", within: 30)
            let first = try #require(answers.range(of: "token_endpoint"), "\(answers.prefix(400))")
            let second = try #require(answers.range(of: "\"ok\""), "\(answers.prefix(400))")
            #expect(first.lowerBound < second.lowerBound)
            #expect(answers.components(separatedBy: "HTTP/1.1 200 OK").count == 3, "\(answers.prefix(400))")
        }
    }

    /// Ten requests in one write (more than the connection lets wait: it stops reading until the answers catch up): all
    /// answered, in order.
    @Test func manyPipelinedRequestsAreAllAnsweredInOrder() async throws {
        try await Self.withTenant { server in
            let client = try RawClient(port: server.port)
            let discovery = "/contoso.onmicrosoft.com/B2C_1_susi/v2.0/.well-known/openid-configuration"
            let requests = (0..<10).map { i in
                "GET \(i % 2 == 0 ? discovery : "/health") HTTP/1.1\r\nHost: 127.0.0.1:\(server.port)\r\nX-N: \(i)\r\n\r\n"
            }
            #expect(client.send(requests.joined() + "GET /health HTTP/1.1\r\nHost: 127.0.0.1:\(server.port)\r\nConnection: close\r\n\r\n"))
            let (answers, closed) = await client.readUntilClosed(within: 30)
            #expect(closed)
            let kinds = answers.components(separatedBy: "HTTP/1.1 200 OK").dropFirst().map { $0.contains("token_endpoint") ? "d" : "h" }
            #expect(kinds.joined() == "dhdhdhdhdhh", "\(answers.prefix(300))")
        }
    }

    /// `Connection: close` is the connection's last answer: a request pipelined after it is neither answered nor served
    /// (a grant behind it is not issued: the token log does not show it).
    @Test func nothingAfterConnectionCloseIsServed() async throws {
        try await Self.withTenant { server in
            let before = try server.emulator.store.requests.entries().count
            let client = try RawClient(port: server.port)
            let form =
                "grant_type=client_credentials&client_id=7c2f1d3b-8e5a-4f4c-8b9d-3a6e2f1c8d0b&client_secret=Daemon-dev-secret-2026"
                + "&scope=https%3A%2F%2Fcontoso.onmicrosoft.com%2Fhelloapi%2F.default"
            #expect(
                client.send(
                    "GET /health HTTP/1.1\r\nHost: 127.0.0.1:\(server.port)\r\nConnection: close\r\n\r\n"
                        + "POST \(Self.token) HTTP/1.1\r\nHost: 127.0.0.1:\(server.port)\r\n"
                        + "Content-Type: application/x-www-form-urlencoded\r\nContent-Length: \(form.utf8.count)\r\n\r\n" + form))
            let (answers, closed) = await client.readUntilClosed(within: 30)
            #expect(closed && answers.components(separatedBy: "HTTP/1.1 ").count == 2, "\(answers)")
            try await Task.sleep(for: .milliseconds(300))
            #expect(try server.emulator.store.requests.entries().count == before)
        }
    }

    /// Garbage after a request: the request is answered, then 400, then the connection closes.
    @Test func garbageAfterARequestIsAnswered400InItsTurn() async throws {
        try await Self.withTenant { server in
            let client = try RawClient(port: server.port)
            #expect(client.send("GET /health HTTP/1.1\r\nHost: 127.0.0.1:\(server.port)\r\n\r\nNOT HTTP AT ALL\r\n\r\n"))
            let (answers, closed) = await client.readUntilClosed(within: 30)
            #expect(closed)
            let ok = try #require(answers.range(of: "HTTP/1.1 200"), "\(answers)")
            let bad = try #require(answers.range(of: "HTTP/1.1 400"), "\(answers)")
            #expect(ok.lowerBound < bad.lowerBound)
        }
    }

    /// A request line that is not HTTP gets 400 and the connection is closed.
    @Test func aRequestThatDoesNotParseGets400AndTheConnectionCloses() async throws {
        try await Self.withTenant { server in
            let client = try RawClient(port: server.port)
            #expect(client.send("NOT HTTP AT ALL\r\n\r\n"))
            let (answer, closed) = await client.readUntilClosed(within: 30)
            #expect(answer.hasPrefix("HTTP/1.1 400"), "\(answer)")
            #expect(closed)
        }
    }

    /// A body larger than any endpoint reads (3 MiB to the token endpoint, whose limit is 64 KiB) is answered by the
    /// endpoint's own 413 in B2C's words, not a crash or a reset, and the connection goes on serving.
    @Test func aBodyLargerThanAnyEndpointReadsGetsTheEndpoints413() async throws {
        try await Self.withTenant { server in
            let client = try RawClient(port: server.port)
            let body = "grant_type=client_credentials&x=" + String(repeating: "a", count: 3 << 20)
            #expect(
                client.send(
                    "POST \(Self.token) HTTP/1.1\r\nHost: 127.0.0.1:\(server.port)\r\n"
                        + "Content-Type: application/x-www-form-urlencoded\r\nContent-Length: \(body.utf8.count)\r\n\r\n" + body))
            let answer = await client.read(until: "bytes.", within: 60)
            #expect(answer.hasPrefix("HTTP/1.1 413"), "\(answer.prefix(300))")
            #expect(answer.contains("AADB2C90083") && answer.contains("larger than 65536 bytes"), "\(answer.prefix(600))")
            #expect(client.send("GET /health HTTP/1.1\r\nHost: 127.0.0.1:\(server.port)\r\n\r\n"))
            let health = await client.read(until: "\"ok\"", within: 30)
            #expect(health.contains("HTTP/1.1 200") && health.contains("\"ok\""), "\(health.prefix(300))")
        }
    }

    /// Every answer carries `Date` in RFC 9110's IMF-fixdate form, as B2C's do.
    @Test func answersCarryADate() async throws {
        #expect(HTTPDateFormat.imfFixdate(0) == "Thu, 01 Jan 1970 00:00:00 GMT")
        #expect(HTTPDateFormat.imfFixdate(1_796_052_435) == "Mon, 30 Nov 2026 15:27:15 GMT")
        try await Self.withTenant { server in
            let client = try RawClient(port: server.port)
            #expect(client.send("GET /health HTTP/1.1\r\nHost: 127.0.0.1:\(server.port)\r\n\r\n"))
            let answer = await client.read(until: "\"ok\"", within: 30)
            let date = try #require(
                answer.split(separator: "\r\n").first { $0.lowercased().hasPrefix("date: ") }, "\(answer.prefix(400))")
            let formatter = DateFormatter()
            formatter.locale = Locale(identifier: "en_US_POSIX")
            formatter.timeZone = TimeZone(identifier: "GMT")
            formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
            let parsed = try #require(formatter.date(from: String(date.dropFirst(6))), "\(date)")
            #expect(abs(parsed.timeIntervalSinceNow) < 120)
        }
    }

    /// `Connection: close` is honoured: the answer, then the tenant closes.
    @Test func connectionCloseIsHonoured() async throws {
        try await Self.withTenant { server in
            let client = try RawClient(port: server.port)
            #expect(client.send("GET /health HTTP/1.1\r\nHost: 127.0.0.1:\(server.port)\r\nConnection: close\r\n\r\n"))
            let (answer, closed) = await client.readUntilClosed(within: 30)
            #expect(answer.hasPrefix("HTTP/1.1 200") && answer.contains("\"ok\""), "\(answer)")
            #expect(closed)
        }
    }

    /// A client that closes its sending side after its requests (a half-close) still gets every answer, and then the
    /// tenant closes at once (not when the read timeout, 30 s here, runs out).
    @Test(arguments: [1, 2]) func aHalfClosedClientGetsItsAnswersThenTheConnectionCloses(requests: Int) async throws {
        try await Self.withTenant { server in
            let client = try RawClient(port: server.port)
            let request = "GET /health HTTP/1.1\r\nHost: 127.0.0.1:\(server.port)\r\n\r\n"
            #expect(client.send(String(repeating: request, count: requests)))
            shutdown(client.fd, Int32(SHUT_WR))
            let (answers, closed) = await client.readUntilClosed(within: 20)
            #expect(answers.components(separatedBy: "HTTP/1.1 200 OK").count == requests + 1, "\(answers)")
            #expect(closed)
        }
    }

    /// Stopping the tenant closes an idle keep-alive connection and returns; it does not wait for the client.
    @Test func stoppingClosesAnIdleKeepAliveConnection() async throws {
        let tenant = try await LocalTenantServer.start()
        let client = try RawClient(port: tenant.server.port)
        #expect(client.send("GET /health HTTP/1.1\r\nHost: 127.0.0.1:\(tenant.server.port)\r\n\r\n"))
        let answer = await client.read(until: "\"ok\"", within: 30)
        #expect(answer.contains("\"ok\""), "\(answer)")
        let started = ContinuousClock.now
        await tenant.stop()
        #expect(ContinuousClock.now - started < .seconds(20))
        let (_, closed) = await client.readUntilClosed(within: 10)
        #expect(closed)
    }
}
