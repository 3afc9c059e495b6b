import B2CEmulator
@testable import B2CKit
import Foundation
import Hummingbird
import Logging
import NIOConcurrencyHelpers
import NIOCore
import Testing

/// A misbehaving API on 127.0.0.1 for call-api's bad-answer tests; it records whether each request carried a token.
final class HostileAPI: Sendable {
    let port: Int
    private let task: Task<Void, Error>
    let seen: NIOLockedValueBox<[(path: String, host: String, authorized: Bool, apiKey: Bool)]>

    static func start() async throws -> HostileAPI {
        let seen = NIOLockedValueBox<[(path: String, host: String, authorized: Bool, apiKey: Bool)]>([])
        let router = Router()
        router.middlewares.add(Recorder(seen: seen))
        router.get("/api/text") { _, _ in
            Response(
                status: .ok, headers: [.contentType: "text/plain"], body: .init(byteBuffer: ByteBuffer(string: "plain words, not JSON")))
        }
        router.get("/api/html-as-json") { _, _ in
            Response(
                status: .ok, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(string: "<html>oops</html>")))
        }
        router.get("/api/fail") { _, _ in
            Response(
                status: .internalServerError, headers: [.contentType: "application/json"],
                body: .init(byteBuffer: ByteBuffer(string: "{\"error\":\"boom\"}")))
        }
        router.get("/api/big") { _, _ in
            Response(
                status: .ok, headers: [.contentType: "application/octet-stream"],
                body: .init(byteBuffer: ByteBuffer(repeating: 0x61, count: 10 * 1024 * 1024 + 1)))
        }
        router.get("/api/fits") { _, _ in
            Response(
                status: .ok, headers: [.contentType: "application/octet-stream"],
                body: .init(byteBuffer: ByteBuffer(repeating: 0x62, count: 10 * 1024 * 1024)))
        }
        router.get("/api/missing") { _, _ in
            Response(
                status: .notFound, headers: [.contentType: "application/json"],
                body: .init(byteBuffer: ByteBuffer(string: "{\"error\":\"no such item\"}")))
        }
        router.get("/api/always-401") { _, _ in
            Response(status: .unauthorized, headers: [.wwwAuthenticate: "Bearer error=\"invalid_token\""])
        }
        router.get("/api/hang") { _, _ -> Response in
            try await Task.sleep(nanoseconds: 20_000_000_000)
            return Response(status: .ok)
        }
        router.post("/api/echo") { req, _ -> Response in
            let body = try await req.body.collect(upTo: 1 << 20)
            let type = req.headers[.contentType] ?? ""
            return Response(
                status: .ok, headers: [.contentType: "application/json"],
                body: .init(
                    byteBuffer: ByteBuffer(
                        string: JSONValue.object([
                            "received": .string(String(buffer: body)), "contentType": .string(type),
                            "trace": .string(req.headers.first { $0.name.rawName.lowercased() == "x-trace" }?.value ?? ""),
                        ]).serialized())))
        }
        let ready = NIOLockedValueBox<Int>(0)
        let (stream, cont) = AsyncStream<Int>.makeStream()
        var logger = Logger(label: "hostile-api")
        logger.logLevel = .critical
        let app = Application(
            router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)),
            onServerRunning: { ch in
                ready.withLockedValue { $0 = ch.localAddress?.port ?? 0 }; cont.yield(0); cont.finish()
            },
            logger: logger)
        let task = Task { try await app.run() }
        for await _ in stream { break }
        return HostileAPI(port: ready.withLockedValue { $0 }, task: task, seen: seen)
    }

    private init(
        port: Int, task: Task<Void, Error>, seen: NIOLockedValueBox<[(path: String, host: String, authorized: Bool, apiKey: Bool)]>
    ) {
        self.port = port; self.task = task; self.seen = seen
    }

    var requests: [(path: String, host: String, authorized: Bool, apiKey: Bool)] { seen.withLockedValue { $0 } }

    func stop() { task.cancel() }

    struct Recorder: RouterMiddleware {
        typealias Context = BasicRequestContext
        let seen: NIOLockedValueBox<[(path: String, host: String, authorized: Bool, apiKey: Bool)]>
        func handle(_ req: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
            let authorized = req.headers[.authorization]?.hasPrefix("Bearer ") == true
            let apiKey = req.headers.contains { $0.name.rawName.lowercased() == "x-api-key" }
            seen.withLockedValue { $0.append((req.uri.path, req.head.authority ?? "", authorized, apiKey)) }
            switch req.uri.path {
            case "/api/to-other-host":
                let port = req.head.authority?.split(separator: ":").last.map(String.init) ?? ""
                return Response(status: .found, headers: [.location: "http://localhost:\(port)/landing"])
            case "/api/to-same-host":
                return Response(status: .temporaryRedirect, headers: [.location: "/api/landing"])
            case "/landing", "/api/landing":
                return Response(
                    status: .ok, headers: [.contentType: "application/json"],
                    body: .init(byteBuffer: ByteBuffer(string: "{\"landed\":true}")))
            default:
                return try await next(req, context)
            }
        }
    }
}

