import B2CProtocol
import Foundation
import Hummingbird

/// A faithful subset of Microsoft Graph for the signed-in person of an External ID tenant, at `/graph/v1.0/me`: `GET`
/// (Graph's default properties, or `$select`) and `PATCH` (the profile fields a customer may change), behind the checks a
/// real resource server makes — the tenant's signature, a trusted issuer, the audience Graph, the scope `User.Read` (or
/// `User.ReadWrite`, which `PATCH` needs) — answering with Graph's error shapes.
struct GraphEndpoint: TenantPart {
    let seed: EmulatorSeed
    let store: EmulatorStore
    let clock: EmulatorClock
    let keys: SigningKeys
    let trustedIssuers: @Sendable (String?) -> Set<String>
    let customPolicies: CustomPolicies

    /// Microsoft Graph's application id: the audience of its tokens.
    static let appId = "00000003-0000-0000-c000-000000000000"
    static let resource = "https://graph.microsoft.com"
    /// Graph's answer to `GET /me` without `$select`.
    static let defaultProperties = [
        "businessPhones", "displayName", "givenName", "jobTitle", "mail", "mobilePhone", "officeLocation", "preferredLanguage",
        "surname", "userPrincipalName", "id",
    ]
    static let otherProperties = ["city", "country", "postalCode", "state", "streetAddress", "createdDateTime", "identities"]
    static let writable: Set = [
        "displayName", "givenName", "surname", "jobTitle", "city", "country", "postalCode", "state", "streetAddress",
    ]

    /// The short name of a Graph scope (`User.Read`, `https://graph.microsoft.com/User.ReadWrite`), if `item` is one.
    static func scope(_ item: String) -> String? {
        let name = item.hasPrefix(resource + "/") ? String(item.dropFirst(resource.count + 1)) : item
        return ["User.Read", "User.ReadWrite"].first { $0.caseInsensitiveCompare(name) == .orderedSame }
    }

    /// Whether the app's registration names Graph's delegated permission `name` (beyond User.Read, which every app has).
    static func granted(_ name: String, to app: EmulatorSeed.App) -> Bool {
        app.apiPermissions.contains { scope($0)?.caseInsensitiveCompare(name) == .orderedSame && $0.hasPrefix(resource + "/") }
    }

    func me(_ req: Request) async throws -> Response {
        guard seed.tenant.externalId else {
            return Self.error(404, "Request_ResourceNotFound", "Microsoft Graph is served by External ID tenants only.")
        }
        let jwt: JWT
        switch authenticate(req) {
        case .failure(let refusal): return refusal.response
        case .success(let token): jwt = token
        }
        let scopes = Set(SpaceList.items(jwt.string("scp") ?? "").map { $0.lowercased() })
        guard let oid = jwt.string("oid"), var user = try store.user(oid: oid) else {
            return Self.error(404, "Request_ResourceNotFound", "The signed-in user no longer exists.")
        }
        if req.method == .patch {
            guard scopes.contains("user.readwrite") else {
                // Graph's words, and (as an emulator may) what to do: the token's scope, and the app's permission.
                return Self.error(
                    403, "Authorization_RequestDenied",
                    "Insufficient privileges to complete the operation. Changing the user needs a token with the scope "
                        + "User.ReadWrite (this one has \(jwt.string("scp") ?? "none")), which an app may ask for only "
                        + "when its registration names https://graph.microsoft.com/User.ReadWrite (the seed's apiPermissions).")
            }
            var request = req
            guard let body = await request.body(atMost: 64 * 1024) else {
                return Self.error(413, "Request_EntityTooLarge", "The request body is larger than 64 KB.")
            }
            guard var changes = (try? JSONValue.parse(Data(buffer: body)))?.objectValue else {
                return Self.error(400, "BadRequest", "The request body is not a JSON object.")
            }
            // OData annotations (`@odata.type`, which Microsoft's Graph SDKs send in every update) are control
            // information, not properties.
            changes = changes.filter { !$0.key.hasPrefix("@odata.") && !$0.key.contains("@odata.") }
            for (name, value) in changes {
                guard Self.writable.contains(name) else {
                    return Self.error(
                        400, "Request_BadRequest", "Property '\(name)' is read-only or unknown on type 'microsoft.graph.user'.")
                }
                guard value.stringValue != nil || value == .null else {
                    return Self.error(400, "Request_BadRequest", "Property '\(name)' takes a string.")
                }
            }
            let text = { (name: String, old: String) in changes[name].map { $0.stringValue ?? "" } ?? old }
            try store.updateProfile(
                oid: oid, displayName: text("displayName", user.displayName), givenName: text("givenName", user.givenName),
                surname: text("surname", user.surname))
            for (name, value) in changes where !["displayName", "givenName", "surname"].contains(name) { user.attributes[name] = value }
            try store.setAttributes(oid: oid, user.attributes)
            return Response(status: .noContent)
        }
        let selected: [String]
        if let select = (try? req.queryParameters())?["$select"] {
            selected = select.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
            if let unknown = selected.first(where: { !Self.defaultProperties.contains($0) && !Self.otherProperties.contains($0) }) {
                return Self.error(400, "Request_BadRequest", "Could not find a property named '\(unknown)' on type 'microsoft.graph.user'.")
            }
        } else {
            selected = Self.defaultProperties
        }
        let all = properties(of: user)
        var out: [String: JSONValue] = [
            "@odata.context": .string(
                "https://graph.microsoft.com/v1.0/$metadata#users"
                    + (selected == Self.defaultProperties ? "/$entity" : "(\(selected.joined(separator: ",")))/$entity"))
        ]
        for name in selected { out[name] = all[name] ?? .null }
        return .json(.object(out))
    }

