import B2CProtocol
import Crypto
import Foundation
import HTTPTypes
import Hummingbird

/// Reading a request the way every endpoint needs it: strict query and form parsing, with B2C's errors.
extension Request {
    static let maxBody = 64 * 1024

    /// The most of a request's body the connection keeps for the endpoint (`TenantRequestHandler`): one byte more than
    /// the endpoint reads, so that its own limit still sees a body that is too long and answers 413 in its API's words.
    /// Every endpoint reads at most `maxBody` but a custom policy's upload (Graph's trustFramework `$value`), which
    /// reads a policy file. (The rest of a longer body is read and dropped.)
    static func bodyLimit(for head: HTTPRequest) -> Int {
        let upload = head.method == .put && (head.path ?? "").lowercased().contains("/trustframework/policies/")
        return (upload ? PolicyXML.maximumBytes : maxBody) + 1
    }

    /// The query parameters; a malformed query is B2C's AADB2C90083.
    func queryParameters() throws -> [String: String] {
        do { return try FormEncoding.parse(uri.query ?? "") } catch {
            throw OAuthFailure(error: "invalid_request", code: "AADB2C90083", message: "The query string is malformed: \(error).")
        }
    }

    /// The body when it has at most `limit` bytes; nil when it has more (the caller answers 413 in its own API's shape).
    /// The one place a body is read (`bodyData()` too goes through it): a body over its limit is never a 500.
    mutating func body(atMost limit: Int) async -> ByteBuffer? {
        try? await collectBody(upTo: limit)
    }

    /// The body, at most `maxBody` bytes (more is B2C's 413).
    mutating func bodyData() async throws -> Data { Data(try await bodyBuffer().readableBytesView) }

    /// The same, as NIO received it.
    mutating func bodyBuffer() async throws -> ByteBuffer {
        guard let body = await body(atMost: Self.maxBody) else {
            throw OAuthFailure(
                error: "invalid_request", code: "AADB2C90083", message: "The request body is larger than \(Self.maxBody) bytes.",
                status: 413)
        }
        return body
    }

    /// Form parameters of a POST body (`application/x-www-form-urlencoded`).
    mutating func formParameters() async throws -> [String: String] {
        let form = "application/x-www-form-urlencoded"
        guard let given = headers[.contentType], Substring(given.utf8.prefix(form.utf8.count)).equalsIgnoringCase(form) else {
            let type = (headers[.contentType] ?? "").lowercased()
            throw OAuthFailure(
                error: "invalid_request", code: "AADB2C90083",
                message: "The request body must be application/x-www-form-urlencoded (got '\(type.isEmpty ? "no content type" : type)').")
        }
        // Parsed from the body's bytes. A form is ASCII (its other bytes percent-encoded), checked without making a string
        // of it; a body with other bytes must still be UTF-8. (Foundation decoded it, and the body was copied twice.)
        let bytes = Array(try await bodyBuffer().readableBytesView)
        guard bytes.allSatisfy({ $0 < 0x80 }) || String(validating: bytes, as: UTF8.self) != nil else {
            throw OAuthFailure(error: "invalid_request", code: "AADB2C90083", message: "The request body is not UTF-8.")
        }
        do { return try FormEncoding.parse(bytes: bytes) } catch {
            throw OAuthFailure(error: "invalid_request", code: "AADB2C90083", message: "The request body is malformed: \(error).")
        }
    }

    /// The query, and for a POST the form on top of it (authorize and logout take either).
    mutating func queryAndForm() async throws -> [String: String] {
        var q = try queryParameters()
        if method == .post { for (k, v) in try await formParameters() where q[k] == nil { q[k] = v } }
        return q
    }

    func header(_ name: String) -> String? { HTTPField.Name(name).flatMap { headers[$0] } }
}

/// The answers endpoints give: JSON, HTML pages, redirects, plain text (Hummingbird responses with B2C's headers).
extension Response {
    static func json(_ value: JSONValue, status: Int = 200, headers: [(String, String)] = []) -> Response {
        make(status, [("Content-Type", "application/json; charset=utf-8")] + headers, ByteBuffer(bytes: value.serializedBytes()))
    }

    static func html(_ html: String, status: Int = 200, headers: [(String, String)] = []) -> Response {
        make(
            status,
            [
                ("Content-Type", "text/html; charset=utf-8"), ("X-Frame-Options", "DENY"), ("Cache-Control", "no-store"),
                ("Content-Security-Policy", HTML.contentSecurityPolicy),
            ] + headers,
            Data(html.utf8))
    }

