import B2CFastPath
import Foundation

/// One app registration in one tenant, read from `policies.json` (docs/configuration.md).
public struct ClientConfiguration: Sendable, Equatable {
    /// What a policy is for (`signUpSignIn`, `editProfile`, …), as `policies[].role` names it.
    public typealias Role = PolicyRole

    /// How a policy appears in authority URLs (`authorityForm`; `path` by default).
    public enum AuthorityForm: String, Sendable, CaseIterable {
        /// `https://host/tenant/policy`
        case path
        /// `https://host/tfp/tenant/policy`
        case tfp
        /// `https://host/tenant/...?p=policy`
        case query
    }

    /// A configured policy (user flow or custom policy) and what it is for.
    public struct Policy: Sendable, Equatable {
        /// The policy id as configured (`B2C_1_susi`); compared case-insensitively.
        public var name: String
        /// What the policy is for: commands that name no policy take the first one of the role they need.
        public var role: Role
    }

    /// A protected web API the app calls (`apis[]`): its tokens go only to URLs below `baseURL`.
    public struct API: Sendable, Equatable {
        /// The short name commands use (`--api NAME`).
        public var name: String
        /// The URL the API's tokens may be sent to, with every path below it.
        public var baseURL: URL
        /// The scopes a token for this API is requested with, as full scope URIs.
        public var scopes: [String]
    }

    /// A B2C tenant (policies in every URL) or an Entra External ID tenant (`*.ciamlogin.com`, no policy in its URLs).
    public enum TenantType: String, Sendable, CaseIterable {
        case b2c
        case externalId
    }

    /// External ID native authentication (`nativeAuth`): sign-in without a browser, at its own authority.
    public struct NativeAuth: Sendable, Equatable {
        /// The name its accounts are kept under: as configured, else `native` (`ExternalID` in an External ID tenant).
        public var name: String
        /// The native-auth authority, `https://<host>/<tenant>`.
        public var authority: URL
        /// The challenge types the client offers (`oob`, `password`); both when the configuration names none.
        public var challengeTypes: [String]
    }

    /// Microsoft Graph as the app calls it (`b2c users`, `b2c policy`): its base URL and the authority whose token endpoint
    /// issues its app-only tokens. A real tenant's are Microsoft's (`https://graph.microsoft.com`,
    /// `https://login.microsoftonline.com/<tenant>`); the local tenant's `--config-out` names its own.
    public struct Graph: Sendable, Equatable {
        public var baseURL: URL
        public var authority: URL
        /// Whether the configuration named them (then their hosts must be known authorities when Graph is called: its token
        /// and the app's secret go there) or they are Microsoft's.
        public var configured: Bool
    }

    /// The tenant's name (`contoso.onmicrosoft.com`), when given; authority URLs use it before the GUID.
    public var tenantName: String?
    /// The tenant's GUID, lower-cased, when given.
    public var tenantID: String?
    /// The base URL people sign in at (`https://contoso.b2clogin.com`, a custom domain, the emulator).
    public var authorityHost: URL
    /// How policies appear in the authority URLs built on `authorityHost`.
    public var authorityForm: AuthorityForm
    /// The app registration's application (client) id: a GUID, lower-cased.
    public var clientID: String
    /// The loopback redirect URI of browser sign-ins (`http://localhost` by default); the listener puts its port in it.
    public var redirectURI: URL
    /// The `host[:port]` values (lower-cased) b2c may talk to: every authority, and every endpoint their discovery
    /// documents name, must be on one of them.
    public var knownAuthorities: [String]
    /// The configured policies, in file order; none for an External ID tenant.
    public var policies: [Policy]
    /// The configured APIs; the first one's scopes are requested when a command names none.
    public var apis: [API]
    /// Native authentication, when configured.
    public var nativeAuth: NativeAuth?
    /// An extra trusted CA (PEM) as an absolute path (a relative one is resolved against the file's directory);
    /// trusted for the configuration's own hosts only.
    public var caFile: String?
    /// `deviceMode: shared`: a sign-out forgets every account and app token of the store, and the browser session
    /// must end too.
    public var sharedDevice: Bool
    /// B2C or External ID: `tenantType` when given, else External ID for a `ciamlogin.com` authority host.
    public var tenantType: TenantType = .b2c
    /// The app is confidential (a web app): code and refresh redemptions send its secret.
    public var confidential = false
    /// How a confidential app sends its secret to the token endpoint (`client_secret_post` by default).
    public var clientAuthMethod: ClientAuthentication.Method = .post
    /// A file (0600) holding the client secret, for `--app` and confidential apps; never the secret itself.
    public var clientSecretFile: String?
    /// `graph`: where Microsoft Graph is; nil: Microsoft's (`graphSettings` gives them).
    public var graph: Graph?
    /// Where the file was read from.
    public var source: String
    /// SHA-256 (hex) of the bytes the configuration was read from, when it was loaded from a file: what `b2c token`'s fast
    /// path checks the file against.
    public var sourceDigest: String?

