import B2CEmulator
import B2CKit
import Foundation
import Testing

@Suite struct SampleAPITests {
    @Test func helloValidatesTokensFully() async throws {
        try await TestTenant.with(tls: true) { t in
            let tokens = try await signInAndRedeem(t)
            let at = try #require(tokens["access_token"]?.stringValue)
            let ok = try await t.get("/hello", headers: [("Authorization", "Bearer \(at)")])
            #expect(ok.status == 200)
            #expect(ok.json == ["name": "Alice Example"])
            let none = try await t.get("/hello")
            #expect(none.status == 401 && none.headers.first(name: "www-authenticate")?.hasPrefix("Bearer") == true)
            func rejected(_ token: String, _ why: String, sourceLocation: SourceLocation = #_sourceLocation) async throws {
                let r = try await t.get("/hello", headers: [("Authorization", "Bearer \(token)")])
                #expect(r.status == 401, "\(why): \(r.status)", sourceLocation: sourceLocation)
                #expect(
                    r.headers.first(name: "www-authenticate")?.contains("error=\"invalid_token\"") == true, "\(why)",
                    sourceLocation: sourceLocation)
            }
            try await rejected("garbage", "garbage")
            try await rejected(try #require(tokens["id_token"]?.stringValue), "an id token (audience is the client)")
            var parts = at.split(separator: ".").map(String.init)
            parts[2] = String(parts[2].reversed())
            try await rejected(parts.joined(separator: "."), "tampered signature")
            let c = try JWT.decode(at).claims
            var forged = c
            forged["name"] = "Mallory"
            let forgedPayload = Base64URL.encode(JSONValue.object(forged).serialized())
            try await rejected("\(parts[0]).\(forgedPayload).\(at.split(separator: ".")[2])", "changed payload")
            // A token for another scope of the same API: 403 insufficient_scope.
            let write = try await t.token(
                "B2C_1_susi",
                [
                    "grant_type": "refresh_token", "client_id": clientID,
                    "refresh_token": try #require(tokens["refresh_token"]?.stringValue),
                    "scope": "https://contoso.onmicrosoft.com/helloapi/demo.write",
                ])
            let forbidden = try await t.get(
                "/hello", headers: [("Authorization", "Bearer \(try #require(write.json["access_token"]?.stringValue))")])
            #expect(forbidden.status == 403)
            #expect(forbidden.json == ["error": "insufficient_scope"])
            // Expiry follows the emulator clock.
            try await t.advanceClock(3601)
            try await rejected(at, "expired")
        }
    }
}

@Suite struct AdminTests {
    @Test func usersOutboxClockAndLog() async throws {
        try await TestTenant.with { t in
            let created = try await t.admin(
                .POST, "/users", ["email": "erin@contoso.com", "password": "Erin-2026-pw", "givenName": "Erin"])
            #expect(created.status == 201 && created.json["displayName"] == "Erin")
            #expect(try await t.admin(.POST, "/users", ["email": "erin@contoso.com", "password": "x"]).status == 409)
            let bad = try await t.admin(.POST, "/users", ["email": 42])
            #expect(bad.status == 400 && bad.body.contains("$.email"))
            let unknown = try await t.admin(.POST, "/users", ["email": "x@y.z", "password": "p", "role": "admin"])
            #expect(unknown.status == 400 && unknown.body.contains("$.role"))
            let notJSON = try await t.request(.POST, "/_admin/users", body: "{not json", headers: [("Content-Type", "application/json")])
            #expect(notJSON.status == 400 && notJSON.body.contains("line 1"))
            let list = try await t.admin(.GET, "/users")
            #expect(list.json["users"]?.arrayValue?.count == 3)
            let ropc = try await t.token(
                "B2C_1_ROPC_Auth",
                [
                    "grant_type": "password", "client_id": clientID, "username": "erin@contoso.com",
                    "password": "Erin-2026-pw", "scope": "openid offline_access",
                ])
            #expect(ropc.status == 200)
            let clock0 = try await t.admin(.GET, "/clock").json["now"]?.lenientInt ?? 0
            try await t.advanceClock(86_400)
            let clock1 = try await t.admin(.GET, "/clock").json["now"]?.lenientInt ?? 0
            #expect(clock1 - clock0 >= 86_400 && clock1 - clock0 < 86_460)
            #expect(try await t.admin(.POST, "/clock", ["advanceSeconds": "soon"]).status == 400)
            let log = try await t.admin(.GET, "/log")
            let entries = try #require(log.json["requests"]?.arrayValue)
            #expect(entries.contains { $0["grantType"] == "password" && $0["policy"] == "b2c_1_ropc_auth" && $0["outcome"] == "ok" })
            #expect(!log.body.contains(ropc.json["refresh_token"]?.stringValue ?? "-"), "the log holds no secrets")
            let stats = try await t.admin(.GET, "/stats")
            #expect(stats.json["tokenRequests"]?["token password b2c_1_ropc_auth ok"] == 1)
            #expect(try await t.admin(.GET, "/nothing").status == 404)
        }
    }

