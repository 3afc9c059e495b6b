import B2CProtocol
import Foundation

/// The seed as JSON (`--seed FILE`, `b2c emulator default-seed`): each object's keys declared once, for reading and
/// writing (`SeedObject`); every error names its JSON path; the first seeds' shapes (redirect URIs as strings, `kind`
/// names) still read.
extension EmulatorSeed: SeedObject {
    init() { self.init(tenant: Tenant(), policies: [], apps: [], apis: [], users: []) }

    /// The seed as its fields write it (`b2c-emulator default-seed`, `GET /_admin/seed`).
    public var json: JSONValue { Self.written(self) }

    static let fields: [SeedField<Self>] = [
        .custom(
            "tenant",
            read: { r, seed in
                guard let t = try r.object("tenant") else { throw JSONPathError(path: "$.tenant", message: "is required (an object)") }
                seed.tenant = try Tenant(reading: t)
            }, write: { ["tenant": $0.tenant.json] }),
        .objects("apis", \.apis),
        .custom(
            "policies",
            read: { r, seed in
                for p in try r.objects("policies", required: true) {
                    let policy = try Policy(reading: p)
                    if seed.policies.contains(where: { $0.id.caseInsensitiveCompare(policy.id) == .orderedSame }) {
                        throw JSONPathError(
                            path: p.childPath("id"), message: "repeats policy '\(policy.id)' (policy ids are case-insensitive)")
                    }
                    seed.policies.append(policy)
                }
            }, write: { ["policies": .array($0.policies.map(\.json))] }),
        .custom(
            "apps",
            read: { r, seed in
                for a in try r.objects("apps", required: true) { seed.apps.append(try App(reading: a, apis: seed.apis)) }
            }, write: { ["apps": .array($0.apps.map(\.json))] }),
        .custom(
            "users",
            read: { r, seed in
                for u in try r.objects("users") {
                    let user = try User(reading: u)
                    if seed.users.contains(where: { $0.email.caseInsensitiveCompare(user.email) == .orderedSame }) {
                        throw JSONPathError(path: u.childPath("email"), message: "repeats '\(user.email)'")
                    }
                    seed.users.append(user)
                }
            }, write: { ["users": .array($0.users.map(\.json))] }),
        .objects("authenticationExtensions", \.authenticationExtensions),
        .custom(
            "twin", read: { r, seed in seed.twin = try twin(r, seed: seed) },
            write: { seed in seed.twin.map { ["twin": ["apps": .array($0.apps.map(\.json))]] } ?? [:] }),
    ]

    static let otherKeys = ["$schema", "description"]

    mutating func finish(_ r: JSONObjectReader) throws {
        if !authenticationExtensions.isEmpty && !tenant.externalId && twin == nil {
            throw JSONPathError(
                path: "$.authenticationExtensions",
                message: "are Entra External ID's (tenant.tenantType \"externalId\", or a twin's External ID side); a B2C user flow "
                    + "has apiConnectors instead")
        }
        if tenant.externalId && externalIdFlow == nil {
            throw JSONPathError(
                path: "$.policies", message: "needs a userFlow of kind signUpSignIn in an External ID tenant: it is the app's user flow")
        }
    }

    /// A seed file; `externalId` (`serve --external-id`) makes it an External ID tenant whatever its `tenantType` says,
    /// before anything that depends on the tenant's type is checked.
    public static func parse(_ data: Data, externalId: Bool = false) throws -> EmulatorSeed {
        var value = try JSONValue.parse(data)
        // A tenantType that is neither of the two is still refused as such.
        if externalId, case .object(var root) = value, case .object(var tenant)? = root["tenant"],
            [nil, .null, "b2c", "externalId"].contains(tenant["tenantType"])
        {
            tenant["tenantType"] = "externalId"
            root["tenant"] = .object(tenant)
            value = .object(root)
        }
        return try EmulatorSeed(reading: value, path: "$")
    }

    /// `twin`: the External ID side's app registrations, none of them one of the B2C side's.
    private static func twin(_ root: JSONObjectReader, seed: EmulatorSeed) throws -> Twin? {
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
            let app = try App(reading: a, apis: seed.apis)
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
}

extension EmulatorSeed.Tenant: SeedObject {
    init() { self.init(name: "", id: "", hostAliases: []) }