    /// The name an External ID tenant's accounts are kept under: its browser and native sign-ins alike.
    public static let externalIdName = "ExternalID"

    /// The tenant segment used in authority URLs: the name when given, else the GUID.
    public var tenantSegment: String { tenantName ?? tenantID ?? "" }

    /// Microsoft Graph for this tenant: the configuration's `graph`, else Microsoft's.
    public var graphSettings: Graph {
        graph
            ?? Graph(
                baseURL: URL(string: "https://graph.microsoft.com")!,
                authority: URL(string: "https://login.microsoftonline.com/\(tenantID ?? tenantSegment)")!, configured: false)
    }

    /// The configured policy of that name, compared case-insensitively; nil when there is none.
    public func policy(named name: String) -> Policy? {
        policies.first { $0.name.caseInsensitiveCompare(name) == .orderedSame }
    }

    /// The configured policies of one role, in file order.
    public func policies(role: Role) -> [Policy] { policies.filter { $0.role == role } }

    /// The password-reset policy for "forgot password" (AADB2C90118) at `policyName`: a reset policy of the same kind
    /// (a custom policy's `B2C_1A_…` sign-in goes on to a custom reset policy, a user flow's to a user flow), else the
    /// first one configured.
    func resetPolicy(after policyName: String) -> Policy? {
        let resets = policies(role: .resetPassword)
        let custom = { (name: String) in name.uppercased().hasPrefix("B2C_1A_") }
        return resets.first { custom($0.name) == custom(policyName) } ?? resets.first
    }

    /// A configured API by name; for an External ID tenant, `graph` is also built in: Microsoft Graph with `User.Read`
    /// (a configured API of that name wins: the local tenant's `--config-out` names its own Graph).
    public func api(named name: String) -> API? {
        if let configured = apis.first(where: { $0.name == name }) { return configured }
        guard name == "graph", tenantType == .externalId else { return nil }
        return API(name: "graph", baseURL: URL(string: "https://graph.microsoft.com/v1.0")!, scopes: ["User.Read"])
    }

    // MARK: loading

    /// The file to read: `--config`, then `--profile`, then `$B2C_CONFIG`, then `$B2C_PROFILE`, then `./policies.json`, then
    /// `$XDG_CONFIG_HOME/b2c/policies.json`. A profile that does not exist is an error that lists those that do.
    public static func locate(
        explicit: String?, profile: String? = nil, environment: [String: String] = ProcessEnvironment.current(),
        currentDirectory: String = FileManager.default.currentDirectoryPath
    ) throws -> (path: String?, searched: [String], implicit: Bool) {
        if let explicit { return (explicit, [explicit], false) }
        if let profile { return (try Profiles.existing(profile, environment: environment), [], false) }
        var searched: [String] = []
        if let env = environment["B2C_CONFIG"], !env.isEmpty { return (env, [env], false) }
        if let env = environment["B2C_PROFILE"], !env.isEmpty { return (try Profiles.existing(env, environment: environment), [], false) }
        let local = URL(fileURLWithPath: currentDirectory).appendingPathComponent(StoreRules.configurationFileName).path
        searched.append(local)
        // Found, not named: used only once allowed (ConfigurationTrust).
        if FileManager.default.fileExists(atPath: local) { return (local, searched, true) }
        let xdg =
            environment["XDG_CONFIG_HOME"].flatMap { $0.isEmpty ? nil : $0 }
            ?? ((environment["HOME"] ?? NSHomeDirectory()) + "/.config")
        let user = xdg + "/b2c/" + StoreRules.configurationFileName
        searched.append(user)
        if FileManager.default.fileExists(atPath: user) { return (user, searched, false) }
        return (nil, searched, false)
    }

