import B2CProtocol
import Foundation

/// Everything that configures a tenant: the tenant itself, its user flows (policies), app registrations,
/// web APIs and the users it starts with. Loaded from `--seed FILE` or the built-in default.
public struct EmulatorSeed: Sendable, Equatable {
    public struct Tenant: Sendable, Equatable {
        public var name: String  // contoso.onmicrosoft.com
        public var id: String  // tenant GUID
        /// Extra `host[:port]` names under which tokens this tenant issues are accepted by the sample API.
        public var hostAliases: [String]
    }

    /// What a policy does, in the client configuration's words (`signUpSignIn`, `resetPassword`, …; the first seeds'
    /// `signUpOrSignIn` and `passwordReset` are still read).
    public typealias PolicyKind = PolicyRole

    public struct Policy: Sendable, Equatable {
        public var id: String
        public var kind: PolicyKind
        /// `tfp` (default) or `acr`: the claim that names the policy in tokens.
        public var policyClaim: String
        /// `tenantGuid` (default, `https://host/<guid>/v2.0/`) or `tfp` (`https://host/tfp/<guid>/<policy>/v2.0/`).
        public var issuerPattern: String
        public var accessTokenLifetime: Int
        public var idTokenLifetime: Int
        public var refreshTokenLifetime: Int
        /// nil: no sliding-window limit ("No expiry").
        public var slidingWindow: Int?
        /// Legacy responses with numbers as strings (`"expires_in": "3600"`).
        public var numbersAsStrings: Bool

        public var lowercasedID: String { id.lowercased() }
    }

    public struct App: Sendable, Equatable {
        public var clientId: String
        public var name: String
        public var redirectUris: [String]
        public var allowImplicitFlow: Bool
        public var nativeAuth: Bool
        /// Full scope URIs of APIs this app may request (admin-consented, as B2C requires).
        public var apiPermissions: [String]
    }

    public struct API: Sendable, Equatable {
        public var name: String
        public var appId: String
        public var identifierUri: String
        public var scopes: [String]
        public var requiredScope: String?

        public func fullScope(_ short: String) -> String { "\(identifierUri)/\(short)" }
    }

    public struct User: Sendable, Equatable {
        public var oid: String
        public var email: String
        public var password: String
        public var displayName: String
        public var givenName: String
        public var surname: String
    }

    public var tenant: Tenant
    public var policies: [Policy]
    public var apps: [App]
    public var apis: [API]
    public var users: [User]

    public func policy(named name: String) -> Policy? {
        policies.first { $0.id.caseInsensitiveCompare(name) == .orderedSame }
    }

    public func app(clientId: String) -> App? {
        apps.first { $0.clientId.caseInsensitiveCompare(clientId) == .orderedSame }
    }

    // MARK: the documented default tenant

    public static let defaultTenantID = "8f2c6d4e-1a3b-4c5d-9e7f-0a1b2c3d4e5f"
    public static let defaultClientID = "3f6b8c9d-2e1a-4b7c-8d9e-0f1a2b3c4d5e"
    public static let defaultHelloAppID = "5a7b9c1d-3e2f-4a6b-8c0d-1e2f3a4b5c6d"

    public static let `default`: EmulatorSeed = {
        func policy(_ id: String, _ kind: PolicyKind) -> Policy {
            Policy(
                id: id, kind: kind, policyClaim: "tfp", issuerPattern: "tenantGuid", accessTokenLifetime: 3600,
                idTokenLifetime: 3600, refreshTokenLifetime: 1_209_600, slidingWindow: 7_776_000, numbersAsStrings: false)
        }
        return EmulatorSeed(
            tenant: Tenant(name: "contoso.onmicrosoft.com", id: defaultTenantID, hostAliases: []),
            policies: [
                policy("B2C_1_susi", .signUpSignIn),
                policy("B2C_1_signin", .signIn),
                policy("B2C_1_edit_profile", .editProfile),
                policy("B2C_1_reset", .resetPassword),
                policy("B2C_1_ROPC_Auth", .ropc),
            ],
            apps: [
                App(
                    clientId: defaultClientID, name: "b2c-cli", redirectUris: ["http://localhost"], allowImplicitFlow: false,
                    nativeAuth: true,
                    apiPermissions: [
                        "https://contoso.onmicrosoft.com/helloapi/demo.read",
                        "https://contoso.onmicrosoft.com/helloapi/demo.write",
                    ])
            ],
            apis: [
                API(
                    name: "hello", appId: defaultHelloAppID, identifierUri: "https://contoso.onmicrosoft.com/helloapi",
                    scopes: ["demo.read", "demo.write"], requiredScope: "demo.read")
            ],
            users: [
                User(
                    oid: "0a11ce00-5eed-4a11-8000-00000000a11c", email: "alice@contoso.com", password: "Alice-dev-2026!",
                    displayName: "Alice Example", givenName: "Alice", surname: "Example"),
                User(
                    oid: "0b0b0000-5eed-4b0b-8000-000000000b0b", email: "bob@contoso.com", password: "Bob-dev-2026!",
                    displayName: "Bob Example", givenName: "Bob", surname: "Example"),
            ]
        )
    }()

