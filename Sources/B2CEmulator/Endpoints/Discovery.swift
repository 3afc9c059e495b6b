import B2CProtocol
import Foundation
import Hummingbird

/// Discovery documents (per policy, and the policy-less External ID one), the key set, and the tenant's index page.
struct DiscoveryEndpoint: TenantPart {
    let seed: EmulatorSeed
    let issuer: TokenIssuer
    let pages: PageRenderer

    /// The OpenID configuration of one policy; endpoint URLs follow the form the document was fetched with.
    func discovery(_ a: AuthorityRef, policy: EmulatorSeed.Policy) -> Response {
        let doc: JSONValue = [
            "issuer": .string(issuer.issuer(origin: a.origin, policy: policy)),
            "authorization_endpoint": .string(a.url("oauth2/v2.0/authorize")),
            "token_endpoint": .string(a.url("oauth2/v2.0/token")),
            "end_session_endpoint": .string(a.url("oauth2/v2.0/logout")),
            "jwks_uri": .string(a.url("discovery/v2.0/keys")),
            "response_modes_supported": ["query", "fragment", "form_post"],
            "response_types_supported": [
                "code", "code id_token", "code token", "code id_token token", "id_token", "id_token token",
                "token", "token id_token",
            ],
            "scopes_supported": ["openid"],
            "subject_types_supported": ["pairwise"],
            "id_token_signing_alg_values_supported": ["RS256"],
            "token_endpoint_auth_methods_supported": ["client_secret_post", "client_secret_basic"],
        ]
        var o = doc.objectValue ?? [:]
        let claims: [String] =
            policy.type == .custom
            ? ["name", "given_name", "family_name", "email", "sub", "tid"]
            : ["name", "given_name", "family_name", "emails", "idp", "newUser", "oid", "sub"]
        o["claims_supported"] = JSONValue(
            claims + [policy.policyClaimEntry?.name].compactMap { $0 } + [
                "iss", "iat", "exp", "aud", "nonce", "auth_time", "c_hash", "at_hash",
            ])
        if policy.type == .custom { o["userinfo_endpoint"] = .string(a.url("openid/v2.0/userinfo")) }
        return .json(.object(o), headers: [("Access-Control-Allow-Origin", "*")])
    }

    /// Without a policy the tenant answers as an External ID (CIAM) authority: native authentication, and in an External ID
    /// tenant the browser sign-in of its user flow.
    func nativeDiscovery(_ a: AuthorityRef) throws -> Response {
        var doc: JSONValue = [
            "issuer": .string(issuer.issuer(origin: a.origin, policy: nil)),
            "token_endpoint": .string(a.url("oauth2/v2.0/token")),
            "authorization_endpoint": .string(a.url("oauth2/v2.0/authorize")),
            "jwks_uri": .string(a.url("discovery/v2.0/keys")),
            "end_session_endpoint": .string(a.url("oauth2/v2.0/logout")),
            "response_modes_supported": ["query", "fragment", "form_post"],
            "response_types_supported": ["code", "code id_token", "id_token", "id_token token"],
            "claims_supported": ["sub", "oid", "tid", "ver", "preferred_username", "name", "email", "nonce", "iss", "aud", "exp", "iat"],
            "scopes_supported": ["openid", "profile", "email", "offline_access"],
            "subject_types_supported": ["pairwise"],
            "id_token_signing_alg_values_supported": ["RS256"],
            "token_endpoint_auth_methods_supported": ["client_secret_post", "client_secret_basic"],
            "tenant_region_scope": "EU",
        ]
        // The device authorization grant (External ID's, not B2C's).
        if seed.tenant.externalId, var o = doc.objectValue {
            o["device_authorization_endpoint"] = .string(a.url("oauth2/v2.0/devicecode"))
            doc = .object(o)
        }
        return .json(doc, headers: [("Access-Control-Allow-Origin", "*")])
    }

    func indexPage(origin: String) -> Response { pages.indexPage(tenantID: tenantID, origin: origin) }
}
