import B2CProtocol
import Foundation

/// The seed as JSON (`--seed FILE`, `b2c emulator default-seed`): every error names its JSON path; the first seeds'
/// shapes (redirect URIs as strings, `kind` names) still read.
extension EmulatorSeed {
    public var json: JSONValue {
        .object([
            "tenant": .object(
                [
                    "name": .string(tenant.name), "id": .string(tenant.id), "hostAliases": JSONValue(tenant.hostAliases),
                    "appTokenPolicyClaim": .bool(tenant.appTokenPolicyClaim),
                    "tenantType": .string(tenant.externalId ? "externalId" : "b2c"),
                    "extensionsAppId": tenant.extensionsAppId.map { .string($0) } ?? .null,
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
        ])
    }

    /// A seed file; `externalId` (`serve --external-id`) makes it an External ID tenant whatever its `tenantType` says,
    /// before anything that depends on the tenant's type is checked.
    public static func parse(_ data: Data, externalId: Bool = false) throws -> EmulatorSeed {
        let root = try JSONObjectReader(JSONValue.parse(data))
        try root.rejectUnknownKeys(allowed: [
            "tenant", "policies", "apps", "apis", "users", "authenticationExtensions", "$schema", "description",
        ])
        guard let t = try root.object("tenant") else { throw JSONPathError(path: "$.tenant", message: "is required (an object)") }
        try t.rejectUnknownKeys(allowed: ["name", "id", "hostAliases", "appTokenPolicyClaim", "tenantType", "extensionsAppId"])
        var tenant = Tenant(
            name: try t.string("name"), id: try guid(t, "id"), hostAliases: try t.stringArray("hostAliases"),
            appTokenPolicyClaim: try t.bool("appTokenPolicyClaim", default: true))
        let type = try t.optionalString("tenantType") ?? "b2c"
        guard ["b2c", "externalId"].contains(type) else {
            throw JSONPathError(path: t.childPath("tenantType"), message: "is '\(type)'; expected b2c or externalId")
        }
        tenant.externalId = type == "externalId" || externalId
        if t.has("extensionsAppId") { tenant.extensionsAppId = try guid(t, "extensionsAppId") }
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
        if !seed.authenticationExtensions.isEmpty && !tenant.externalId {
            throw JSONPathError(
                path: "$.authenticationExtensions",
                message: "are Entra External ID's (tenant.tenantType \"externalId\"); a B2C user flow has apiConnectors instead")
        }
        if tenant.externalId && seed.externalIdFlow == nil {
            throw JSONPathError(
                path: "$.policies", message: "needs a userFlow of kind signUpSignIn in an External ID tenant: it is the app's user flow")
        }
        return seed
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
            guard let d = ISO8601DateFormatter().date(from: s) else {
                throw JSONPathError(
                    path: r.childPath(key), message: "is '\(s)'; expected an ISO 8601 date-time such as 2030-01-01T00:00:00Z")
            }
            return Int(d.timeIntervalSince1970)
        case let v?: throw JSONPathError(path: r.childPath(key), message: "must be a date-time or epoch seconds, found \(v.typeName)")
        }
    }
}

extension EmulatorSeed.Policy {
    var json: JSONValue {
        var o: [String: JSONValue] = [
            "id": .string(id), "kind": .string(kind.rawValue), "type": .string(type.rawValue), "policyClaim": .string(policyClaim),
            "issuerPattern": .string(issuerPattern), "accessTokenLifetime": JSONValue(accessTokenLifetime),
            "idTokenLifetime": JSONValue(idTokenLifetime), "refreshTokenLifetime": JSONValue(refreshTokenLifetime),
            "numbersAsStrings": .bool(numbersAsStrings),
        ]
        o["slidingWindow"] = slidingWindow.map { JSONValue($0) } ?? .null
        if signInMethod != .emailPassword { o["signInMethod"] = .string(signInMethod.rawValue) }
        if let mfa { o["mfa"] = ["methods": JSONValue(mfa.methods.map(\.rawValue)), "enforcement": .string(mfa.enforcement.rawValue)] }
        if identityProviders != [.local] || !oidcProviders.isEmpty || !samlProviders.isEmpty {
            o["identityProviders"] = .array(
                identityProviders.map { .string($0.rawValue) }
                    + oidcProviders.map {
                        var e: [String: JSONValue] = [
                            "type": "oidc", "id": .string($0.id), "name": .string($0.name), "discovery": .string($0.discovery),
                            "clientId": .string($0.clientId), "scope": .string($0.scope),
                        ]
                        if let secret = $0.clientSecret { e["clientSecret"] = .string(secret) }
                        if let hint = $0.domainHint { e["domainHint"] = .string(hint) }
                        if let ca = $0.caFile { e["caFile"] = .string(ca) }
                        return .object(e)
                    }
                    + samlProviders.map {
                        var e: [String: JSONValue] = [
                            "type": "saml", "id": .string($0.id), "name": .string($0.name), "metadata": .string($0.metadata),
                        ]
                        if let hint = $0.domainHint { e["domainHint"] = .string(hint) }
                        if let ca = $0.caFile { e["caFile"] = .string(ca) }
                        return .object(e)
                    })
        }
        if emailVerification != .classic {
            o["emailVerification"] = emailVerification == .off ? false : .string(emailVerification.rawValue)
        }
        if let applicationClaims { o["applicationClaims"] = JSONValue(applicationClaims) }
        if !pageLayouts.isEmpty {
            var layouts: [String: JSONValue] = ["javascript": .bool(pageLayouts.javascript), "strictCors": .bool(pageLayouts.strictCors)]
            for (type, page) in pageLayouts.pages {
                layouts[type.rawValue] = ["loadUri": .string(page.loadUri), "dataUri": .string(page.dataUri)]
            }
            o["pageLayouts"] = .object(layouts)
        }
        if !apiConnectors.isEmpty {
            var connectors: [String: JSONValue] = [:]
            for step in EmulatorSeed.APIConnectors.Step.allCases { if let c = apiConnectors[step] { connectors[step.rawValue] = c.json } }
            o["apiConnectors"] = .object(connectors)
        }
        if attributes != EmulatorSeed.Attribute.defaults {
            o["attributes"] = .array(
                attributes.map {
                    [
                        "name": .string($0.name), "type": .string($0.kind.rawValue), "required": .bool($0.required),
                        "label": .string($0.label),
                    ]
                })
        }
        if session != EmulatorSeed.SessionSettings() {
            o["session"] = [
                "lifetimeMinutes": JSONValue(session.lifetimeMinutes), "timeout": .string(session.rolling ? "rolling" : "absolute"),
                "sso": .string(session.scope.rawValue),
            ]
            if let days = session.kmsiDays { o["kmsi"] = ["enabled": true, "days": JSONValue(days)] }
        }
        return .object(o)
    }

