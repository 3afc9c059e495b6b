import Foundation
import NIOHTTP1

/// One call to a protected web API with a token acquired silently for that API's scopes.
public struct APICallRequest: Sendable {
    /// An absolute URL, a path below the API's base URL (`/hello`), or nil for the API's base URL.
    public var url: String?
    /// The configured API whose token to send; nil: the API whose base URL covers the URL.
    public var api: String?
    /// The scopes of the person's token; nil: the API's configured scopes (`User.ReadWrite` for a Graph update, say).
    public var scopes: [String]?
    /// The policy whose token to use; nil: the configuration's default.
    public var policy: String?
    /// Whose token: a selector (email, oid, account id); nil: the policy's current or only account.
    public var account: String?
    /// The app's own token (client credentials) instead of a person's.
    public var app = false
    /// The HTTP method; a redirect may turn it into GET (303, or 301/302 after POST).
    public var method: String = "GET"
    /// The caller's own headers (`-H`): an `Authorization` among them is dropped for the token's, and only
    /// `Accept`, `Accept-Language`, `Content-Type` and `User-Agent` follow a redirect to another origin.
    public var headers: [(String, String)] = []
    /// The request body, if any; dropped when a redirect turns the request into a GET.
    public var body: Data?
    /// The read timeout of each request, in seconds (connecting gets at most 10).
    public var timeoutSeconds: Int = 30
    /// The largest response body accepted, in bytes; a larger one is a `network` error.
    public var maxBody: Int = 10 * 1024 * 1024
    /// Extra hosts (`host` or `host:port`) a token may be sent to.
    public var allowHosts: [String] = []
    /// How many redirects are followed; one more is a `network` error.
    public var maxRedirects = 5

    /// A call to `url` (nil: the API's base URL) with the token of `api` (nil: the API whose base URL covers `url`).
    public init(url: String?, api: String?) { self.url = url; self.api = api }
}

/// The API's answer: status, headers, body, the URL that answered (after redirects), the person whose token was sent,
/// and notices (a refresh and retry, headers not carried across a redirect).
public struct APICallResult: Sendable {
    /// The HTTP status of the last answer (after redirects).
    public var status: Int
    /// The answer's headers, in order.
    public var headers: [(String, String)]
    /// The answer's body, whole (at most `maxBody` bytes).
    public var body: Data
    /// The URL that answered, after redirects.
    public var url: URL
    /// The person whose token was sent; nil for the app's own token.
    public var account: Account?
    /// What to tell the person once: a token refreshed and the call retried, headers not sent across a redirect.
    public var notices: [String]

    /// The first value of the header `name`, compared case-insensitively; nil when there is none.
    public func header(_ name: String) -> String? {
        headers.first { $0.0.caseInsensitiveCompare(name) == .orderedSame }?.1
    }
}

/// One call to a protected web API: the URL checked against the configured APIs, a token acquired silently (or the
/// app's own), redirects followed with the token only where it may go, one retry on `invalid_token`, and, when there is
/// someone at the browser, a sign-in when the call needs one.
struct APICall: Sendable {
    let config: ClientConfiguration
    let silent: SilentToken
    let appToken: AppOnlyToken
    /// Signs the person in when a call needs it and the caller offered a browser; nil: the call fails instead.
    let signIn: InteractiveSignIn?
    /// The `--verbose` trace, for the API's own transport.
    let trace: (@Sendable (String) -> Void)?

    /// Which configured API a URL belongs to: same scheme, host and port, and a path at or below the base URL's path.
    func api(covering url: URL) -> ClientConfiguration.API? {
        config.apis.filter { Self.covers($0.baseURL, url) }.max { $0.baseURL.path.count < $1.baseURL.path.count }
    }

    static func covers(_ base: URL, _ url: URL) -> Bool {
        guard base.scheme?.lowercased() == url.scheme?.lowercased(), Authority.hostAndPort(of: base) == Authority.hostAndPort(of: url)
        else {
            return false
        }
        let baseSegments = normalizedSegments(base), segments = normalizedSegments(url)
        return segments.count >= baseSegments.count && Array(segments.prefix(baseSegments.count)) == baseSegments
    }

    /// The path's segments as a server resolves them: encoded dots and slashes (`%2e`, `%2f`, `%5c`, `\`) decoded, then
    /// dot segments removed (RFC 3986 §5.2.4), so that `/api/%2e%2e/other` is `/other`, not a path below `/api`.
    static func normalizedSegments(_ url: URL) -> [String] {
        let raw = URLComponents(url: url, resolvingAgainstBaseURL: false)?.percentEncodedPath ?? url.path
        var path = raw
        for (encoded, plain) in [("%2e", "."), ("%2f", "/"), ("%5c", "/"), ("\\", "/")] {
            path = path.replacingOccurrences(of: encoded, with: plain, options: .caseInsensitive)
        }
        var out: [String] = []
        for segment in path.split(separator: "/", omittingEmptySubsequences: false).dropFirst() {
            switch segment {
            case ".": continue
            case "..": _ = out.popLast()
            default: out.append(String(segment))
            }
        }
        if out.last == "" { out.removeLast() }
        return out
    }

