import B2CProtocol
import Foundation

/// B2C's claim resolvers (reference: claim-resolver-overview.md): `{Culture:…}`, `{Policy:…}`, `{OIDC:…}`,
/// `{Context:…}`, `{Claim:…}`, `{OAUTH-KV:…}` and `{service:te}` inside a policy's values (default values, metadata, input
/// parameters), replaced by what the request and the tenant say. A resolver of a known kind that has no value here
/// becomes empty, as in B2C; anything else in braces (`{0}` of a format string) stays.
struct ClaimResolvers: Sendable {
    /// The values by resolver, `Kind:Name` (`OIDC:LoginHint`, `Policy:TenantObjectId`); `OAUTH-KV:name` for each query
    /// parameter of the authorize request.
    var values: [String: String]

    static let kinds: Set = ["Culture", "Policy", "OIDC", "Context", "Claim", "OAUTH-KV", "service"]
    /// The policy's resolvers B2C also takes without their kind (the starter pack's `cpim_{0}@{RelyingPartyTenantId}`).
    static let bare: Set = ["RelyingPartyTenantId", "TrustFrameworkTenantId", "TenantObjectId", "PolicyId"]

    /// The resolvers a request of `policy` has: the tenant's, the policy's, the authorize request's.
    static func of(
        tenantName: String, tenantId: String, policyId: String, request: [String: String], language: String, correlationId: String,
        now: Date
    ) -> ClaimResolvers {
        var v: [String: String] = [
            "Culture:LanguageName": String(language.prefix(2)), "Culture:RFC5646": language,
            "Culture:RegionName": language.contains("-") ? String(language.split(separator: "-").last ?? "") : "",
            "Policy:PolicyId": policyId, "Policy:RelyingPartyTenantId": tenantName, "Policy:TenantObjectId": tenantId,
            "Policy:TrustFrameworkTenantId": tenantName, "Context:CorrelationId": correlationId,
            "Context:DateTimeInUtc": ISO8601.string(now), "Context:DeploymentMode": "Development",
            "Context:BuildNumber": "b2c-emulator",
        ]
        let oidc = [
            "client_id": "ClientId", "domain_hint": "DomainHint", "login_hint": "LoginHint", "max_age": "MaxAge", "nonce": "Nonce",
            "prompt": "Prompt", "redirect_uri": "RedirectUri", "scope": "Scope", "acr_values": "AuthenticationContextReferences",
            "resource": "Resource", "username": "Username",
        ]
        for (parameter, name) in oidc { if let value = request[parameter] { v["OIDC:\(name)"] = value } }
        for (parameter, value) in request { v["OAUTH-KV:\(parameter)"] = value }
        return ClaimResolvers(values: v)
    }

    func resolve(_ text: String) -> String {
        guard text.contains("{") else { return text }
        var out = ""
        var rest = Substring(text)
        while let open = rest.firstIndex(of: "{"), let close = rest[open...].firstIndex(of: "}") {
            out += rest[..<open]
            let inner = rest[rest.index(after: open)..<close]
            if let colon = inner.firstIndex(of: ":"), Self.kinds.contains(String(inner[..<colon])) {
                out += values[String(inner)] ?? ""
            } else if Self.bare.contains(String(inner)) {
                out += values["Policy:\(inner)"] ?? ""
            } else {
                out += rest[open...close]
            }
            rest = rest[rest.index(after: close)...]
        }
        return out + rest
    }
}