    static func redirect(_ location: String, headers: [(String, String)] = []) -> Response {
        make(302, [("Location", location), ("Cache-Control", "no-store")] + headers, Data())
    }

    static func text(_ text: String, status: Int) -> Response {
        make(status, [("Content-Type", "text/plain; charset=utf-8")], Data(text.utf8))
    }

    static func empty(_ status: Int, headers: [(String, String)] = []) -> Response { make(status, headers, Data()) }

    private static func make(_ status: Int, _ headers: [(String, String)], _ body: Data) -> Response {
        make(status, headers, ByteBuffer(bytes: body))
    }

    private static func make(_ status: Int, _ headers: [(String, String)], _ body: ByteBuffer) -> Response {
        var fields = HTTPFields()
        for (name, value) in headers {
            if let n = HTTPField.Name(name) { fields.append(HTTPField(name: n, value: value)) }
        }
        return Response(status: .init(code: status), headers: fields, body: ResponseBody(byteBuffer: body))
    }
}

/// An OAuth / B2C error: `error` plus an AADB2C code and message, rendered in B2C's format.
struct OAuthFailure: Error, Sendable {
    var error: String
    var code: String
    var message: String
    var status: Int = 400

    func description(at date: Date) -> String {
        B2CErrorDescription.format(code: code, message: message, at: date)
    }

    func response(at date: Date) -> Response {
        .json(
            ["error": .string(error), "error_description": .string(description(at: date))], status: status,
            headers: [("Cache-Control", "no-store"), ("Pragma", "no-cache")])
    }
}

/// An AAD-style error (native authentication endpoints).
struct AADFailure: Error, Sendable {
    var error: String
    var description: String
    var codes: [Int]
    var suberror: String? = nil
    var status: Int = 400
    /// What a native-auth refusal carries besides the error: the `continuation_token` to go on with,
    /// `required_attributes`, `invalid_attributes`, `unverified_attributes`.
    var extra: [String: JSONValue] = [:]

    func response(at date: Date) -> Response {
        var body: [String: JSONValue] = [
            "error": .string(error), "error_description": .string(description),
            "error_codes": .array(codes.map { JSONValue($0) }),
            "timestamp": .string(B2CErrorDescription.timestampString(date)),
            "trace_id": .string(UUID().uuidString.lowercased()), "correlation_id": .string(UUID().uuidString.lowercased()),
        ]
        if let suberror { body["suberror"] = .string(suberror) }
        body.merge(extra) { old, _ in old }
        return .json(.object(body), status: status, headers: [("Cache-Control", "no-store")])
    }
}

/// A problem shown as an error page because there is no safe place to redirect to.
struct PageError: Error, Sendable {
    var code: String?
    var message: String
    var status: Int = 400
}

/// What the tenant's pages need of HTML: escaping, the one script they carry, and the policy that lets only it run.
enum HTML {
    /// Text and attribute values, escaped per Unicode scalar: a `Character` is a grapheme cluster, so `"` followed by a
    /// combining mark would be one `Character` that matches no case and be written raw (security review 4, finding 1).
    static func escape(_ s: String) -> String {
        var out = ""
        out.unicodeScalars.reserveCapacity(s.unicodeScalars.count)
        for scalar in s.unicodeScalars {
            switch scalar {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out
    }

    /// The one script the tenant's own pages run: a form_post answer's (to the app, a provider or the tenant) submits
    /// itself. The Content-Security-Policy names it by its hash, so no other inline script or event handler runs.
    static let autoSubmitScript = "document.forms[0].submit();"

    /// The tenant's pages run no script but the auto-submit one: no inline script, no event handler, no `javascript:`
    /// URL, no plug-in, no `<base>`, and no framing. Styles, images and fonts may come from anywhere (a page layout's
    /// CSS lives on the developer's host). A policy whose layouts enable JavaScript replaces it
    /// (`contentSecurityPolicyWithScripts`).
    static let contentSecurityPolicy =
        "script-src 'sha256-\(Data(SHA256.hash(data: Data(autoSubmitScript.utf8))).base64EncodedString())'; "
        + "object-src 'none'; base-uri 'none'; frame-ancestors 'none'"

    /// The policy of a page whose layout deliberately enables JavaScript (`pageLayouts.javascript` with a contract
    /// layout): its scripts run, from anywhere, inline too — as B2C runs them. Plug-ins, `<base>` and framing stay off.
    static let contentSecurityPolicyWithScripts = "object-src 'none'; base-uri 'none'; frame-ancestors 'none'"
}
