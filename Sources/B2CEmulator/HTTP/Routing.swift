import B2CProtocol
import Foundation

/// How a request addressed the tenant and policy, kept so that the URLs we hand out mirror it
/// (path form, `tfp` form, tenant GUID or name, or `?p=`).
struct AuthorityRef: Sendable {
    var tfp: Bool
    var tenantSegment: String
    var policy: EmulatorSeed.Policy?
    var policyInPath: Bool
    var origin: String

    /// `https://host/[tfp/]tenant[/policy]` + endpoint [+ `?p=policy`].
    func url(_ endpoint: String) -> String {
        var base = origin + "/" + (tfp ? "tfp/" : "") + tenantSegment
        if let policy, policyInPath { base += "/" + policy.lowercasedID }
        var u = base + "/" + endpoint
        if let policy, !policyInPath { u += "?p=" + policy.lowercasedID }
        return u
    }
}

extension B2CEmulator {
    static let maxBody = 64 * 1024

    /// Entry point for every request.
    func handle(_ req: HTTPInput) async -> HTTPOutput {
        let route = classify(req)
        if route.faultName != "admin", let fault = takeFault(for: route.faultName) {
            switch fault.kind {
            case .delay:
                try? await Task.sleep(nanoseconds: UInt64(fault.delayMilliseconds) * 1_000_000)
            case .status500:
                return .json(["error": "server_error", "error_description": "Injected fault: HTTP 500."], status: 500)
            case .status503:
                return HTTPOutput(status: 503, headers: [("Retry-After", "1"), ("Content-Type", "text/plain")], body: Data("Service Unavailable (injected)".utf8))
            case .malformedJSON:
                return HTTPOutput(status: 200, headers: [("Content-Type", "application/json; charset=utf-8")], body: Data("{\"access_token\": \"eyJ0eXAi".utf8))
            case .wrongContentType:
                return .html("<html><body>Injected fault: an HTML page where JSON was expected.</body></html>")
            case .drop:
                var out = HTTPOutput(status: 500)
                out.dropConnection = true
                return out
            }
        }
        do {
            return try await route.handler(req)
        } catch let f as OAuthFailure {
            return f.response(at: clock.date)
        } catch let f as AADFailure {
            return f.response(at: clock.date)
        } catch let e as PageError {
            return errorPage(e)
        } catch {
            // Our own failure: say so in B2C's shape rather than crash.
            return OAuthFailure(error: "server_error", code: "AADB2C90085",
                                message: "The service has encountered an internal error. Please reauthenticate and try again. (\(type(of: error)))",
                                status: 500).response(at: clock.date)
        }
    }

    struct Route {
        var faultName: String
        var handler: (HTTPInput) async throws -> HTTPOutput
    }

