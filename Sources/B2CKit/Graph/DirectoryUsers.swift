import Foundation

/// A person of the directory as Microsoft Graph returns them (the JSON kept whole), with what b2c shows of them.
public struct DirectoryUser: Sendable {
    public var json: JSONValue
    public var id: String { json["id"]?.stringValue ?? "" }
    public var displayName: String { json["displayName"]?.stringValue ?? "" }
    /// The local sign-in name (an email address or a user name) and its kind; a federated identity otherwise.
    public var signIn: (type: String, name: String)? {
        let identities = json["identities"]?.arrayValue ?? []
        for kind in ["emailAddress", "userName", "federated"] {
            if let i = identities.first(where: { $0["signInType"]?.stringValue == kind }) {
                return (kind, i["issuerAssignedId"]?.stringValue ?? "")
            }
        }
        return json["mail"]?.stringValue.map { ("mail", $0) }
    }
}

/// A new local account: its sign-in name, names, password and directory extension attributes.
public struct NewDirectoryUser: Sendable {
    public enum SignIn: Sendable { case email(String), userName(String) }
    public var signIn: SignIn
    public var displayName: String
    public var givenName: String?
    public var surname: String?
    public var password: String
    public var forceChangePassword = false
    /// Attribute name (`city`, `extension_LoyaltyId`, or `extension_<app id>_LoyaltyId`) → value.
    public var attributes: [String: JSONValue] = [:]

    public init(signIn: SignIn, displayName: String, password: String) {
        self.signIn = signIn; self.displayName = displayName; self.password = password
    }

    public var signInName: String {
        switch signIn {
        case .email(let e): e
        case .userName(let u): u
        }
    }
}

/// Managing the directory's people through Microsoft Graph's users API, as the app (`User.ReadWrite.All`): what `b2c
/// users` does. B2C local accounts get `identities` with the tenant's domain as issuer and `passwordPolicies`
/// `DisablePasswordExpiration`, as B2C wants them; External ID accounts an email identity and `mail`.
extension B2CClient {
    /// The people whose display name or sign-in name starts with `filter` (an address: whose sign-in name it is), or all;
    /// pages of `pageSize`, at most `limit`.
    public func listUsers(filter: String?, pageSize: Int = 100, limit: Int? = nil) async throws -> [DirectoryUser] {
        var query: [(String, String)] = [
            ("$select", "id,displayName,givenName,surname,mail,identities,accountEnabled,createdDateTime"), ("$top", String(pageSize)),
        ]
        if let filter, !filter.isEmpty {
            let quoted = filter.replacingOccurrences(of: "'", with: "''")
            query.append(
                (
                    "$filter",
                    filter.contains("@")
                        ? try identityFilter(filter) : "startswith(displayName,'\(quoted)') or startswith(mail,'\(quoted)')"
                ))
        }
        return try await graphCalls().list("v1.0/users", query: query, limit: limit, doing: "listing users").map(DirectoryUser.init)
    }

