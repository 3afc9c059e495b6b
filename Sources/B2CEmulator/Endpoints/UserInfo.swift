import B2CProtocol
import Foundation
import Hummingbird

/// `GET/POST …/<custom policy>/openid/v2.0/userinfo`: the relying party's claims of the person an access token names
/// (custom policies only, as in B2C; a user flow answers 404 — the emulator's choice, B2C has no such endpoint there).
struct UserInfoEndpoint: TenantPart {
    let seed: EmulatorSeed
    let store: EmulatorStore
    let clock: EmulatorClock
    let keys: SigningKeys
    let trustedIssuers: @Sendable (String?) -> Set<String>

    func userInfo(_ req: Request, policy: EmulatorSeed.Policy) throws -> Response {
        guard policy.type == .custom else {
            return .json(
                ["error": "not_found", "error_description": "The userinfo endpoint exists for custom policies (B2C_1A_…) only."],
                status: 404)
        }
        func refused(_ why: String) -> Response {
            .json(
                ["error": "invalid_token", "error_description": .string(why)], status: 401,
                headers: [
                    (
                        "WWW-Authenticate",
                        "Bearer error=\"invalid_token\", error_description=\"\(why.replacingOccurrences(of: "\"", with: "'"))\""
                    )
                ])
        }
        guard let header = req.headers[.authorization], header.lowercased().hasPrefix("bearer ") else {
            return .json(
                ["error": "invalid_request", "error_description": "A bearer access token is required."], status: 401,
                headers: [("WWW-Authenticate", "Bearer")])
        }
        let jwt: JWT
        do {
            jwt = try JWT.decode(String(header.dropFirst(7)).trimmingCharacters(in: .whitespaces))
            try jwt.verifySignature(with: try keys.jwks(.custom))
            guard let iss = jwt.string("iss"), trustedIssuers(iss).contains(iss) else {
                return refused("the token's issuer is not this tenant's")
            }
            guard let exp = jwt.int("exp"), clock.now() < exp else { return refused("the token has expired") }
        } catch {
            return refused("\(error)")
        }
        // A policy whose issuer names no policy (`AuthenticationContextReferenceClaimPattern` `None`) is known by its key.
        let named = jwt.string("acr") ?? jwt.string("tfp")
        guard named?.caseInsensitiveCompare(policy.id) == .orderedSame || (named == nil && policy.policyClaimEntry == nil) else {
            return refused("the token was issued by another policy")
        }
        guard let sub = jwt.string("sub"), let user = try store.user(oid: sub) else {
            return refused("the token names no user of this tenant")
        }
        return .json([
            "sub": .string(user.oid), "name": .string(user.displayName), "given_name": .string(user.givenName),
            "family_name": .string(user.surname), "email": .string(user.email), "tid": .string(tenantID),
        ])
    }
}
