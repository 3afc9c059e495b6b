import AsyncHTTPClient
import B2CEmulator
import B2CKit
import Foundation
import NIOCore
import NIOHTTP1
import NIOSSL
import TestSupport
import Testing

let clientID = EmulatorSeed.defaultClientID
let tenantID = EmulatorSeed.defaultTenantID
let helloScope = "https://contoso.onmicrosoft.com/helloapi/demo.read"
let alice = (email: "alice@contoso.com", password: "Alice-dev-2026!", oid: "0a11ce00-5eed-4a11-8000-00000000a11c")
let bob = (email: "bob@contoso.com", password: "Bob-dev-2026!", oid: "0b0b0000-5eed-4b0b-8000-000000000b0b")
let redirect = "http://localhost:8400"
let appRedirect = "http://127.0.0.1:53123"

struct TestResponse {
    var status: Int
    var headers: HTTPHeaders
    var body: String

    var json: JSONValue { (try? JSONValue.parse(body)) ?? .null }
    var location: String? { headers.first(name: "location") }

    /// Query (or fragment) parameters of the redirect.
    var redirectParams: [String: String] {
        guard let loc = location else { return [:] }
        if let hash = loc.firstIndex(of: "#") { return (try? FormEncoding.parse(loc[loc.index(after: hash)...])) ?? [:] }
        return URLComponents(string: loc)?.percentEncodedQuery.flatMap { try? FormEncoding.parse($0) } ?? [:]
    }

    /// Action and fields of the HTML form with this id (hidden and pre-filled fields), read as the scripted agent reads them.
    func form(_ id: String) -> (action: String, fields: [String: String])? { PageParser.form(id, in: body) }

    func link(_ id: String) -> String? { PageParser.link(id, in: body) }
}

/// A local tenant (TestSupport's `LocalTenantServer`) and an HTTP client that does not follow redirects.
final class TestTenant: Sendable {
    let tenant: LocalTenantServer
    let client: HTTPClient
    var server: EmulatorServer { tenant.server }
    var base: String { server.baseURL }
    var emulator: B2CEmulator { server.emulator }

    /// A tenant for the length of `body`, stopped (and awaited) however `body` ends.
    static func with(
        tls: Bool = false, seed: EmulatorSeed = .default, stateDirectory: URL? = nil, _ body: (TestTenant) async throws -> Void
    )
        async throws
    {
        let t = try await start(tls: tls, seed: seed, stateDirectory: stateDirectory)
        do { try await body(t) } catch {
            await t.stop()
            throw error
        }
        await t.stop()
    }

    static func start(tls: Bool = false, seed: EmulatorSeed = .default, stateDirectory: URL? = nil) async throws -> TestTenant {
        try TestTenant(try await LocalTenantServer.start(seed: seed, tls: tls, stateDirectory: stateDirectory))
    }

    /// The two sides of a twin tenant over one in-memory store, each on a listener of its own.
    /// With `tls`, both sides serve one certificate of one CA.
    static func twin(seed: EmulatorSeed = .defaultTwin, tls: Bool = false) async throws -> (b2c: TestTenant, externalId: TestTenant) {
        let sides = try await LocalTenantServer.twin(seed: seed, tls: tls)
        return (try TestTenant(sides.b2c), try TestTenant(sides.externalId))
    }

    /// The listener of a tenant the test made.
    static func start(_ emulator: B2CEmulator, tls: Bool = false) async throws -> TestTenant {
        try TestTenant(try await LocalTenantServer.start(emulator, tls: tls))
    }