    // MARK: JSON

    public var json: JSONValue {
        .object([
            "tenant": .object(["name": .string(tenant.name), "id": .string(tenant.id), "hostAliases": JSONValue(tenant.hostAliases)]),
            "policies": .array(
                policies.map { p in
                    var o: [String: JSONValue] = [
                        "id": .string(p.id), "kind": .string(p.kind.rawValue), "policyClaim": .string(p.policyClaim),
                        "issuerPattern": .string(p.issuerPattern), "accessTokenLifetime": JSONValue(p.accessTokenLifetime),
                        "idTokenLifetime": JSONValue(p.idTokenLifetime), "refreshTokenLifetime": JSONValue(p.refreshTokenLifetime),
                        "numbersAsStrings": .bool(p.numbersAsStrings),
                    ]
                    o["slidingWindow"] = p.slidingWindow.map { JSONValue($0) } ?? .null
                    return .object(o)
                }),
            "apps": .array(
                apps.map { a in
                    .object([
                        "clientId": .string(a.clientId), "name": .string(a.name), "redirectUris": JSONValue(a.redirectUris),
                        "allowImplicitFlow": .bool(a.allowImplicitFlow), "nativeAuth": .bool(a.nativeAuth),
                        "apiPermissions": JSONValue(a.apiPermissions),
                    ])
                }),
            "apis": .array(
                apis.map { api in
                    var o: [String: JSONValue] = [
                        "name": .string(api.name), "appId": .string(api.appId),
                        "identifierUri": .string(api.identifierUri), "scopes": JSONValue(api.scopes),
                    ]
                    if let r = api.requiredScope { o["requiredScope"] = .string(r) }
                    return .object(o)
                }),
            "users": .array(
                users.map { u in
                    .object([
                        "oid": .string(u.oid), "email": .string(u.email), "password": .string(u.password),
                        "displayName": .string(u.displayName), "givenName": .string(u.givenName), "surname": .string(u.surname),
                    ])
                }),
        ])
    }

    /// Parses a seed file. Every problem is a `JSONPathError` naming the JSON path.
    public static func parse(_ data: Data) throws -> EmulatorSeed {
        let root = try JSONObjectReader(JSONValue.parse(data))
        try root.rejectUnknownKeys(allowed: ["tenant", "policies", "apps", "apis", "users", "$schema", "description"])
        guard let t = try root.object("tenant") else { throw JSONPathError(path: "$.tenant", message: "is required (an object)") }
        try t.rejectUnknownKeys(allowed: ["name", "id", "hostAliases"])
        let tenant = Tenant(name: try t.string("name"), id: try guid(t, "id"), hostAliases: try t.stringArray("hostAliases"))
        guard tenant.name.contains("."), !tenant.name.contains("/") else {
            throw JSONPathError(path: t.childPath("name"), message: "must be a domain such as contoso.onmicrosoft.com")
        }
        let apis = try parseAPIs(root)
        return EmulatorSeed(
            tenant: tenant, policies: try parsePolicies(root), apps: try parseApps(root, apis: apis), apis: apis,
            users: try parseUsers(root))
    }

