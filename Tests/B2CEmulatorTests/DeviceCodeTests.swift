import AsyncHTTPClient
import B2CProtocol
import Foundation
import NIOHTTP1
import Testing

@testable import B2CEmulator

/// The device authorization grant of an External ID tenant (docs/emulator.md): msal-python's device flow with a person at
/// the verification page, each polling answer Entra gives, and B2C's refusal.
@Suite struct DeviceCodeTests {
    static let client = EmulatorSeed.defaultTwinClientID

    static func start(
        _ t: TestTenant, client: String = client, path: String = "/contoso.onmicrosoft.com/oauth2/v2.0/devicecode"
    )
        async throws -> TestResponse
    {
        try await t.post(path, ["client_id": client, "scope": "openid offline_access \(helloScope)"])
    }

    static func poll(
        _ t: TestTenant, _ deviceCode: String, client: String = client, path: String = "/contoso.onmicrosoft.com/oauth2/v2.0/token"
    ) async throws -> TestResponse {
        try await t.post(
            path, ["grant_type": "urn:ietf:params:oauth:grant-type:device_code", "client_id": client, "device_code": deviceCode])
    }

    @Test func msalPythonsDeviceFlowSignsInAndB2CRefusesIt() async throws {
        let out = try await TwinTenantTests.interop("device_code_interop.py") { b2c, externalId, ca in [externalId.base, ca, b2c.base] }
        #expect(out["oid"]?.stringValue == alice.oid && out["b2cError"] == "unsupported_grant_type", "\(out)")
    }

    @Test func pollingAnswersPendingSlowDownDeclinedAndExpired() async throws {
        try await TwinTenantTests.withTwin { b2c, t in
            let started = try await Self.start(t)
            #expect(started.status == 200 && started.json["interval"] == 5, "\(started.body)")
            let deviceCode = try #require(started.json["device_code"]?.stringValue)
            let pending = try await Self.poll(t, deviceCode)
            #expect(pending.status == 400 && pending.json["error"] == "authorization_pending", "\(pending.body)")
            #expect(try await Self.poll(t, deviceCode).json["error"] == "slow_down", "a poll within the interval")
            // A wrong code on the page is said there; declining ends the flow.
            let b = Browser(t)
            let page = try await b.get("/contoso.onmicrosoft.com/devicelogin")
            let wrong = try await b.submit(page, form: "deviceCode", ["otc": "XXXXXXXXX", "answer": "next"])
            #expect(
                wrong.body.contains("That code wasn&#39;t found") || wrong.body.contains("That code wasn't found"),
                "\(wrong.body.prefix(500))")
            let userCode = try #require(started.json["user_code"]?.stringValue)
            let declined = try await b.submit(wrong, form: "deviceCode", ["otc": userCode, "answer": "decline"])
            #expect(declined.body.contains("Sign-in cancelled"))
            try await t.advanceClock(6)
            #expect(try await Self.poll(t, deviceCode).json["error"] == "authorization_declined")
            // Fifteen minutes without a sign-in: expired.
            let late = try #require(try await Self.start(t).json["device_code"]?.stringValue)
            try await t.advanceClock(901)
            let expired = try await Self.poll(t, late)
            #expect(
                expired.json["error"] == "expired_token" && expired.json["error_description"]?.stringValue?.hasPrefix("AADSTS70019") == true
            )
            // The code a person typed is the tenant's usual journey, then tokens, once.
            let fresh = try await Self.start(t)
            let code = try #require(fresh.json["user_code"]?.stringValue), device = try #require(fresh.json["device_code"]?.stringValue)
            let person = Browser(t)
            let signIn = try await person.submit(
                try await person.get("/contoso.onmicrosoft.com/devicelogin"), form: "deviceCode",
                ["otc": code.lowercased(), "answer": "next"])
            let journey = try await person.get(try #require(signIn.location, "\(signIn.status) \(signIn.body.prefix(300))"))
            let back = try await person.signInOnPage(journey, alice.email, alice.password)
            let done = try await person.get(try #require(back.location, "\(back.body.prefix(300))"))
            #expect(done.body.contains("You&#39;re signed in") || done.body.contains("You're signed in"), "\(done.body.prefix(300))")
            try await t.advanceClock(6)
            let tokens = try await Self.poll(t, device)
            #expect(tokens.status == 200 && tokens.json["access_token"] != nil && tokens.json["refresh_token"] != nil, "\(tokens.body)")
            #expect(try claims(tokens.json["id_token"]?.stringValue)["oid"]?.stringValue == alice.oid)
            try await t.advanceClock(6)
            #expect(try await Self.poll(t, device).json["error"] == "invalid_grant", "a device code is used once")
            // B2C: no such grant, at either endpoint.
            let refused = try await Self.start(b2c, client: clientID, path: "/contoso.onmicrosoft.com/B2C_1_susi/oauth2/v2.0/devicecode")
            expectB2CError(refused, error: "unsupported_grant_type", code: "AADB2C90086")
            expectB2CError(
                try await Self.poll(b2c, "x", client: clientID, path: "/contoso.onmicrosoft.com/B2C_1_susi/oauth2/v2.0/token"),
                error: "unsupported_grant_type",
                code: "AADB2C90086")
        }
    }
}
