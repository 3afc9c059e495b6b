import B2CProtocol
import Foundation

extension EmulatorSeed.Policy: SeedObject {
    init() {
        self.init(
            id: "", kind: .signUpSignIn, policyClaim: "tfp", issuerPattern: "tenantGuid", accessTokenLifetime: 3600, idTokenLifetime: 3600,
            refreshTokenLifetime: 1_209_600, slidingWindow: 7_776_000, numbersAsStrings: false)
    }

    /// In the order they are read: a field may depend on one before it (the type on the id, the checks on the kind).
    static let fields: [SeedField<Self>] =
        tokens + [
            .custom("mfa", read: { r, p in p.mfa = try mfa(r, kind: p.kind) }, write: { p in p.mfa.map { ["mfa": $0.json] } ?? [:] }),
            .custom(
                "identityProviders",
                read: { r, p in
                    p.identityProviders = try identityProviders(r, kind: p.kind)
                    p.oidcProviders = try oidcProviders(r)
                    p.samlProviders = try samlProviders(r)
                }, write: \.identityProvidersJSON),
            .custom("session", "kmsi", read: { r, p in p.session = try session(r, kind: p.kind) }, write: \.sessionJSON),
            .custom("languages", read: { r, p in p.languages = try languages(r) }, write: \.languagesJSON),
            .custom(
                "emailVerification", read: { r, p in p.emailVerification = try emailVerification(r) },
                write: { p in
                    p.emailVerification == .classic
                        ? [:] : ["emailVerification": p.emailVerification == .off ? false : .string(p.emailVerification.rawValue)]
                }),
            .custom(
                "attributes", read: { r, p in p.attributes = try attributes(r) },
                write: { p in p.attributes == EmulatorSeed.Attribute.defaults ? [:] : ["attributes": .array(p.attributes.map(\.json))] }),
            .custom(
                "applicationClaims", read: { r, p in p.applicationClaims = try applicationClaims(r) },
                write: { p in p.applicationClaims.map { ["applicationClaims": JSONValue($0)] } ?? [:] }),
            .custom(
                "apiConnectors", read: { r, p in p.apiConnectors = try apiConnectors(r, kind: p.kind) },
                write: { p in p.apiConnectors.isEmpty ? [:] : ["apiConnectors": p.apiConnectors.json] }),
            .custom("pageLayouts", read: { r, p in p.pageLayouts = try pageLayouts(r) }, write: \.pageLayoutsJSON),
            .custom(
                "forcedPasswordReset",
                read: { r, p in
                    p.forcedPasswordReset = try r.bool("forcedPasswordReset", default: false)
                    if p.forcedPasswordReset && ![.signUpSignIn, .signIn].contains(p.kind) {
                        throw JSONPathError(
                            path: r.childPath("forcedPasswordReset"),
                            message: "applies to signUpSignIn and signIn user flows only (B2C's setting)")
                    }
                }, write: { p in p.forcedPasswordReset ? ["forcedPasswordReset": true] : [:] }),
        ]

    /// What names the policy and what its tokens are: the id and its type, the kind, the claim and issuer, the lifetimes.
    private static let tokens: [SeedField<Self>] = [
        .custom(
            "id", "type",
            read: { r, p in
                let id = try r.string("id")
                let typeName = try r.optionalString("type") ?? (id.lowercased().hasPrefix("b2c_1a_") ? "custom" : "userFlow")
                guard let type = EmulatorSeed.PolicyType(rawValue: typeName) else {
                    throw JSONPathError(path: r.childPath("type"), message: "is '\(typeName)'; expected userFlow or custom")
                }
                let prefix = type == .custom ? "b2c_1a_" : "b2c_1_"
                guard PolicyID.isValid(id), id.lowercased().hasPrefix(prefix) else {
                    throw JSONPathError(
                        path: r.childPath("id"),
                        message: "must be a "
                            + (type == .custom ? "custom policy id such as B2C_1A_signup_signin" : "user flow id such as B2C_1_susi")
                            + " (letters, digits, _ . -)")
                }
                (p.id, p.type) = (id, type)
            }, write: { p in ["id": .string(p.id), "type": .string(p.type.rawValue)] }),
        .custom(
            "kind",
            read: { r, p in
                let kindName = try r.string("kind")
                let userFlowKinds = EmulatorSeed.PolicyKind.allCases.filter { $0 != .clientCredentials }
                guard let kind = EmulatorSeed.PolicyKind(name: kindName), kind != .clientCredentials else {
                    throw JSONPathError(
                        path: r.childPath("kind"),
                        message: "is '\(kindName)'; expected one of \(userFlowKinds.map(\.rawValue).joined(separator: ", "))"
                            + " (client credentials are served by any policy's token endpoint)")
                }
                p.kind = kind
            }, write: { p in ["kind": .string(p.kind.rawValue)] }),
        .custom(
            "policyClaim",
            read: { r, p in
                p.policyClaim = try r.optionalString("policyClaim") ?? (p.type == .custom ? "acr" : "tfp")
                guard ["tfp", "acr"].contains(p.policyClaim) else {
                    throw JSONPathError(path: r.childPath("policyClaim"), message: "must be \"tfp\" or \"acr\"")
                }
            }, write: { p in ["policyClaim": .string(p.policyClaim)] }),
        .string("issuerPattern", \.issuerPattern, default: "tenantGuid") { pattern, r in
            guard ["tenantGuid", "tfp"].contains(pattern) else {
                throw JSONPathError(path: r.childPath("issuerPattern"), message: "must be \"tenantGuid\" or \"tfp\"")
            }
            return pattern
        },
        .custom(
            "refreshTokenLifetime", "slidingWindow",
            read: { r, p in
                p.refreshTokenLifetime = try r.int("refreshTokenLifetime", default: 1_209_600, range: 60...7_776_000)!
                p.slidingWindow = try r.int("slidingWindow", default: r.has("slidingWindow") ? nil : 7_776_000, range: 60...31_536_000)
                if let sliding = p.slidingWindow, sliding < p.refreshTokenLifetime {
                    throw JSONPathError(
                        path: r.childPath("slidingWindow"),
                        message: "must be at least refreshTokenLifetime (\(p.refreshTokenLifetime)); use null for no sliding-window limit")
                }
            },
            write: { p in
                [
                    "refreshTokenLifetime": JSONValue(p.refreshTokenLifetime),
                    "slidingWindow": p.slidingWindow.map { JSONValue($0) } ?? .null,
                ]
            }),
        .custom(
            "signInMethod",
            read: { r, p in
                let methodName = try r.optionalString("signInMethod") ?? "emailPassword"
                guard let method = EmulatorSeed.SignInMethod(rawValue: methodName) else {
                    throw JSONPathError(
                        path: r.childPath("signInMethod"), message: "is '\(methodName)'; expected emailPassword or emailOtp")
                }
                p.signInMethod = method
            }, write: { p in p.signInMethod == .emailPassword ? [:] : ["signInMethod": .string(p.signInMethod.rawValue)] }),
        .int("accessTokenLifetime", \.accessTokenLifetime, default: 3600, range: 60...86_400),
        .int("idTokenLifetime", \.idTokenLifetime, default: 3600, range: 60...86_400),
        .bool("numbersAsStrings", \.numbersAsStrings, default: false),
    ]

