import B2CProtocol
import Foundation
import Hummingbird

/// Microsoft Graph's users API as user-migration scripts and `b2c users` call it (`/graph/v1.0/users`): list with
/// `$filter`, `$select`, `$top` and `@odata.nextLink` pages; create with `identities`, `passwordProfile` and directory
/// extension attributes (`extension_<b2c-extensions-app id without hyphens>_<name>`); read, change and delete one — for an
/// app-only token holding `User.ReadWrite.All` (`User.Read.All` reads), with Graph's error shapes. Served by B2C and
/// External ID tenants alike: in a twin, both sides see one directory.
extension GraphEndpoint {
    static let usersContext = "https://graph.microsoft.com/v1.0/$metadata#users"
    /// Graph's page size when `$top` is not given, and its largest.
    static let defaultPageSize = 100
    static let largestPageSize = 999
    /// What `POST` and `PATCH` take beside extension attributes.
    static let userWritable: Set = [
        "accountEnabled", "displayName", "givenName", "surname", "mail", "identities", "passwordProfile", "passwordPolicies",
        "creationType", "mailNickname", "userPrincipalName", "city", "country", "postalCode", "state", "streetAddress", "jobTitle",
    ]

    /// `/users` (`id` nil) and `/users/{id}`: the permission, then the operation.
    func users(_ req: Request, id: String?, origin: String) async throws -> Response {
        if let refusal = usersRefusal(req, write: req.method != .get) { return refusal }
        switch (req.method, id) {
        case (.get, nil): return list(req, origin: origin)
        case (.post, nil): return try await create(req)
        case (.get, let id?):
            guard let (user, properties) = try directoryUser(id) else { return userNotFound(id) }
            return selected(req, graphUser(user, properties), context: Self.usersContext + "/$entity")
        case (.patch, let id?):
            guard let (user, properties) = try directoryUser(id) else { return userNotFound(id) }
            return try await update(req, user, properties)
        case (.delete, let id?):
            guard let (user, _) = try directoryUser(id) else { return userNotFound(id) }
            _ = try store.deleteUser(oid: user.oid)
            return Response(status: .noContent)
        default:
            return Self.error(405, "Request_BadRequest", "\(req.method) is not an operation of \(id == nil ? "users" : "a user").")
        }
    }

    /// A user by object id or user principal name (`<oid>@<tenant>`).
    private func directoryUser(_ id: String) throws -> (EmulatorStore.UserRecord, EmulatorStore.DirectoryProperties)? {
        let oid = id.lowercased().hasSuffix("@" + tenantName.lowercased()) ? String(id.split(separator: "@")[0]) : id
        guard let user = try store.user(oid: oid.lowercased()), let properties = try store.directoryProperties(oid: user.oid) else {
            return nil
        }
        return (user, properties)
    }

    private func userNotFound(_ id: String) -> Response {
        Self.error(
            404, "Request_ResourceNotFound",
            "Resource '\(id)' does not exist or one of its queried reference-property objects are not present.")
    }

    /// A directory extension attribute's Graph name for a stored attribute (`extension_LoyaltyId`), and back.
    var extensionPrefix: String { "extension_" + seed.tenant.extensionsAppIdOrDefault.replacingOccurrences(of: "-", with: "") + "_" }

    private func storedAttribute(_ graphName: String) -> String? {
        guard graphName.lowercased().hasPrefix(extensionPrefix.lowercased()) else { return nil }
        let name = graphName.dropFirst(extensionPrefix.count)
        return name.isEmpty ? nil : "extension_" + name
    }

