import B2CProtocol
import Foundation
import Hummingbird

/// How a request addressed the tenant and policy, kept so that the URLs we hand out mirror it
/// (path form, `tfp` form, tenant GUID or name, or `?p=`).
struct AuthorityRef: Sendable {
    var tfp: Bool
    var tenantSegment: String
    var policy: EmulatorSeed.Policy?
    var policyInPath: Bool
    var origin: String
    /// An External ID tenant's request without a policy: `policy` is the tenant's user flow, and no URL names it.
    var implicitFlow = false

    /// `https://host/[tfp/]tenant[/policy]` + endpoint [+ `?p=policy`].
    func url(_ endpoint: String) -> String {
        var base = origin + "/" + (tfp ? "tfp/" : "") + tenantSegment
        if let policy, policyInPath { base += "/" + policy.lowercasedID }
        var u = base + "/" + endpoint
        if let policy, !policyInPath, !implicitFlow { u += "?p=" + policy.lowercasedID }
        return u
    }
}

/// The only routing of our own: B2C's four authority forms (`/<tenant>/<policy>/…`, `/tfp/<tenant>/<policy>/…`,
/// `/<tenant>/…?p=<policy>`, and a tenant GUID or first label for the name). A request under an authority is checked
/// (tenant and policy known), its authority kept in the context, and its path rewritten to `/_b2c/<endpoint>` for the
/// router. Fixed paths (`/_admin`, `/hello`, `/public`, `/`) pass through. It also names each endpoint for fault
/// injection and notes the origin the client used.
struct AuthorityPrefixMiddleware: RouterMiddleware {
    typealias Context = EmulatorRequestContext
    let emulator: B2CEmulator
    let scheme: String

