import B2CProtocol
import Foundation

extension EmulatorSeed.API: SeedObject {
    init() { self.init(name: "", appId: "", identifierUri: "", scopes: [], requiredScope: nil) }

    static let fields: [SeedField<Self>] = [
        .string("identifierUri", \.identifierUri) { uri, r in
            guard let u = URL(string: uri), u.scheme == "https", u.host != nil, !uri.hasSuffix("/") else {
                throw JSONPathError(
                    path: r.childPath("identifierUri"),
                    message: "must be an https URI without a trailing slash, such as https://contoso.onmicrosoft.com/helloapi")
            }
            return uri
        },
        .strings("scopes", \.scopes, required: true),
        .custom(
            "requiredScope",
            read: { r, api in
                api.requiredScope = try r.optionalString("requiredScope")
                if let required = api.requiredScope, !api.scopes.contains(required) {
                    throw JSONPathError(
                        path: r.childPath("requiredScope"), message: "is '\(required)', which is not one of scopes \(api.scopes)")
                }
            }, write: { api in api.requiredScope.map { ["requiredScope": .string($0)] } ?? [:] }),
        .objects("appRoles", \.appRoles),
        .string("name", \.name),
        .guid("appId", \.appId),
    ]

    /// `<identifier URI>/<role>` for each role apps may be granted.
    var applicationRoles: [String] { appRoles.filter { $0.allowedMemberTypes.contains("Application") }.map { fullScope($0.value) } }
}

extension EmulatorSeed.AppRole: SeedObject {
    init() { self.init(value: "", allowedMemberTypes: []) }

    static let fields: [SeedField<Self>] = [
        .strings("allowedMemberTypes", \.allowedMemberTypes) { type, path in
            guard ["Application", "User"].contains(type) else {
                throw JSONPathError(path: path, message: "is '\(type)'; expected Application or User")
            }
        },
        .string("value", \.value),
    ]

    mutating func finish(_ r: JSONObjectReader) throws {
        if allowedMemberTypes.isEmpty { allowedMemberTypes = ["Application"] }
    }
}

extension EmulatorSeed.App: SeedObject {
    init() {
        self.init(
            clientId: "", name: "app", redirects: [], allowImplicitFlow: false, nativeAuth: false, apiPermissions: [],
            servicePrincipalId: "")
    }

    static let fields: [SeedField<Self>] = [
        .guid("clientId", \.clientId),
        .strings("apiPermissions", \.apiPermissions),
        .strings("applicationPermissions", \.applicationPermissions),
        .string("name", \.name, default: "app"),
        .custom(
            "redirectUris", read: { r, app in app.redirects = try redirects(r) },
            write: { app in ["redirectUris": .array(app.redirects.map(\.json))] }),
        .bool("allowImplicitFlow", \.allowImplicitFlow, default: false),
        .bool("nativeAuth", \.nativeAuth, default: false),
        .objects("secrets", \.secrets),
        .guid("servicePrincipalId", \.servicePrincipalId, default: ""),
    ]

    mutating func finish(_ r: JSONObjectReader) throws {
        if servicePrincipalId.isEmpty { servicePrincipalId = EmulatorStore.derivedGUID("service principal of \(clientId)") }
    }

    /// An app of the tenant whose APIs are `apis`: every permission it is granted is one of theirs (or Microsoft Graph's).
    init(reading a: JSONObjectReader, apis: [EmulatorSeed.API]) throws {
        try self.init(reading: a)
        let allScopes = Set(apis.flatMap { api in api.scopes.map(api.fullScope) })
        // Microsoft Graph's delegated permissions are named in full (`https://graph.microsoft.com/User.ReadWrite`): User.Read
        // every app has; User.ReadWrite only an app that names it, as in Entra.
        let graph = { (s: String) in s.hasPrefix(GraphEndpoint.resource + "/") && GraphEndpoint.scope(s) != nil }
        for (i, s) in apiPermissions.enumerated() where !allScopes.contains(s) && !graph(s) {
            throw JSONPathError(
                path: "\(a.childPath("apiPermissions"))[\(i)]",
                message: "is '\(s)', which no API in $.apis defines (Microsoft Graph's: \(GraphEndpoint.resource)/User.ReadWrite)")
        }
        let allRoles = Set(apis.flatMap(\.applicationRoles))
        for (i, r) in applicationPermissions.enumerated() where !allRoles.contains(r) && !GraphEndpoint.applicationPermissions.contains(r) {
            throw JSONPathError(
                path: "\(a.childPath("applicationPermissions"))[\(i)]",
                message: "is '\(r)', which no API in $.apis defines as an Application app role (Microsoft Graph's: "
                    + GraphEndpoint.applicationPermissions.sorted().joined(separator: ", ") + ")")
        }
    }