    private init(_ tenant: LocalTenantServer) throws {
        self.tenant = tenant
        var config = HTTPClient.Configuration(tlsConfiguration: try tenant.clientTLS(), redirectConfiguration: .disallow)
        // Generous: on a two-core CI machine the suite, the release build beside it and a Python service the tenant calls
        // (page templates, connectors) can hold one loopback answer past 20 s; a read timeout here says nothing of the tenant.
        config.timeout = .init(connect: .seconds(5), read: .seconds(45))
        client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: config)
    }

    func stop() async {
        try? await client.shutdown()
        await tenant.stop()
    }

    func request(
        _ method: HTTPMethod, _ path: String, form: [String: String]? = nil, json: JSONValue? = nil, body: String? = nil,
        bytes: [UInt8]? = nil, headers: [(String, String)] = [], cookie: String? = nil
    ) async throws -> TestResponse {
        let url = path.hasPrefix("http") ? path : base + path
        var req = HTTPClientRequest(url: url)
        req.method = method
        for (k, v) in headers { req.headers.add(name: k, value: v) }
        if let cookie { req.headers.add(name: "Cookie", value: cookie) }
        if let form {
            req.headers.add(name: "Content-Type", value: "application/x-www-form-urlencoded")
            req.body = .bytes(ByteBuffer(string: FormEncoding.encode(form)))
        } else if let json {
            req.headers.add(name: "Content-Type", value: "application/json")
            req.body = .bytes(ByteBuffer(string: json.serialized()))
        } else if let body {
            req.body = .bytes(ByteBuffer(string: body))
        } else if let bytes {
            req.body = .bytes(ByteBuffer(bytes: bytes))
        }
        let res = try await client.execute(req, timeout: .seconds(60))
        let buffer = try await res.body.collect(upTo: 10 * 1024 * 1024)
        return TestResponse(status: Int(res.status.code), headers: res.headers, body: String(buffer: buffer))
    }

    func get(_ path: String, cookie: String? = nil, headers: [(String, String)] = []) async throws -> TestResponse {
        try await request(.GET, path, headers: headers, cookie: cookie)
    }

    func post(_ path: String, _ form: [String: String], cookie: String? = nil) async throws -> TestResponse {
        try await request(.POST, path, form: form, cookie: cookie)
    }

    func token(_ policy: String, _ form: [String: String], headers: [(String, String)] = []) async throws -> TestResponse {
        try await request(.POST, "/contoso.onmicrosoft.com/\(policy)/oauth2/v2.0/token", form: form, headers: headers)
    }

    func admin(_ method: HTTPMethod, _ path: String, _ json: JSONValue? = nil) async throws -> TestResponse {
        // Admin writes carry JSON (the admin guard refuses any other POST); `{}` when there is nothing to say.
        try await request(method, "/_admin" + path, json: json ?? (method == .POST ? JSONValue.object([:]) : nil))
    }

    func advanceClock(_ seconds: Int) async throws {
        let r = try await admin(.POST, "/clock", ["advanceSeconds": JSONValue(seconds)])
        #expect(r.status == 200)
    }

    func latestCode(to email: String) async throws -> String {
        let r = try await admin(.GET, "/outbox?to=\(email)")
        return r.json["messages"]?.arrayValue?.first?["code"]?.stringValue ?? ""
    }
}

/// A scripted user agent: keeps the SSO cookie like a browser and fills the emulator's pages.
final class Browser {
    let tenant: TestTenant
    var cookies: [String: String] = [:]

    init(_ tenant: TestTenant) { self.tenant = tenant }

    var cookieHeader: String? { cookies.isEmpty ? nil : cookies.map { "\($0.key)=\($0.value)" }.joined(separator: "; ") }

    private func remember(_ r: TestResponse) {
        for value in r.headers["set-cookie"] {
            let first = value.split(separator: ";")[0]
            let kv = first.split(separator: "=", maxSplits: 1)
            guard let name = kv.first.map(String.init) else { continue }
            let v = kv.count > 1 ? String(kv[1]) : ""
            if v.isEmpty || value.contains("Max-Age=0") { cookies[name] = nil } else { cookies[name] = v }
        }
    }

    func get(_ path: String) async throws -> TestResponse {
        let r = try await tenant.get(path, cookie: cookieHeader)
        remember(r)
        return r
    }

    func submit(_ page: TestResponse, form id: String, _ values: [String: String]) async throws -> TestResponse {
        let form = try #require(page.form(id), "no form '\(id)' on page: \(page.body.prefix(400))")
        let r = try await tenant.post(form.action, form.fields.merging(values) { _, new in new }, cookie: cookieHeader)
        remember(r)
        return r
    }

    func follow(_ page: TestResponse, link id: String) async throws -> TestResponse {
        try await get(try #require(page.link(id), "no link '\(id)'"))
    }

    /// authorize → sign-in page → credentials → redirect; returns the redirect response.
    func signIn(
        policy: String = "B2C_1_susi", email: String, password: String, extra: [String: String] = [:],
        pkce: PKCE = PKCE()
    ) async throws -> TestResponse {
        let page = try await get(authorizeURL(policy: policy, pkce: pkce, extra: extra))
        #expect(page.status == 200, "authorize: \(page.status) \(page.body.prefix(300))")
        return try await submit(page, form: "localAccountForm", ["logonIdentifier": email, "password": password])
    }
}

func authorizeURL(
    policy: String = "B2C_1_susi", pkce: PKCE? = PKCE(), state: String = "st-123", nonce: String = "n-456",
    redirectURI: String = redirect, scope: String = "openid offline_access \(helloScope)",
    extra: [String: String] = [:], prefix: String = "/contoso.onmicrosoft.com", client: String = clientID
) -> String {
    var params: [String: String] = [
        "client_id": client, "response_type": "code", "redirect_uri": redirectURI, "scope": scope,
        "state": state, "nonce": nonce, "client_info": "1",
    ]
    if let pkce { params["code_challenge"] = pkce.challenge; params["code_challenge_method"] = "S256" }
    for (k, v) in extra { params[k] = v }
    params = params.filter { !$0.value.isEmpty }
    return "\(prefix)/\(policy)/oauth2/v2.0/authorize?" + FormEncoding.encode(params)
}

func redeemForm(
    code: String, verifier: String?, redirectURI: String = redirect, scope: String = "openid offline_access \(helloScope)"
) -> [String: String] {
    var f = [
        "grant_type": "authorization_code", "client_id": clientID, "code": code, "redirect_uri": redirectURI, "scope": scope,
        "client_info": "1",
    ]
    if let verifier { f["code_verifier"] = verifier }
    return f
}

/// Asserts a B2C-style error body and returns its AADB2C code.
@discardableResult
func expectB2CError(
    _ r: TestResponse, status: Int = 400, error: String, code: String, sourceLocation: SourceLocation = #_sourceLocation
) -> String {
    #expect(r.status == status, "status \(r.status): \(r.body)", sourceLocation: sourceLocation)
    #expect(r.json["error"]?.stringValue == error, "error: \(r.body)", sourceLocation: sourceLocation)
    let desc = r.json["error_description"]?.stringValue ?? ""
    #expect(desc.hasPrefix(code + ": "), "description: \(desc)", sourceLocation: sourceLocation)
    #expect(
        desc.contains("\r\nCorrelation ID: ") && desc.hasSuffix("\r\n"), "B2C description format: \(desc)", sourceLocation: sourceLocation)
    return desc
}