    private var identityProvidersJSON: [String: JSONValue] {
        guard identityProviders != [.local] || !oidcProviders.isEmpty || !samlProviders.isEmpty else { return [:] }
        return [
            "identityProviders": .array(
                identityProviders.map { .string($0.rawValue) } + oidcProviders.map(\.json) + samlProviders.map(\.json))
        ]
    }

    private var sessionJSON: [String: JSONValue] {
        guard session != EmulatorSeed.SessionSettings() else { return [:] }
        var o: [String: JSONValue] = [
            "session": [
                "lifetimeMinutes": JSONValue(session.lifetimeMinutes), "timeout": .string(session.rolling ? "rolling" : "absolute"),
                "sso": .string(session.scope.rawValue),
            ]
        ]
        if let days = session.kmsiDays { o["kmsi"] = ["enabled": true, "days": JSONValue(days)] }
        return o
    }

    /// The languages in B2C's shape: an override file per language, its strings marked `Override`.
    private var languagesJSON: [String: JSONValue] {
        guard languages != EmulatorSeed.Languages() else { return [:] }
        var o: [String: JSONValue] = ["default": .string(languages.defaultLanguage), "enabled": JSONValue(languages.enabled)]
        if !languages.overrides.isEmpty {
            o["overrides"] = .object(
                languages.overrides.mapValues { strings in
                    [
                        "LocalizedStrings": .array(
                            strings.keys.sorted().map { ["StringId": .string($0), "Value": .string(strings[$0]!), "Override": true] })
                    ]
                })
        }
        return ["languages": .object(o)]
    }

    private var pageLayoutsJSON: [String: JSONValue] {
        guard !pageLayouts.isEmpty else { return [:] }
        var layouts: [String: JSONValue] = ["javascript": .bool(pageLayouts.javascript), "strictCors": .bool(pageLayouts.strictCors)]
        for (type, page) in pageLayouts.pages {
            layouts[type.rawValue] = ["loadUri": .string(page.loadUri), "dataUri": .string(page.dataUri)]
        }
        return ["pageLayouts": .object(layouts)]
    }

    /// `"emailVerification": true | false | "classic" | "displayControl"` (true is the classic widget).
    static func emailVerification(_ p: JSONObjectReader) throws -> EmulatorSeed.EmailVerification {
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
    static func apiConnectors(_ p: JSONObjectReader, kind: EmulatorSeed.PolicyKind) throws -> EmulatorSeed.APIConnectors {
        guard let o = try p.object("apiConnectors") else { return .init() }
        try o.rejectUnknownKeys(allowed: Set(EmulatorSeed.APIConnectors.Step.allCases.map(\.rawValue)))
        guard [.signUpSignIn, .signUp].contains(kind) else {
            throw JSONPathError(
                path: p.childPath("apiConnectors"), message: "is for sign-up and sign-in or sign-up user flows, not \(kind.rawValue)")
        }
        var out = EmulatorSeed.APIConnectors()
        for step in EmulatorSeed.APIConnectors.Step.allCases {
            guard let c = try o.object(step.rawValue) else { continue }
            let connector = try EmulatorSeed.APIConnector(reading: c)
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
    static func pageLayouts(_ p: JSONObjectReader) throws -> EmulatorSeed.PageLayouts {
        guard let o = try p.object("pageLayouts") else { return .init() }
        typealias PageType = EmulatorSeed.PageLayouts.PageType
        try o.rejectUnknownKeys(allowed: Set(PageType.userFlowPages.map(\.rawValue) + ["error", "javascript", "strictCors"]))
        var out = EmulatorSeed.PageLayouts(
            javascript: try o.bool("javascript", default: false), strictCors: try o.bool("strictCors", default: false))
        for key in PageType.userFlowPages.map(\.rawValue) + ["error"] where o.has(key) {
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
    static func applicationClaims(_ p: JSONObjectReader) throws -> [String]? {
        guard let items = p.raw("applicationClaims") else { return nil }
        guard let names = items.arrayValue?.compactMap(\.stringValue), names.count == items.arrayValue?.count else {
            throw JSONPathError(path: p.childPath("applicationClaims"), message: "must be an array of attribute names")
        }
        return names
    }
}