    static func parse(_ p: JSONObjectReader) throws -> Self {
        try p.rejectUnknownKeys(allowed: [
            "id", "kind", "type", "policyClaim", "issuerPattern", "accessTokenLifetime", "idTokenLifetime",
            "refreshTokenLifetime", "slidingWindow", "numbersAsStrings", "mfa", "identityProviders", "session", "kmsi", "languages",
            "emailVerification", "attributes", "applicationClaims", "apiConnectors", "pageLayouts", "signInMethod",
        ])
        let id = try p.string("id")
        let typeName = try p.optionalString("type") ?? (id.lowercased().hasPrefix("b2c_1a_") ? "custom" : "userFlow")
        guard let type = EmulatorSeed.PolicyType(rawValue: typeName) else {
            throw JSONPathError(path: p.childPath("type"), message: "is '\(typeName)'; expected userFlow or custom")
        }
        let prefix = type == .custom ? "b2c_1a_" : "b2c_1_"
        guard PolicyID.isValid(id), id.lowercased().hasPrefix(prefix) else {
            throw JSONPathError(
                path: p.childPath("id"),
                message:
                    "must be a \(type == .custom ? "custom policy id such as B2C_1A_signup_signin" : "user flow id such as B2C_1_susi") "
                    + "(letters, digits, _ . -)")
        }
        let kindName = try p.string("kind")
        let userFlowKinds = EmulatorSeed.PolicyKind.allCases.filter { $0 != .clientCredentials }
        guard let kind = EmulatorSeed.PolicyKind(name: kindName), kind != .clientCredentials else {
            throw JSONPathError(
                path: p.childPath("kind"),
                message: "is '\(kindName)'; expected one of \(userFlowKinds.map(\.rawValue).joined(separator: ", "))"
                    + " (client credentials are served by any policy's token endpoint)")
        }
        let claim = try p.optionalString("policyClaim") ?? (type == .custom ? "acr" : "tfp")
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
        let methodName = try p.optionalString("signInMethod") ?? "emailPassword"
        guard let signInMethod = EmulatorSeed.SignInMethod(rawValue: methodName) else {
            throw JSONPathError(path: p.childPath("signInMethod"), message: "is '\(methodName)'; expected emailPassword or emailOtp")
        }
        var policy = Self(
            id: id, kind: kind, type: type, policyClaim: claim, issuerPattern: issuer,
            accessTokenLifetime: try p.int("accessTokenLifetime", default: 3600, range: 60...86_400)!,
            idTokenLifetime: try p.int("idTokenLifetime", default: 3600, range: 60...86_400)!,
            refreshTokenLifetime: rtLifetime, slidingWindow: sliding, numbersAsStrings: try p.bool("numbersAsStrings", default: false),
            mfa: try mfa(p, kind: kind), identityProviders: try identityProviders(p, kind: kind), oidcProviders: try oidcProviders(p),
            samlProviders: try samlProviders(p),
            session: try session(p, kind: kind),
            languages: try languages(p), emailVerification: try emailVerification(p),
            attributes: try attributes(p), applicationClaims: try applicationClaims(p), apiConnectors: try apiConnectors(p, kind: kind),
            pageLayouts: try pageLayouts(p))
        policy.signInMethod = signInMethod
        return policy
    }