    /// Every Graph property of a person this tenant keeps.
    func graphUser(_ u: EmulatorStore.UserRecord, _ p: EmulatorStore.DirectoryProperties) -> [String: JSONValue] {
        var out = properties(of: u)
        var identities: [JSONValue] = []
        let federated = (try? store.federatedIdentities(oid: u.oid)) ?? []
        if u.idp == nil {
            identities.append(["signInType": .string(p.signInType), "issuer": .string(tenantName), "issuerAssignedId": .string(u.email)])
        }
        for f in federated {
            identities.append(["signInType": "federated", "issuer": .string(f.issuer), "issuerAssignedId": .string(f.subject)])
        }
        identities.append([
            "signInType": "userPrincipalName", "issuer": .string(tenantName), "issuerAssignedId": .string("\(u.oid)@\(tenantName)"),
        ])
        out["identities"] = .array(identities)
        // A federated user created without `mail` keeps `<id>@<issuer>` as its sign-in name: no address Graph would show.
        let placeholder = federated.contains { "\($0.subject)@\($0.issuer)" == u.email }
        out["mail"] = p.signInType == "userName" ? (u.attributes["mail"] ?? .null) : placeholder ? .null : .string(u.email)
        out["accountEnabled"] = .bool(p.accountEnabled)
        out["passwordPolicies"] = p.passwordPolicies.map { .string($0) } ?? .null
        out["creationType"] = u.idp == nil ? "LocalAccount" : .null
        out["passwordProfile"] = .null
        for (name, value) in u.attributes where name.hasPrefix("extension_") {
            out[extensionPrefix + name.dropFirst("extension_".count)] = value
        }
        return out
    }

    /// The properties `$select` names (every default one without it), or Graph's 400 for one it does not know.
    private func selection(_ req: Request) -> Result<[String]?, Refusal> {
        guard let select = (try? req.queryParameters())?["$select"] else { return .success(nil) }
        let names = select.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
        let known = Set(Self.defaultProperties + Self.otherProperties + ["accountEnabled", "passwordPolicies", "creationType"])
        if let unknown = names.first(where: { !known.contains($0) && storedAttribute($0) == nil }) {
            return .failure(
                Refusal(
                    response: Self.error(
                        400, "Request_BadRequest", "Could not find a property named '\(unknown)' on type 'microsoft.graph.user'.")))
        }
        return .success(names)
    }

    private func project(_ user: [String: JSONValue], _ names: [String]?) -> JSONValue {
        var out: [String: JSONValue] = [:]
        for name in names ?? Self.defaultProperties {
            out[name] = user.first { $0.key.caseInsensitiveCompare(name) == .orderedSame }?.value ?? .null
        }
        return .object(out)
    }

    private func selected(_ req: Request, _ user: [String: JSONValue], context: String) -> Response {
        switch selection(req) {
        case .failure(let refusal): return refusal.response
        case .success(let names):
            var body = project(user, names).objectValue ?? [:]
            body["@odata.context"] = .string(context)
            return .json(.object(body))
        }
    }

    /// `GET /users`: filtered, then one page, with the link to the next.
    private func list(_ req: Request, origin: String) -> Response {
        let query = (try? req.queryParameters()) ?? [:]
        let names: [String]?
        switch selection(req) {
        case .failure(let refusal): return refusal.response
        case .success(let n): names = n
        }
        var filter: GraphFilter?
        if let text = query["$filter"] {
            do { filter = try GraphFilter.parse(text) } catch { return Self.error(400, error.code, error.message) }
        }
        var size = Self.defaultPageSize
        if let top = query["$top"] {
            guard let n = Int(top), (1...Self.largestPageSize).contains(n) else {
                return Self.error(400, "Request_BadRequest", "Invalid page size specified: '\(top)'. Must be between 1 and 999 inclusive.")
            }
            size = n
        }
        var offset = 0
        if let token = query["$skiptoken"] {
            guard let data = Base64URL.decode(token), let text = String(data: data, encoding: .utf8), text.hasPrefix("users:"),
                let n = Int(text.dropFirst("users:".count)), n >= 0
            else {
                return Self.error(400, "Request_BadRequest", "The skip token '\(token)' is not one this tenant gave; start the list again.")
            }
            offset = n
        }
        let all: [[String: JSONValue]]
        do { all = try store.directoryUsers().map { graphUser($0.0, $0.1) } } catch {
            return Self.error(500, "UnknownError", "The directory could not be read.")
        }
        let matching = filter.map { f in all.filter { f.matches($0) } } ?? all
        let page = matching.dropFirst(offset).prefix(size)
        var body: [String: JSONValue] = [
            "@odata.context": .string(Self.usersContext + (names.map { "(\($0.joined(separator: ",")))" } ?? "")),
            "value": .array(page.map { project($0, names) }),
        ]
        if offset + page.count < matching.count {
            var next = query.filter { $0.key != "$skiptoken" }
            next["$skiptoken"] = Base64URL.encode(Data("users:\(offset + page.count)".utf8))
            body["@odata.nextLink"] = .string("\(origin)/graph/v1.0/users?" + FormEncoding.encode(next))
        }
        return .json(.object(body))
    }