    /// Reads and parses the file at `path`; a file that is missing, a directory or unreadable, or that is invalid, is a
    /// `configuration` error naming it.
    public static func load(path: String) throws -> ClientConfiguration {
        let data: Data
        do { data = try LocalFile.read(path) } catch { throw B2CError.unreadableConfiguration(error) }
        return try load(data, path: path)
    }

    /// The file's bytes, already read, parsed; errors name the file.
    public static func load(_ data: Data, path: String) throws -> ClientConfiguration {
        do {
            var config = try parse(data, source: path)
            config.sourceDigest = TokenAnswer.digest([UInt8](data))
            return config
        } catch let e as JSONPathError {
            throw B2CError.invalidConfiguration(path, "\(e.path) \(e.message)")
        }
    }

    /// Parses and checks a configuration's JSON; what is wrong throws `JSONPathError` with the JSON path. `source` is the
    /// file's path: a relative `caFile` or `clientSecretFile` is resolved against its directory.
    public static func parse(_ data: Data, source: String = "policies.json") throws -> ClientConfiguration {
        let root = try JSONObjectReader(JSONValue.parse(data))
        try root.rejectUnknownKeys(allowed: [
            "$schema", "description", "tenant", "tenantType", "authorityHost", "authorityForm", "clientId", "redirectUri",
            "knownAuthorities", "policies", "apis", "nativeAuth", "caFile", "deviceMode", "confidential", "clientAuthMethod",
            "clientSecretFile", "graph",
        ])
        let (tenantName, tenantID) = try tenant(root)
        let formName = try root.optionalString("authorityForm") ?? "path"
        guard let form = AuthorityForm(rawValue: formName) else {
            throw JSONPathError(path: "$.authorityForm", message: "is '\(formName)'; expected path, tfp or query")
        }
        let clientID = try root.string("clientId")
        guard UUID(uuidString: clientID) != nil else {
            throw JSONPathError(path: "$.clientId", message: "must be the application (client) id, a GUID; found '\(clientID)'")
        }
        let redirectText = try root.optionalString("redirectUri") ?? "http://localhost"
        guard let redirect = URL(string: redirectText), redirect.scheme == "http", Loopback.isHost(redirect.host ?? "") else {
            throw JSONPathError(
                path: "$.redirectUri",
                message: "must be a loopback http URI such as http://localhost (any port is used), found '\(redirectText)'")
        }
        let known = try root.stringArray("knownAuthorities", required: true).map { $0.lowercased() }
        if known.isEmpty { throw JSONPathError(path: "$.knownAuthorities", message: "must name at least the authority host") }
        let deviceMode = try root.optionalString("deviceMode") ?? "personal"
        guard ["personal", "shared"].contains(deviceMode) else {
            throw JSONPathError(path: "$.deviceMode", message: "is '\(deviceMode)'; expected personal or shared")
        }
        let host = try authorityHost(root)
        let type = try tenantType(root, host: host)
        var config = ClientConfiguration(
            tenantName: tenantName, tenantID: tenantID?.lowercased(), authorityHost: host, authorityForm: form,
            clientID: clientID.lowercased(), redirectURI: redirect, knownAuthorities: known, policies: try policies(root, tenantType: type),
            apis: try apis(root), nativeAuth: try nativeAuth(root, tenantType: type), caFile: try root.optionalString("caFile"),
            sharedDevice: deviceMode == "shared", source: source)
        config.tenantType = type
        config.confidential = try root.bool("confidential", default: false)
        let method = try root.optionalString("clientAuthMethod") ?? ClientAuthentication.Method.post.rawValue
        guard let authMethod = ClientAuthentication.Method(rawValue: method) else {
            throw JSONPathError(path: "$.clientAuthMethod", message: "is '\(method)'; expected client_secret_post or client_secret_basic")
        }
        config.clientAuthMethod = authMethod
        if let g = try root.object("graph") {
            try g.rejectUnknownKeys(allowed: ["baseUrl", "authority"])
            config.graph = Graph(
                baseURL: try secureURL(g, "baseUrl", example: "https://graph.microsoft.com"),
                authority: try secureURL(g, "authority", example: "https://login.microsoftonline.com/contoso.onmicrosoft.com"),
                configured: true)
        }
        let directory = URL(fileURLWithPath: source).deletingLastPathComponent()
        if let ca = config.caFile, !ca.hasPrefix("/") { config.caFile = directory.appendingPathComponent(ca).path }
        if let file = try root.optionalString("clientSecretFile") {
            guard !file.isEmpty else { throw JSONPathError(path: "$.clientSecretFile", message: "must name a file") }
            config.clientSecretFile = file.hasPrefix("/") ? file : directory.appendingPathComponent(file).path
        }
        try config.checkAuthoritiesAreKnown()
        return config
    }

