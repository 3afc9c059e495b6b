import B2CProtocol
import Foundation
import Hummingbird

/// Entra External ID's on-behalf-of grant (`urn:ietf:params:oauth:grant-type:jwt-bearer`, `requested_token_use=
/// on_behalf_of`): a confidential web API trades the token a person's app sent it for one to the next API, as that person.
/// Entra's checks, in its order: the caller's secret, the assertion's signature and issuer (this tenant's), its lifetime,
/// its audience (the calling API itself), the person still there and not revoked since, the scopes consented to the
/// calling API. B2C has no such grant: a policy's token endpoint refuses it with `AADB2C90086`.
extension TokenEndpoint {
    static let jwtBearer = "urn:ietf:params:oauth:grant-type:jwt-bearer"

    func onBehalfOf(
        _ caller: Caller, authority: AuthorityRef, origin: String, log: inout EmulatorStore.LogEntry
    ) async throws -> Response {
        guard seed.tenant.externalId, authority.implicitFlow else {
            throw OAuthFailure(
                error: "unsupported_grant_type", code: "AADB2C90086",
                message: "The supplied grant_type [\(Self.jwtBearer)] is not supported. (Azure AD B2C has no on-behalf-of flow.)")
        }
        func refuse(_ error: String, _ code: Int, _ text: String) -> AADFailure {
            AADFailure(error: error, description: "AADSTS\(code): \(text)", codes: [code])
        }
        let form = caller.form
        guard form["requested_token_use"] == "on_behalf_of" else {
            throw refuse("invalid_request", 90014, "The request body must contain requested_token_use=on_behalf_of.")
        }
        guard caller.app.isConfidential, caller.authenticated else {
            throw refuse(
                "invalid_client", 7_000_218,
                "The request body must contain the parameter: 'client_assertion' or 'client_secret'. (On-behalf-of is for a "
                    + "confidential web API, with its secret.)")
        }
        guard let assertion = form["assertion"], !assertion.isEmpty else {
            throw refuse("invalid_request", 90014, "The request body must contain the parameter: 'assertion'.")
        }
        let jwt: JWT
        do {
            jwt = try JWT.decode(assertion)
            try jwt.verifySignature(with: try issuer.keys.jwks(.userFlow))
        } catch {
            throw refuse("invalid_grant", 50013, "Assertion failed signature validation.")
        }
        guard jwt.string("iss") == issuer.issuer(origin: origin, policy: nil) else {
            throw refuse("invalid_grant", 50013, "Assertion contains an invalid issuer: \(jwt.string("iss") ?? "none").")
        }
        let now = clock.now()
        guard let exp = jwt.int("exp"), now < exp else {
            throw refuse("invalid_grant", 500_133, "Assertion is not within its valid time range (it has expired).")
        }
        // The person's token must be for the API that presents it (its client id is the API's app id).
        let audience = jwt.string("aud") ?? ""
        let ownURIs = seed.apis.filter { $0.appId.equalsIgnoringCase(caller.app.clientId) }.map(\.identifierUri)
        guard audience.equalsIgnoringCase(caller.app.clientId) || ownURIs.contains(where: { $0.equalsIgnoringCase(audience) }) else {
            throw refuse(
                "invalid_grant", 50013,
                "Assertion audience does not match the Client app presenting the assertion. The audience in the assertion was "
                    + "'\(audience)' and the expected audience is '\(caller.app.clientId)'.")
        }
        guard jwt.string("idtyp") != "app", let oid = jwt.string("oid"), let user = try store.user(oid: oid) else {
            throw refuse("invalid_grant", 50034, "The assertion names no user of this directory (an app-only token, or a person deleted).")
        }
        log.oid = user.oid
        if let iat = jwt.int("iat"), iat < user.tokensValidFrom {
            throw refuse(
                "invalid_grant", 50173, "The provided grant has expired due to it being revoked; the person must sign in again.")
        }
        let scopes: TokenIssuer.Scopes
        do { scopes = try issuer.resolveScopes(form["scope"], app: caller.app) } catch {
            throw refuse(
                "invalid_scope", 65001,
                "The user or administrator has not consented to use the application with ID '\(caller.app.clientId)' for the scope "
                    + "asked (\(form["scope"] ?? "none")): \(error.message)")
        }
        let issued = try await issuer.issue(
            Issuance(
                user: user, policy: nil, app: caller.app, scopes: scopes, authTime: jwt.int("auth_time") ?? now, origin: origin,
                includeIDToken: false, client: .init(confidential: true)))
        return issuer.tokenResponse(issued)
    }
}