    /// What a `POST` or `PATCH` body says, checked as Graph checks it.
    private struct UserChanges {
        var displayName: String?
        var givenName: String?
        var surname: String?
        var mail: String?
        var local: (type: String, name: String)?
        var federated: [(issuer: String, subject: String)] = []
        var password: String?
        var forceChangePassword: Bool?
        var accountEnabled: Bool?
        var passwordPolicies: String??
        var attributes: [String: JSONValue] = [:]
    }

    private func changes(_ req: Request) async throws -> Result<UserChanges, Refusal> {
        func refuse(_ message: String, code: String = "Request_BadRequest") -> Result<UserChanges, Refusal> {
            .failure(Refusal(response: Self.error(400, code, message)))
        }
        var request = req
        guard let raw = await request.body(atMost: 64 * 1024) else {
            return .failure(Refusal(response: Self.error(413, "Request_EntityTooLarge", "The request body is larger than 64 KB.")))
        }
        guard let object = (try? JSONValue.parse(Data(buffer: raw)))?.objectValue else {
            return refuse("The request body is not a JSON object.", code: "BadRequest")
        }
        var c = UserChanges()
        for (name, value) in object where !name.contains("@odata.") {
            if let stored = storedAttribute(name) {
                c.attributes[stored] = value
                continue
            }
            guard Self.userWritable.contains(name) else {
                return refuse("Property '\(name)' does not exist as a declared property or extension property.")
            }
            func text() -> String?? { value == .null ? .some(nil) : value.stringValue.map { .some($0) } }
            switch name {
            case "displayName", "givenName", "surname", "mail", "passwordPolicies", "city", "country", "postalCode", "state",
                "streetAddress", "jobTitle":
                guard let t = text() else { return refuse("Invalid value specified for property '\(name)' of resource 'User'.") }
                switch name {
                case "displayName": c.displayName = t
                case "givenName": c.givenName = t
                case "surname": c.surname = t
                case "mail": c.mail = t
                case "passwordPolicies": c.passwordPolicies = .some(t)
                default: c.attributes[name] = value
                }
            case "accountEnabled":
                guard case .bool(let b) = value else {
                    return refuse("Invalid value specified for property 'accountEnabled' of resource 'User'.")
                }
                c.accountEnabled = b
            case "passwordProfile":
                guard let profile = value.objectValue else {
                    return refuse("Invalid value specified for property 'passwordProfile' of resource 'User'.")
                }
                c.password = profile["password"]?.stringValue
                if case .bool(let b)? = profile["forceChangePasswordNextSignIn"] { c.forceChangePassword = b }
            case "identities":
                if let problem = readIdentities(value, into: &c) { return refuse(problem) }
            default:
                continue  // creationType, mailNickname, userPrincipalName: what the tenant makes itself
            }
        }
        if let password = c.password, !((c.passwordPolicies ?? nil)?.contains("DisableStrongPassword") ?? false),
            SignUpStep.passwordProblem(password) != nil
        {
            return refuse(
                "The specified password does not comply with password complexity requirements. Please provide a different password.")
        }
        return .success(c)
    }

