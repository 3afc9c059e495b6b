import B2CProtocol
import Foundation
import Hummingbird

/// B2C's custom-policy API on the tenant's Microsoft Graph (`/graph/beta/trustFramework/policies`): list, upload
/// (`PUT …/{id}/$value`, XML), download and delete, for an app-only token holding `Policy.ReadWrite.TrustFramework` — what
/// deployment scripts and pipelines call. An upload is checked as B2C checks it (`CustomPolicies`); a refusal is Graph's
/// 400 with B2C's message.
extension GraphEndpoint {
    static let trustFrameworkPermission = "Policy.ReadWrite.TrustFramework"
    /// The Graph application permissions a seed's app may hold (named in full): custom-policy deployment, and the
    /// directory's users (migration scripts, `b2c users`).
    static let applicationPermissions: Set = [
        resource + "/" + trustFrameworkPermission, resource + "/" + usersReadWritePermission, resource + "/" + usersReadPermission,
        resource + "/" + applicationsReadPermission,
    ]
    static let applicationsReadPermission = "Application.Read.All"
    static let usersReadWritePermission = "User.ReadWrite.All"
    static let usersReadPermission = "User.Read.All"
    static let policiesContext = "https://graph.microsoft.com/beta/$metadata#trustFramework/policies"

    /// `GET /graph/beta/trustFramework/policies`.
    func listPolicies(_ req: Request) async throws -> Response {
        if let refusal = trustFrameworkRefusal(req) { return refusal }
        let value = customPolicies.ids.map { JSONValue.object(["id": .string($0)]) }
        return .json(["@odata.context": .string(Self.policiesContext), "value": .array(value)])
    }

    /// `GET`, `PUT` or `DELETE` of one policy: `…/policies/{id}` (`GET` its id, `DELETE`) and `…/policies/{id}/$value` (the
    /// XML).
    func policy(_ req: Request, id: String, value: Bool) async throws -> Response {
        if let refusal = trustFrameworkRefusal(req) { return refusal }
        switch (req.method, value) {
        case (.put, true):
            guard req.headers[.contentType]?.lowercased().hasPrefix("application/xml") == true else {
                return Self.error(415, "UnsupportedMediaType", "The policy goes in the body as application/xml.")
            }
            var request = req
            guard let body = await request.body(atMost: PolicyXML.maximumBytes) else {
                return Self.error(
                    413, "Request_EntityTooLarge", "A policy file may have at most \(PolicyXML.maximumBytes) bytes; this one has more.")
            }
            let created: Bool
            do { created = try customPolicies.upload(Data(buffer: body), id: id) } catch let e as PolicyLoadError {
                return Self.error(400, "AADB2C", e.description)
            }
            return Response(
                status: created ? .created : .ok, headers: [.contentType: "application/xml"],
                body: .init(byteBuffer: .init(data: customPolicies.file(id)?.xml ?? Data())))
        case (.get, true):
            guard let file = customPolicies.file(id) else { return notFound(id) }
            return Response(status: .ok, headers: [.contentType: "application/xml"], body: .init(byteBuffer: .init(data: file.xml)))
        case (.get, false):
            guard let file = customPolicies.file(id) else { return notFound(id) }
            return .json(["@odata.context": .string(Self.policiesContext + "/$entity"), "id": .string(file.policyId)])
        case (.delete, false):
            do {
                guard try customPolicies.delete(id) else { return notFound(id) }
            } catch let e as PolicyLoadError {
                return Self.error(400, "AADB2C", e.description)
            }
            return Response(status: .noContent)
        default:
            return Self.error(405, "Request_BadRequest", "\(req.method) is not an operation of a trustFrameworkPolicy.")
        }
    }

    private func notFound(_ id: String) -> Response {
        Self.error(404, "AADB2C", "Policy \"\(id)\" of tenant \"\(tenantName)\" does not exist.")
    }

    /// The checks before any trust-framework call: a B2C tenant, a valid token for Graph, and the permission.
    private func trustFrameworkRefusal(_ req: Request) -> Response? {
        guard !seed.tenant.externalId else {
            return Self.error(
                404, "Request_ResourceNotFound", "Custom policies (trustFramework) are a feature of Azure AD B2C tenants, not External ID.")
        }
        let jwt: JWT
        switch verify(req) {
        case .failure(let refusal): return refusal.response
        case .success(let token): jwt = token
        }
        let roles = jwt.claims["roles"]?.arrayValue?.compactMap(\.stringValue) ?? []
        guard roles.contains(where: { $0.caseInsensitiveCompare(Self.trustFrameworkPermission) == .orderedSame }) else {
            return Self.error(
                403, "Authorization_RequestDenied",
                "Insufficient privileges to complete the operation. Custom policies need an app-only token with the application "
                    + "permission \(Self.trustFrameworkPermission) (the seed's applicationPermissions: "
                    + "\(Self.resource)/\(Self.trustFrameworkPermission)); this token has "
                    + (roles.isEmpty ? "none" : roles.joined(separator: ", ")) + ".")
        }
        return nil
    }
}

extension TokenIssuer {
    /// An app-only token for Microsoft Graph (`https://graph.microsoft.com/.default`), as Entra issues it: the app's Graph
    /// application permissions in `roles` (none when it has none: Graph then refuses), `idtyp: app`.
    func graphAppToken(app: EmulatorSeed.App, origin: String) throws -> Response {
        let now = clock.now()
        let prefix = GraphEndpoint.resource + "/"
        let roles = app.applicationPermissions.filter { $0.hasPrefix(prefix) }.map { String($0.dropFirst(prefix.count)) }
        var c: [String: JSONValue] = [
            "iss": .string(issuer(origin: origin, policy: nil)), "iat": JSONValue(now), "nbf": JSONValue(now), "exp": JSONValue(now + 3600),
            "aud": .string(GraphEndpoint.resource), "azp": .string(app.clientId), "azpacr": "1", "sub": .string(app.servicePrincipalId),
            "oid": .string(app.servicePrincipalId), "tid": .string(tenantID), "ver": "2.0", "idtyp": "app",
        ]
        if !roles.isEmpty { c["roles"] = JSONValue(roles) }
        let signer = try keys.current(.userFlow)
        let token = try signer.sign(.object(c))
        return tokenResponse(
            Issued(
                body: ["access_token": .string(token), "token_type": "Bearer", "expires_in": 3600, "ext_expires_in": 3600],
                accessToken: token))
    }
}