@Suite(.serialized) struct CallAPITests {
    @Test func callsTheSampleAPIAsEachPersonAndRefreshesOnceOnInvalidToken() async throws {
        try await World.with { w in
            #expect(try await w.b2c(["signin"], as: alice, jar: "alice").status == 0)
            #expect(try await w.b2c(["signin"], as: bob, jar: "bob").status == 0)
            for (person, name) in [(alice, "Alice Example"), (bob, "Bob Example")] {
                let r = try await w.b2c(["call-api", "--api", "hello", "--account", person.email])
                #expect(r.status == 0, "\(r.stderr)")
                #expect(r.json["name"] == .string(name), "\(r.stdout)")
                #expect(r.stdout.contains("\n  "), "JSON is pretty-printed")
                #expect(r.stderr.contains("HTTP 200") && r.stderr.contains("as \(person.email), B2C_1_susi"))
            }
            let byPath = try await w.b2c(["call-api", "/hello", "--account", alice.email])
            #expect(byPath.status == 0 && byPath.json["name"] == "Alice Example")

            // The API refuses a cached token that still looks valid here (its signature spoiled: 401 invalid_token): one refresh,
            // one retry.
            // (Written through the library: the store's tokens are encrypted, so a raw UPDATE would not be a token at all.)
            let library = try w.libraryClient()
            let account = try library.selectedAccount(policy: nil, selector: alice.email).account
            for var at in try library.store.accessTokens(of: account) {
                at.secret = String(at.secret.dropLast(12)) + "c3BvaWxlZA00"
                let person = try #require(try library.store.identity(of: account))
                try library.store.save(
                    TokenSet(identity: person, account: account, accessToken: at, refreshToken: nil), makeCurrent: false,
                    now: library.now())
            }
            await library.shutdown()
            let before = try await w.tokenLog().filter { $0["grantType"] == "refresh_token" }.count
            let retried = try await w.b2c(["call-api", "--api", "hello", "--account", alice.email])
            #expect(retried.status == 0, "\(retried.stderr)")
            #expect(retried.stderr.contains("invalid_token") && retried.stderr.contains("refreshing it once"))
            #expect(try await w.tokenLog().filter { $0["grantType"] == "refresh_token" }.count == before + 1)
        }
    }