    func classify(_ req: HTTPInput) -> Route {
        let s = req.segments
        if s.first == "_admin" { return Route(faultName: "admin") { try await self.admin($0) } }
        if s == ["hello"] { return Route(faultName: "hello") { self.hello($0) } }
        if s == ["public"] { return Route(faultName: "hello") { _ in .json(["date": .string(ISO8601DateFormatter().string(from: self.clock.date))]) } }
        if s.isEmpty { return Route(faultName: "pages") { self.indexPage($0) } }
        if s.count >= 2, s[0].lowercased() == "common", s[1].lowercased() == "userrealm" {
            // msal-python probes this before ROPC and falls back to plain ROPC on 404.
            return Route(faultName: "any") { _ in .json(["error": "not_found", "error_description": "User realm discovery is not available in Azure AD B2C."], status: 404) }
        }
        var rest = s[...]
        var tfp = false
        if rest.first?.lowercased() == "tfp" { tfp = true; rest = rest.dropFirst() }
        guard let tenantSegment = rest.first else { return notFound }
        guard tenantMatches(tenantSegment) else {
            return Route(faultName: "any") { _ in
                .json(["error": "invalid_tenant",
                       "error_description": .string(B2CErrorDescription.format(code: "AADB2C99001", message: "The tenant '\(tenantSegment)' was not found. This emulator serves '\(self.tenantName)' (\(self.tenantID)).", at: self.clock.date))],
                      status: 404)
            }
        }
        rest = rest.dropFirst()
        var policy: EmulatorSeed.Policy?
        var inPath = false
        if let candidate = rest.first, candidate.lowercased().hasPrefix("b2c_1") {
            guard let p = seed.policy(named: candidate) else { return unknownPolicy(candidate) }
            policy = p
            inPath = true
            rest = rest.dropFirst()
        }
        if policy == nil, let p = req.query["p"] {
            guard let found = seed.policy(named: p) else { return unknownPolicy(p) }
            policy = found
        }
        let authority = AuthorityRef(tfp: tfp, tenantSegment: tenantSegment, policy: policy, policyInPath: inPath, origin: req.origin)
        let endpoint = rest.map { $0.lowercased() }.joined(separator: "/")

        func needsPolicy(_ name: String, _ f: @escaping (HTTPInput, EmulatorSeed.Policy) async throws -> HTTPOutput) -> Route {
            Route(faultName: name) { req in
                guard let policy else {
                    throw OAuthFailure(error: "invalid_request", code: "AADB2C90055",
                                       message: "The request names no policy. Put the policy in the path (/\(self.tenantName)/B2C_1_susi/...) or in the p query parameter.")
                }
                return try await f(req, policy)
            }
        }

        switch endpoint {
        case "v2.0/.well-known/openid-configuration", ".well-known/openid-configuration":
            if policy == nil, !inPath { return Route(faultName: "discovery") { _ in try self.nativeDiscovery(authority) } }
            return needsPolicy("discovery") { _, p in self.discovery(authority, policy: p) }
        case "discovery/v2.0/keys", "discovery/keys":
            return Route(faultName: "keys") { _ in .json(self.jwks.json, headers: [("Access-Control-Allow-Origin", "*")]) }
        case "oauth2/v2.0/authorize":
            return needsPolicy("authorize") { req, p in try self.authorize(req, authority: authority, policy: p) }
        case "oauth2/v2.0/token":
            if policy == nil { return Route(faultName: "token") { try self.nativeToken($0, authority: authority) } }
            return needsPolicy("token") { req, p in try self.token(req, authority: authority, policy: p) }
        case "oauth2/v2.0/logout":
            return needsPolicy("logout") { req, p in try self.logout(req, authority: authority, policy: p) }
        case "oauth2/v2.0/initiate":
            return Route(faultName: "initiate") { try self.nativeInitiate($0) }
        case "oauth2/v2.0/challenge":
            return Route(faultName: "challenge") { try self.nativeChallenge($0) }
        default:
            if rest.first?.lowercased() == "emulator", rest.count == 2 {
                let page = rest.last!.lowercased()
                return needsPolicy("pages") { req, p in try self.page(page, req, authority: authority, policy: p) }
            }
            return notFound
        }
    }

    var notFound: Route {
        Route(faultName: "any") { req in
            .json(["error": "not_found", "error_description": .string("No endpoint at \(req.path). Authority forms: /<tenant>/<policy>/..., /tfp/<tenant>/<policy>/..., /<tenant>/...?p=<policy>.")],
                  status: 404)
        }
    }

    func unknownPolicy(_ name: String) -> Route {
        Route(faultName: "any") { _ in
            let known = self.seed.policies.map(\.id).joined(separator: ", ")
            return .json(["error": "invalid_request",
                          "error_description": .string(B2CErrorDescription.format(code: "AADB2C99002", message: "The policy '\(name)' does not exist in tenant '\(self.tenantName)'. Known policies: \(known).", at: self.clock.date))],
                         status: 404)
        }
    }

    func tenantMatches(_ segment: String) -> Bool {
        let s = segment.lowercased()
        return s == tenantName.lowercased() || s == tenantID || s == tenantName.lowercased().components(separatedBy: ".").first
    }
}