    /// True when a token for `api` may go to `url`: the API's base URL covers it, or its host is allowed explicitly.
    static func mayCarryToken(_ url: URL, api: ClientConfiguration.API, allowHosts: [String]) -> Bool {
        if covers(api.baseURL, url) { return true }
        let hp = Authority.hostAndPort(of: url)
        let host = (url.host ?? "").lowercased()
        let secure = Loopback.isSecure(url)
        return secure && allowHosts.contains { $0.lowercased() == hp || $0.lowercased() == host }
    }

    /// Resolves the request's URL and API (refusing to send a token where it was not configured to go).
    func resolve(_ req: APICallRequest) throws -> (URL, ClientConfiguration.API) {
        let named = try req.api.map { try config.api($0) }
        let url: URL
        if let t = req.url, t.contains("://") {
            guard let u = URL(string: t), let s = u.scheme?.lowercased(), s == "https" || s == "http", u.host != nil else {
                throw B2CError(.usage, "'\(t)' is not an http(s) URL")
            }
            url = u
        } else {
            guard let base = (named ?? config.apis.first)?.baseURL else {
                throw B2CError(.configuration, "\(config.source) has no \"apis\"; add one", remedy: .nameAPI)
            }
            if let t = req.url {
                guard t.hasPrefix("/") else { throw B2CError(.usage, "'\(t)' is neither a URL nor a path starting with '/'") }
                let basePath = base.path.hasSuffix("/") ? String(base.path.dropLast()) : base.path
                var c = URLComponents(url: base, resolvingAgainstBaseURL: false)!
                let (path, query) = t.firstIndex(of: "?").map { (String(t[..<$0]), String(t[t.index(after: $0)...])) } ?? (t, nil)
                c.percentEncodedPath = path.hasPrefix(basePath + "/") || path == basePath ? path : basePath + path
                c.percentEncodedQuery = query
                guard let u = c.url else { throw B2CError(.usage, "'\(t)' does not make a valid URL below \(base.absoluteString)") }
                url = u
            } else {
                url = base
            }
        }
        guard let api = named ?? api(covering: url) else {
            throw B2CError(
                .configuration,
                "no API in \(config.source) has a base URL covering \(HTTPTransport.redacted(url)), so no token may be sent there",
                remedy: .nameAPIAndAllowHost(Authority.hostAndPort(of: url)))
        }
        guard Self.mayCarryToken(url, api: api, allowHosts: req.allowHosts) else {
            throw B2CError(
                .configuration,
                "refusing to send the token for API '\(api.name)' to \(Authority.hostAndPort(of: url)): its tokens go only to "
                    + "\(api.baseURL.absoluteString)",
                remedy: .allowHost(Authority.hostAndPort(of: url)))
        }
        if !Loopback.isSecure(url) {
            throw B2CError(.configuration, "refusing to send a token over plain http to \(Authority.hostAndPort(of: url)); use https")
        }
        return (url, api)
    }

    /// Sends the request; when a sign-in is needed and `signIn` is there, signs in at the request's browser policy (a
    /// sign-up-or-sign-in or sign-in policy: no other can stand in for one) and sends it again as the person signed in.
    func run(_ req: APICallRequest) async throws -> APICallResult {
        do {
            return try await send(req)
        } catch let e as B2CError where e.kind == .interactionRequired && signIn != nil && !req.app {
            guard let signIn, let recovery = try config.browserRecoveryPolicy(req.policy) else { throw e }
            signIn.ui.progress("\(e.message); signing in in the browser")
            let hint = req.account.flatMap { $0.contains("@") ? $0 : nil }
            let api = try resolve(req).1
            let person = try await signIn.run(
                policyName: recovery, options: InteractiveOptions(loginHint: hint, scopes: req.scopes ?? api.scopes))
            var again = req
            again.account = person.id
            return try await send(again)
        }
    }