    @Test func badAnswersTimeoutsRedirectsAndHostsNotConfiguredForTheToken() async throws {
        try await World.with { w in
            let api = try await HostileAPI.start()
            defer { api.stop() }
            let helloScopes = try #require(try ClientConfiguration.load(path: w.configPath).api(named: "hello")?.scopes)
            try w.editConfig { o in
                var apis = o["apis"]?.arrayValue ?? []
                apis.append(["name": "hostile", "baseUrl": .string("http://127.0.0.1:\(api.port)/api"), "scopes": JSONValue(helloScopes)])
                o["apis"] = .array(apis)
            }
            #expect(try await w.b2c(["signin"], as: alice, jar: "alice").status == 0)
            var before = try w.storeSnapshot()

            let text = try await w.b2c(["call-api", "http://127.0.0.1:\(api.port)/api/text"])
            #expect(text.status == 0 && text.stdout == "plain words, not JSON", "\(text.stderr)")
            let notJSON = try await w.b2c(["call-api", "/api/html-as-json", "--api", "hostile"])
            #expect(
                notJSON.status == 0 && notJSON.stdout == "<html>oops</html>", "a body that claims JSON but is not is printed as it came")
            let fail = try await w.b2c(["call-api", "/api/fail", "--api", "hostile"])
            #expect(fail.status == 5 && fail.stderr.contains("HTTP 500") && fail.json["error"] == "boom", "\(fail.stderr)")
            let big = try await w.b2c(["call-api", "/api/big", "--api", "hostile"])
            #expect(big.status == 5 && big.stderr.contains("larger than 10240 KiB"), "\(big.stderr)")
            #expect(big.stdout.isEmpty)
            let fits = try await w.b2c(["call-api", "/api/fits", "--api", "hostile"])
            #expect(fits.status == 0 && fits.stdout.utf8.count == 10 * 1024 * 1024)
            let hang = try await w.b2c(["call-api", "/api/hang", "--api", "hostile", "--timeout", "2"])
            #expect(hang.status == 5 && hang.stderr.contains("did not answer within 2 s"), "\(hang.stderr)")
            let echo = try await w.b2c(["call-api", "/api/echo", "--api", "hostile", "-H", "X-Trace: 42", "-d", "{\"a\":1}"])
            #expect(
                echo.status == 0 && echo.json["received"] == "{\"a\":1}" && echo.json["contentType"] == "application/json"
                    && echo.json["trace"] == "42",
                "\(echo.stderr)")

            // Redirects: the token follows to the same origin, never to another host.
            let same = try await w.b2c(["call-api", "/api/to-same-host", "--api", "hostile"])
            #expect(same.status == 0 && same.json["landed"] == true)
            let away = try await w.b2c(["call-api", "/api/to-other-host", "--api", "hostile", "-H", "X-Api-Key: k-123"])
            #expect(away.status == 0 && away.stderr.contains("followed without it"), "\(away.stderr)")
            #expect(away.stderr.contains("the -H headers X-Api-Key were not sent there"), "\(away.stderr)")
            let landings = api.requests.filter { $0.path == "/landing" || $0.path == "/api/landing" }
            #expect(landings.count == 2)
            #expect(landings.first { $0.host.hasPrefix("localhost") }.map { !$0.authorized && !$0.apiKey } == true, "\(landings)")
            #expect(landings.first { $0.host.hasPrefix("127.0.0.1") }?.authorized == true)
            #expect(api.requests.first { $0.path == "/api/to-other-host" }?.apiKey == true, "the header goes to the host it was given for")