    /// `"emailVerification": true | false | "classic" | "displayControl"` (true is the classic widget).
    private static func emailVerification(_ p: JSONObjectReader) throws -> EmulatorSeed.EmailVerification {
        switch p.raw("emailVerification") {
        case nil, .bool(true)?, .string("classic")?: return .classic
        case .bool(false)?: return .off
        case .string("displayControl")?: return .displayControl
        default:
            throw JSONPathError(path: p.childPath("emailVerification"), message: "must be true, false, \"classic\" or \"displayControl\"")
        }
    }

    /// `"apiConnectors": {"postFederationSignup" | "postAttributeCollection" | "preTokenIssuance": {"url", "auth"?,
    /// "timeoutSeconds"?, "caFile"?}}`, for sign-up user flows only (B2C's rule).
    private static func apiConnectors(_ p: JSONObjectReader, kind: EmulatorSeed.PolicyKind) throws -> EmulatorSeed.APIConnectors {
        guard let o = try p.object("apiConnectors") else { return .init() }
        try o.rejectUnknownKeys(allowed: Set(EmulatorSeed.APIConnectors.Step.allCases.map(\.rawValue)))
        guard [.signUpSignIn, .signUp].contains(kind) else {
            throw JSONPathError(
                path: p.childPath("apiConnectors"), message: "is for sign-up and sign-in or sign-up user flows, not \(kind.rawValue)")
        }
        var out = EmulatorSeed.APIConnectors()
        for step in EmulatorSeed.APIConnectors.Step.allCases {
            guard let c = try o.object(step.rawValue) else { continue }
            try c.rejectUnknownKeys(allowed: ["url", "auth", "timeoutSeconds", "caFile"])
            let url = try c.string("url")
            guard let u = URL(string: url), ["http", "https"].contains(u.scheme ?? ""), u.host != nil else {
                throw JSONPathError(path: c.childPath("url"), message: "'\(url)' is not an http(s) URL")
            }
            var connector = EmulatorSeed.APIConnector(
                url: url, timeoutSeconds: try c.int("timeoutSeconds", default: 20, range: 1...60)!, caFile: try c.optionalString("caFile"))
            if let a = try c.object("auth") {
                let type = try a.string("type")
                // Credentials travel over TLS, or stay on this machine.
                let insecure = u.scheme == "http" && !["127.0.0.1", "localhost", "::1"].contains(u.host?.lowercased() ?? "")
                switch type {
                case "basic" where insecure, "bearer" where insecure:
                    throw JSONPathError(
                        path: c.childPath("url"), message: "must be https to carry \(type) credentials (plain http only on loopback)")
                case "basic":
                    try a.rejectUnknownKeys(allowed: ["type", "username", "password"])
                    connector.auth = .basic(username: try a.string("username"), password: try a.string("password"))
                case "certificate":
                    try a.rejectUnknownKeys(allowed: ["type", "certificateFile", "keyFile"])
                    connector.auth = .certificate(certificateFile: try a.string("certificateFile"), keyFile: try a.string("keyFile"))
                    guard u.scheme == "https" else {
                        throw JSONPathError(path: c.childPath("url"), message: "must be https for certificate authentication")
                    }
                case "bearer":
                    try a.rejectUnknownKeys(allowed: ["type", "token"])
                    connector.auth = .bearer(token: try a.string("token"))
                case "none":
                    try a.rejectUnknownKeys(allowed: ["type"])
                default:
                    throw JSONPathError(path: a.childPath("type"), message: "is '\(type)'; expected basic, certificate, bearer or none")
                }
            }
            switch step {
            case .postFederationSignup: out.postFederationSignup = connector
            case .postAttributeCollection: out.postAttributeCollection = connector
            case .preTokenIssuance: out.preTokenIssuance = connector
            }
        }
        return out
    }