    /// Gets a token silently for the API's scopes and sends the request. A 401 with `invalid_token` refreshes the token once
    /// and retries. Redirects are followed (at most `maxRedirects`); the token goes only where it may.
    private func send(_ req: APICallRequest) async throws -> APICallResult {
        let (url, api) = try resolve(req)
        let transport: HTTPTransport
        do {
            // The configuration's CA for its own hosts only, as the client's transport (a redirect elsewhere: the system's roots).
            transport = try HTTPTransport(
                caFile: config.caFile, caHosts: config.hostNames, timeoutSeconds: req.timeoutSeconds, maxBody: req.maxBody,
                trace: trace)
        } catch let e as NetworkError { throw B2CError(.configuration, e.description) }
        defer { Task { await transport.shutdown() } }
        var notices: [String] = []
        var account: Account?
        // The person's token for the API's scopes, or the app's own for the API's App ID URI.
        func token(forceRefresh: Bool) async throws -> String {
            if req.app {
                let resource = try config.appResource(api: api.name, scope: nil)
                let t = try await appToken.run(resource: resource, policyName: req.policy, minValid: 60, forceRefresh: forceRefresh)
                if let notice = t.notice, !notices.contains(notice) { notices.append(notice) }
                return t.token.secret
            }
            let t = try await silent.run(
                policyName: req.policy, selector: req.account, scopes: req.scopes ?? api.scopes, minValid: 60, forceRefresh: forceRefresh)
            if let notice = t.notice { notices.append(notice) }
            account = t.account
            return t.accessToken.secret
        }
        var result = try await exchange(
            req, url: url, api: api, token: try await token(forceRefresh: false), transport: transport, notices: &notices)
        if result.status == 401,
            let challenge = result.headers.first(where: { $0.0.caseInsensitiveCompare("WWW-Authenticate") == .orderedSame })?.1,
            challenge.contains("invalid_token")
        {
            notices.append("the API refused the token (invalid_token); refreshing it once and retrying")
            let fresh = try await token(forceRefresh: true)
            result = try await exchange(req, url: url, api: api, token: fresh, transport: transport, notices: &notices)
        }
        return APICallResult(
            status: result.status, headers: result.headers, body: result.body, url: result.url, account: account, notices: notices)
    }

    /// Headers of the caller's that may follow a redirect to another origin.
    static let portableHeaders: Set<String> = ["accept", "accept-language", "content-type", "user-agent"]

    /// One request and the redirects it leads to, with the token only where it may go.
    private func exchange(
        _ req: APICallRequest, url start: URL, api: ClientConfiguration.API, token: String, transport: HTTPTransport,
        notices: inout [String]
    ) async throws -> (status: Int, headers: [(String, String)], body: Data, url: URL) {
        var url = start
        var method = HTTPMethod(rawValue: req.method.uppercased())
        var body = req.body
        for hop in 0...req.maxRedirects {
            var headers = req.headers.filter { $0.0.caseInsensitiveCompare("Authorization") != .orderedSame }
            if url.scheme?.lowercased() != start.scheme?.lowercased() || Authority.hostAndPort(of: url) != Authority.hostAndPort(of: start)
            {
                // Like the token, the caller's own headers (API keys, cookies) stay with the origin (scheme, host, port)
                // they were given for; only the ones that describe the body and the wanted answer follow a redirect.
                let dropped = headers.filter { !Self.portableHeaders.contains($0.0.lowercased()) }
                headers.removeAll { !Self.portableHeaders.contains($0.0.lowercased()) }
                if !dropped.isEmpty {
                    notices.append(
                        "redirected to \(Authority.hostAndPort(of: url)): the -H headers \(dropped.map(\.0).joined(separator: ", ")) were "
                            + "not sent there"
                    )
                }
            }
            if Self.mayCarryToken(url, api: api, allowHosts: req.allowHosts) {
                headers.append(("Authorization", "Bearer \(token)"))
            } else {
                notices.append(
                    "redirected to \(Authority.hostAndPort(of: url)), which is not configured for this token: followed without it")
            }
            let r: HTTPResult
            do { r = try await transport.send(method, url, headers: headers, body: body) } catch let e as NetworkError { throw B2CError(e) }
            guard [301, 302, 303, 307, 308].contains(r.status), let location = r.header("Location") else {
                return (r.status, r.headers, r.body, url)
            }
            guard hop < req.maxRedirects else {
                throw B2CError(.network, "more than \(req.maxRedirects) redirects, the last to \(HTTPTransport.redacted(url)); stopped")
            }
            guard let next = URL(string: location, relativeTo: url)?.absoluteURL, let s = next.scheme?.lowercased(),
                s == "https" || s == "http"
            else {
                throw B2CError(.network, "the API redirected to an unusable location '\(location.prefix(200))'")
            }
            if r.status == 303 || ((r.status == 301 || r.status == 302) && method == .POST) {
                method = .GET
                body = nil
            }
            url = next
        }
        throw B2CError(.network, "too many redirects")
    }
}
