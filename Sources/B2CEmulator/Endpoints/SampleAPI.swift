import B2CProtocol
import Foundation
import Hummingbird

/// The standard B2C sample web API: `GET /hello` → `{"name": …}` after full token validation.
struct SampleAPI: TenantPart {
    let seed: EmulatorSeed
    let clock: EmulatorClock
    let keys: SigningKeys
    /// The issuers whose tokens are accepted (every host the emulator has served under).
    let trustedIssuers: @Sendable () -> Set<String>

    static let corsHeaders = [
        ("Access-Control-Allow-Origin", "*"),
        ("Access-Control-Allow-Headers", "Authorization, Origin, X-Requested-With, Content-Type, Accept"),
    ]

    func hello(_ req: Request) -> Response {
        if req.method == .options { return .empty(204, headers: Self.corsHeaders) }
        guard req.method == .get else { return .json(["error": "method_not_allowed"], status: 405, headers: [("Allow", "GET, OPTIONS")]) }
        guard let api = seed.apis.first(where: { $0.name == "hello" }) ?? seed.apis.first else {
            return .json(["error": "not_found", "error_description": "This tenant's seed defines no API."], status: 404)
        }
        func unauthorized(_ why: String?) -> Response {
            var challenge = "Bearer realm=\"\(api.name)\""
            if let why {
                challenge += ", error=\"invalid_token\", error_description=\"\(why.replacingOccurrences(of: "\"", with: "'"))\""
            }
            return .json(
                [
                    "error": why == nil ? "unauthorized" : "invalid_token",
                    "error_description": .string(why ?? "A bearer token is required."),
                ],
                status: 401, headers: [("WWW-Authenticate", challenge)] + Self.corsHeaders)
        }
        guard let header = req.headers[.authorization], header.lowercased().hasPrefix("bearer ") else { return unauthorized(nil) }
        let token = String(header.dropFirst("bearer ".count)).trimmingCharacters(in: .whitespaces)
        let jwt: JWT
        do {
            jwt = try JWT.decode(token)
            try jwt.verifySignature(with: keys.jwks)
            try jwt.validateClaims(issuers: trustedIssuers(), audience: api.appId, now: clock.now())
        } catch {
            return unauthorized("\(error)")
        }
        let granted = (jwt.string("scp") ?? "").split(separator: " ").map(String.init)
        if let required = api.requiredScope, !granted.contains(required) {
            return .json(
                ["error": "insufficient_scope"], status: 403,
                headers: [("WWW-Authenticate", "Bearer realm=\"\(api.name)\", error=\"insufficient_scope\", scope=\"\(required)\"")]
                    + Self.corsHeaders)
        }
        return .json(["name": jwt.claims["name"] ?? .null], headers: Self.corsHeaders)
    }
}