extension TestTenant {
    /// Native authentication's password sign-in (initiate, challenge, token) for `client`: the token answer.
    func nativePasswordTokens(
        _ email: String, _ password: String, scope: String = "openid offline_access", client: String = clientID
    ) async throws -> TestResponse {
        let base = "/contoso.onmicrosoft.com/oauth2/v2.0"
        let start = try await post("\(base)/initiate", ["client_id": client, "challenge_type": "password redirect", "username": email])
        let challenge = try await post(
            "\(base)/challenge",
            [
                "client_id": client, "challenge_type": "password redirect",
                "continuation_token": start.json["continuation_token"]?.stringValue ?? "",
            ])
        return try await post(
            "\(base)/token",
            [
                "client_id": client, "grant_type": "password", "password": password, "scope": scope,
                "continuation_token": challenge.json["continuation_token"]?.stringValue ?? "",
            ])
    }
}

/// Sign in through the pages and redeem the code: the token response body.
func signInAndRedeem(
    _ t: TestTenant, _ browser: Browser? = nil, policy: String = "B2C_1_susi", email: String = alice.email,
    password: String = alice.password
) async throws -> JSONValue {
    let b = browser ?? Browser(t)
    let pkce = PKCE()
    let r = try await b.signIn(policy: policy, email: email, password: password, pkce: pkce)
    let code = try #require(r.redirectParams["code"], "no code in \(r.location ?? r.body.prefix(300).description)")
    let tok = try await t.token(policy, redeemForm(code: code, verifier: pkce.verifier))
    #expect(tok.status == 200, "\(tok.body)")
    return tok.json
}

func claims(_ token: String?) throws -> [String: JSONValue] {
    try JWT.decode(try #require(token)).claims
}

func temporaryDirectory() -> URL {
    let u = FileManager.default.temporaryDirectory.appendingPathComponent("b2c-test-\(UUID().uuidString)")
    try? FileManager.default.createDirectory(at: u, withIntermediateDirectories: true)
    return u
}

/// The policy `B2C_1_x` of `kind`, with `members` (JSON members after its id and kind), read from a seed of it and one
/// app: for the seed parser's tests.
func parsePolicySeed(_ members: String, kind: String = "signUpSignIn") throws -> EmulatorSeed.Policy {
    let json = """
        {"tenant": {"name": "contoso.onmicrosoft.com", "id": "\(tenantID)"},
         "policies": [{"id": "B2C_1_x", "kind": "\(kind)"\(members.isEmpty ? "" : ", " + members)}],
         "apps": [{"clientId": "\(clientID)", "redirectUris": ["http://localhost"]}]}
        """
    return try EmulatorSeed.parse(Data(json.utf8)).policies[0]
}

/// The scripted browser's walk from `url` as `persona` to the app's redirect (not delivered), shut down however it ends;
/// the code of the answer.
func scriptedCode(_ url: String, as persona: ScriptedBrowser.Persona, caFile: String? = nil) async throws -> String {
    let browser = try ScriptedBrowser(caFile: caFile)
    let answer: URL
    do { answer = try await browser.run(URL(string: url)!, as: persona, deliver: false) } catch {
        await browser.shutdown()
        throw error
    }
    await browser.shutdown()
    return try #require(
        URLComponents(url: answer, resolvingAgainstBaseURL: false)?.queryItems?.first { $0.name == "code" }?.value, "\(answer)")
}