    func properties(of u: EmulatorStore.UserRecord) -> [String: JSONValue] {
        var p: [String: JSONValue] = [
            "id": .string(u.oid), "displayName": .string(u.displayName), "givenName": .string(u.givenName), "surname": .string(u.surname),
            "mail": .string(u.email), "userPrincipalName": .string("\(u.oid)@\(tenantName)"), "businessPhones": [],
            "createdDateTime": .string(ISO8601.string(epoch: u.createdAt)),
            "identities": [["signInType": "emailAddress", "issuer": .string(tenantName), "issuerAssignedId": .string(u.email)]],
        ]
        for name in Self.otherProperties + ["jobTitle"] where p[name] == nil { p[name] = u.attributes[name] }
        return p
    }

    struct Refusal: Error { var response: Response }

    /// What a resource server checks before it reads a person's data: the token (`verify`) and a delegated scope.
    private func authenticate(_ req: Request) -> Result<JWT, Refusal> {
        verify(req).flatMap { jwt in
            let scopes = Set(SpaceList.items(jwt.string("scp") ?? "").map { $0.lowercased() })
            guard !scopes.isDisjoint(with: ["user.read", "user.readwrite"]) else {
                return .failure(
                    Refusal(response: Self.error(403, "Authorization_RequestDenied", "Insufficient privileges to complete the operation.")))
            }
            return .success(jwt)
        }
    }

    /// What a resource server checks before it reads anything: the bearer token's signature, issuer, audience, expiry.
    func verify(_ req: Request) -> Result<JWT, Refusal> {
        guard let header = req.headers[.authorization], header.lowercased().hasPrefix("bearer ") else {
            return .failure(Refusal(response: Self.error(401, "InvalidAuthenticationToken", "Access token is empty.")))
        }
        let jwt: JWT
        do {
            jwt = try JWT.decode(String(header.dropFirst(7)).trimmingCharacters(in: .whitespaces))
            try jwt.verifySignature(with: try keys.jwks(.userFlow))
        } catch {
            return .failure(Refusal(response: Self.error(401, "InvalidAuthenticationToken", "Access token validation failure.")))
        }
        guard let iss = jwt.string("iss"), trustedIssuers(iss).contains(iss) else {
            return .failure(
                Refusal(response: Self.error(401, "InvalidAuthenticationToken", "Access token validation failure. Invalid issuer.")))
        }
        let audiences = [Self.appId, Self.resource, Self.resource + "/"]
        guard let aud = jwt.string("aud"), audiences.contains(aud) else {
            return .failure(
                Refusal(response: Self.error(401, "InvalidAuthenticationToken", "Access token validation failure. Invalid audience.")))
        }
        if let nbf = jwt.int("nbf"), clock.now() + 300 < nbf {
            return .failure(Refusal(response: Self.error(401, "InvalidAuthenticationToken", "The token is not valid yet (nbf).")))
        }
        guard let exp = jwt.int("exp"), clock.now() < exp else {
            return .failure(
                Refusal(response: Self.error(401, "InvalidAuthenticationToken", "Lifetime validation failed, the token is expired.")))
        }
        return .success(jwt)
    }

    /// Graph's error body: `{"error": {"code", "message", "innerError": {"date", "request-id", "client-request-id"}}}`.
    static func error(_ status: Int, _ code: String, _ message: String) -> Response {
        let id = UUID().uuidString.lowercased()
        let body: JSONValue = [
            "error": [
                "code": .string(code), "message": .string(message),
                "innerError": [
                    "date": .string(ISO8601.string(Date())), "request-id": .string(id),
                    "client-request-id": .string(id),
                ],
            ]
        ]
        var headers: [(String, String)] = []
        if status == 401 {
            headers.append(
                (
                    "WWW-Authenticate",
                    "Bearer realm=\"\", authorization_uri=\"https://login.microsoftonline.com/common/oauth2/authorize\", "
                        + "client_id=\"\(appId)\""
                ))
        }
        return .json(body, status: status, headers: headers)
    }
}
