import B2CProtocol
import Foundation

/// The seed as JSON (`--seed FILE`, `b2c emulator default-seed`): every error names its JSON path; the first seeds'
/// shapes (redirect URIs as strings, `kind` names) still read.
extension EmulatorSeed {
    public var json: JSONValue {
        var root: [String: JSONValue] = [
            "tenant": .object(
                [
                    "name": .string(tenant.name), "id": .string(tenant.id), "hostAliases": JSONValue(tenant.hostAliases),
                    "appTokenPolicyClaim": .bool(tenant.appTokenPolicyClaim),
                    "tenantType": .string(tenant.externalId ? "externalId" : "b2c"),
                    "extensionsAppId": tenant.extensionsAppId.map { .string($0) } ?? .null,
                    "policyKeys": JSONValue(tenant.policyKeys),
                    "policyKeyValues": tenant.policyKeyValues.isEmpty ? .null : .object(tenant.policyKeyValues.mapValues { .string($0) }),
                    "customPolicyCAFile": tenant.customPolicyCAFile.map { .string($0) } ?? .null,
                ].filter { $0.value != .null }),
            "policies": .array(policies.map(\.json)),
            "authenticationExtensions": .array(authenticationExtensions.map(\.json)),
            "apps": .array(apps.map(\.json)),
            "apis": .array(apis.map(\.json)),
            "users": .array(
                users.map { u in
                    var o: [String: JSONValue] = [
                        "oid": .string(u.oid), "email": .string(u.email), "password": .string(u.password),
                        "displayName": .string(u.displayName), "givenName": .string(u.givenName), "surname": .string(u.surname),
                    ]
                    if let phone = u.phone { o["phone"] = .string(phone) }
                    if let secret = u.totpSecret { o["totpSecret"] = .string(secret) }
                    if u.phone != nil || u.totpSecret != nil || !u.mfaEnrolled { o["mfaEnrolled"] = .bool(u.mfaEnrolled) }
                    if u.mfaRequired { o["mfaRequired"] = .bool(true) }
                    return .object(o)
                }),
        ]
        if let twin { root["twin"] = ["apps": .array(twin.apps.map(\.json))] }
        return .object(root)
    }

    /// A seed file; `externalId` (`serve --external-id`) makes it an External ID tenant whatever its `tenantType` says,
    /// before anything that depends on the tenant's type is checked.
    public static func parse(_ data: Data, externalId: Bool = false) throws -> EmulatorSeed {
        let root = try JSONObjectReader(JSONValue.parse(data))
        try root.rejectUnknownKeys(allowed: [
            "tenant", "policies", "apps", "apis", "users", "authenticationExtensions", "twin", "$schema", "description",
        ])
        guard let t = try root.object("tenant") else { throw JSONPathError(path: "$.tenant", message: "is required (an object)") }
        try t.rejectUnknownKeys(allowed: [
            "name", "id", "hostAliases", "appTokenPolicyClaim", "tenantType", "extensionsAppId", "policyKeys", "policyKeyValues",
            "customPolicyCAFile",
        ])
        let customPolicyCAFile = try t.optionalString("customPolicyCAFile")
        var tenant = Tenant(
            name: try t.string("name"), id: try guid(t, "id"), hostAliases: try t.stringArray("hostAliases"),
            appTokenPolicyClaim: try t.bool("appTokenPolicyClaim", default: true))
        let type = try t.optionalString("tenantType") ?? "b2c"
        guard ["b2c", "externalId"].contains(type) else {
            throw JSONPathError(path: t.childPath("tenantType"), message: "is '\(type)'; expected b2c or externalId")
        }
        tenant.externalId = type == "externalId" || externalId
        tenant.customPolicyCAFile = customPolicyCAFile
        if t.has("extensionsAppId") { tenant.extensionsAppId = try guid(t, "extensionsAppId") }
        if t.has("policyKeys") {
            tenant.policyKeys = try t.stringArray("policyKeys")
            for (i, key) in tenant.policyKeys.enumerated() where !key.uppercased().hasPrefix("B2C_1A_") {
                throw JSONPathError(
                    path: t.childPath("policyKeys") + "[\(i)]", message: "is '\(key)'; a policy key's name starts with B2C_1A_")
            }
        }
        if let raw = t.raw("policyKeyValues"), let values = try t.object("policyKeyValues") {
            for key in (raw.objectValue ?? [:]).keys.sorted() {
                guard key.uppercased().hasPrefix("B2C_1A_") else {
                    throw JSONPathError(path: values.childPath(key), message: "is named '\(key)'; a policy key's name starts with B2C_1A_")
                }
                tenant.policyKeyValues[key] = try values.string(key)
            }
        }
        guard tenant.name.contains("."), !tenant.name.contains("/") else {
            throw JSONPathError(path: t.childPath("name"), message: "must be a domain such as contoso.onmicrosoft.com")
        }
        let apis = try root.objects("apis").map(API.parse)
        var policies: [Policy] = []
        for p in try root.objects("policies", required: true) {
            let policy = try Policy.parse(p)
            if policies.contains(where: { $0.id.caseInsensitiveCompare(policy.id) == .orderedSame }) {
                throw JSONPathError(path: p.childPath("id"), message: "repeats policy '\(policy.id)' (policy ids are case-insensitive)")
            }
            policies.append(policy)
        }
        var seed = EmulatorSeed(
            tenant: tenant, policies: policies, apps: try root.objects("apps", required: true).map { try App.parse($0, apis: apis) },
            apis: apis, users: try parseUsers(root))
        seed.authenticationExtensions = try root.objects("authenticationExtensions").map(AuthenticationExtension.parse)
        seed.twin = try parseTwin(root, seed: seed)
        if !seed.authenticationExtensions.isEmpty && !tenant.externalId && seed.twin == nil {
            throw JSONPathError(
                path: "$.authenticationExtensions",
                message: "are Entra External ID's (tenant.tenantType \"externalId\", or a twin's External ID side); a B2C user flow "
                    + "has apiConnectors instead")
        }
        if tenant.externalId && seed.externalIdFlow == nil {
            throw JSONPathError(
                path: "$.policies", message: "needs a userFlow of kind signUpSignIn in an External ID tenant: it is the app's user flow")
        }
        return seed
    }