    /// Strings (public client) or `{"uri", "type": "publicClient" | "web" | "spa"}`.
    static func redirects(_ a: JSONObjectReader) throws -> [EmulatorSeed.Redirect] {
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
}

extension EmulatorSeed.Redirect {
    /// A public client's URI as a string (the first seeds' shape), any other as `{"uri", "type"}`.
    var json: JSONValue { type == .publicClient ? .string(uri) : ["uri": .string(uri), "type": .string(type.rawValue)] }
}

/// `{"value": "…"}` or `{"hash": "sha256:…"}`, each with an optional `expires`.
extension EmulatorSeed.Secret: SeedObject {
    init() { self.init(hash: "", expiresAt: nil) }

    static let fields: [SeedField<Self>] = [
        .custom(
            "expires", read: { r, s in s.expiresAt = try EmulatorSeed.time(r, "expires") },
            write: { s in ["expires": s.expiresAt.map { .string(ISO8601.string(epoch: $0)) } ?? .null] }),
        .custom(
            "value", "hash",
            read: { r, s in
                if let value = try r.optionalString("value") { return s = EmulatorSeed.Secret(value: value, expiresAt: s.expiresAt) }
                guard let hash = try r.optionalString("hash"), hash.hasPrefix("sha256:") else {
                    throw JSONPathError(path: r.path, message: "needs a value, or a hash \"sha256:<base64url of the SHA-256>\"")
                }
                s.hash = hash
            }, write: { s in s.value.map { ["value": .string($0)] } ?? ["hash": .string(s.hash)] }),
    ]
}

/// An API connector of a user flow: `{"url", "auth"?, "timeoutSeconds"?, "caFile"?}`.
extension EmulatorSeed.APIConnector: SeedObject {
    init() { self.init(url: "") }

    static let fields: [SeedField<Self>] = [
        .string("url", \.url) { url, r in
            guard let u = URL(string: url), ["http", "https"].contains(u.scheme ?? ""), u.host != nil else {
                throw JSONPathError(path: r.childPath("url"), message: "'\(url)' is not an http(s) URL")
            }
            return url
        },
        .int("timeoutSeconds", \.timeoutSeconds, default: 20, range: 1...60),
        .optional("caFile", \.caFile),
        .custom("auth", read: { r, c in c.auth = try auth(r, url: c.url) }, write: { c in c.auth.json.map { ["auth": $0] } ?? [:] }),
    ]

    /// `{"type": "basic", "username", "password"}`, `{"type": "certificate", "certificateFile", "keyFile"}`, `{"type":
    /// "bearer", "token"}` or `{"type": "none"}`: credentials travel over TLS, or stay on this machine.
    private static func auth(_ c: JSONObjectReader, url: String) throws -> Auth {
        guard let a = try c.object("auth") else { return .none }
        let type = try a.string("type")
        let u = URL(string: url)
        let insecure = u?.scheme == "http" && !["127.0.0.1", "localhost", "::1"].contains(u?.host?.lowercased() ?? "")
        switch type {
        case "basic" where insecure, "bearer" where insecure:
            throw JSONPathError(
                path: c.childPath("url"), message: "must be https to carry \(type) credentials (plain http only on loopback)")
        case "basic":
            try a.rejectUnknownKeys(allowed: ["type", "username", "password"])
            return .basic(username: try a.string("username"), password: try a.string("password"))
        case "certificate":
            try a.rejectUnknownKeys(allowed: ["type", "certificateFile", "keyFile"])
            let auth = Auth.certificate(certificateFile: try a.string("certificateFile"), keyFile: try a.string("keyFile"))
            guard u?.scheme == "https" else {
                throw JSONPathError(path: c.childPath("url"), message: "must be https for certificate authentication")
            }
            return auth
        case "bearer":
            try a.rejectUnknownKeys(allowed: ["type", "token"])
            return .bearer(token: try a.string("token"))
        case "none":
            try a.rejectUnknownKeys(allowed: ["type"])
            return .none
        default:
            throw JSONPathError(path: a.childPath("type"), message: "is '\(type)'; expected basic, certificate, bearer or none")
        }
    }
}

extension EmulatorSeed.APIConnector.Auth {
    var json: JSONValue? {
        switch self {
        case .none: nil
        case .basic(let user, let password): ["type": "basic", "username": .string(user), "password": .string(password)]
        case .certificate(let cert, let key): ["type": "certificate", "certificateFile": .string(cert), "keyFile": .string(key)]
        case .bearer(let token): ["type": "bearer", "token": .string(token)]
        }
    }
}

extension EmulatorSeed.AuthenticationExtension: SeedObject {
    init() { self.init(event: .onTokenIssuanceStart, url: "", appId: "") }

