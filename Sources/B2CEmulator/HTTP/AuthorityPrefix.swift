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

    static let fixed: [Substring: String] = [
        "_admin": "admin", "hello": "hello", "public": "hello", "common": "any", "health": "health", "_idp": "idp", "graph": "graph",
    ]

    /// Where a path leads, decided from the path and the `p` query parameter alone.
    enum Route {
        /// A fixed path (or the root, `pages`): passed on as it is, under this endpoint name.
        case fixed(String)
        /// `/tfp` and nothing after it: passed on as it is, unnamed.
        case unnamed
        case unknownTenant(String)
        case unknownPolicy(String)
        /// Below an authority: the router sees `/_b2c/<endpoint>`.
        case authority(tfp: Bool, tenant: String, policy: EmulatorSeed.Policy?, inPath: Bool, implicit: Bool, endpoint: String)
    }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var context = context
        let host = request.head.authority ?? "localhost"
        guard Self.isHostHeader(host) else { return .text("Bad Host header.", status: 400) }
        let path = request.uri.path
        // The health check answers whatever name an orchestrator polls it under: it says nothing a page could use.
        guard emulator.answers(toHost: host) || path == "/health" else { return misdirected(host) }
        context.origin = emulator.publicOrigin ?? "\(scheme)://\(host.lowercased())"
        context.path = path
        switch Self.route(path, emulator: emulator, policyParameter: { (try? request.queryParameters())?["p"] }) {
        case .fixed(let name):
            context.endpoint = name
            return try await next(request, context)
        case .unnamed:
            return try await next(request, context)
        case .unknownTenant(let tenant):
            return failure(unknownTenant: tenant)
        case .unknownPolicy(let name):
            return failure(unknownPolicy: name)
        case .authority(let tfp, let tenant, let policy, let inPath, let implicit, let endpoint):
            context.authority = AuthorityRef(
                tfp: tfp, tenantSegment: tenant, policy: policy, policyInPath: inPath, origin: context.origin, implicitFlow: implicit)
            context.endpoint = Self.faultName(endpoint)
            var head = request.head
            var rewritten = "/_b2c/"
            let query = request.uri.query
            rewritten.reserveCapacity(6 + endpoint.utf8.count + (query.map { $0.utf8.count + 1 } ?? 0))
            rewritten += endpoint
            if let query {
                rewritten += "?"
                rewritten += query
            }
            head.path = rewritten
            return try await next(Request(head: head, body: request.body), context)
        }
    }

    /// B2C's authority forms, read from a path's segments (percent-decoded where they hold a '%'). The segments stay
    /// slices of the path, the case of a word is compared without a lower-cased copy, and the endpoint is lower-cased in one
    /// pass: this runs for every request, and this middleware was a tenth of a client-credentials grant's work outside its
    /// signature (35,600 instructions, now 28,700; bench/README.md, issue 43). `AuthorityRouteTests` compares it with the
    /// version that copied, on random paths.
    static func route(_ path: String, emulator: B2CEmulator, policyParameter: () -> String?) -> Route {
        var segments: [Substring] = []
        segments.reserveCapacity(8)
        var path = path
        path.makeContiguousUTF8()
        let bytes = path.utf8
        var start = bytes.startIndex
        // (A loop on the bytes: `split` with its closure was 5,000 instructions a request.)
        while start < bytes.endIndex {
            let end = bytes[start...].firstIndex(of: UInt8(ascii: "/")) ?? bytes.endIndex
            if start < end {
                let segment = Substring(bytes[start..<end])
                let escaped = bytes[start..<end].contains(UInt8(ascii: "%"))
                segments.append(escaped ? segment.removingPercentEncoding.map { Substring($0) } ?? segment : segment)
            }
            start = end < bytes.endIndex ? bytes.index(after: end) : end
        }
        guard let first = segments.first else { return .fixed("pages") }
        if let name = fixed[first] ?? (segments.count == 1 && emulator.seed.apis.contains { $0.name == first } ? "hello" : nil) {
            return .fixed(name)
        }
        var rest = segments[...]
        let tfp = isLowercased(first, "tfp")
        if tfp { rest = rest.dropFirst() }
        guard let tenant = rest.first else { return .unnamed }
        guard emulator.tenantMatches(tenant) else { return .unknownTenant(String(tenant)) }
        rest = rest.dropFirst()
        var policy: EmulatorSeed.Policy?
        var inPath = false
        if let candidate = rest.first, isPolicyName(candidate) {
            guard let p = emulator.policy(named: String(candidate)) else { return .unknownPolicy(String(candidate)) }
            policy = p
            inPath = true
            rest = rest.dropFirst()
        }
        if policy == nil, let p = policyParameter() {
            guard let found = emulator.policy(named: p) else { return .unknownPolicy(p) }
            policy = found
        }
        var implicit = false
        if policy == nil, let flow = emulator.seed.externalIdFlow {
            policy = flow
            implicit = true
        }
        return .authority(
            tfp: tfp, tenant: String(tenant), policy: policy, inPath: inPath, implicit: implicit, endpoint: lowercasedPath(rest))
    }

    /// `text.lowercased() == lowered`: a byte compare when `text` is ASCII (its lower case is then the same bytes, letters
    /// folded), the characters' when it is not.
    static func isLowercased(_ text: Substring, _ lowered: String) -> Bool {
        let decided: Bool?? = text.utf8.withContiguousStorageIfAvailable { t in
            lowered.utf8.withContiguousStorageIfAvailable { l -> Bool? in
                var high: UInt8 = 0
                for c in t { high |= c }
                guard high < 0x80 else { return nil }
                guard t.count == l.count else { return false }
                var diff: UInt8 = 0
                for k in 0..<t.count { diff |= folded(t[k]) ^ l[k] }
                return diff == 0
            } ?? nil
        }
        if case let decided?? = decided { return decided }
        return text.lowercased() == lowered
    }

    /// An ASCII byte in lower case.
    @inline(__always) static func folded(_ c: UInt8) -> UInt8 { c >= 0x41 && c <= 0x5a ? c | 0x20 : c }

    /// A user flow's or custom policy's name begins `B2C_1` in any case (no other letter lower-cases to one of those).
    /// A byte that is not ASCII right after those five may join the `1` into another character: the characters decide.
    static func isPolicyName(_ segment: Substring) -> Bool {
        let decided: Bool?? = segment.utf8.withContiguousStorageIfAvailable { b -> Bool? in
            guard b.count >= 5, folded(b[0]) == UInt8(ascii: "b"), b[1] == UInt8(ascii: "2"), folded(b[2]) == UInt8(ascii: "c"),
                b[3] == UInt8(ascii: "_"), b[4] == UInt8(ascii: "1")
            else { return false }
            return b.count == 5 || b[5] < 0x80 ? true : nil
        }
        if case let decided?? = decided { return decided }
        return segment.lowercased().hasPrefix("b2c_1")
    }

    /// The segments lower-cased and joined with '/', written once when they are ASCII (a path's words always are).
    static func lowercasedPath(_ parts: ArraySlice<Substring>) -> String {
        var count = max(parts.count - 1, 0)
        for part in parts {
            let ascii = part.utf8.withContiguousStorageIfAvailable { b in b.allSatisfy { $0 < 0x80 } } ?? false
            guard ascii else { return parts.map { $0.lowercased() }.joined(separator: "/") }
            count += part.utf8.count
        }
        return String(unsafeUninitializedCapacity: count) { out in
            var i = 0
            for (n, part) in parts.enumerated() {
                if n > 0 {
                    out[i] = UInt8(ascii: "/")
                    i += 1
                }
                part.utf8.withContiguousStorageIfAvailable { b in
                    for c in b {
                        out[i] = folded(c)
                        i += 1
                    }
                }
            }
            return i
        }
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
        var host = host
        return host.withUTF8 { isHostHeader(bytes: $0) }
    }

    private static func isHostHeader(bytes b: UnsafeBufferPointer<UInt8>) -> Bool {
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
