import Foundation

/// Whether a token belongs to a configuration: issued on one of its hosts, for its tenant, to its app. The store keeps
/// each configuration's tokens apart already; this is the last check before a token is stored or served.
enum TokenOwnership {
    /// Why an access token is not this configuration's, or nil when it is. Tokens that are not JWTs cannot be read
    /// and are not judged here.
    static func problem(accessToken: String, config: ClientConfiguration, tenantID: String) -> String? {
        guard let claims = JWT.payload(of: accessToken) else { return nil }
        if let problem = issuerProblem(claims["iss"]?.stringValue, config: config, tenantID: tenantID) { return problem }
        let client = config.clientID.lowercased()
        if let party = claims["azp"]?.stringValue ?? claims["appid"]?.stringValue {
            return party.lowercased() == client ? nil : "it was issued to the app \(party), not \(client)"
        }
        let audiences: [String]
        switch claims["aud"] {
        case .string(let a)?: audiences = [a]
        case .array(let list)?: audiences = list.compactMap(\.stringValue)
        default: audiences = []
        }
        return audiences.contains { $0.lowercased() == client }
            ? nil : "it names no app of this configuration (no azp, and aud is not \(client))"
    }

    /// The issuer must be on a known host (or External ID's `<tenant GUID>.ciamlogin.com`), and a tenant GUID in its
    /// path must be the account's tenant (and the configuration's, when it names one).
    static func issuerProblem(_ issuer: String?, config: ClientConfiguration, tenantID: String) -> String? {
        guard let issuer else { return nil }
        guard let url = URL(string: issuer), let host = url.host?.lowercased() else { return "its issuer '\(issuer)' is not a URL" }
        let tenant = tenantID.lowercased()
        let hostAndPort = Authority.hostAndPort(of: url)
        if !config.isKnown(hostAndPort) && host != "\(tenant).ciamlogin.com" {
            return "it was issued by \(hostAndPort), which is not among the configuration's knownAuthorities"
        }
        if let guid = url.pathComponents.first(where: { UUID(uuidString: $0) != nil })?.lowercased() {
            if guid != tenant { return "it was issued by the tenant \(guid), not \(tenant)" }
            if let configured = config.tenantID, configured != guid {
                return "it was issued by the tenant \(guid), not the configured \(configured)"
            }
        }
        return nil
    }
}
