import B2CProtocol
import Foundation

/// The client `policies.json` for an emulator (format: docs/configuration.md).
extension B2CEmulator {
    /// A client `policies.json` that targets this emulator at `baseURL` (docs/configuration.md).
    /// `app` is the registration whose client id it names (default: the seed's first, the public client).
    public func clientConfiguration(baseURL: String, caFile: String?, app chosen: EmulatorSeed.App? = nil) -> JSONValue {
        let app = chosen ?? seed.apps.first
        var o: [String: JSONValue] = [
            "tenant": ["name": .string(seed.tenant.name), "id": .string(seed.tenant.id)],
            "authorityHost": .string(baseURL),
            "knownAuthorities": [
                .string(URL(string: baseURL).map { u in u.port.map { "\(u.host ?? ""):\($0)" } ?? (u.host ?? "") } ?? baseURL)
            ],
            "clientId": .string(app?.clientId ?? ""),
            "redirectUri": .string(app?.redirectUris.first ?? "http://localhost"),
            "policies": .array(
                seed.policies.map { ["name": .string($0.id), "role": .string($0.kind.rawValue)] }
                    + customPolicies.relyingParties.filter { seed.policy(named: $0.id) == nil }.map {
                        ["name": .string($0.id), "role": .string($0.role.rawValue)]
                    }),
            // The app's delegated scopes of each API; an app granted only app roles (a daemon) gets `<App ID URI>/.default`.
            "apis": .array(
                seed.apis.compactMap { api in
                    var scopes = api.scopes.map(api.fullScope).filter { app?.apiPermissions.contains($0) ?? false }
                    if scopes.isEmpty, api.applicationRoles.contains(where: { app?.applicationPermissions.contains($0) ?? false }) {
                        scopes = ["\(api.identifierUri)/.default"]
                    }
                    guard !scopes.isEmpty else { return nil }
                    return ["name": .string(api.name), "baseUrl": .string(baseURL + "/" + api.name), "scopes": JSONValue(scopes)]
                }),
        ]
        if let app, app.isConfidential && !app.redirects.isEmpty {
            // A web app's redemptions send its secret (which comes from outside the file).
            o["confidential"] = true
        }
        if app?.nativeAuth == true {
            o["nativeAuth"] = [
                "name": seed.tenant.externalId ? "ExternalID" : "native", "authority": .string("\(baseURL)/\(seed.tenant.name)"),
                "challengeTypes": ["oob", "password"],
            ]
        }
        if seed.tenant.externalId {
            // No policies: the tenant's user flow is attached to the app, and no URL names it.
            o["tenantType"] = "externalId"
            o["policies"] = nil
            // Microsoft Graph, as the tenant serves it for the signed-in person.
            o["apis"] = .array(
                (o["apis"]?.arrayValue ?? []) + [["name": "graph", "baseUrl": .string(baseURL + "/graph/v1.0"), "scopes": ["User.Read"]]])
        }
        // Microsoft Graph as the app calls it (`b2c users`, `b2c policy`): the tenant's own, and its policy-less authority.
        o["graph"] = ["baseUrl": .string(baseURL + "/graph"), "authority": .string("\(baseURL)/\(seed.tenant.name)")]
        if let caFile { o["caFile"] = .string(caFile) }
        return .object(o)
    }
}

extension B2CEmulator {
    /// The app registration named (its name or client id), if any.
    public func app(named name: String) -> EmulatorSeed.App? {
        seed.apps.first { $0.name.caseInsensitiveCompare(name) == .orderedSame || $0.clientId.caseInsensitiveCompare(name) == .orderedSame }
    }

    /// A web app's or daemon's settings for this emulator (`--config-out FILE --app NAME`): the `AzureAdB2C` section that
    /// Microsoft.Identity.Web reads from `appsettings.json`, and the plain values other libraries take (authority, token
    /// endpoint, client id and secret, redirect URIs, scopes, CA file). The secret is written only when the seed holds its
    /// value (a seed may give a hash instead).
    public func appSettings(baseURL: String, app: EmulatorSeed.App, caFile: String?) -> JSONValue {
        let policy = seed.policies.first { $0.kind == .signUpSignIn && $0.type == .userFlow } ?? seed.policies[0]
        func id(_ kind: EmulatorSeed.PolicyKind) -> JSONValue {
            seed.policies.first { $0.kind == kind && $0.type == .userFlow }.map { .string($0.id) } ?? .null
        }
        let secret = app.secrets.first { $0.value != nil }?.value
        let callback = app.redirects.first { $0.type == .web }.flatMap { URL(string: $0.uri)?.path }.flatMap { $0.isEmpty ? nil : $0 }
        var azure: [String: JSONValue] = [
            "Instance": .string(baseURL), "Domain": .string(seed.tenant.name), "TenantId": .string(seed.tenant.id),
            "ClientId": .string(app.clientId),
            "SignUpSignInPolicyId": .string(policy.id), "EditProfilePolicyId": id(.editProfile),
            "ResetPasswordPolicyId": id(.resetPassword),
            "CallbackPath": callback.map { .string($0) } ?? .null,
        ]
        if let secret { azure["ClientSecret"] = .string(secret) }
        let apiScopes = seed.apis.flatMap { api in api.scopes.map(api.fullScope).filter(app.apiPermissions.contains) }
        let defaults = seed.apis.filter { api in api.applicationRoles.contains(where: app.applicationPermissions.contains) }.map {
            "\($0.identifierUri)/.default"
        }
        var plain: [String: JSONValue] = [
            "authority": .string("\(baseURL)/\(seed.tenant.name)/\(policy.id)"),
            "tokenEndpoint": .string("\(baseURL)/\(seed.tenant.name)/\(policy.lowercasedID)/oauth2/v2.0/token"),
            "clientId": .string(app.clientId), "redirectUris": JSONValue(app.redirectUris), "scopes": JSONValue(apiScopes + defaults),
            "apis": .array(seed.apis.map { ["name": .string($0.name), "baseUrl": .string(baseURL + "/" + $0.name)] }),
        ]
        if let secret { plain["clientSecret"] = .string(secret) }
        if let caFile { plain["caFile"] = .string(caFile) }
        return ["AzureAdB2C": .object(azure), "b2cEmulator": .object(plain)]
    }
}
