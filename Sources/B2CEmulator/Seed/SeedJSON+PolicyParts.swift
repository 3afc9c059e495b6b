import B2CProtocol
import Foundation

extension EmulatorSeed.Policy {
    /// `"attributes": ["city", {"name": "extension_LoyaltyId", "type": "String" | "Boolean" | "Int", "required": true,
    /// "label": "Loyalty number"}]`: what the sign-up page collects (default: displayName, givenName, surname).
    static func attributes(_ p: JSONObjectReader) throws -> [EmulatorSeed.Attribute] {
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
    static func languages(_ p: JSONObjectReader) throws -> EmulatorSeed.Languages {
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
    static func session(_ p: JSONObjectReader, kind: EmulatorSeed.PolicyKind) throws -> EmulatorSeed.SessionSettings {
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
    static func identityProviders(_ p: JSONObjectReader, kind: EmulatorSeed.PolicyKind) throws -> [EmulatorSeed.IdentityProvider] {
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

    /// The `{"type": "oidc", …}` entries of `identityProviders`.
    static func oidcProviders(_ p: JSONObjectReader) throws -> [EmulatorSeed.OIDCProvider] {
        try (p.raw("identityProviders")?.arrayValue ?? []).enumerated().filter { $0.element["type"]?.stringValue == "oidc" }.map {
            i, item in
            try EmulatorSeed.OIDCProvider(reading: item, path: p.childPath("identityProviders") + "[\(i)]")
        }
    }

    /// The `{"type": "saml", …}` entries of `identityProviders`; no two entries of the list share an id.
    static func samlProviders(_ p: JSONObjectReader) throws -> [EmulatorSeed.SAMLProvider] {
        var out: [EmulatorSeed.SAMLProvider] = []
        var ids = Set<String>()
        for (i, item) in (p.raw("identityProviders")?.arrayValue ?? []).enumerated() where item.objectValue != nil {
            let o = try JSONObjectReader(item, path: p.childPath("identityProviders") + "[\(i)]")
            let id = try providerID(o.string("id"), o)
            guard ids.insert(id.lowercased()).inserted else {
                throw JSONPathError(path: o.childPath("id"), message: "'\(id)' names another provider of this policy too")
            }
            if item["type"]?.stringValue == "saml" { out.append(try EmulatorSeed.SAMLProvider(reading: o)) }
        }
        return out
    }

    /// A provider's `id`: it names a button and a form field, so letters, digits, '-' and '_'.
    static func providerID(_ id: String, _ o: JSONObjectReader) throws -> String {
        guard id.range(of: #"^[A-Za-z][A-Za-z0-9_-]{0,63}$"#, options: .regularExpression) != nil else {
            throw JSONPathError(path: o.childPath("id"), message: "'\(id)' must be letters, digits, '-' or '_', starting with a letter")
        }
        return id
    }

    /// `"mfa": {"methods": ["email" | "phone" | "totp"], "enforcement": "always" | "conditional" | "off"}`.
    static func mfa(_ p: JSONObjectReader, kind: EmulatorSeed.PolicyKind) throws -> EmulatorSeed.MFA? {
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

/// `{"type": "oidc", "id", "name"?, "discovery", "clientId", "clientSecret"?, "scope"?, "domainHint"?, "caFile"?}`.
extension EmulatorSeed.OIDCProvider: SeedObject {
    init() { self.init(id: "", name: "", discovery: "", clientId: "") }

    static let fields: [SeedField<Self>] = [
        .custom("type", read: { _, _ in }, write: { _ in ["type": "oidc"] }),
        .string("id", \.id, check: EmulatorSeed.Policy.providerID),
        .string("discovery", \.discovery) { discovery, o in
            guard let u = URL(string: discovery), ["http", "https"].contains(u.scheme ?? ""), u.host != nil else {
                throw JSONPathError(path: o.childPath("discovery"), message: "'\(discovery)' is not an http(s) URL")
            }
            return discovery
        },
        .string("name", \.name, default: ""),
        .string("clientId", \.clientId),
        .optional("clientSecret", \.clientSecret),
        .string("scope", \.scope, default: "openid profile email"),
        .optional("domainHint", \.domainHint),
        .optional("caFile", \.caFile),
    ]

    mutating func finish(_ r: JSONObjectReader) throws { if name.isEmpty { name = id } }
}

/// `{"type": "saml", "id", "name"?, "metadata", "domainHint"?, "caFile"?}`: the metadata names the keys the tenant
/// trusts, so it comes over the network only with TLS (plain http on loopback), or from a file.
extension EmulatorSeed.SAMLProvider: SeedObject {
    init() { self.init(id: "", name: "", metadata: "") }

    static let fields: [SeedField<Self>] = [
        .custom("type", read: { _, _ in }, write: { _ in ["type": "saml"] }),
        .string("id", \.id),
        .string("metadata", \.metadata) { metadata, o in
            if let u = URL(string: metadata), let scheme = u.scheme, scheme.count > 1 {
                guard ["http", "https"].contains(scheme), let host = u.host else {
                    throw JSONPathError(path: o.childPath("metadata"), message: "'\(metadata)' is neither an http(s) URL nor a file path")
                }
                guard scheme == "https" || ["127.0.0.1", "localhost", "::1", "[::1]"].contains(host.lowercased()) else {
                    throw JSONPathError(
                        path: o.childPath("metadata"),
                        message: "'\(metadata)' must be https (it names the keys the tenant trusts), or a file")
                }
            } else if !FileManager.default.isReadableFile(atPath: metadata) {
                throw JSONPathError(path: o.childPath("metadata"), message: "the file '\(metadata)' cannot be read")
            }
            return metadata
        },
        .string("name", \.name, default: ""),
        .optional("domainHint", \.domainHint),
        .optional("caFile", \.caFile),
    ]

    mutating func finish(_ r: JSONObjectReader) throws { if name.isEmpty { name = id } }
}

extension EmulatorSeed.MFA {
    var json: JSONValue { ["methods": JSONValue(methods.map(\.rawValue)), "enforcement": .string(enforcement.rawValue)] }
}

extension EmulatorSeed.Attribute {
    var json: JSONValue { ["name": .string(name), "type": .string(kind.rawValue), "required": .bool(required), "label": .string(label)] }
}

extension EmulatorSeed.APIConnectors {
    var json: JSONValue {
        .object(Dictionary(uniqueKeysWithValues: Step.allCases.compactMap { step in self[step].map { (step.rawValue, $0.json) } }))
    }
}