    static let fixed: [String: String] = [
        "_admin": "admin", "hello": "hello", "public": "hello", "common": "any", "health": "health", "_idp": "idp", "graph": "graph",
    ]

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var context = context
        let host = request.head.authority ?? "localhost"
        guard Self.isHostHeader(host) else { return .text("Bad Host header.", status: 400) }
        // The health check answers whatever name an orchestrator polls it under: it says nothing a page could use.
        guard emulator.answers(toHost: host) || request.uri.path == "/health" else { return misdirected(host) }
        context.origin = emulator.publicOrigin ?? "\(scheme)://\(host.lowercased())"
        context.path = request.uri.path
        // (Foundation's percent decoding only where there is a '%': it is the costly part of routing a token request.)
        // (Split on the bytes, not on characters: a path's separators are bytes, and walking grapheme clusters cost every request.)
        let segments = request.uri.path.utf8.split(separator: UInt8(ascii: "/")).map {
            $0.contains(UInt8(ascii: "%")) ? String(Substring($0)).removingPercentEncoding ?? String(Substring($0)) : String(Substring($0))
        }
        guard let first = segments.first else {
            context.endpoint = "pages"
            return try await next(request, context)
        }
        if let name = Self.fixed[first] ?? (segments.count == 1 && emulator.seed.apis.contains { $0.name == first } ? "hello" : nil) {
            context.endpoint = name
            return try await next(request, context)
        }
        var rest = segments[...]
        let tfp = rest.first?.lowercased() == "tfp"
        if tfp { rest = rest.dropFirst() }
        guard let tenantSegment = rest.first else { return try await next(request, context) }
        guard emulator.tenantMatches(tenantSegment) else { return failure(unknownTenant: tenantSegment) }
        rest = rest.dropFirst()
        var policy: EmulatorSeed.Policy?
        var inPath = false
        if let candidate = rest.first, candidate.lowercased().hasPrefix("b2c_1") {
            guard let p = emulator.policy(named: candidate) else { return failure(unknownPolicy: candidate) }
            policy = p
            inPath = true
            rest = rest.dropFirst()
        }
        if policy == nil, let p = (try? request.queryParameters())?["p"] {
            guard let found = emulator.policy(named: p) else { return failure(unknownPolicy: p) }
            policy = found
        }
        var implicit = false
        if policy == nil, let flow = emulator.seed.externalIdFlow {
            policy = flow
            implicit = true
        }
        context.authority = AuthorityRef(
            tfp: tfp, tenantSegment: tenantSegment, policy: policy, policyInPath: inPath, origin: context.origin, implicitFlow: implicit)
        let endpoint = rest.map { $0.lowercased() }.joined(separator: "/")
        context.endpoint = Self.faultName(endpoint)
        var head = request.head
        head.path = "/_b2c/" + endpoint + (request.uri.query.map { "?" + $0 } ?? "")
        return try await next(Request(head: head, body: request.body), context)
    }

    /// The fault-injection name of an endpoint below an authority.
    static func faultName(_ endpoint: String) -> String {
        switch endpoint {
        case "v2.0/.well-known/openid-configuration", ".well-known/openid-configuration": "discovery"
        case "discovery/v2.0/keys", "discovery/keys": "keys"
        case "oauth2/v2.0/authorize": "authorize"
        case "oauth2/v2.0/token": "token"
        case "oauth2/v2.0/logout": "logout"
        case "oauth2/v2.0/initiate": "initiate"
        case "oauth2/v2.0/challenge": "challenge"
        case "openid/v2.0/userinfo": "userinfo"
        case "oauth2/authresp", "samlp/sso/assertionconsumer": "pages"
        case "samlp/metadata": "discovery"
        case "oauth2/v2.0/introspect": "challenge"
        default:
            endpoint.hasPrefix("emulator/")
                ? "pages"
                : endpoint.hasPrefix("signup/")
                    ? "signup"
                    : endpoint.hasPrefix("resetpassword/")
                        ? "resetpassword"
                        : endpoint.hasPrefix("register/") ? "register" : "any"
        }
    }

    static func isHostHeader(_ host: String) -> Bool {
        // `name[:port]` (letters, digits, '.', '-') or `[address][:port]` (hex digits, ':', '.'), the port 1-5 digits.
        // (A byte scan: Foundation's regular expression was a per cent of every request.)
        let b = Array(host.utf8)
        func isDigit(_ c: UInt8) -> Bool { c >= UInt8(ascii: "0") && c <= UInt8(ascii: "9") }
        func isLetter(_ c: UInt8) -> Bool { (c | 0x20) >= UInt8(ascii: "a") && (c | 0x20) <= UInt8(ascii: "z") }
        func isHex(_ c: UInt8) -> Bool { isDigit(c) || ((c | 0x20) >= UInt8(ascii: "a") && (c | 0x20) <= UInt8(ascii: "f")) }
        var i = 0
        if b.first == UInt8(ascii: "[") {
            i = 1
            while i < b.count, isHex(b[i]) || b[i] == UInt8(ascii: ":") || b[i] == UInt8(ascii: ".") { i += 1 }
            guard i > 1, i < b.count, b[i] == UInt8(ascii: "]") else { return false }
            i += 1
        } else {
            while i < b.count, isLetter(b[i]) || isDigit(b[i]) || b[i] == UInt8(ascii: ".") || b[i] == UInt8(ascii: "-") { i += 1 }
            guard i > 0 else { return false }
        }
        guard i < b.count else { return true }
        guard b[i] == UInt8(ascii: ":") else { return false }
        let port = b[(i + 1)...]
        return (1...5).contains(port.count) && port.allSatisfy(isDigit)
    }

    /// A name the tenant does not serve: what a page on another site sends after rebinding its name to 127.0.0.1.
    func misdirected(_ host: String) -> Response {
        let names = emulator.answeredNames.joined(separator: ", ")
        return .text(
            "This tenant does not answer to the host name in '\(host)' (a guard against DNS rebinding). It answers to IP addresses "
                + "and to: \(names). To reach it under another name, start it with --host-name NAME or list the name in the seed's "
                + "tenant.hostAliases.\n", status: 421)
    }

    func failure(unknownTenant tenant: String) -> Response {
        .json(
            [
                "error": "invalid_tenant",
                "error_description": .string(
                    B2CErrorDescription.format(
                        code: "AADB2C99001",
                        message:
                            "The tenant '\(tenant)' was not found. This emulator serves '\(emulator.tenantName)' (\(emulator.tenantID)).",
                        at: emulator.clock.date)),
            ], status: 404)
    }

    func failure(unknownPolicy name: String) -> Response {
        let known = emulator.seed.policies.map(\.id).joined(separator: ", ")
        return .json(
            [
                "error": "invalid_request",
                "error_description": .string(
                    B2CErrorDescription.format(
                        code: "AADB2C99002",
                        message: "The policy '\(name)' does not exist in tenant '\(emulator.tenantName)'. Known policies: \(known).",
                        at: emulator.clock.date)),
            ], status: 404)
    }
}