    private static func tenant(_ root: JSONObjectReader) throws -> (name: String?, id: String?) {
        guard let tenant = try root.object("tenant") else {
            throw JSONPathError(path: "$.tenant", message: "is required (an object with name and/or id)")
        }
        try tenant.rejectUnknownKeys(allowed: ["name", "id"])
        let name = try tenant.optionalString("name")
        let id = try tenant.optionalString("id")
        if name == nil && id == nil {
            throw JSONPathError(path: "$.tenant", message: "needs a name (contoso.onmicrosoft.com) or an id (GUID)")
        }
        if let id, UUID(uuidString: id) == nil { throw JSONPathError(path: "$.tenant.id", message: "must be a GUID, found '\(id)'") }
        return (name, id)
    }

    /// `tenantType`, or External ID when the authority host is a `ciamlogin.com` host.
    private static func tenantType(_ root: JSONObjectReader, host: URL) throws -> TenantType {
        if let name = try root.optionalString("tenantType") {
            guard let type = TenantType(rawValue: name) else {
                throw JSONPathError(path: "$.tenantType", message: "is '\(name)'; expected b2c or externalId")
            }
            return type
        }
        return (host.host ?? "").lowercased().hasSuffix(".ciamlogin.com") ? .externalId : .b2c
    }

    private static func authorityHost(_ root: JSONObjectReader) throws -> URL {
        let text = try root.string("authorityHost")
        // The host as the URL decodes it: a name or an address, nothing that a percent escape made (every authority URL
        // is built from it).
        guard let host = URL(string: text), let name = host.host, !name.isEmpty, host.path.isEmpty || host.path == "/",
            host.query == nil, name.unicodeScalars.allSatisfy(Self.isHostCharacter)
        else {
            throw JSONPathError(
                path: "$.authorityHost", message: "must be a base URL such as https://contoso.b2clogin.com, found '\(text)'")
        }
        guard Loopback.isSecure(host) else {
            throw JSONPathError(
                path: "$.authorityHost", message: "must use https (plain http is allowed only for loopback hosts), found '\(text)'")
        }
        return host
    }

    /// A letter or digit of ASCII, or one of the other characters of a host name or an IP address.
    private static func isHostCharacter(_ c: Unicode.Scalar) -> Bool {
        c.isASCII && (CharacterSet.alphanumerics.contains(c) || "-._:[]".unicodeScalars.contains(c))
    }

    /// An https URL (http only on a loopback host) at `key`.
    private static func secureURL(_ reader: JSONObjectReader, _ key: String, example: String) throws -> URL {
        let text = try reader.string(key)
        guard let url = URL(string: text), url.host != nil, Loopback.isSecure(url) else {
            throw JSONPathError(
                path: reader.childPath(key), message: "must be an https URL (http only for loopback) such as \(example), found '\(text)'")
        }
        return url
    }