    /// `"pageLayouts": {"unifiedssp": "URL | file | classic | oceanBlue | slateGray" or {"loadUri", "dataUri"}, …,
    /// "javascript"?: Bool, "strictCors"?: Bool}` (`error` is another name of `globalexception`).
    private static func pageLayouts(_ p: JSONObjectReader) throws -> EmulatorSeed.PageLayouts {
        guard let o = try p.object("pageLayouts") else { return .init() }
        typealias PageType = EmulatorSeed.PageLayouts.PageType
        try o.rejectUnknownKeys(allowed: Set(PageType.allCases.map(\.rawValue) + ["error", "javascript", "strictCors"]))
        var out = EmulatorSeed.PageLayouts(
            javascript: try o.bool("javascript", default: false), strictCors: try o.bool("strictCors", default: false))
        for key in PageType.allCases.map(\.rawValue) + ["error"] where o.has(key) {
            let type = PageType(rawValue: key) ?? .globalexception
            var page = EmulatorSeed.PageLayouts.Page(loadUri: "", dataUri: type.defaultDataUri)
            if let uri = o.raw(key)?.stringValue {
                page.loadUri = uri
            } else if let entry = try o.object(key) {
                try entry.rejectUnknownKeys(allowed: ["loadUri", "dataUri"])
                page.loadUri = try entry.string("loadUri")
                page.dataUri = try entry.optionalString("dataUri") ?? page.dataUri
                let parts = page.dataUri.split(separator: ":").map(String.init)
                guard page.dataUri.hasPrefix("urn:com:microsoft:aad:b2c:elements:"),
                    parts.count == 8 || (parts.count == 9 && parts[6] == "contract"),
                    parts[parts.count - 2] == type.rawValue
                else {
                    throw JSONPathError(
                        path: entry.childPath("dataUri"),
                        message: "'\(page.dataUri)' is not urn:com:microsoft:aad:b2c:elements[:contract]:\(type.rawValue):<version>")
                }
            } else {
                throw JSONPathError(
                    path: o.childPath(key), message: "must be a URL, a file, a built-in layout or {\"loadUri\", \"dataUri\"}")
            }
            let builtIn = PageLayoutTemplates.builtIn.keys.contains(page.loadUri)
            if !builtIn {
                if let u = URL(string: page.loadUri), let scheme = u.scheme, scheme.count > 1 {
                    guard ["http", "https"].contains(scheme), u.host != nil else {
                        throw JSONPathError(path: o.childPath(key), message: "'\(page.loadUri)' is neither an http(s) URL nor a file path")
                    }
                } else if !FileManager.default.isReadableFile(atPath: page.loadUri) {
                    throw JSONPathError(
                        path: o.childPath(key),
                        message: "the file '\(page.loadUri)' cannot be read (built-in layouts: classic, oceanBlue, slateGray)")
                }
            }
            out.pages[type] = page
        }
        return out
    }

    /// `"applicationClaims": ["city", "extension_LoyaltyId"]`: the stored attributes this user flow's tokens carry.
    private static func applicationClaims(_ p: JSONObjectReader) throws -> [String]? {
        guard let items = p.raw("applicationClaims") else { return nil }
        guard let names = items.arrayValue?.compactMap(\.stringValue), names.count == items.arrayValue?.count else {
            throw JSONPathError(path: p.childPath("applicationClaims"), message: "must be an array of attribute names")
        }
        return names
    }

    /// `"attributes": ["city", {"name": "extension_LoyaltyId", "type": "String" | "Boolean" | "Int", "required": true,
    /// "label": "Loyalty number"}]`: what the sign-up page collects (default: displayName, givenName, surname).
    private static func attributes(_ p: JSONObjectReader) throws -> [EmulatorSeed.Attribute] {
        guard let items = p.raw("attributes") else { return EmulatorSeed.Attribute.defaults }
        guard let list = items.arrayValue else { throw JSONPathError(path: p.childPath("attributes"), message: "must be an array") }
        var out: [EmulatorSeed.Attribute] = []
        for (i, item) in list.enumerated() {
            let path = p.childPath("attributes") + "[\(i)]"
            if let name = item.stringValue {
                guard let label = EmulatorSeed.Attribute.builtIn[name] else {
                    throw JSONPathError(
                        path: path,
                        message:
                            "is '\(name)': a built-in attribute is one of "
                            + "\(EmulatorSeed.Attribute.builtIn.keys.sorted().joined(separator: ", ")); "
                            + "a custom one is an object {\"name\": \"extension_<Name>\", \"type\": …}")
                }
                out.append(.init(name: name, label: label))
                continue
            }
            let o = try JSONObjectReader(item, path: path)
            try o.rejectUnknownKeys(allowed: ["name", "type", "required", "label"])
            let name = try o.string("name")
            let builtIn = EmulatorSeed.Attribute.builtIn[name]
            guard builtIn != nil || name.range(of: #"^extension_[A-Za-z][A-Za-z0-9_]*$"#, options: .regularExpression) != nil else {
                throw JSONPathError(path: o.childPath("name"), message: "'\(name)' is neither built-in nor extension_<Name>")
            }
            let typeName = try o.optionalString("type") ?? "String"
            guard let kind = EmulatorSeed.Attribute.Kind(rawValue: typeName), builtIn == nil || kind == .string else {
                throw JSONPathError(
                    path: o.childPath("type"), message: "is '\(typeName)'; expected String, Boolean or Int (built-ins are String)")
            }
            out.append(
                .init(
                    name: name, kind: kind, required: try o.bool("required", default: false),
                    label: try o.optionalString("label") ?? builtIn ?? String(name.dropFirst("extension_".count))))
        }
        return out
    }