    @Test func faultInjection() async throws {
        try await TestTenant.with { t in
            let discovery = "/contoso.onmicrosoft.com/B2C_1_susi/v2.0/.well-known/openid-configuration"
            #expect(try await t.admin(.POST, "/faults", ["endpoint": "discovery", "kind": "status500", "count": 2]).status == 201)
            #expect(try await t.get(discovery).status == 500)
            #expect(try await t.get(discovery).status == 500)
            #expect(try await t.get(discovery).status == 200, "the fault applies to the next N requests only")
            _ = try await t.admin(.POST, "/faults", ["endpoint": "token", "kind": "status503"])
            let unavailable = try await t.token("B2C_1_susi", [:])
            #expect(unavailable.status == 503 && unavailable.headers.first(name: "retry-after") == "1")
            _ = try await t.admin(.POST, "/faults", ["endpoint": "token", "kind": "malformedJSON"])
            let malformed = try await t.token("B2C_1_susi", [:])
            #expect(malformed.status == 200 && (try? JSONValue.parse(malformed.body)) == nil)
            _ = try await t.admin(.POST, "/faults", ["endpoint": "keys", "kind": "wrongContentType"])
            let html = try await t.get("/contoso.onmicrosoft.com/B2C_1_susi/discovery/v2.0/keys")
            #expect(html.headers.first(name: "content-type")?.hasPrefix("text/html") == true)
            _ = try await t.admin(.POST, "/faults", ["endpoint": "hello", "kind": "delay", "delayMs": 400])
            let started = Date()
            _ = try await t.get("/hello")
            #expect(Date().timeIntervalSince(started) >= 0.35)
            _ = try await t.admin(.POST, "/faults", ["endpoint": "any", "kind": "drop"])
            #expect(try await t.admin(.GET, "/faults").json["faults"]?.arrayValue?.count == 1, "admin requests are never faulted")
            await #expect(throws: (any Error).self) { _ = try await t.get(discovery) }
            #expect(try await t.get(discovery).status == 200)
            _ = try await t.admin(.POST, "/faults", ["endpoint": "token", "kind": "status500", "count": 5])
            #expect(try await t.admin(.GET, "/faults").json["faults"]?.arrayValue?.count == 1)
            #expect(try await t.admin(.DELETE, "/faults").status == 204)
            #expect(try await t.admin(.GET, "/faults").json["faults"] == [])
            let badKind = try await t.admin(.POST, "/faults", ["endpoint": "token", "kind": "explode"])
            #expect(badKind.status == 400 && badKind.body.contains("$.kind"))
            let badEndpoint = try await t.admin(.POST, "/faults", ["endpoint": "everything", "kind": "drop"])
            #expect(badEndpoint.status == 400 && badEndpoint.body.contains("$.endpoint"))
        }
    }
}
