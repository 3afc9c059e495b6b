import B2CKit
import Foundation
import Testing

@testable import B2CEmulator

/// Microsoft Graph `/me` on an External ID tenant: the checks a resource server makes, `$select`, `PATCH` with
/// `User.ReadWrite`, Graph's error shapes; a B2C tenant has no Graph.
@Suite struct GraphTests {
    static func graphToken(_ t: TestTenant, scope: String) async throws -> String {
        let pkce = PKCE()
        let b = Browser(t)
        let page = try await b.get(authorizeURL(pkce: pkce, scope: "openid offline_access \(scope)"))
        let answer = try await b.submit(page, form: "localAccountForm", ["logonIdentifier": alice.email, "password": alice.password])
        let code = try #require(answer.redirectParams["code"], "\(answer.status) \(answer.body.prefix(300))")
        let r = try await t.token("B2C_1_susi", redeemForm(code: code, verifier: pkce.verifier, scope: "openid offline_access \(scope)"))
        return try #require(r.json["access_token"]?.stringValue, "\(r.status) \(r.body)")
    }

    @Test func meAnswersBehindAResourceServersChecks() async throws {
        var seed = EmulatorSeed.default
        seed.tenant.externalId = true
        seed.apps[0].apiPermissions.append("https://graph.microsoft.com/User.ReadWrite")  // PATCH's permission, named
        try await TestTenant.with(seed: seed) { t in
            let token = try await Self.graphToken(t, scope: "User.Read")
            let c = try claims(token)
            #expect(c["aud"] == "00000003-0000-0000-c000-000000000000" && c["scp"] == "User.Read", "\(c)")
            let bearer = [("Authorization", "Bearer \(token)")]
            let me = try await t.get("/graph/v1.0/me", headers: bearer)
            #expect(me.status == 200 && me.json["displayName"] == "Alice Example" && me.json["mail"] == .string(alice.email), "\(me.body)")
            #expect(me.json["id"] == .string(alice.oid) && me.json["businessPhones"] == [] && me.json["jobTitle"] == .null)
            #expect(me.json["@odata.context"] == "https://graph.microsoft.com/v1.0/$metadata#users/$entity")
            let selected = try await t.get("/graph/v1.0/me?$select=displayName,mail", headers: bearer)
            #expect(selected.json.objectValue?.keys.sorted() == ["@odata.context", "displayName", "mail"], "\(selected.body)")
            let unknown = try await t.get("/graph/v1.0/me?$select=shoeSize", headers: bearer)
            #expect(unknown.status == 400 && unknown.json["error"]?["code"] == "Request_BadRequest")
            // PATCH needs User.ReadWrite.
            let denied = try await t.request(.PATCH, "/graph/v1.0/me", json: ["displayName": "Alice G."], headers: bearer)
            #expect(denied.status == 403 && denied.json["error"]?["code"] == "Authorization_RequestDenied", "\(denied.body)")
            let hint = denied.json["error"]?["message"]?.stringValue ?? ""
            #expect(hint.contains("User.ReadWrite") && hint.contains("this one has User.Read"), "\(hint)")
            let writer = [("Authorization", "Bearer \(try await Self.graphToken(t, scope: "https://graph.microsoft.com/User.ReadWrite"))")]
            let patched = try await t.request(.PATCH, "/graph/v1.0/me", json: ["displayName": "Alice G.", "city": "Lyon"], headers: writer)
            #expect(patched.status == 204, "\(patched.body)")
            let after = try await t.get("/graph/v1.0/me?$select=displayName,city", headers: bearer)
            #expect(after.json["displayName"] == "Alice G." && after.json["city"] == "Lyon")
            // Microsoft's Graph SDKs send OData annotations in every update: control information, not properties.
            let annotated = try await t.request(
                .PATCH, "/graph/v1.0/me", json: ["@odata.type": "#microsoft.graph.user", "jobTitle": "Engineer"], headers: writer)
            #expect(annotated.status == 204, "\(annotated.body)")
            // A body over Graph's limit is a 413 in Graph's shape, never a server error.
            let huge = "{\"displayName\": \"" + String(repeating: "a", count: 70_000) + "\"}"
            let tooBig = try await t.request(
                .PATCH, "/graph/v1.0/me", body: huge, headers: writer + [("Content-Type", "application/json")])
            #expect(tooBig.status == 413 && tooBig.json["error"]?["code"] == "Request_EntityTooLarge", "\(tooBig.status) \(tooBig.body)")
            let readOnly = try await t.request(.PATCH, "/graph/v1.0/me", json: ["mail": "x@y.z"], headers: writer)
            #expect(readOnly.status == 400)
            // The checks: no token, another audience (the sample API's token), a tampered signature.
            let none = try await t.get("/graph/v1.0/me")
            #expect(
                none.status == 401 && none.json["error"]?["code"] == "InvalidAuthenticationToken"
                    && none.headers.first(name: "www-authenticate") != nil)
            let hello = try #require(try await signInAndRedeem(t)["access_token"]?.stringValue)
            let wrongAudience = try await t.get("/graph/v1.0/me", headers: [("Authorization", "Bearer \(hello)")])
            #expect(wrongAudience.status == 401 && wrongAudience.json["error"]?["message"]?.stringValue?.contains("audience") == true)
            let tampered = try await t.get("/graph/v1.0/me", headers: [("Authorization", "Bearer \(token.dropLast(3))AAA")])
            #expect(tampered.status == 401)
            // --config-out names the tenant's own Graph.
            let config = t.emulator.clientConfiguration(baseURL: t.base, caFile: nil)
            #expect(
                config["apis"]?.arrayValue?.contains { $0["name"] == "graph" && $0["baseUrl"] == .string(t.base + "/graph/v1.0") } == true)
        }
    }

    @Test func aB2CTenantHasNoGraph() async throws {
        try await TestTenant.with { t in
            let page = try await Browser(t).get(authorizeURL(scope: "openid User.Read"))
            #expect(
                page.location?.contains("AADB2C90012") == true || page.body.contains("AADB2C90012"), "\(page.status) \(page.location ?? "")"
            )
            #expect(try await t.get("/graph/v1.0/me").status == 404)
        }
    }
}
