import B2CProtocol
import Foundation

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
        if forcedPasswordReset { o["forcedPasswordReset"] = true }
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
            "forcedPasswordReset",
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
        policy.forcedPasswordReset = try p.bool("forcedPasswordReset", default: false)
        if policy.forcedPasswordReset && ![.signUpSignIn, .signIn].contains(kind) {
            throw JSONPathError(
                path: p.childPath("forcedPasswordReset"), message: "applies to signUpSignIn and signIn user flows only (B2C's setting)")
        }
        return policy
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
    static func pageLayouts(_ p: JSONObjectReader) throws -> EmulatorSeed.PageLayouts {
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
    static func applicationClaims(_ p: JSONObjectReader) throws -> [String]? {
        guard let items = p.raw("applicationClaims") else { return nil }
        guard let names = items.arrayValue?.compactMap(\.stringValue), names.count == items.arrayValue?.count else {
            throw JSONPathError(path: p.childPath("applicationClaims"), message: "must be an array of attribute names")
        }
        return names
    }
}
