import Foundation

/// A `policies.json` made from a few answers (`b2c init`): the tenant, its host, the app, its policies and an API. The
/// result is parsed back as a configuration before it is written, so `init` never writes a file the client refuses.
public struct ConfigurationDraft: Sendable {
    /// The tenant's name (`contoso.onmicrosoft.com`) or GUID; required.
    public var tenant: String = ""
    /// The tenant's GUID besides its name, when known.
    public var tenantID: String?
    /// The authority host (`https://contoso.b2clogin.com`, a custom domain, the emulator); default from the tenant name.
    public var host: String?
    /// The app's application (client) id; must be a GUID.
    public var clientID: String = ""
    /// The policies and their roles (`NAME=ROLE`); none for an External ID tenant.
    public var policies: [(name: String, role: PolicyRole)] = []
    /// An Entra External ID tenant (`ciamlogin.com`, no policies) rather than B2C.
    public var externalId = false
    /// The API's short name, when the app calls one; then `apiURL` and `scopes` are required.
    public var apiName: String?
    /// The API's base URL.
    public var apiURL: String?
    /// The API's scopes, as full scope URIs.
    public var scopes: [String] = []
    /// The app is confidential: its secret goes with code and refresh redemptions.
    public var confidential = false
    /// How a confidential app sends its secret; written only when `confidential`.
    public var clientAuthMethod: ClientAuthentication.Method = .post
    /// A file (0600) holding the client secret; never the secret itself.
    public var clientSecretFile: String?
    /// An extra trusted CA (PEM) file.
    public var caFile: String?

    /// An empty draft: set the answers, then call `json()`.
    public init() {}

    /// `NAME=ROLE`, e.g. `B2C_1_susi=signUpSignIn`.
    public static func policy(_ text: String) throws -> (name: String, role: PolicyRole) {
        let parts = text.split(separator: "=", maxSplits: 1).map(String.init)
        guard parts.count == 2, PolicyID.isValid(parts[0]) else {
            throw B2CError(.usage, "the policy '\(text)' is not NAME=ROLE (such as B2C_1_susi=signUpSignIn)", remedy: .giveValue(.policy))
        }
        guard let role = PolicyRole(name: parts[1]) else {
            throw B2CError(
                .usage,
                "the policy '\(text)': the role '\(parts[1])' is not one of \(PolicyRole.allCases.map(\.rawValue).joined(separator: ", "))",
                remedy: .giveValue(.policy))
        }
        return (parts[0], role)
    }

    /// The authority host: as given (a bare host name gets https), else `<first label>.b2clogin.com` (B2C) or
    /// `<first label>.ciamlogin.com` (External ID).
    public func authorityHost() throws -> URL {
        if let host {
            let text = host.contains("://") ? host : "https://\(host)"
            guard let url = URL(string: text.hasSuffix("/") ? String(text.dropLast()) : text), url.host != nil else {
                throw B2CError(
                    .usage, "the host '\(host)' is not a host name or base URL such as https://contoso.b2clogin.com",
                    remedy: .giveValue(.host))
            }
            return url
        }
        guard UUID(uuidString: tenant) == nil, let label = tenant.split(separator: ".").first, !label.isEmpty else {
            throw B2CError(.usage, "the tenant '\(tenant)' gives no host name: give the authority host", remedy: .giveValue(.host))
        }
        return URL(string: "https://\(label.lowercased()).\(externalId ? "ciamlogin.com" : "b2clogin.com")")!
    }

    /// The configuration as JSON, checked by the client's own parser.
    public func json() throws -> JSONValue {
        guard !tenant.isEmpty else { throw B2CError(.usage, "the tenant is missing", remedy: .giveValue(.tenant)) }
        guard UUID(uuidString: clientID) != nil else {
            throw B2CError(
                .usage, "the client id must be the application (client) id, a GUID; found '\(clientID)'", remedy: .giveValue(.clientID))
        }
        if externalId && !policies.isEmpty {
            throw B2CError(
                .usage, "an External ID tenant has no policies in its URLs (its user flow is attached to the app)",
                remedy: .leaveOutPolicy(policies.map(\.name).joined(separator: ", ")))
        }
        // A daemon's configuration (client credentials only) signs no one in: it needs no sign-in policy.
        if !externalId && !policies.contains(where: { [.signUpSignIn, .signIn, .clientCredentials].contains($0.role) }) {
            throw B2CError(
                .usage, "no sign-in policy: name one of role signUpSignIn or signIn (or, for a daemon app, clientCredentials)",
                remedy: .giveValue(.policy))
        }
        let host = try authorityHost()
        var tenantObject: [String: JSONValue] = [:]
        if UUID(uuidString: tenant) != nil {
            tenantObject["id"] = .string(tenant.lowercased())
        } else {
            tenantObject["name"] = .string(tenant)
        }
        if let tenantID { tenantObject["id"] = .string(tenantID.lowercased()) }
        var o: [String: JSONValue] = [
            "tenant": .object(tenantObject), "authorityHost": .string(host.absoluteString), "clientId": .string(clientID.lowercased()),
            "knownAuthorities": [.string(Authority.hostAndPort(of: host))], "redirectUri": "http://localhost",
        ]
        if externalId {
            o["tenantType"] = "externalId"
        } else {
            o["policies"] = .array(policies.map { ["name": .string($0.name), "role": .string($0.role.rawValue)] })
        }
        if let apiName {
            guard let apiURL else {
                throw B2CError(.usage, "the API \(apiName) needs its base URL", remedy: .giveValue(.apiURL(api: apiName)))
            }
            guard !scopes.isEmpty else {
                throw B2CError(
                    .usage, "the API \(apiName) needs at least one scope (a full scope URI)", remedy: .giveValue(.apiScope(api: apiName)))
            }
            o["apis"] = [["name": .string(apiName), "baseUrl": .string(apiURL), "scopes": JSONValue(scopes)]]
        }
        if confidential {
            o["confidential"] = true
            o["clientAuthMethod"] = .string(clientAuthMethod.rawValue)
        }
        if let clientSecretFile { o["clientSecretFile"] = .string(clientSecretFile) }
        if let caFile { o["caFile"] = .string(caFile) }
        let json = JSONValue.object(o)
        do { _ = try ClientConfiguration.parse(Data(json.serialized().utf8), source: "the answers") } catch let e as JSONPathError {
            throw B2CError(.usage, "the answers do not make a valid configuration: \(e.path) \(e.message)")
        }
        return json
    }
}