    static let fields: [SeedField<Self>] = [
        .optional("customPolicyCAFile", \.customPolicyCAFile),
        .string("name", \.name),
        .guid("id", \.id),
        .strings("hostAliases", \.hostAliases),
        .bool("appTokenPolicyClaim", \.appTokenPolicyClaim, default: true),
        .custom(
            "tenantType",
            read: { r, t in
                let type = try r.optionalString("tenantType") ?? "b2c"
                guard ["b2c", "externalId"].contains(type) else {
                    throw JSONPathError(path: r.childPath("tenantType"), message: "is '\(type)'; expected b2c or externalId")
                }
                t.externalId = type == "externalId"
            }, write: { ["tenantType": .string($0.externalId ? "externalId" : "b2c")] }),
        .custom(
            "extensionsAppId",
            read: { r, t in if r.has("extensionsAppId") { t.extensionsAppId = try EmulatorSeed.guid(r, "extensionsAppId") } },
            write: { t in t.extensionsAppId.map { ["extensionsAppId": .string($0)] } ?? [:] }),
        .custom(
            "policyKeys",
            read: { r, t in
                guard r.has("policyKeys") else { return }
                t.policyKeys = try r.stringArray("policyKeys")
                for (i, key) in t.policyKeys.enumerated() where !key.uppercased().hasPrefix("B2C_1A_") {
                    throw JSONPathError(
                        path: r.childPath("policyKeys") + "[\(i)]", message: "is '\(key)'; a policy key's name starts with B2C_1A_")
                }
            }, write: { ["policyKeys": JSONValue($0.policyKeys)] }),
        .custom(
            "policyKeyValues",
            read: { r, t in
                guard let raw = r.raw("policyKeyValues"), let values = try r.object("policyKeyValues") else { return }
                for key in (raw.objectValue ?? [:]).keys.sorted() {
                    guard key.uppercased().hasPrefix("B2C_1A_") else {
                        throw JSONPathError(
                            path: values.childPath(key), message: "is named '\(key)'; a policy key's name starts with B2C_1A_")
                    }
                    t.policyKeyValues[key] = try values.string(key)
                }
            }, write: { t in t.policyKeyValues.isEmpty ? [:] : ["policyKeyValues": .object(t.policyKeyValues.mapValues { .string($0) })] }),
    ]

    mutating func finish(_ r: JSONObjectReader) throws {
        guard name.contains("."), !name.contains("/") else {
            throw JSONPathError(path: r.childPath("name"), message: "must be a domain such as contoso.onmicrosoft.com")
        }
    }
}

extension EmulatorSeed.User: SeedObject {
    init() { self.init(oid: "", email: "", password: "", displayName: "", givenName: "", surname: "") }

    static let fields: [SeedField<Self>] = [
        .string("email", \.email) { email, r in
            guard EmulatorSeed.isPlausibleEmail(email) else {
                throw JSONPathError(path: r.childPath("email"), message: "is not an email address")
            }
            return email
        },
        .string("givenName", \.givenName, default: ""),
        .string("surname", \.surname, default: ""),
        .guid("oid", \.oid, default: ""),
        .string("password", \.password),
        .string("displayName", \.displayName, default: ""),
        .optional("phone", \.phone) { phone, r in
            guard EmulatorSeed.isE164(phone) else {
                throw JSONPathError(path: r.childPath("phone"), message: "must be E.164, such as +14255550123")
            }
            return phone
        },
        .optional("totpSecret", \.totpSecret) { secret, r in
            guard let key = Base32.decode(secret), key.count >= 10 else {
                throw JSONPathError(path: r.childPath("totpSecret"), message: "must be base32 of at least 10 bytes (16 characters)")
            }
            return Base32.encode(key)
        },
        .custom(
            "mfaEnrolled", read: { r, u in u.mfaEnrolled = try r.bool("mfaEnrolled", default: true) },
            write: { u in u.phone != nil || u.totpSecret != nil || !u.mfaEnrolled ? ["mfaEnrolled": .bool(u.mfaEnrolled)] : [:] }),
        .bool("mfaRequired", \.mfaRequired, default: false, omitDefault: true),
    ]

    mutating func finish(_ r: JSONObjectReader) throws {
        if oid.isEmpty { oid = UUID().uuidString.lowercased() }
        if !r.has("displayName") || r.raw("displayName") == .null {
            displayName = "\(givenName) \(surname)".trimmingCharacters(in: .whitespaces)
        }
    }
}

extension EmulatorSeed {
    /// A phone number in E.164 (`+` and 7 to 15 digits).
    public static func isE164(_ s: String) -> Bool {
        s.hasPrefix("+") && (8...16).contains(s.count) && s.dropFirst().allSatisfy(\.isASCII) && s.dropFirst().allSatisfy(\.isNumber)
            && s.dropFirst().first != "0"
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