            // A 4xx is the API's answer: printed, exit 1. A 401 that persists after the one refresh: exit 1, one refresh only.
            let missing = try await w.b2c(["call-api", "/api/missing", "--api", "hostile"])
            #expect(
                missing.status == 1 && missing.stderr.contains("HTTP 404") && missing.json["error"] == "no such item", "\(missing.stderr)")
            let refreshesBefore = try await w.tokenLog().filter { $0["grantType"] == "refresh_token" }.count
            let unauthorized = try await w.b2c(["call-api", "/api/always-401", "--api", "hostile"])
            #expect(
                unauthorized.status == 1 && unauthorized.stderr.contains("HTTP 401") && unauthorized.stderr.contains("refreshing it once"),
                "\(unauthorized.stderr)")
            #expect(api.requests.filter { $0.path == "/api/always-401" }.count == 2)
            #expect(try await w.tokenLog().filter { $0["grantType"] == "refresh_token" }.count == refreshesBefore + 1)
            before = try w.storeSnapshot()  // that refresh rotated the token set, as it should
            // -d @FILE and -d @- (stdin) send the bytes as they are.
            let file = w.dir.appendingPathComponent("item.json")
            try Data("{\"from\":\"file\"}".utf8).write(to: file)
            let fromFile = try await w.b2c(["call-api", "/api/echo", "--api", "hostile", "-d", "@" + file.path])
            #expect(fromFile.status == 0 && fromFile.json["received"] == "{\"from\":\"file\"}", "\(fromFile.stderr)")
            let fromStdin = try await w.b2c(["call-api", "/api/echo", "--api", "hostile", "-d", "@-"], stdin: "{\"from\":\"stdin\"}")
            #expect(fromStdin.status == 0 && fromStdin.json["received"] == "{\"from\":\"stdin\"}", "\(fromStdin.stderr)")

            // A host not configured for the token: refused before anything is sent, unless allowed explicitly.
            let count = api.requests.count
            let other = try await w.b2c(["call-api", "http://localhost:\(api.port)/landing", "--api", "hostile"])
            #expect(
                other.status == 3 && other.stderr.contains("refusing to send the token for API 'hostile' to localhost:\(api.port)"),
                "\(other.stderr)")
            let unknown = try await w.b2c(["call-api", "http://localhost:\(api.port)/landing"])
            #expect(unknown.status == 3 && unknown.stderr.contains("no API in"))
            let admin = try await w.b2c(["call-api", w.server.baseURL + "/_admin/stats", "--api", "hello"])
            #expect(admin.status == 3, "same host, but outside the API's base URL: \(admin.stderr)")
            #expect(api.requests.count == count)
            let allowed = try await w.b2c([
                "call-api", "http://localhost:\(api.port)/landing", "--api", "hostile", "--allow-host", "localhost:\(api.port)",
            ])
            #expect(allowed.status == 0 && api.requests.last?.authorized == true)

            let badHeader = try await w.b2c(["call-api", "--api", "hello", "-H", "nocolon"])
            #expect(badHeader.status == 64)
            let noAuth = try await w.b2c(["call-api", "--api", "hello", "-H", "Authorization: Bearer x"])
            #expect(noAuth.status == 64)
            let missingFile = try await w.b2c(["call-api", "/api/echo", "--api", "hostile", "-d", "@/nonexistent/file.json"])
            #expect(missingFile.status == 64 && missingFile.stderr.contains("cannot read -d @/nonexistent/file.json"))
            #expect(try w.storeSnapshot() == before)
        }
    }

    @Test func interactiveFallsBackToTheBrowserWhenASignInIsNeeded() async throws {
        try await World.with { w in
            let none = try await w.b2c(["call-api", "--api", "hello"])
            #expect(none.status == 4 && none.stderr.contains("Run: b2c signin --policy B2C_1_susi"))
            let r = try await w.b2c(["call-api", "--api", "hello", "--interactive"], as: alice, jar: "alice")
            #expect(r.status == 0 && r.json["name"] == "Alice Example", "\(r.stderr)")
        }
    }
}