    private static func policies(_ root: JSONObjectReader, tenantType: TenantType) throws -> [Policy] {
        if tenantType == .externalId {
            guard (try root.objects("policies")).isEmpty else {
                throw JSONPathError(
                    path: "$.policies",
                    message: "must be left out for an External ID tenant: its user flows are attached to the app, and no policy appears in "
                        + "its URLs")
            }
            return []
        }
        var policies: [Policy] = []
        for p in try root.objects("policies", required: true) {
            try p.rejectUnknownKeys(allowed: ["name", "role"])
            let name = try p.string("name")
            guard PolicyID.isValid(name) else {
                throw JSONPathError(path: p.childPath("name"), message: "is not a policy id (letters, digits, _ . -): '\(name)'")
            }
            let roleName = try p.string("role")
            guard let role = Role(name: roleName) else {
                throw JSONPathError(
                    path: p.childPath("role"),
                    message: "is '\(roleName)'; expected one of \(Role.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            if policies.contains(where: { $0.name.caseInsensitiveCompare(name) == .orderedSame }) {
                throw JSONPathError(path: p.childPath("name"), message: "repeats policy '\(name)'")
            }
            policies.append(Policy(name: name, role: role))
        }
        if policies.isEmpty { throw JSONPathError(path: "$.policies", message: "must list at least one policy") }
        return policies
    }

    private static func apis(_ root: JSONObjectReader) throws -> [API] {
        try root.objects("apis").map { a in
            try a.rejectUnknownKeys(allowed: ["name", "baseUrl", "scopes"])
            let url = try secureURL(a, "baseUrl", example: "https://api.contoso.com")
            let scopes = try a.stringArray("scopes", required: true)
            if scopes.isEmpty { throw JSONPathError(path: a.childPath("scopes"), message: "must name at least one scope") }
            return API(name: try a.string("name"), baseURL: url, scopes: scopes)
        }
    }

    private static func nativeAuth(_ root: JSONObjectReader, tenantType: TenantType) throws -> NativeAuth? {
        guard let n = try root.object("nativeAuth") else { return nil }
        try n.rejectUnknownKeys(allowed: ["name", "authority", "challengeTypes"])
        let url = try secureURL(n, "authority", example: "https://contoso.ciamlogin.com/contoso.onmicrosoft.com")
        let types = try n.stringArray("challengeTypes")
        for (i, t) in types.enumerated() where !["oob", "password"].contains(t) {
            throw JSONPathError(path: "\(n.childPath("challengeTypes"))[\(i)]", message: "is '\(t)'; expected oob or password")
        }
        // In an External ID tenant the native sign-in and the browser sign-in are one account, kept under one name.
        let name = try n.optionalString("name") ?? (tenantType == .externalId ? externalIdName : "native")
        return NativeAuth(name: name, authority: url, challengeTypes: types.isEmpty ? ["oob", "password"] : types)
    }

    /// Every authority we will build must be trusted before any network call.
    private func checkAuthoritiesAreKnown() throws {
        if let external = externalIdAuthority, !isKnown(external.hostAndPort) {
            throw JSONPathError(
                path: "$.authorityHost", message: "host '\(external.hostAndPort)' is not in $.knownAuthorities \(knownAuthorities)")
        }
        for (i, p) in policies.enumerated() {
            let authority = authority(for: p)
            guard isKnown(authority.hostAndPort) else {
                throw JSONPathError(
                    path: "$.policies[\(i)]",
                    message:
                        "resolves to \(authority.url.absoluteString), whose host '\(authority.hostAndPort)' is not in $.knownAuthorities "
                        + "\(knownAuthorities)")
            }
        }
        if let native = nativeAuth, !isKnown(Authority.hostAndPort(of: native.authority)) {
            throw JSONPathError(
                path: "$.nativeAuth.authority",
                message: "host '\(Authority.hostAndPort(of: native.authority))' is not in $.knownAuthorities \(knownAuthorities)")
        }
    }

    /// Whether `hostAndPort` (`host[:port]`) is one of `knownAuthorities`, ignoring case.
    public func isKnown(_ hostAndPort: String) -> Bool {
        knownAuthorities.contains(hostAndPort.lowercased())
    }

    /// The native-auth (External ID) authority; its accounts are stored under the configuration's name.
    public var nativeAuthority: Authority? {
        guard let n = nativeAuth else { return nil }
        let tenant = n.authority.pathComponents.first { $0 != "/" } ?? tenantSegment
        return Authority(
            scheme: n.authority.scheme?.lowercased() ?? "https", host: n.authority.host ?? "", port: n.authority.port,
            tenant: tenant, policy: n.name, form: .path, native: true)
    }

    /// An External ID tenant's browser authority, `https://<host>/<tenant>` (discovery at `/<tenant>/v2.0/…`); nil for B2C.
    public var externalIdAuthority: Authority? {
        guard tenantType == .externalId else { return nil }
        return Authority(
            scheme: authorityHost.scheme?.lowercased() ?? "https", host: authorityHost.host ?? "", port: authorityHost.port,
            tenant: tenantSegment, policy: Self.externalIdName, form: .path, native: true)
    }

    /// The authority a configured policy signs in at: `authorityHost`, the tenant segment and the policy, in
    /// `authorityForm`.
    public func authority(for policy: Policy) -> Authority {
        Authority(
            scheme: authorityHost.scheme?.lowercased() ?? "https", host: authorityHost.host ?? "", port: authorityHost.port,
            tenant: tenantSegment, policy: policy.name, form: authorityForm)
    }
}