    /// `"languages": {"default": "en", "enabled": ["en", "fr", …], "overrides": {"fr": <B2C's user-flow JSON>}}`: an
    /// override file's `LocalizedStrings` entries with `"Override": true` replace the string of their `StringId`.
    private static func languages(_ p: JSONObjectReader) throws -> EmulatorSeed.Languages {
        var l = EmulatorSeed.Languages()
        guard let o = try p.object("languages") else { return l }
        try o.rejectUnknownKeys(allowed: ["default", "enabled", "overrides"])
        if o.has("enabled") { l.enabled = try o.stringArray("enabled") }
        l.defaultLanguage = try o.optionalString("default") ?? l.enabled.first ?? "en"
        guard !l.enabled.isEmpty else { throw JSONPathError(path: o.childPath("enabled"), message: "must name at least one language") }
        if !l.enabled.contains(l.defaultLanguage) { l.enabled.insert(l.defaultLanguage, at: 0) }
        for tag in l.enabled + [l.defaultLanguage]
        where tag.range(of: #"^[A-Za-z]{2,3}(-[A-Za-z0-9]{2,8})*$"#, options: .regularExpression) == nil {
            throw JSONPathError(path: o.childPath("enabled"), message: "'\(tag)' is not a language tag such as fr or pt-br")
        }
        guard let overrides = try o.object("overrides") else { return l }
        for tag in l.enabled {
            guard let file = try overrides.object(tag) else { continue }
            var strings: [String: String] = [:]
            for entry in try file.objects("LocalizedStrings") where try entry.bool("Override", default: false) {
                strings[try entry.string("StringId")] = try entry.string("Value")
            }
            l.overrides[tag] = strings
        }
        return l
    }

    /// `"session": {"lifetimeMinutes": 15–1440, "timeout": "rolling" | "absolute", "sso": "tenant" | "application" | "policy" |
    /// "suppressed"}` and `"kmsi": {"enabled": true, "days": 1–90}`.
    private static func session(_ p: JSONObjectReader, kind: EmulatorSeed.PolicyKind) throws -> EmulatorSeed.SessionSettings {
        var s = EmulatorSeed.SessionSettings()
        if let o = try p.object("session") {
            try o.rejectUnknownKeys(allowed: ["lifetimeMinutes", "timeout", "sso"])
            s.lifetimeMinutes = try o.int("lifetimeMinutes", default: 1440, range: 15...1440)!
            let timeout = try o.optionalString("timeout") ?? "rolling"
            guard ["rolling", "absolute"].contains(timeout) else {
                throw JSONPathError(path: o.childPath("timeout"), message: "is '\(timeout)'; expected rolling or absolute")
            }
            s.rolling = timeout == "rolling"
            let scope = try o.optionalString("sso") ?? "tenant"
            guard let sc = EmulatorSeed.SessionSettings.Scope(rawValue: scope) else {
                throw JSONPathError(path: o.childPath("sso"), message: "is '\(scope)'; expected tenant, application, policy or suppressed")
            }
            s.scope = sc
        }
        if let k = try p.object("kmsi") {
            try k.rejectUnknownKeys(allowed: ["enabled", "days"])
            if try k.bool("enabled", default: true) {
                guard [.signUpSignIn, .signIn, .editProfile].contains(kind) else {
                    throw JSONPathError(path: p.childPath("kmsi"), message: "is for sign-in, sign-up-or-sign-in and profile user flows")
                }
                s.kmsiDays = try k.int("days", default: 30, range: 1...90)!
            }
        }
        return s
    }