    /// `identities`: one local sign-in name (an email address or a user name, the tenant's domain as issuer) and any
    /// federated ones; the refusal's message when one is not Graph's shape.
    private func readIdentities(_ value: JSONValue, into c: inout UserChanges) -> String? {
        guard let list = value.arrayValue else { return "Invalid value specified for property 'identities' of resource 'User'." }
        for item in list {
            let o = item.objectValue ?? [:]
            guard let type = o["signInType"]?.stringValue, let issuer = o["issuer"]?.stringValue,
                let id = o["issuerAssignedId"]?.stringValue, !id.isEmpty
            else {
                return "Each of the identities needs signInType, issuer and issuerAssignedId."
            }
            switch type {
            case "emailAddress", "userName":
                guard issuer.caseInsensitiveCompare(tenantName) == .orderedSame else {
                    return "The issuer '\(issuer)' of a local account's identity must be the tenant's domain '\(tenantName)'."
                }
                guard c.local == nil else {
                    return "This local tenant keeps one local sign-in name per user (an emailAddress or a userName identity); give one."
                }
                if type == "emailAddress" && !EmulatorSeed.isPlausibleEmail(id) {
                    return "The issuerAssignedId '\(id)' of an emailAddress identity is not an email address."
                }
                if type == "userName" && (id.contains("@") || id.contains(where: \.isWhitespace)) {
                    return "The issuerAssignedId '\(id)' of a userName identity may not hold '@' or spaces."
                }
                c.local = (type, id)
            case "federated":
                c.federated.append((issuer, id))
            case "userPrincipalName":
                continue  // the tenant's own: `<oid>@<tenant>`
            default:
                return "The signInType '\(type)' is not one of emailAddress, userName, federated or userPrincipalName."
            }
        }
        return nil
    }

    /// `POST /users`: a local account (an email address or a user name, and a password), or a federated one.
    private func create(_ req: Request) async throws -> Response {
        var c: UserChanges
        switch try await changes(req) {
        case .failure(let refusal): return refusal.response
        case .success(let changes): c = changes
        }
        guard let displayName = c.displayName, !displayName.isEmpty else {
            return Self.error(400, "Request_BadRequest", "Invalid value specified for property 'displayName' of resource 'User'.")
        }
        // External ID's guides create a local account from `mail` and `creationType: LocalAccount`.
        if c.local == nil, c.federated.isEmpty, let mail = c.mail, EmulatorSeed.isPlausibleEmail(mail) {
            c.local = ("emailAddress", mail)
        }
        guard c.local != nil || !c.federated.isEmpty else {
            return Self.error(
                400, "Request_BadRequest", "A user needs identities: a local sign-in name (emailAddress or userName) or a federated one.")
        }
        guard c.federated.count <= 1, !(c.local != nil && !c.federated.isEmpty) else {
            return Self.error(
                400, "Request_BadRequest",
                "This local tenant keeps one identity per user: a local sign-in name or one federated identity (the emulator's limit).")
        }
        if c.local != nil && c.password == nil {
            return Self.error(400, "Request_BadRequest", "A local account needs passwordProfile.password.")
        }
        let federated = c.federated.first
        let signInName = c.local?.name ?? c.mail ?? "\(federated?.subject ?? "")@\(federated?.issuer ?? "")"
        var attributes = c.attributes
        if c.local?.type == "userName", let mail = c.mail { attributes["mail"] = .string(mail) }
        let properties = EmulatorStore.DirectoryProperties(
            signInType: c.local?.type ?? "federated", accountEnabled: c.accountEnabled ?? true, passwordPolicies: c.passwordPolicies ?? nil,
            forceChangePassword: c.forceChangePassword ?? false)
        let user: EmulatorStore.UserRecord
        do {
            user = try store.createDirectoryUser(
                oid: UUID().uuidString.lowercased(), signInName: signInName, password: c.password ?? Random.token(bytes: 32),
                displayName: displayName, givenName: c.givenName ?? "", surname: c.surname ?? "", attributes: attributes,
                properties: properties, federated: federated, now: clock.now())
        } catch EmulatorStore.UserError.emailTaken {
            return Self.error(400, "Request_BadRequest", "Another object with the same value for property identities already exists.")
        }
        var body = project(graphUser(user, properties), Self.defaultProperties + ["identities"]).objectValue ?? [:]
        body["@odata.context"] = .string(Self.usersContext + "/$entity")
        return .json(.object(body), status: 201)
    }

