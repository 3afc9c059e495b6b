import AsyncHTTPClient
import B2CProtocol
import Foundation
import NIOHTTP1
import Testing

@testable import B2CEmulator

/// Microsoft Graph's users API on the tenant (`/graph/v1.0/users`), as migration scripts and `b2c users` call it: the
/// permission, each way a body is refused, the filters they send, pages, changes and deletion, throttling — and one
/// directory under a twin's two sides.
@Suite struct GraphUsersTests {
    static let extensionFlag =
        "extension_" + EmulatorSeed.default.tenant.extensionsAppIdOrDefault.replacingOccurrences(of: "-", with: "") + "_toBeMigrated"

    static func appToken(
        _ t: TestTenant, client: String = EmulatorSeed.defaultUserAdminID, secret: String = EmulatorSeed.defaultUserAdminSecret
    )
        async throws -> String
    {
        let r = try await t.request(
            .POST, "/contoso.onmicrosoft.com/oauth2/v2.0/token",
            form: [
                "grant_type": "client_credentials", "client_id": client, "client_secret": secret,
                "scope": "https://graph.microsoft.com/.default",
            ])
        return try #require(r.json["access_token"]?.stringValue, "\(r.body)")
    }

    static func graph(
        _ t: TestTenant, _ method: HTTPMethod, _ path: String, token: String, _ json: JSONValue? = nil
    ) async throws -> TestResponse {
        try await t.request(
            method, path.hasPrefix("http") ? path : "/graph/v1.0" + path, json: json, headers: [("Authorization", "Bearer " + token)])
    }

    static func localUser(
        _ email: String, _ name: String, password: String = "Moved-2026-pass!", extra: [String: JSONValue] = [:]
    ) -> JSONValue {
        var o: [String: JSONValue] = [
            "accountEnabled": true, "displayName": .string(name),
            "identities": [["signInType": "emailAddress", "issuer": "contoso.onmicrosoft.com", "issuerAssignedId": .string(email)]],
            "passwordProfile": ["password": .string(password), "forceChangePasswordNextSignIn": false],
            "passwordPolicies": "DisablePasswordExpiration",
        ]
        o.merge(extra) { _, new in new }
        return .object(o)
    }

    static func ropc(_ t: TestTenant, _ username: String, _ password: String) async throws -> TestResponse {
        try await t.token(
            "B2C_1_ROPC_Auth",
            ["grant_type": "password", "client_id": clientID, "username": username, "password": password, "scope": "openid \(clientID)"])
    }

    @Test(arguments: [
        ("https://graph.microsoft.com/.default", true), (" https://graph.microsoft.com/.default ", true),
        ("00000003-0000-0000-c000-000000000000/.default", true), ("https://graph.microsoft.com/User.Read", false),
        ("https://graph.microsoft.com/.default openid", false), ("https://graph.microsoft.com", false), ("", false),
        ("https://contoso.onmicrosoft.com/helloapi/.default", false),
    ])
    func aClientCredentialsScopeNamesGraphByItsResourceOrAppId(_ scope: String, _ graph: Bool) {
        #expect(TokenEndpoint.isGraphScope(scope) == graph)
    }

    @Test func onlyAnAppTokenWithTheUsersPermissionIsServed() async throws {
        try await TestTenant.with { t in
            let none = try await t.get("/graph/v1.0/users")
            #expect(none.status == 401 && none.json["error"]?["code"] == "InvalidAuthenticationToken")
            let deploy = try await Self.appToken(
                t, client: EmulatorSeed.defaultPolicyDeployID, secret: EmulatorSeed.defaultPolicyDeploySecret)
            let refused = try await Self.graph(t, .GET, "/users", token: deploy)
            #expect(refused.status == 403 && refused.json["error"]?["code"] == "Authorization_RequestDenied")
            #expect(refused.json["error"]?["message"]?.stringValue?.contains("User.ReadWrite.All") == true, "\(refused.body)")
            let listed = try await Self.graph(t, .GET, "/users", token: try await Self.appToken(t))
            #expect(listed.status == 200 && (listed.json["value"]?.arrayValue?.count ?? 0) >= 2, "\(listed.body)")
            // A body over Graph's limit is a 413 in Graph's shape, never a server error.
            let huge = "{\"displayName\": \"" + String(repeating: "a", count: 70_000) + "\"}"
            let tooBig = try await t.request(
                .POST, "/graph/v1.0/users", body: huge,
                headers: [("Authorization", "Bearer " + (try await Self.appToken(t))), ("Content-Type", "application/json")])
            #expect(tooBig.status == 413 && tooBig.json["error"]?["code"] == "Request_EntityTooLarge", "\(tooBig.status) \(tooBig.body)")
        }
    }