    /// `"identityProviders": ["local", "google", …]`: the sign-in page's providers (default: local accounts only).
    private static func identityProviders(_ p: JSONObjectReader, kind: EmulatorSeed.PolicyKind) throws -> [EmulatorSeed.IdentityProvider] {
        guard p.has("identityProviders") else { return [.local] }
        guard let items = p.raw("identityProviders")?.arrayValue else {
            throw JSONPathError(path: p.childPath("identityProviders"), message: "must be an array of provider names")
        }
        var out: [EmulatorSeed.IdentityProvider] = []
        for (i, item) in items.enumerated() {
            let path = p.childPath("identityProviders") + "[\(i)]"
            guard let name = item.stringValue else {
                if ["oidc", "saml"].contains(item["type"]?.stringValue) { continue }  // read by `oidcProviders`, `samlProviders`
                throw JSONPathError(
                    path: path,
                    message: "is neither a provider name "
                        + "(\(EmulatorSeed.IdentityProvider.allCases.map(\.rawValue).joined(separator: ", "))) nor an object whose "
                        + "\"type\" is \"oidc\" or \"saml\"")
            }
            guard let provider = EmulatorSeed.IdentityProvider(rawValue: name) else {
                throw JSONPathError(
                    path: path,
                    message:
                        "is '\(name)'; expected one of \(EmulatorSeed.IdentityProvider.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            if !out.contains(provider) { out.append(provider) }
        }
        let others = items.contains { $0.objectValue != nil }
        guard !out.isEmpty || others else {
            throw JSONPathError(path: p.childPath("identityProviders"), message: "must name at least one provider")
        }
        guard (out == [.local] && !others) || [.signUpSignIn, .signIn, .signUp].contains(kind) else {
            throw JSONPathError(
                path: p.childPath("identityProviders"), message: "is for sign-in and sign-up user flows, not \(kind.rawValue)")
        }
        return out
    }

    /// The `{"type": "oidc", "id", "name", "discovery", "clientId", "clientSecret"?, "scope"?, "domainHint"?}` entries of
    /// `identityProviders`.
    private static func oidcProviders(_ p: JSONObjectReader) throws -> [EmulatorSeed.OIDCProvider] {
        var out: [EmulatorSeed.OIDCProvider] = []
        for (i, item) in (p.raw("identityProviders")?.arrayValue ?? []).enumerated() where item["type"]?.stringValue == "oidc" {
            let o = try JSONObjectReader(item, path: p.childPath("identityProviders") + "[\(i)]")
            try o.rejectUnknownKeys(allowed: [
                "type", "id", "name", "discovery", "clientId", "clientSecret", "scope", "domainHint", "caFile",
            ])
            let id = try providerID(o)
            let discovery = try o.string("discovery")
            guard let u = URL(string: discovery), ["http", "https"].contains(u.scheme ?? ""), u.host != nil else {
                throw JSONPathError(path: o.childPath("discovery"), message: "'\(discovery)' is not an http(s) URL")
            }
            out.append(
                .init(
                    id: id, name: try o.optionalString("name") ?? id, discovery: discovery, clientId: try o.string("clientId"),
                    clientSecret: try o.optionalString("clientSecret"), scope: try o.optionalString("scope") ?? "openid profile email",
                    domainHint: try o.optionalString("domainHint"), caFile: try o.optionalString("caFile")))
        }
        return out
    }

    /// The `{"type": "saml", "id", "name"?, "metadata", "domainHint"?, "caFile"?}` entries of `identityProviders`.
    private static func samlProviders(_ p: JSONObjectReader) throws -> [EmulatorSeed.SAMLProvider] {
        var out: [EmulatorSeed.SAMLProvider] = []
        var ids = Set<String>()
        for (i, item) in (p.raw("identityProviders")?.arrayValue ?? []).enumerated() where item.objectValue != nil {
            let o = try JSONObjectReader(item, path: p.childPath("identityProviders") + "[\(i)]")
            let id = try providerID(o)
            guard ids.insert(id.lowercased()).inserted else {
                throw JSONPathError(path: o.childPath("id"), message: "'\(id)' names another provider of this policy too")
            }
            guard item["type"]?.stringValue == "saml" else { continue }
            try o.rejectUnknownKeys(allowed: ["type", "id", "name", "metadata", "domainHint", "caFile"])
            let metadata = try o.string("metadata")
            if let u = URL(string: metadata), let scheme = u.scheme, scheme.count > 1 {
                guard ["http", "https"].contains(scheme), let host = u.host else {
                    throw JSONPathError(path: o.childPath("metadata"), message: "'\(metadata)' is neither an http(s) URL nor a file path")
                }
                // The metadata names the keys the tenant trusts: over the network only with TLS (plain http on loopback).
                guard scheme == "https" || ["127.0.0.1", "localhost", "::1", "[::1]"].contains(host.lowercased()) else {
                    throw JSONPathError(
                        path: o.childPath("metadata"),
                        message: "'\(metadata)' must be https (it names the keys the tenant trusts), or a file")
                }
            } else if !FileManager.default.isReadableFile(atPath: metadata) {
                throw JSONPathError(path: o.childPath("metadata"), message: "the file '\(metadata)' cannot be read")
            }
            out.append(
                .init(
                    id: id, name: try o.optionalString("name") ?? id, metadata: metadata, domainHint: try o.optionalString("domainHint"),
                    caFile: try o.optionalString("caFile")))
        }
        return out
    }

    /// A provider's `id`: it names a button and a form field, so letters, digits, '-' and '_'.
    private static func providerID(_ o: JSONObjectReader) throws -> String {
        let id = try o.string("id")
        guard id.range(of: #"^[A-Za-z][A-Za-z0-9_-]{0,63}$"#, options: .regularExpression) != nil else {
            throw JSONPathError(path: o.childPath("id"), message: "'\(id)' must be letters, digits, '-' or '_', starting with a letter")
        }
        return id
    }

    /// `"mfa": {"methods": ["email" | "phone" | "totp"], "enforcement": "always" | "conditional" | "off"}`.
    private static func mfa(_ p: JSONObjectReader, kind: EmulatorSeed.PolicyKind) throws -> EmulatorSeed.MFA? {
        guard let m = try p.object("mfa") else { return nil }
        try m.rejectUnknownKeys(allowed: ["methods", "enforcement"])
        let names = try m.stringArray("methods", required: true)
        var methods: [EmulatorSeed.MFA.Method] = []
        for (i, name) in names.enumerated() {
            guard let method = EmulatorSeed.MFA.Method(rawValue: name) else {
                throw JSONPathError(path: m.childPath("methods") + "[\(i)]", message: "is '\(name)'; expected email, phone or totp")
            }
            if !methods.contains(method) { methods.append(method) }
        }
        guard !methods.isEmpty else { throw JSONPathError(path: m.childPath("methods"), message: "must name at least one method") }
        let enforcementName = try m.optionalString("enforcement") ?? "always"
        guard let enforcement = EmulatorSeed.MFA.Enforcement(rawValue: enforcementName) else {
            throw JSONPathError(
                path: m.childPath("enforcement"), message: "is '\(enforcementName)'; expected always, conditional or off")
        }
        guard [.signUpSignIn, .signIn, .signUp, .ropc].contains(kind) else {
            throw JSONPathError(path: p.childPath("mfa"), message: "is for sign-in and sign-up user flows, not \(kind.rawValue)")
        }
        return EmulatorSeed.MFA(methods: methods, enforcement: enforcement)
    }
}

extension EmulatorSeed.API {
    var json: JSONValue {
        var o: [String: JSONValue] = [
            "name": .string(name), "appId": .string(appId), "identifierUri": .string(identifierUri), "scopes": JSONValue(scopes),
            "appRoles": .array(appRoles.map { ["value": .string($0.value), "allowedMemberTypes": JSONValue($0.allowedMemberTypes)] }),
        ]
        if let r = requiredScope { o["requiredScope"] = .string(r) }
        return .object(o)
    }

    static func parse(_ a: JSONObjectReader) throws -> Self {
        try a.rejectUnknownKeys(allowed: ["name", "appId", "identifierUri", "scopes", "requiredScope", "appRoles"])
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
        let roles = try a.objects("appRoles").map { r in
            try r.rejectUnknownKeys(allowed: ["value", "allowedMemberTypes"])
            let types = try r.stringArray("allowedMemberTypes")
            for (i, t) in types.enumerated() where !["Application", "User"].contains(t) {
                throw JSONPathError(path: "\(r.childPath("allowedMemberTypes"))[\(i)]", message: "is '\(t)'; expected Application or User")
            }
            return EmulatorSeed.AppRole(value: try r.string("value"), allowedMemberTypes: types.isEmpty ? ["Application"] : types)
        }
        return Self(
            name: try a.string("name"), appId: try EmulatorSeed.guid(a, "appId"), identifierUri: uri, scopes: scopes,
            requiredScope: required,
            appRoles: roles)
    }

    /// `<identifier URI>/<role>` for each role apps may be granted.
    var applicationRoles: [String] { appRoles.filter { $0.allowedMemberTypes.contains("Application") }.map { fullScope($0.value) } }
}

extension EmulatorSeed.App {
    var json: JSONValue {
        .object([
            "clientId": .string(clientId), "name": .string(name),
            "redirectUris": .array(
                redirects.map { r in
                    r.type == .publicClient ? .string(r.uri) : ["uri": .string(r.uri), "type": .string(r.type.rawValue)]
                }),
            "allowImplicitFlow": .bool(allowImplicitFlow), "nativeAuth": .bool(nativeAuth), "apiPermissions": JSONValue(apiPermissions),
            "applicationPermissions": JSONValue(applicationPermissions), "servicePrincipalId": .string(servicePrincipalId),
            "secrets": .array(
                secrets.map { s in
                    var o: [String: JSONValue] = s.value.map { ["value": .string($0)] } ?? ["hash": .string(s.hash)]
                    o["expires"] =
                        s.expiresAt.map { .string(ISO8601DateFormatter().string(from: Date(timeIntervalSince1970: TimeInterval($0)))) }
                        ?? .null
                    return .object(o)
                }),
        ])
    }

    static func parse(_ a: JSONObjectReader, apis: [EmulatorSeed.API]) throws -> Self {
        try a.rejectUnknownKeys(allowed: [
            "clientId", "name", "redirectUris", "allowImplicitFlow", "nativeAuth", "apiPermissions", "applicationPermissions", "secrets",
            "servicePrincipalId",
        ])
        let clientId = try EmulatorSeed.guid(a, "clientId")
        let perms = try a.stringArray("apiPermissions")
        let allScopes = Set(apis.flatMap { api in api.scopes.map(api.fullScope) })
        // Microsoft Graph's delegated permissions are named in full (`https://graph.microsoft.com/User.ReadWrite`): User.Read
        // every app has; User.ReadWrite only an app that names it, as in Entra.
        let graph = { (s: String) in s.hasPrefix(GraphEndpoint.resource + "/") && GraphEndpoint.scope(s) != nil }
        for (i, s) in perms.enumerated() where !allScopes.contains(s) && !graph(s) {
            throw JSONPathError(
                path: "\(a.childPath("apiPermissions"))[\(i)]",
                message: "is '\(s)', which no API in $.apis defines (Microsoft Graph's: \(GraphEndpoint.resource)/User.ReadWrite)")
        }
        let roles = try a.stringArray("applicationPermissions")
        let allRoles = Set(apis.flatMap(\.applicationRoles))
        for (i, r) in roles.enumerated() where !allRoles.contains(r) {
            throw JSONPathError(
                path: "\(a.childPath("applicationPermissions"))[\(i)]",
                message: "is '\(r)', which no API in $.apis defines as an Application app role")
        }
        return Self(
            clientId: clientId, name: try a.optionalString("name") ?? "app", redirects: try redirects(a),
            allowImplicitFlow: try a.bool("allowImplicitFlow", default: false), nativeAuth: try a.bool("nativeAuth", default: false),
            apiPermissions: perms, applicationPermissions: roles, secrets: try secrets(a),
            servicePrincipalId: try a.optionalString("servicePrincipalId").map { _ in try EmulatorSeed.guid(a, "servicePrincipalId") }
                ?? EmulatorStore.derivedGUID("service principal of \(clientId)"))
    }

    /// Strings (public client) or `{"uri", "type": "publicClient" | "web" | "spa"}`.
    private static func redirects(_ a: JSONObjectReader) throws -> [EmulatorSeed.Redirect] {
        guard let raw = a.raw("redirectUris") else { return [] }
        guard case .array(let items) = raw else { throw JSONPathError(path: a.childPath("redirectUris"), message: "must be an array") }
        return try items.enumerated().map { i, item in
            let path = "\(a.childPath("redirectUris"))[\(i)]"
            var redirect: EmulatorSeed.Redirect
            switch item {
            case .string(let uri): redirect = .init(uri: uri, type: .publicClient)
            case .object:
                let r = try JSONObjectReader(item, path: path)
                try r.rejectUnknownKeys(allowed: ["uri", "type"])
                let typeName = try r.optionalString("type") ?? "publicClient"
                guard let type = EmulatorSeed.RedirectType(rawValue: typeName) else {
                    throw JSONPathError(path: r.childPath("type"), message: "is '\(typeName)'; expected publicClient, web or spa")
                }
                redirect = .init(uri: try r.string("uri"), type: type)
            default: throw JSONPathError(path: path, message: "must be a URI or an object {\"uri\", \"type\"}")
            }
            guard let u = URLComponents(string: redirect.uri), u.scheme != nil else {
                throw JSONPathError(path: path, message: "is not an absolute URI")
            }
            if redirect.type == .spa, u.scheme != "https", !Loopback.isHost(u.host ?? "") {
                throw JSONPathError(path: path, message: "a spa redirect URI must be https (http only on a loopback host)")
            }
            return redirect
        }
    }

    /// `{"value": "…"}` or `{"hash": "sha256:…"}`, each with an optional `expires`.
    private static func secrets(_ a: JSONObjectReader) throws -> [EmulatorSeed.Secret] {
        try a.objects("secrets").map { s in
            try s.rejectUnknownKeys(allowed: ["value", "hash", "expires"])
            let expires = try EmulatorSeed.time(s, "expires")
            if let value = try s.optionalString("value") {
                guard !value.isEmpty else { throw JSONPathError(path: s.childPath("value"), message: "must not be empty") }
                return EmulatorSeed.Secret(value: value, expiresAt: expires)
            }
            guard let hash = try s.optionalString("hash"), hash.hasPrefix("sha256:") else {
                throw JSONPathError(path: s.path, message: "needs a value, or a hash \"sha256:<base64url of the SHA-256>\"")
            }
            return EmulatorSeed.Secret(hash: hash, expiresAt: expires)
        }
    }
}

extension EmulatorSeed.APIConnector {
    var json: JSONValue {
        var o: [String: JSONValue] = ["url": .string(url), "timeoutSeconds": JSONValue(timeoutSeconds)]
        switch auth {
        case .none: break
        case .basic(let user, let password): o["auth"] = ["type": "basic", "username": .string(user), "password": .string(password)]
        case .certificate(let cert, let key):
            o["auth"] = ["type": "certificate", "certificateFile": .string(cert), "keyFile": .string(key)]
        case .bearer(let token): o["auth"] = ["type": "bearer", "token": .string(token)]
        }
        if let caFile { o["caFile"] = .string(caFile) }
        return .object(o)
    }
}

extension EmulatorSeed.AuthenticationExtension {
    static func parse(_ o: JSONObjectReader) throws -> Self {
        try o.rejectUnknownKeys(allowed: ["event", "url", "appId", "clientIds", "claims", "timeoutMs", "maximumRetries", "caFile"])
        let name = try o.string("event")
        guard let event = Event.allCases.first(where: { $0.rawValue.lowercased() == name.lowercased() }) else {
            throw JSONPathError(
                path: o.childPath("event"), message: "is '\(name)'; expected \(Event.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        let url = try o.string("url")
        guard let u = URL(string: url), let scheme = u.scheme, let host = u.host,
            scheme == "https" || (scheme == "http" && ["127.0.0.1", "localhost", "::1"].contains(host.lowercased()))
        else {
            throw JSONPathError(
                path: o.childPath("url"), message: "'\(url)' must be an https URL (Entra's rule; plain http only on loopback)")
        }
        return Self(
            event: event, url: url, appId: try EmulatorSeed.guid(o, "appId"), clientIds: try o.stringArray("clientIds"),
            claims: try o.stringArray("claims"), timeoutMs: try o.int("timeoutMs", default: 1000, range: 200...2000)!,
            maximumRetries: try o.int("maximumRetries", default: 1, range: 0...1)!, caFile: try o.optionalString("caFile"))
    }

    var json: JSONValue {
        var o: [String: JSONValue] = [
            "event": .string(event.rawValue), "url": .string(url), "appId": .string(appId), "clientIds": JSONValue(clientIds),
            "claims": JSONValue(claims), "timeoutMs": JSONValue(timeoutMs), "maximumRetries": JSONValue(maximumRetries),
        ]
        if let caFile { o["caFile"] = .string(caFile) }
        return .object(o)
    }
}