    /// `identities/any(…)` for a local sign-in name of this tenant.
    func identityFilter(_ name: String) throws -> String {
        let issuer = try localIssuer()
        return "identities/any(c:c/issuerAssignedId eq '\(name.replacingOccurrences(of: "'", with: "''"))' and c/issuer eq '\(issuer)')"
    }

    /// The issuer of the tenant's local identities: its domain name.
    func localIssuer() throws -> String {
        guard let name = config.tenantName else {
            throw B2CError(
                .configuration,
                "\(config.source) gives the tenant's id but not its name; local accounts' identities need the domain "
                    + "(\"tenant\": {\"name\": \"contoso.onmicrosoft.com\"})")
        }
        return name
    }

    /// One person, by object id or by sign-in name; nil when there is none.
    public func user(_ selector: String) async throws -> DirectoryUser? {
        let calls = graphCalls()
        if UUID(uuidString: selector) != nil {
            let a = try await calls.send(.GET, "v1.0/users/\(selector)", query: [("$select", Self.userProperties)])
            if a.status == 404 { return nil }
            guard a.status == 200, let json = a.json else { throw GraphCalls.failure(a, doing: "reading the user \(selector)") }
            return DirectoryUser(json: json)
        }
        let found = try await calls.list(
            "v1.0/users", query: [("$filter", try identityFilter(selector)), ("$select", Self.userProperties)], limit: 2,
            doing: "looking up \(selector)")
        return found.first.map(DirectoryUser.init)
    }

    static let userProperties = "id,displayName,givenName,surname,mail,identities,accountEnabled,createdDateTime,passwordPolicies"

    /// Graph's name of a directory extension attribute: `extension_<b2c-extensions-app id without hyphens>_<name>`, the
    /// app's id looked up once (Graph's applications, `Application.Read.All`) when the name does not carry it.
    func graphAttributeName(_ name: String, extensionsApp: inout String?) async throws -> String {
        guard name.hasPrefix("extension_") else { return name }
        let rest = name.dropFirst("extension_".count)
        if let underscore = rest.firstIndex(of: "_"), rest[..<underscore].count == 32, rest[..<underscore].allSatisfy(\.isHexDigit) {
            return name
        }
        if extensionsApp == nil {
            let a = try await graphCalls().send(
                .GET, "v1.0/applications", query: [("$filter", "startswith(displayName,'b2c-extensions-app')"), ("$select", "appId")])
            guard a.status == 200 else {
                throw GraphCalls.failure(
                    a, doing: "looking up the b2c-extensions-app (give the attribute's full name, extension_<app id>_\(rest))")
            }
            guard let appId = a.json?["value"]?.arrayValue?.first?["appId"]?.stringValue else {
                throw B2CError(.failed, "the tenant has no b2c-extensions-app: directory extension attributes cannot be named")
            }
            extensionsApp = appId.replacingOccurrences(of: "-", with: "")
        }
        return "extension_\(extensionsApp ?? "")_\(rest)"
    }

    /// A local account. A sign-in name already taken is `B2CError.Kind.failed` saying so.
    public func createUser(_ new: NewDirectoryUser) async throws -> DirectoryUser {
        let issuer = try localIssuer()
        var body: [String: JSONValue] = [
            "accountEnabled": true, "displayName": .string(new.displayName),
            "passwordProfile": ["password": .string(new.password), "forceChangePasswordNextSignIn": .bool(new.forceChangePassword)],
        ]
        switch (new.signIn, config.tenantType) {
        case (.email(let email), .b2c):
            body["identities"] = [["signInType": "emailAddress", "issuer": .string(issuer), "issuerAssignedId": .string(email)]]
            body["passwordPolicies"] = "DisablePasswordExpiration"
        case (.userName(let name), .b2c):
            body["identities"] = [["signInType": "userName", "issuer": .string(issuer), "issuerAssignedId": .string(name)]]
            body["passwordPolicies"] = "DisablePasswordExpiration"
        case (.email(let email), .externalId):
            body["identities"] = [["signInType": "emailAddress", "issuer": .string(issuer), "issuerAssignedId": .string(email)]]
            body["mail"] = .string(email)
            body["creationType"] = "LocalAccount"
        case (.userName, .externalId):
            throw B2CError(.usage, "an External ID tenant's local accounts sign in with an email address, not a user name")
        }
        if let g = new.givenName { body["givenName"] = .string(g) }
        if let s = new.surname { body["surname"] = .string(s) }
        var app: String?
        for (name, value) in new.attributes { body[try await graphAttributeName(name, extensionsApp: &app)] = value }
        let a = try await graphCalls().send(.POST, "v1.0/users", json: .object(body))
        guard a.status == 201, let json = a.json else {
            if a.status == 400, (a.json?["error"]?["message"]?.stringValue ?? "").contains("same value for property identities") {
                throw B2CError(.failed, "a user with the sign-in name \(new.signInName) exists already; nothing was created")
            }
            throw GraphCalls.failure(a, doing: "creating \(new.signInName)")
        }
        return DirectoryUser(json: json)
    }

    /// Changes a person: `changes` are Graph's properties (an attribute by its short name is named in full first).
    public func updateUser(_ id: String, _ changes: [String: JSONValue]) async throws {
        var body: [String: JSONValue] = [:]
        var app: String?
        for (name, value) in changes { body[try await graphAttributeName(name, extensionsApp: &app)] = value }
        let a = try await graphCalls().send(.PATCH, "v1.0/users/\(id)", json: .object(body))
        guard a.status == 204 || a.status == 200 else { throw GraphCalls.failure(a, doing: "changing the user \(id)") }
    }

    /// A new password (the next sign-in must change it when `forceChange`).
    public func setUserPassword(_ id: String, _ password: String, forceChange: Bool) async throws {
        try await updateUser(
            id, ["passwordProfile": ["password": .string(password), "forceChangePasswordNextSignIn": .bool(forceChange)]])
    }

    /// Deletes a person; false when there was none.
    public func deleteUser(_ id: String) async throws -> Bool {
        let a = try await graphCalls().send(.DELETE, "v1.0/users/\(id)")
        if a.status == 404 { return false }
        guard a.status == 204 else { throw GraphCalls.failure(a, doing: "deleting the user \(id)") }
        return true
    }
}
