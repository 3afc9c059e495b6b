import Foundation

/// One app registration in one tenant, read from `policies.json` (README "Configuration").
public struct ClientConfiguration: Sendable, Equatable {
    public typealias Role = PolicyRole

    public enum AuthorityForm: String, Sendable, CaseIterable {
        /// `https://host/tenant/policy`
        case path
        /// `https://host/tfp/tenant/policy`
        case tfp
        /// `https://host/tenant/...?p=policy`
        case query
    }

    public struct Policy: Sendable, Equatable {
        public var name: String
        public var role: Role
    }

    public struct API: Sendable, Equatable {
        public var name: String
        public var baseURL: URL
        public var scopes: [String]
    }

    public struct NativeAuth: Sendable, Equatable {
        public var name: String
        public var authority: URL
        public var challengeTypes: [String]
    }

    public var tenantName: String?
    public var tenantID: String?
    public var authorityHost: URL
    public var authorityForm: AuthorityForm
    public var clientID: String
    public var redirectURI: URL
    public var knownAuthorities: [String]
    public var policies: [Policy]
    public var apis: [API]
    public var nativeAuth: NativeAuth?
    public var caFile: String?
    public var sharedDevice: Bool
    /// Where the file was read from.
    public var source: String

    /// The tenant segment used in authority URLs: the name when given, else the GUID.
    public var tenantSegment: String { tenantName ?? tenantID ?? "" }

    public func policy(named name: String) -> Policy? {
        policies.first { $0.name.caseInsensitiveCompare(name) == .orderedSame }
    }

    public func policies(role: Role) -> [Policy] { policies.filter { $0.role == role } }

    public func api(named name: String) -> API? { apis.first { $0.name == name } }

    // MARK: loading

    /// The file to read: `--config`, then `$B2C_CONFIG`, then `./policies.json`, then `$XDG_CONFIG_HOME/b2c/policies.json`.
    public static func locate(
        explicit: String?, environment: [String: String] = ProcessInfo.processInfo.environment,
        currentDirectory: String = FileManager.default.currentDirectoryPath
    ) -> (path: String?, searched: [String]) {
        if let explicit { return (explicit, [explicit]) }
        var searched: [String] = []
        if let env = environment["B2C_CONFIG"], !env.isEmpty { return (env, [env]) }
        let local = URL(fileURLWithPath: currentDirectory).appendingPathComponent("policies.json").path
        searched.append(local)
        if FileManager.default.fileExists(atPath: local) { return (local, searched) }
        let xdg =
            environment["XDG_CONFIG_HOME"].flatMap { $0.isEmpty ? nil : $0 }
            ?? ((environment["HOME"] ?? NSHomeDirectory()) + "/.config")
        let user = xdg + "/b2c/policies.json"
        searched.append(user)
        if FileManager.default.fileExists(atPath: user) { return (user, searched) }
        return (nil, searched)
    }

    public static func load(path: String) throws -> ClientConfiguration {
        let data: Data
        do { data = try Data(contentsOf: URL(fileURLWithPath: path)) } catch {
            throw ConfigurationError(path: path, message: "cannot be read (\(error.localizedDescription))")
        }
        do { return try parse(data, source: path) } catch let e as JSONPathError {
            throw ConfigurationError(path: path, message: "\(e.path) \(e.message)")
        }
    }

    public static func parse(_ data: Data, source: String = "policies.json") throws -> ClientConfiguration {
        let root = try JSONObjectReader(JSONValue.parse(data))
        try root.rejectUnknownKeys(allowed: [
            "$schema", "description", "tenant", "authorityHost", "authorityForm", "clientId", "redirectUri",
            "knownAuthorities", "policies", "apis", "nativeAuth", "caFile", "deviceMode",
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
        var config = ClientConfiguration(
            tenantName: tenantName, tenantID: tenantID?.lowercased(), authorityHost: try authorityHost(root), authorityForm: form,
            clientID: clientID.lowercased(), redirectURI: redirect, knownAuthorities: known, policies: try policies(root),
            apis: try apis(root), nativeAuth: try nativeAuth(root), caFile: try root.optionalString("caFile"),
            sharedDevice: deviceMode == "shared", source: source)
        if let ca = config.caFile, !ca.hasPrefix("/") {
            config.caFile = URL(fileURLWithPath: source).deletingLastPathComponent().appendingPathComponent(ca).path
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

    private static func authorityHost(_ root: JSONObjectReader) throws -> URL {
        let text = try root.string("authorityHost")
        guard let host = URL(string: text), host.host != nil, host.path.isEmpty || host.path == "/", host.query == nil else {
            throw JSONPathError(
                path: "$.authorityHost", message: "must be a base URL such as https://contoso.b2clogin.com, found '\(text)'")
        }
        guard Loopback.isSecure(host) else {
            throw JSONPathError(
                path: "$.authorityHost", message: "must use https (plain http is allowed only for loopback hosts), found '\(text)'")
        }
        return host
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

    private static func policies(_ root: JSONObjectReader) throws -> [Policy] {
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

    private static func nativeAuth(_ root: JSONObjectReader) throws -> NativeAuth? {
        guard let n = try root.object("nativeAuth") else { return nil }
        try n.rejectUnknownKeys(allowed: ["name", "authority", "challengeTypes"])
        let url = try secureURL(n, "authority", example: "https://contoso.ciamlogin.com/contoso.onmicrosoft.com")
        let types = try n.stringArray("challengeTypes")
        for (i, t) in types.enumerated() where !["oob", "password"].contains(t) {
            throw JSONPathError(path: "\(n.childPath("challengeTypes"))[\(i)]", message: "is '\(t)'; expected oob or password")
        }
        return NativeAuth(
            name: try n.optionalString("name") ?? "native", authority: url, challengeTypes: types.isEmpty ? ["oob", "password"] : types)
    }

    /// Every authority we will build must be trusted before any network call.
    private func checkAuthoritiesAreKnown() throws {
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

    public func authority(for policy: Policy) -> Authority {
        Authority(
            scheme: authorityHost.scheme?.lowercased() ?? "https", host: authorityHost.host ?? "", port: authorityHost.port,
            tenant: tenantSegment, policy: policy.name, form: authorityForm)
    }
}

/// A configuration problem: the file and what is wrong, with its JSON path.
public struct ConfigurationError: Error, CustomStringConvertible, Equatable {
    public var path: String
    public var message: String
    public init(path: String, message: String) { self.path = path; self.message = message }
    public var description: String { "the configuration '\(path)' is invalid: \(message)" }
}
