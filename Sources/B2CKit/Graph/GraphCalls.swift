import Foundation
import NIOHTTP1

/// An answer of Microsoft Graph: status, headers and the JSON body (nil for 204 or a body that is not JSON).
public struct GraphAnswer: Sendable {
    public var status: Int
    public var headers: [(String, String)]
    public var json: JSONValue?
    public var body: Data
}

/// Microsoft Graph as the app itself (`b2c users`, `b2c policy`): an app-only token for `https://graph.microsoft.com/.default`
/// from the tenant's authority (cached as any app token), sent to Graph's base URL only; a 429 waits its `Retry-After`
/// (at most `maxRetryWait` seconds, three times); Graph's errors become `B2CError`s that name the fix.
struct GraphCalls: Sendable {
    static let resource = "https://graph.microsoft.com/.default"
    let config: ClientConfiguration
    let transport: HTTPTransport
    let appToken: AppOnlyToken
    var maxRetryWait = 60
    /// How a wait is slept (tests shorten it).
    var sleep: @Sendable (Int) async throws -> Void = { try await Task.sleep(nanoseconds: UInt64($0) * 1_000_000_000) }

    /// Graph's token authority as a store scope and a token endpoint (`<authority>/oauth2/v2.0/token`, Entra's).
    var resolved: ResolvedPolicy {
        let g = config.graphSettings
        let tenant = g.authority.pathComponents.first { $0 != "/" } ?? config.tenantSegment
        let authority = Authority(
            scheme: g.authority.scheme?.lowercased() ?? "https", host: g.authority.host ?? "", port: g.authority.port, tenant: tenant,
            policy: "graph", form: .path, native: true)
        return ResolvedPolicy(
            name: "graph", authority: authority, policy: nil,
            scope: AccountScope(environment: authority.hostAndPort, clientID: config.clientID))
    }

    /// A configured Graph must be on known hosts: the app's secret and Graph's token go there.
    func checkHosts() throws {
        let g = config.graphSettings
        guard g.configured else { return }
        for (key, url) in [("baseUrl", g.baseURL), ("authority", g.authority)] where !config.isKnown(Authority.hostAndPort(of: url)) {
            throw B2CError(
                .configuration,
                "\(config.source)'s graph.\(key) is on host '\(Authority.hostAndPort(of: url))', which is not in knownAuthorities "
                    + "\(config.knownAuthorities): the app's secret and Graph's token are sent only to known hosts")
        }
    }

    func token(forceRefresh: Bool) async throws -> String {
        try checkHosts()
        let resolved = self.resolved
        let result = try await appToken.run(resource: Self.resource, resolved: resolved, minValid: 120, forceRefresh: forceRefresh) {
            resolved.authority.endpoint("oauth2/v2.0/token")
        }
        return result.token.secret
    }

    /// A URL below Graph's base (`v1.0/users`), with query items; an absolute URL (a next link) must be Graph's own.
    func url(_ path: String, query: [(String, String)] = []) throws -> URL {
        if path.hasPrefix("https://") || path.hasPrefix("http://") {
            guard let u = URL(string: path), Authority.hostAndPort(of: u) == Authority.hostAndPort(of: config.graphSettings.baseURL) else {
                throw B2CError(.network, "Graph answered with a next page elsewhere (\(path.prefix(120))); it was not followed")
            }
            return u
        }
        var c = URLComponents(url: config.graphSettings.baseURL, resolvingAgainstBaseURL: false)!
        c.path = (c.path.hasSuffix("/") ? String(c.path.dropLast()) : c.path) + "/" + path
        if !query.isEmpty { c.percentEncodedQuery = FormEncoding.encode(query) }
        guard let u = c.url else { throw B2CError(.usage, "'\(path)' does not make a Graph URL") }
        return u
    }

    /// One request; a refused token is fetched again once, a throttle waits and tries again.
    func send(
        _ method: HTTPMethod, _ path: String, query: [(String, String)] = [], json: JSONValue? = nil, body: Data? = nil,
        contentType: String? = nil
    ) async throws -> GraphAnswer {
        let url = try self.url(path, query: query)
        var forced = false
        var throttled = 0
        while true {
            let token = try await token(forceRefresh: forced)
            var headers = [("Authorization", "Bearer \(token)"), ("Accept", "application/json")]
            var payload = body
            if let json {
                payload = Data(json.serialized().utf8)
                headers.append(("Content-Type", "application/json"))
            } else if let contentType {
                headers.append(("Content-Type", contentType))
            }
            let r: HTTPResult
            do { r = try await transport.send(method, url, headers: headers, body: payload) } catch let e as NetworkError {
                throw B2CError(e)
            }
            if r.status == 401 && !forced {
                forced = true
                continue
            }
            if r.status == 429 && throttled < 3 {
                let wait = Int(r.header("Retry-After") ?? "") ?? 5
                guard wait <= maxRetryWait else {
                    throw B2CError(.network, "Graph is throttling this app (HTTP 429) for \(wait) s; try again later")
                }
                throttled += 1
                try await sleep(max(1, wait))
                continue
            }
            return GraphAnswer(status: r.status, headers: r.headers, json: try? JSONValue.parse(r.body), body: r.body)
        }
    }

    /// Graph's error (`{"error": {"code", "message"}}`) as a `B2CError` of the right kind, saying what to do.
    static func failure(_ a: GraphAnswer, doing what: String) -> B2CError {
        let code = a.json?["error"]?["code"]?.stringValue ?? "HTTP \(a.status)"
        let message = a.json?["error"]?["message"]?.stringValue ?? String(decoding: a.body.prefix(300), as: UTF8.self)
        let said = "\(what): Graph answered \(a.status) \(code): \(message)"
        switch a.status {
        case 401:
            return B2CError(.configuration, said + " (the app's token was refused: check the configuration's tenant and Graph authority)")
        case 403:
            return B2CError(.configuration, said + " (grant the app the application permission named, with admin consent)")
        case 429: return B2CError(.network, said + " (still throttled after three waits; try again later)")
        case 500...: return B2CError(.network, said)
        default: return B2CError(.failed, said)
        }
    }

    /// Every item of a list, page after page (`@odata.nextLink`), at most `limit`.
    func list(_ path: String, query: [(String, String)], limit: Int?, doing what: String) async throws -> [JSONValue] {
        var items: [JSONValue] = []
        var next: String? = path
        var q = query
        while let page = next {
            let a = try await send(.GET, page, query: q)
            guard a.status == 200 else { throw Self.failure(a, doing: what) }
            items += a.json?["value"]?.arrayValue ?? []
            if let limit, items.count >= limit { return Array(items.prefix(limit)) }
            next = a.json?["@odata.nextLink"]?.stringValue
            q = []
        }
        return items
    }
}

extension B2CClient {
    func graphCalls() -> GraphCalls { GraphCalls(config: config, transport: transport, appToken: appOnlyToken()) }
}
