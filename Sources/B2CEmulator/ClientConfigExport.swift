import B2CProtocol
import Foundation

/// The client `policies.json` for an emulator (format: README "Configuration").
extension B2CEmulator {
    /// A client `policies.json` that targets this emulator at `baseURL` (README "Configuration").
    public func clientConfiguration(baseURL: String, caFile: String?) -> JSONValue {
        let app = seed.apps.first
        var o: [String: JSONValue] = [
            "tenant": ["name": .string(seed.tenant.name), "id": .string(seed.tenant.id)],
            "authorityHost": .string(baseURL),
            "knownAuthorities": [
                .string(URL(string: baseURL).map { u in u.port.map { "\(u.host ?? ""):\($0)" } ?? (u.host ?? "") } ?? baseURL)
            ],
            "clientId": .string(app?.clientId ?? ""),
            "redirectUri": .string(app?.redirectUris.first ?? "http://localhost"),
            "policies": .array(seed.policies.map { ["name": .string($0.id), "role": .string($0.kind.rawValue)] }),
            "apis": .array(
                seed.apis.map { api in
                    [
                        "name": .string(api.name), "baseUrl": .string(baseURL + "/" + api.name),
                        "scopes": JSONValue(
                            api.scopes.filter { s in app?.apiPermissions.contains(api.fullScope(s)) ?? false }.map(api.fullScope)),
                    ]
                }),
        ]
        if app?.nativeAuth == true {
            o["nativeAuth"] = [
                "name": "native", "authority": .string("\(baseURL)/\(seed.tenant.name)"), "challengeTypes": ["oob", "password"],
            ]
        }
        if let caFile { o["caFile"] = .string(caFile) }
        return .object(o)
    }
}