    /// `twin`: the External ID side's app registrations, none of them one of the B2C side's.
    private static func parseTwin(_ root: JSONObjectReader, seed: EmulatorSeed) throws -> Twin? {
        guard let t = try root.object("twin") else { return nil }
        try t.rejectUnknownKeys(allowed: ["apps"])
        if seed.tenant.externalId {
            throw JSONPathError(
                path: "$.twin", message: "makes a B2C tenant's External ID side; this tenant is External ID already (tenant.tenantType)")
        }
        if seed.nativeAuthFlow == nil {
            throw JSONPathError(
                path: "$.policies", message: "needs a userFlow of kind signUpSignIn in a twin: it is the External ID side's user flow")
        }
        var apps: [App] = []
        for a in try t.objects("apps", required: true) {
            let app = try App.parse(a, apis: seed.apis)
            if seed.app(clientId: app.clientId) != nil || apps.contains(where: { $0.clientId.equalsIgnoringCase(app.clientId) }) {
                throw JSONPathError(
                    path: a.childPath("clientId"),
                    message: "is '\(app.clientId)', already an app of the tenant; an app registration serves one side (B2C's cannot be "
                        + "reused for External ID endpoints)")
            }
            apps.append(app)
        }
        return Twin(apps: apps)
    }

    /// A phone number in E.164 (`+` and 7 to 15 digits).
    public static func isE164(_ s: String) -> Bool {
        s.hasPrefix("+") && (8...16).contains(s.count) && s.dropFirst().allSatisfy(\.isASCII) && s.dropFirst().allSatisfy(\.isNumber)
            && s.dropFirst().first != "0"
    }

    private static func phone(_ u: JSONObjectReader) throws -> String? {
        guard let phone = try u.optionalString("phone") else { return nil }
        guard isE164(phone) else { throw JSONPathError(path: u.childPath("phone"), message: "must be E.164, such as +14255550123") }
        return phone
    }

    private static func totpSecret(_ u: JSONObjectReader) throws -> String? {
        guard let secret = try u.optionalString("totpSecret") else { return nil }
        guard let key = Base32.decode(secret), key.count >= 10 else {
            throw JSONPathError(path: u.childPath("totpSecret"), message: "must be base32 of at least 10 bytes (16 characters)")
        }
        return Base32.encode(key)
    }

    private static func parseUsers(_ root: JSONObjectReader) throws -> [User] {
        var users: [User] = []
        for u in try root.objects("users") {
            try u.rejectUnknownKeys(allowed: [
                "oid", "email", "password", "displayName", "givenName", "surname", "phone", "totpSecret", "mfaEnrolled",
                "mfaRequired",
            ])
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
                    givenName: given, surname: surname, phone: try phone(u), totpSecret: try totpSecret(u),
                    mfaEnrolled: try u.bool("mfaEnrolled", default: true), mfaRequired: try u.bool("mfaRequired", default: false)))
        }
        return users
    }

    static func guid(_ r: JSONObjectReader, _ key: String) throws -> String {
        let s = try r.string(key)
        guard UUID(uuidString: s) != nil else { throw JSONPathError(path: r.childPath(key), message: "must be a GUID, found '\(s)'") }
        return s.lowercased()
    }

    static func isPlausibleEmail(_ s: String) -> Bool {
        s.range(of: #"^[^@\s]+@[^@\s]+\.[^@\s]+$"#, options: .regularExpression) != nil && s.count <= 254
    }

    /// An epoch time, or an ISO 8601 date-time (`2030-01-01T00:00:00Z`).
    static func time(_ r: JSONObjectReader, _ key: String) throws -> Int? {
        switch r.raw(key) {
        case nil, .null?: return nil
        case .number(let n)?:
            guard n.rounded() == n, abs(n) < 1e15, let i = Int(exactly: n) else {
                throw JSONPathError(
                    path: r.childPath(key), message: "is \(n); expected epoch seconds (a whole number) or an ISO 8601 date-time")
            }
            return i
        case .string(let s)?:
            guard let d = ISO8601.date(s) else {
                throw JSONPathError(
                    path: r.childPath(key), message: "is '\(s)'; expected an ISO 8601 date-time such as 2030-01-01T00:00:00Z")
            }
            return Int(d.timeIntervalSince1970)
        case let v?: throw JSONPathError(path: r.childPath(key), message: "must be a date-time or epoch seconds, found \(v.typeName)")
        }
    }
}
