import B2CProtocol
import Foundation
import Hummingbird

/// The standard B2C sample web API, for every API of the seed at `/<api name>` (`GET /hello` in the default tenant):
/// `{"name": …}` after full token validation — the key looked up by `kid` in the keys of the token's policy type, the issuer one of
/// the tenant's, the audience the API. A user token needs the API's required scope; an app-only token one of its app roles.
struct SampleAPI: TenantPart {
    let seed: EmulatorSeed
    let clock: EmulatorClock
    let keys: SigningKeys
    /// The issuers whose tokens are accepted (every host the emulator has served under).
    let trustedIssuers: @Sendable (String?) -> Set<String>

    static let corsHeaders = [
        ("Access-Control-Allow-Origin", "*"),
        ("Access-Control-Allow-Headers", "Authorization, Origin, X-Requested-With, Content-Type, Accept"),
    ]

    func serve(_ req: Request, api name: String) -> Response {
        guard let api = seed.apis.first(where: { $0.name == name }) else {
            return .json(["error": "not_found", "error_description": .string("No API '\(name)' in this tenant's seed.")], status: 404)
        }
        if req.method == .options { return .empty(204, headers: Self.corsHeaders) }
        guard req.method == .get else { return .json(["error": "method_not_allowed"], status: 405, headers: [("Allow", "GET, OPTIONS")]) }
        guard let header = req.headers[.authorization], header.lowercased().hasPrefix("bearer ") else { return unauthorized(api, nil) }
        let token = String(header.dropFirst("bearer ".count)).trimmingCharacters(in: .whitespaces)
        let jwt: JWT
        do {
            jwt = try JWT.decode(token)
            try jwt.verifySignature(with: try keySet(for: jwt))
            try jwt.validateClaims(issuers: trustedIssuers(jwt.string("iss")), audience: api.appId, now: clock.now())
        } catch {
            return unauthorized(api, "\(error)")
        }
        let granted = Set(SpaceList.items(jwt.string("scp") ?? "").map(String.init))
        // An app-only token: Entra's (`idtyp: app`, permissions in `roles`) or B2C's (permissions in `scp`, no person).
        let roles = jwt.claims["roles"]?.arrayValue.map { Set($0.compactMap(\.stringValue)) }
        let appRoles = Set(api.appRoles.filter { $0.allowedMemberTypes.contains("Application") }.map(\.value))
        let permissions = roles ?? granted
        let isAppToken =
            jwt.string("idtyp") == "app" || (jwt.claims["name"] == nil && jwt.string("azp") != nil && !granted.isDisjoint(with: appRoles))
        if isAppToken, permissions.isDisjoint(with: appRoles) {
            return .json(
                ["error": "insufficient_scope", "error_description": "The app-only token holds none of the API's app roles."], status: 403,
                headers: Self.corsHeaders)
        }
        if let required = api.requiredScope, !granted.contains(required), !isAppToken {
            return .json(
                ["error": "insufficient_scope"], status: 403,
                headers: [("WWW-Authenticate", "Bearer realm=\"\(api.name)\", error=\"insufficient_scope\", scope=\"\(required)\"")]
                    + Self.corsHeaders)
        }
        if isAppToken {
            return .json(
                ["name": .null, "application": .string(jwt.string("azp") ?? ""), "roles": JSONValue(permissions.sorted())],
                headers: Self.corsHeaders)
        }
        return .json(["name": jwt.claims["name"] ?? .null], headers: Self.corsHeaders)
    }

    /// The keys of the policy type the token names (`tfp` or `acr`), as an API configured with that policy's metadata
    /// would hold; an app-only token without a policy claim is checked against the type its `kid` belongs to.
    private func keySet(for jwt: JWT) throws -> JWKSet {
        if let name = jwt.string("tfp") ?? jwt.string("acr"), let policy = seed.policy(named: name) { return try keys.jwks(policy.type) }
        if let kid = jwt.kid, let type = keys.type(ofKid: kid) { return try keys.jwks(type) }
        return keys.all
    }

    private func unauthorized(_ api: EmulatorSeed.API, _ why: String?) -> Response {
        var challenge = "Bearer realm=\"\(api.name)\""
        if let why {
            challenge += ", error=\"invalid_token\", error_description=\"\(why.replacingOccurrences(of: "\"", with: "'"))\""
        }
        return .json(
            ["error": why == nil ? "unauthorized" : "invalid_token", "error_description": .string(why ?? "A bearer token is required.")],
            status: 401, headers: [("WWW-Authenticate", challenge)] + Self.corsHeaders)
    }
}