    /// `PATCH /users/{id}`: what the body names changes; the rest stays.
    private func update(
        _ req: Request, _ user: EmulatorStore.UserRecord, _ properties: EmulatorStore.DirectoryProperties
    ) async throws -> Response {
        let c: UserChanges
        switch try await changes(req) {
        case .failure(let refusal): return refusal.response
        case .success(let changes): c = changes
        }
        guard c.federated.isEmpty else {
            return Self.error(400, "Request_BadRequest", "This local tenant does not add federated identities to an existing user.")
        }
        if let local = c.local, user.idp != nil {
            return Self.error(400, "Request_BadRequest", "'\(local.name)' would give a federated user a local sign-in name; create a user.")
        }
        var u = user
        if let name = c.displayName { u.displayName = name }
        if let name = c.givenName { u.givenName = name }
        if let name = c.surname { u.surname = name }
        for (name, value) in c.attributes { u.attributes[name] = value == .null ? nil : value }
        var p = properties
        if let local = c.local { p.signInType = local.type }
        if let enabled = c.accountEnabled { p.accountEnabled = enabled }
        if let policies = c.passwordPolicies { p.passwordPolicies = policies }
        if let force = c.forceChangePassword { p.forceChangePassword = force }
        do {
            try store.updateDirectoryUser(u, properties: p, signInName: c.local?.name, password: c.password, now: clock.now())
        } catch EmulatorStore.UserError.emailTaken {
            return Self.error(400, "Request_BadRequest", "Another object with the same value for property identities already exists.")
        }
        return Response(status: .noContent)
    }

    /// The checks before any users call: a valid token for Graph, app-only, with the permission the call needs.
    private func usersRefusal(_ req: Request, write: Bool) -> Response? {
        let jwt: JWT
        switch verify(req) {
        case .failure(let refusal): return refusal.response
        case .success(let token): jwt = token
        }
        let roles = jwt.claims["roles"]?.arrayValue?.compactMap(\.stringValue) ?? []
        let enough = write ? [Self.usersReadWritePermission] : [Self.usersReadWritePermission, Self.usersReadPermission]
        guard roles.contains(where: { role in enough.contains { $0.caseInsensitiveCompare(role) == .orderedSame } }) else {
            return Self.error(
                403, "Authorization_RequestDenied",
                "Insufficient privileges to complete the operation. The users API needs an app-only token with the application "
                    + "permission \(enough.joined(separator: " or ")) (the seed's applicationPermissions: "
                    + "\(Self.resource)/\(Self.usersReadWritePermission)); this token has "
                    + (roles.isEmpty ? "none" : roles.joined(separator: ", ")) + ".")
        }
        return nil
    }

    /// The display name B2C gives the app that keeps its directory extension attributes.
    static let extensionsAppName = "b2c-extensions-app. Do not modify. Used by AADB2C for storing user data."

    /// `GET /graph/v1.0/applications`: the tenant's app registrations and its b2c-extensions-app (whose appId names the
    /// directory extension attributes), with `$filter` and `$select`, for a token holding `Application.Read.All` — how a
    /// migration script finds the extension attributes' prefix.
    func applications(_ req: Request) -> Response {
        let jwt: JWT
        switch verify(req) {
        case .failure(let refusal): return refusal.response
        case .success(let token): jwt = token
        }
        let roles = jwt.claims["roles"]?.arrayValue?.compactMap(\.stringValue) ?? []
        guard roles.contains(where: { $0.caseInsensitiveCompare(Self.applicationsReadPermission) == .orderedSame }) else {
            return Self.error(
                403, "Authorization_RequestDenied",
                "Insufficient privileges to complete the operation. Listing applications needs an app-only token with the "
                    + "application permission \(Self.applicationsReadPermission).")
        }
        let query = (try? req.queryParameters()) ?? [:]
        var filter: GraphFilter?
        if let text = query["$filter"] {
            do { filter = try GraphFilter.parse(text) } catch { return Self.error(400, error.code, error.message) }
        }
        func application(_ appId: String, _ name: String) -> [String: JSONValue] {
            [
                "id": .string(EmulatorStore.derivedGUID("application object:\(appId)")), "appId": .string(appId),
                "displayName": .string(name),
            ]
        }
        var all = [application(seed.tenant.extensionsAppIdOrDefault, Self.extensionsAppName)]
        all += seed.apps.map { application($0.clientId, $0.name) }
        let names = query["$select"].map { $0.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) } }
        let value = all.filter { filter?.matches($0) ?? true }.map { app in
            names.map { n in JSONValue.object(app.filter { n.contains($0.key) }) } ?? .object(app)
        }
        return .json(["@odata.context": "https://graph.microsoft.com/v1.0/$metadata#applications", "value": .array(value)])
    }
}