    static let fields: [SeedField<Self>] = [
        .custom(
            "event",
            read: { r, ext in
                let name = try r.string("event")
                guard let event = Event.allCases.first(where: { $0.rawValue.lowercased() == name.lowercased() }) else {
                    throw JSONPathError(
                        path: r.childPath("event"),
                        message: "is '\(name)'; expected \(Event.allCases.map(\.rawValue).joined(separator: ", "))")
                }
                ext.event = event
            }, write: { ["event": .string($0.event.rawValue)] }),
        .string("url", \.url) { url, r in
            guard let u = URL(string: url), let scheme = u.scheme, let host = u.host,
                scheme == "https" || (scheme == "http" && ["127.0.0.1", "localhost", "::1"].contains(host.lowercased()))
            else {
                throw JSONPathError(
                    path: r.childPath("url"), message: "'\(url)' must be an https URL (Entra's rule; plain http only on loopback)")
            }
            return url
        },
        .guid("appId", \.appId),
        .strings("clientIds", \.clientIds),
        .strings("claims", \.claims),
        .int("timeoutMs", \.timeoutMs, default: 1000, range: 200...2000),
        .int("maximumRetries", \.maximumRetries, default: 1, range: 0...1),
        .optional("caFile", \.caFile),
        .optional("migrationProperty", \.migrationProperty),
        .custom(
            "encryptionCertificate", "encryptionAlgorithm",
            read: { r, ext in
                ext.encryptionCertificate = try r.optionalString("encryptionCertificate")
                ext.encryptionAlgorithm = try r.optionalString("encryptionAlgorithm") ?? "RSA-OAEP-256"
            },
            write: { ext in
                ext.encryptionCertificate.map {
                    ["encryptionCertificate": .string($0), "encryptionAlgorithm": .string(ext.encryptionAlgorithm)]
                } ?? [:]
            }),
    ]

    /// The password-submit extension's own keys, and only its.
    mutating func finish(_ o: JSONObjectReader) throws {
        guard event == .onPasswordSubmit else {
            for key in ["migrationProperty", "encryptionCertificate", "encryptionAlgorithm"] where o.has(key) {
                throw JSONPathError(path: o.childPath(key), message: "belongs to an onPasswordSubmit extension only")
            }
            return
        }
        guard migrationProperty?.hasPrefix("extension_") == true else {
            throw JSONPathError(
                path: o.childPath("migrationProperty"),
                message: "is required: the directory extension attribute that marks a person for migration, such as "
                    + "extension_<b2c-extensions-app id without hyphens>_toBeMigrated")
        }
        guard ["RSA-OAEP-256", "RSA-OAEP"].contains(encryptionAlgorithm) else {
            throw JSONPathError(
                path: o.childPath("encryptionAlgorithm"), message: "is '\(encryptionAlgorithm)'; expected RSA-OAEP-256 or RSA-OAEP")
        }
        guard let file = encryptionCertificate else {
            throw JSONPathError(
                path: o.childPath("encryptionCertificate"),
                message: "is required: the PEM file of the certificate (or public key) the password is encrypted to")
        }
        do { _ = try PasswordEncryption.publicKey(file: file) } catch {
            throw JSONPathError(path: o.childPath("encryptionCertificate"), message: "'\(file)' \(error)")
        }
    }
}