    /// An app granted only `User.Read.All` reads the directory and changes nothing, as Graph answers it.
    @Test func anAppWithUserReadAllReadsButIsRefusedEveryChange() async throws {
        var seed = EmulatorSeed.default
        let reader = "3c8f7d9b-4e1a-4f0c-8b5d-9a2e8f7c4d6b"
        seed.apps.append(
            EmulatorSeed.App(
                clientId: reader, name: "user-reader", redirects: [], allowImplicitFlow: false, nativeAuth: false, apiPermissions: [],
                applicationPermissions: ["\(GraphEndpoint.resource)/\(GraphEndpoint.usersReadPermission)"],
                secrets: [.init(value: "Reader-dev-secret-2026")], servicePrincipalId: "3c8f7d9b-5e1f-4c2a-9b3d-000000000014"))
        try await TestTenant.with(seed: seed) { t in
            let token = try await Self.appToken(t, client: reader, secret: "Reader-dev-secret-2026")
            #expect(try claims(token)["roles"] == ["User.Read.All"])
            let listed = try await Self.graph(t, .GET, "/users", token: token)
            #expect(listed.status == 200 && (listed.json["value"]?.arrayValue?.count ?? 0) == 2, "\(listed.body)")
            #expect(try await Self.graph(t, .GET, "/users/\(alice.oid)", token: token).json["displayName"] == "Alice Example")
            let changes: [(HTTPMethod, String, JSONValue?)] = [
                (.POST, "/users", Self.localUser("rita@contoso.com", "Rita")), (.PATCH, "/users/\(alice.oid)", ["displayName": "Mallory"]),
                (.DELETE, "/users/\(alice.oid)", nil),
            ]
            for (method, path, body) in changes {
                let refused = try await Self.graph(t, method, path, token: token, body)
                #expect(
                    refused.status == 403 && refused.json["error"]?["code"] == "Authorization_RequestDenied", "\(method) \(refused.body)")
            }
            let after = try await Self.graph(t, .GET, "/users/\(alice.oid)", token: token)
            #expect(after.status == 200 && after.json["displayName"] == "Alice Example", "nothing changed: \(after.body)")
            #expect(try await Self.graph(t, .GET, "/users", token: token).json["value"]?.arrayValue?.count == 2)
        }
    }

    /// A person's (delegated) token is not an app's: Graph refuses it on the users API, however valid it is for `/me`.
    @Test func aPersonsDelegatedTokenIsRefusedOnTheUsersAPI() async throws {
        try await TestTenant.with(seed: .defaultExternalID) { t in
            let token = try await GraphTests.graphToken(t, scope: "User.Read")
            #expect(try await t.get("/graph/v1.0/me", headers: [("Authorization", "Bearer \(token)")]).status == 200)
            for (method, path) in [(HTTPMethod.GET, "/users"), (.GET, "/users/\(alice.oid)"), (.DELETE, "/users/\(bob.oid)")] {
                let refused = try await Self.graph(t, method, path, token: token)
                #expect(
                    refused.status == 403 && refused.json["error"]?["code"] == "Authorization_RequestDenied", "\(path): \(refused.body)")
            }
            #expect(try await t.admin(.GET, "/users").body.contains(bob.email), "nobody was deleted")
        }
    }

    /// Graph's federated identity (a social account moved from another system): created, found by its issuer and id, and
    /// the person it names signs in through that provider as this object.
    @Test func aFederatedIdentityIsCreatedFoundAndSignsInThroughItsProvider() async throws {
        try await TestTenant.with { t in
            let token = try await Self.appToken(t)
            let identity: JSONValue = ["signInType": "federated", "issuer": "facebook.com", "issuerAssignedId": "5eecb0cd"]
            let created = try await Self.graph(
                t, .POST, "/users", token: token, ["displayName": "Finn Fed", "identities": [identity], "accountEnabled": true])
            #expect(created.status == 201, "\(created.body)")
            let id = try #require(created.json["id"]?.stringValue)
            #expect(created.json["identities"]?.arrayValue?.contains(identity) == true, "\(created.body)")
            let lookup = "identities/any(c:c/issuerAssignedId eq '5eecb0cd' and c/issuer eq 'facebook.com')"
            let found = try await Self.graph(t, .GET, "/users?" + FormEncoding.encode(["$filter": lookup]), token: token)
            #expect(found.json["value"]?.arrayValue?.map { $0["id"] } == [.string(id)], "\(found.body)")
            #expect(found.json["value"]?.arrayValue?.first?["mail"] == .null, "Graph made up no address: \(found.body)")
            let other = "identities/any(c:c/issuerAssignedId eq '5eecb0cd' and c/issuer eq 'google.com')"
            #expect(try await Self.graph(t, .GET, "/users?" + FormEncoding.encode(["$filter": other]), token: token).json["value"] == [])
            // Facebook answers with that id: the same person, straight on (no sign-up page).
            _ = try await t.admin(.POST, "/idp/facebook/next", ["sub": "5eecb0cd", "email": "finn@example.com", "name": "Finn Fed"])
            let b = Browser(t)
            let pkce = PKCE()
            let start = try await b.get(
                authorizeURL(policy: FederationTests.policy, pkce: pkce, extra: ["domain_hint": "facebook.com"]))
            let back = try await b.submit(try await b.get(try #require(start.location)), form: "hiddenform", [:])
            let signedIn = try await FederationTests.redeem(t, back, pkce: pkce)
            #expect(signedIn["oid"] == .string(id) && signedIn["idp"] == "facebook.com" && signedIn["newUser"] == nil, "\(signedIn)")
        }
    }

    @Test func aLocalAccountIsCreatedAsGraphChecksIt() async throws {
        try await TestTenant.with { t in
            let token = try await Self.appToken(t)
            func refused(_ body: JSONValue, _ words: String) async throws {
                let r = try await Self.graph(t, .POST, "/users", token: token, body)
                #expect(r.status == 400 && r.json["error"]?["message"]?.stringValue?.contains(words) == true, "\(r.body)")
            }
            var noName = Self.localUser("nora@contoso.com", "Nora").objectValue ?? [:]
            noName["displayName"] = nil
            try await refused(.object(noName), "displayName")
            try await refused(Self.localUser("nora@contoso.com", "Nora", password: "weak"), "password complexity")
            try await refused(Self.localUser("alice@contoso.com", "Alice again"), "same value for property identities")
            try await refused(
                Self.localUser("nora@contoso.com", "Nora", extra: ["extension_0000_toBeMigrated": true]), "extension property")
            var otherIssuer = Self.localUser("nora@contoso.com", "Nora").objectValue ?? [:]
            otherIssuer["identities"] = [["signInType": "emailAddress", "issuer": "fabrikam.com", "issuerAssignedId": "nora@contoso.com"]]
            try await refused(.object(otherIssuer), "tenant's domain")
            #expect(try await Self.graph(t, .POST, "/users", token: token, "[]").status == 400)
            #expect(try await t.admin(.GET, "/users").body.contains("nora@contoso.com") == false, "nothing was created")

            let created = try await Self.graph(
                t, .POST, "/users", token: token, Self.localUser("nora@contoso.com", "Nora", extra: [Self.extensionFlag: true]))
            #expect(created.status == 201, "\(created.body)")
            let id = try #require(created.json["id"]?.stringValue)
            #expect(created.json["userPrincipalName"]?.stringValue == "\(id)@contoso.onmicrosoft.com")
            #expect(try await Self.ropc(t, "nora@contoso.com", "Moved-2026-pass!").status == 200, "the password signs in")
            let read = try await Self.graph(
                t, .GET, "/users/\(id)?$select=displayName,identities,accountEnabled,\(Self.extensionFlag)", token: token)
            #expect(read.json[Self.extensionFlag] == true && read.json["accountEnabled"] == true, "\(read.body)")
            #expect(read.json["identities"]?.arrayValue?.first?["issuerAssignedId"] == "nora@contoso.com")

            // A user name instead of an email address.
            var named = Self.localUser("", "Sam").objectValue ?? [:]
            named["identities"] = [["signInType": "userName", "issuer": "contoso.onmicrosoft.com", "issuerAssignedId": "sam.w"]]
            let sam = try await Self.graph(t, .POST, "/users", token: token, .object(named))
            #expect(sam.status == 201 && sam.json["mail"] == .null, "\(sam.body)")
            #expect(try await Self.ropc(t, "sam.w", "Moved-2026-pass!").status == 200)
        }
    }

    @Test func filtersPagesChangesAndDeletion() async throws {
        try await TestTenant.with { t in
            let token = try await Self.appToken(t)
            for i in 0..<5 {
                let r = try await Self.graph(t, .POST, "/users", token: token, Self.localUser("moved\(i)@contoso.com", "Moved \(i)"))
                #expect(r.status == 201, "\(r.body)")
            }
            let lookup = "identities/any(c:c/issuerAssignedId eq 'moved3@contoso.com' and c/issuer eq 'contoso.onmicrosoft.com')"
            let found = try await Self.graph(t, .GET, "/users?" + FormEncoding.encode(["$filter": lookup]), token: token)
            #expect(found.json["value"]?.arrayValue?.map { $0["mail"] } == ["moved3@contoso.com"], "\(found.body)")
            let started = try await Self.graph(
                t, .GET, "/users?" + FormEncoding.encode(["$filter": "startswith(displayName,'moved') and mail ne 'moved0@contoso.com'"]),
                token: token)
            #expect(started.json["value"]?.arrayValue?.count == 4, "\(started.body)")
            let bad = try await Self.graph(t, .GET, "/users?" + FormEncoding.encode(["$filter": "displayName eq 'x"]), token: token)
            #expect(bad.status == 400 && bad.json["error"]?["code"] == "BadRequest")
            let unsupported = try await Self.graph(
                t, .GET, "/users?" + FormEncoding.encode(["$filter": "createdDateTime gt 0"]), token: token)
            #expect(unsupported.status == 400 && unsupported.json["error"]?["code"] == "Request_UnsupportedQuery")

            var page = try await Self.graph(t, .GET, "/users?$top=2&$select=id", token: token)
            var ids = page.json["value"]?.arrayValue?.compactMap { $0["id"]?.stringValue } ?? []
            while let next = page.json["@odata.nextLink"]?.stringValue {
                #expect(next.hasPrefix(t.base + "/graph/v1.0/users?"))
                page = try await Self.graph(t, .GET, next, token: token)
                ids += page.json["value"]?.arrayValue?.compactMap { $0["id"]?.stringValue } ?? []
            }
            #expect(ids.count == 7 && Set(ids).count == 7, "every user once: \(ids)")
            #expect(try await Self.graph(t, .GET, "/users?$top=0", token: token).status == 400)
            #expect(try await Self.graph(t, .GET, "/users?$skiptoken=nope", token: token).status == 400)

            let id = try #require(found.json["value"]?.arrayValue?.first?["id"]?.stringValue)
            let patched = try await Self.graph(
                t, .PATCH, "/users/\(id)", token: token,
                ["displayName": "Moved Three", "passwordProfile": ["password": "Changed-2026-pass!"]])
            #expect(patched.status == 204, "\(patched.body)")
            #expect(try await Self.graph(t, .GET, "/users/\(id)", token: token).json["displayName"] == "Moved Three")
            #expect(try await Self.ropc(t, "moved3@contoso.com", "Changed-2026-pass!").status == 200)
            #expect(try await Self.graph(t, .PATCH, "/users/\(id)", token: token, ["jobTitle": 3]).status == 400)
            #expect(try await Self.graph(t, .DELETE, "/users/\(id)", token: token).status == 204)
            let gone = try await Self.graph(t, .GET, "/users/\(id)", token: token)
            #expect(gone.status == 404 && gone.json["error"]?["code"] == "Request_ResourceNotFound")
            #expect(try await Self.ropc(t, "moved3@contoso.com", "Changed-2026-pass!").status == 400)
        }
    }

    @Test func aThrottleIsGraphs429WithRetryAfter() async throws {
        try await TestTenant.with { t in
            let token = try await Self.appToken(t)
            #expect(try await t.admin(.POST, "/faults", ["endpoint": "graph", "kind": "status429"]).status < 300)
            let throttled = try await Self.graph(t, .GET, "/users", token: token)
            #expect(throttled.status == 429 && throttled.headers.first(name: "Retry-After") == "2")
            #expect(throttled.json["error"]?["code"] == "TooManyRequests")
            #expect(try await Self.graph(t, .GET, "/users", token: token).status == 200)
        }
    }

    @Test func aTwinsTwoSidesShareOneDirectory() async throws {
        try await TwinTenantTests.withTwin { b2c, externalId in
            let eidToken = try await Self.appToken(
                externalId, client: EmulatorSeed.defaultMigrationAppID, secret: EmulatorSeed.defaultMigrationAppSecret)
            let created = try await Self.graph(externalId, .POST, "/users", token: eidToken, Self.localUser("olga@contoso.com", "Olga"))
            #expect(created.status == 201, "\(created.body)")
            let id = try #require(created.json["id"]?.stringValue)
            let seen = try await Self.graph(b2c, .GET, "/users/\(id)", token: try await Self.appToken(b2c))
            #expect(seen.status == 200 && seen.json["mail"] == "olga@contoso.com", "\(seen.body)")
            // Each side's Graph takes its own side's tokens only.
            #expect(try await Self.graph(b2c, .GET, "/users/\(id)", token: eidToken).status == 401)
        }
    }

    /// Microsoft's Graph SDK for Python (msgraph-sdk: Kiota's request adapter, its retry handler) with msal's app-only token:
    /// creates, filters, pages, changes, retries a throttle and deletes (Tests/interop/graph_users_interop.py).
    @Test func microsoftsGraphSDKForPythonManagesTheUsers() async throws {
        let result = try await PythonInteropTests.interop(
            "graph_users_interop.py", [EmulatorSeed.default.tenant.extensionsAppIdOrDefault])
        #expect(result["created"] == 5 && result["listed"] == 7 && result["pages"] == 4, "\(result)")
        #expect((result["throttledWait"]?.doubleValue ?? 0) >= 1.5, "the SDK waited Retry-After: \(result)")
    }
}