@Suite(.serialized) struct SignOutTests {
    @Test func browserSignOutEndsTheSSOSession() async throws {
        try await World.with { w in
            #expect(try await w.b2c(["signin"], as: alice, jar: "alice").status == 0)
            // With the SSO session a second sign-in needs no password: the agent is given none and still succeeds.
            #expect(try await w.b2c(["signin", "--policy", "B2C_1_edit_profile"], as: nil, jar: "alice").status == 0)
            // …and an agent that would press Cancel on any page meets none.
            #expect(try await w.b2c(["signin"], as: nil, jar: "alice", extra: ["B2C_AGENT_ACTION": "cancel"]).status == 0)
            let out = try await w.b2c(["signout", "--account", alice.email, "--browser"], as: nil, jar: "alice")
            #expect(out.status == 0, "\(out.stderr)")
            #expect(out.stdout.contains("Signed out alice@contoso.com from B2C_1_susi") && out.stdout.contains("browser session is ended"))
            #expect(out.stderr.contains("stay valid until they expire"))
            // Now the sign-in form is shown again: an agent that presses Cancel on any page it is shown gets to do so
            // (exit 2, AADB2C90091). While the session lived, the same agent met no page and signed in (checked above).
            let again = try await w.b2c(["signin", "--timeout", "20"], as: nil, jar: "alice", extra: ["B2C_AGENT_ACTION": "cancel"])
            #expect(again.status == 2 && again.stderr.contains("AADB2C90091"), "the form was shown: \(again.stderr)")
            #expect(try await w.b2c(["signin"], as: alice, jar: "alice").status == 0)

            let unknown = try await w.b2c(["signout", "--account", "nobody@contoso.com"])
            #expect(unknown.status == 1 && unknown.stderr.contains("no signed-in account matches 'nobody@contoso.com'"))
            let nothing = try await w.b2c(["signout"])
            #expect(nothing.status == 64)
            #expect(try await w.b2c(["accounts", "--output", "json"]).json["people"]?.arrayValue?.count == 1)
        }
    }

    @Test func sharedDeviceSignOutWipesEveryAccountEvenDuringARefresh() async throws {
        try await World.with { w in
            #expect(try await w.b2c(["device", "--output", "json"]).json["mode"] == "personal")
            try w.editConfig { $0["deviceMode"] = "shared" }
            let device = try await w.b2c(["device", "--output", "json"])
            #expect(device.json["mode"] == "shared" && device.json["signOut"]?.stringValue?.contains("every account") == true)
            #expect(try await w.b2c(["signin"], as: alice, jar: "browser").status == 0)
            #expect(try await w.b2c(["signin", "--prompt", "login"], as: bob, jar: "browser").status == 0)
            #expect(
                try await w.b2c(
                    ["signin", "--policy", "B2C_1_ROPC_Auth", "--username", bob.email, "--password-stdin"], stdin: bob.password + "\n"
                ).status == 0)

            // Another process is refreshing Alice's token (the token endpoint is slow) while Bob signs out. The delay is the
            // window the sign-out must fall in: 3 s was too short once, beside a busy suite (the sign-out's own process
            // and browser session took longer).
            _ = try await w.admin("POST", "/faults", ["endpoint": "token", "kind": "delay", "delayMs": 8000])
            let refreshing = try LiveProcess(
                b2cBinary, ["token", "--account", alice.email, "--force-refresh", "--verbose"], environment: w.environment(as: nil))
            // The delayed refresh has reached the emulator when its one-shot fault has been taken.
            try await w.eventually("the refresh reaches the token endpoint") {
                (try await w.admin("GET", "/faults")["faults"]?.arrayValue ?? [0]).isEmpty
            }
            let out = try await w.b2c(["signout", "--account", bob.email], as: nil, jar: "browser")
            #expect(out.status == 0, "\(out.stderr)")
            #expect(out.stdout.contains("Shared-device mode: every account on this device is signed out"))
            #expect(
                out.stdout.contains("Signed out alice@contoso.com")
                    && out.stdout.contains("Signed out bob@contoso.com from B2C_1_ROPC_Auth"))
            #expect(out.stdout.contains("browser session is ended"))
            let r = await refreshing.finish()
            #expect(r.status == 4 && r.stderr.contains("was signed out while its token was being refreshed"), "\(r.stderr)")
            #expect(try await w.b2c(["accounts", "--output", "json"]).json["people"]?.arrayValue?.isEmpty == true, "nothing came back")
            let again = try await w.b2c(["signin", "--timeout", "20"], as: nil, jar: "browser", extra: ["B2C_AGENT_ACTION": "cancel"])
            #expect(
                again.status == 2 && again.stderr.contains("AADB2C90091"),
                "the browser session is gone too, so the form was shown: \(again.stderr)")
        }
    }
}
