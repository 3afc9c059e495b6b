import B2CProtocol
import Foundation

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
                        s.expiresAt.map { .string(ISO8601.string(epoch: $0)) }
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
        for (i, r) in roles.enumerated() where !allRoles.contains(r) && !GraphEndpoint.applicationPermissions.contains(r) {
            throw JSONPathError(
                path: "\(a.childPath("applicationPermissions"))[\(i)]",
                message: "is '\(r)', which no API in $.apis defines as an Application app role (Microsoft Graph's: "
                    + GraphEndpoint.applicationPermissions.sorted().joined(separator: ", ") + ")")
        }
        return Self(
            clientId: clientId, name: try a.optionalString("name") ?? "app", redirects: try redirects(a),
            allowImplicitFlow: try a.bool("allowImplicitFlow", default: false), nativeAuth: try a.bool("nativeAuth", default: false),
            apiPermissions: perms, applicationPermissions: roles, secrets: try secrets(a),
            servicePrincipalId: try a.optionalString("servicePrincipalId").map { _ in try EmulatorSeed.guid(a, "servicePrincipalId") }
                ?? EmulatorStore.derivedGUID("service principal of \(clientId)"))
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

    /// `{"value": "…"}` or `{"hash": "sha256:…"}`, each with an optional `expires`.
    static func secrets(_ a: JSONObjectReader) throws -> [EmulatorSeed.Secret] {
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
        try o.rejectUnknownKeys(allowed: [
            "event", "url", "appId", "clientIds", "claims", "timeoutMs", "maximumRetries", "caFile", "migrationProperty",
            "encryptionCertificate", "encryptionAlgorithm",
        ])
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
        var ext = Self(
            event: event, url: url, appId: try EmulatorSeed.guid(o, "appId"), clientIds: try o.stringArray("clientIds"),
            claims: try o.stringArray("claims"), timeoutMs: try o.int("timeoutMs", default: 1000, range: 200...2000)!,
            maximumRetries: try o.int("maximumRetries", default: 1, range: 0...1)!, caFile: try o.optionalString("caFile"))
        ext.migrationProperty = try o.optionalString("migrationProperty")
        ext.encryptionCertificate = try o.optionalString("encryptionCertificate")
        ext.encryptionAlgorithm = try o.optionalString("encryptionAlgorithm") ?? "RSA-OAEP-256"
        guard event == .onPasswordSubmit else {
            for key in ["migrationProperty", "encryptionCertificate", "encryptionAlgorithm"] where o.has(key) {
                throw JSONPathError(path: o.childPath(key), message: "belongs to an onPasswordSubmit extension only")
            }
            return ext
        }
        guard let property = ext.migrationProperty, property.hasPrefix("extension_") else {
            throw JSONPathError(
                path: o.childPath("migrationProperty"),
                message: "is required: the directory extension attribute that marks a person for migration, such as "
                    + "extension_<b2c-extensions-app id without hyphens>_toBeMigrated")
        }
        _ = property
        guard ["RSA-OAEP-256", "RSA-OAEP"].contains(ext.encryptionAlgorithm) else {
            throw JSONPathError(
                path: o.childPath("encryptionAlgorithm"), message: "is '\(ext.encryptionAlgorithm)'; expected RSA-OAEP-256 or RSA-OAEP")
        }
        guard let file = ext.encryptionCertificate else {
            throw JSONPathError(
                path: o.childPath("encryptionCertificate"),
                message: "is required: the PEM file of the certificate (or public key) the password is encrypted to")
        }
        do { _ = try PasswordEncryption.publicKey(file: file) } catch {
            throw JSONPathError(path: o.childPath("encryptionCertificate"), message: "'\(file)' \(error)")
        }
        return ext
    }

    var json: JSONValue {
        var o: [String: JSONValue] = [
            "event": .string(event.rawValue), "url": .string(url), "appId": .string(appId), "clientIds": JSONValue(clientIds),
            "claims": JSONValue(claims), "timeoutMs": JSONValue(timeoutMs), "maximumRetries": JSONValue(maximumRetries),
        ]
        if let caFile { o["caFile"] = .string(caFile) }
        if let migrationProperty { o["migrationProperty"] = .string(migrationProperty) }
        if let encryptionCertificate {
            o["encryptionCertificate"] = .string(encryptionCertificate)
            o["encryptionAlgorithm"] = .string(encryptionAlgorithm)
        }
        return .object(o)
    }
}