    private static func parsePolicies(_ root: JSONObjectReader) throws -> [Policy] {
        var policies: [Policy] = []
        for p in try root.objects("policies", required: true) {
            try p.rejectUnknownKeys(allowed: [
                "id", "kind", "policyClaim", "issuerPattern", "accessTokenLifetime", "idTokenLifetime",
                "refreshTokenLifetime", "slidingWindow", "numbersAsStrings",
            ])
            let id = try p.string("id")
            guard PolicyID.isValid(id), id.lowercased().hasPrefix("b2c_1") else {
                throw JSONPathError(
                    path: p.childPath("id"), message: "must be a policy id such as B2C_1_susi or B2C_1A_signin (letters, digits, _ . -)")
            }
            let kindName = try p.string("kind")
            guard let kind = PolicyKind(name: kindName) else {
                throw JSONPathError(
                    path: p.childPath("kind"),
                    message: "is '\(kindName)'; expected one of \(PolicyKind.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            let claim = try p.optionalString("policyClaim") ?? "tfp"
            guard ["tfp", "acr"].contains(claim) else {
                throw JSONPathError(path: p.childPath("policyClaim"), message: "must be \"tfp\" or \"acr\"")
            }
            let issuer = try p.optionalString("issuerPattern") ?? "tenantGuid"
            guard ["tenantGuid", "tfp"].contains(issuer) else {
                throw JSONPathError(path: p.childPath("issuerPattern"), message: "must be \"tenantGuid\" or \"tfp\"")
            }
            let rtLifetime = try p.int("refreshTokenLifetime", default: 1_209_600, range: 60...7_776_000)!
            let sliding = try p.int("slidingWindow", default: p.has("slidingWindow") ? nil : 7_776_000, range: 60...31_536_000)
            if let sliding, sliding < rtLifetime {
                throw JSONPathError(
                    path: p.childPath("slidingWindow"),
                    message: "must be at least refreshTokenLifetime (\(rtLifetime)); use null for no sliding-window limit")
            }
            if policies.contains(where: { $0.id.caseInsensitiveCompare(id) == .orderedSame }) {
                throw JSONPathError(path: p.childPath("id"), message: "repeats policy '\(id)' (policy ids are case-insensitive)")
            }
            policies.append(
                Policy(
                    id: id, kind: kind, policyClaim: claim, issuerPattern: issuer,
                    accessTokenLifetime: try p.int("accessTokenLifetime", default: 3600, range: 60...86_400)!,
                    idTokenLifetime: try p.int("idTokenLifetime", default: 3600, range: 60...86_400)!,
                    refreshTokenLifetime: rtLifetime, slidingWindow: sliding,
                    numbersAsStrings: try p.bool("numbersAsStrings", default: false)))
        }

        return policies
    }

    private static func parseAPIs(_ root: JSONObjectReader) throws -> [API] {
        var apis: [API] = []
        for a in try root.objects("apis") {
            try a.rejectUnknownKeys(allowed: ["name", "appId", "identifierUri", "scopes", "requiredScope"])
            let uri = try a.string("identifierUri")
            guard let u = URL(string: uri), u.scheme == "https", u.host != nil, !uri.hasSuffix("/") else {
                throw JSONPathError(
                    path: a.childPath("identifierUri"),
                    message: "must be an https URI without a trailing slash, such as https://contoso.onmicrosoft.com/helloapi")
            }
            let scopes = try a.stringArray("scopes", required: true)
            let required = try a.optionalString("requiredScope")
            if let required, !scopes.contains(required) {
                throw JSONPathError(path: a.childPath("requiredScope"), message: "is '\(required)', which is not one of scopes \(scopes)")
            }
            apis.append(
                API(name: try a.string("name"), appId: try guid(a, "appId"), identifierUri: uri, scopes: scopes, requiredScope: required))
        }
        return apis
    }

    private static func parseApps(_ root: JSONObjectReader, apis: [API]) throws -> [App] {
        let allScopes = Set(apis.flatMap { api in api.scopes.map(api.fullScope) })
        var apps: [App] = []
        for a in try root.objects("apps", required: true) {
            try a.rejectUnknownKeys(allowed: ["clientId", "name", "redirectUris", "allowImplicitFlow", "nativeAuth", "apiPermissions"])
            let redirects = try a.stringArray("redirectUris", required: true)
            for (i, r) in redirects.enumerated() where URL(string: r)?.scheme == nil {
                throw JSONPathError(path: "\(a.childPath("redirectUris"))[\(i)]", message: "is not an absolute URI")
            }
            let perms = try a.stringArray("apiPermissions")
            for (i, s) in perms.enumerated() where !allScopes.contains(s) {
                throw JSONPathError(path: "\(a.childPath("apiPermissions"))[\(i)]", message: "is '\(s)', which no API in $.apis defines")
            }
            apps.append(
                App(
                    clientId: try guid(a, "clientId"), name: try a.optionalString("name") ?? "app",
                    redirectUris: redirects, allowImplicitFlow: try a.bool("allowImplicitFlow", default: false),
                    nativeAuth: try a.bool("nativeAuth", default: false), apiPermissions: perms))
        }

        return apps
    }

    private static func parseUsers(_ root: JSONObjectReader) throws -> [User] {
        var users: [User] = []
        for u in try root.objects("users") {
            try u.rejectUnknownKeys(allowed: ["oid", "email", "password", "displayName", "givenName", "surname"])
            let email = try u.string("email")
            guard isPlausibleEmail(email) else { throw JSONPathError(path: u.childPath("email"), message: "is not an email address") }
            if users.contains(where: { $0.email.caseInsensitiveCompare(email) == .orderedSame }) {
                throw JSONPathError(path: u.childPath("email"), message: "repeats '\(email)'")
            }
            let given = try u.optionalString("givenName") ?? ""
            let surname = try u.optionalString("surname") ?? ""
            users.append(
                User(
                    oid: try u.optionalString("oid").map { _ in try guid(u, "oid") } ?? UUID().uuidString.lowercased(),
                    email: email, password: try u.string("password"),
                    displayName: try u.optionalString("displayName") ?? "\(given) \(surname)".trimmingCharacters(in: .whitespaces),
                    givenName: given, surname: surname))
        }
        return users
    }

    private static func guid(_ r: JSONObjectReader, _ key: String) throws -> String {
        let s = try r.string(key)
        guard UUID(uuidString: s) != nil else { throw JSONPathError(path: r.childPath(key), message: "must be a GUID, found '\(s)'") }
        return s.lowercased()
    }

    static func isPlausibleEmail(_ s: String) -> Bool {
        s.range(of: #"^[^@\s]+@[^@\s]+\.[^@\s]+$"#, options: .regularExpression) != nil && s.count <= 254
    }
}
