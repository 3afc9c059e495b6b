import B2CProtocol
import Foundation
import Testing

@testable import B2CEmulator

/// On-behalf-of on an External ID tenant (docs/emulator.md): msal-python's middle tier calling Graph as the person, and
/// each of Entra's refusals; B2C's refusal on a policy.
@Suite struct OnBehalfOfTests {
    static let api = (id: EmulatorSeed.defaultHelloAppID, secret: EmulatorSeed.defaultHelloAPISecret)

    static func obo(
        _ t: TestTenant, assertion: String, scope: String = "User.Read", secret: String? = api.secret, path: String? = nil
    )
        async throws -> TestResponse
    {
        var form = [
            "grant_type": "urn:ietf:params:oauth:grant-type:jwt-bearer", "requested_token_use": "on_behalf_of", "client_id": api.id,
            "assertion": assertion, "scope": scope,
        ]
        if let secret { form["client_secret"] = secret }
        return try await t.post(path ?? "/contoso.onmicrosoft.com/oauth2/v2.0/token", form)
    }

    @Test func msalPythonsMiddleTierCallsGraphAsThePerson() async throws {
        let result = try await PythonInteropTests.interop("obo_interop.py", seed: .defaultExternalID)
        #expect(result["me"]?.stringValue == alice.email && result["wrongAudience"] == "invalid_grant", "\(result)")
    }

    /// msal-python's `acquire_token_on_behalf_of` at a B2C policy, with a person's real token: B2C's refusal as msal's answer.
    @Test func msalPythonGetsB2CsRefusalAtAPolicy() async throws {
        let result = try await PythonInteropTests.interop("obo_b2c_refusal.py")
        #expect(result["error"] == "unsupported_grant_type" && result["code"] == "AADB2C90086", "\(result)")
    }

    @Test func entrasChecksRefuseEachWrongExchange() async throws {
        try await TestTenant.with(seed: .defaultExternalID) { t in
            // Alice's token for the hello API, through native authentication's password grant.
            let tokens = try await t.nativePasswordTokens(alice.email, alice.password, scope: "openid \(helloScope)")
            let assertion = try #require(tokens.json["access_token"]?.stringValue, "\(tokens.body)")
            let ok = try await Self.obo(t, assertion: assertion)
            #expect(ok.status == 200 && ok.json["id_token"] == nil, "\(ok.body)")
            let graph = try claims(ok.json["access_token"]?.stringValue)
            #expect(
                graph["aud"]?.stringValue == GraphEndpoint.appId && graph["oid"]?.stringValue == alice.oid
                    && graph["azp"]?.stringValue == Self.api.id)

            func refused(_ r: TestResponse, _ error: String, _ code: String, sourceLocation: SourceLocation = #_sourceLocation) {
                #expect(r.status == 400 || r.status == 401, "\(r.body)", sourceLocation: sourceLocation)
                #expect(
                    r.json["error"]?.stringValue == error && (r.json["error_description"]?.stringValue ?? "").hasPrefix(code), "\(r.body)",
                    sourceLocation: sourceLocation)
            }
            refused(try await Self.obo(t, assertion: assertion, secret: nil), "invalid_client", "AADSTS7000218")
            refused(try await Self.obo(t, assertion: "not.a.token"), "invalid_grant", "AADSTS50013")
            refused(
                try await Self.obo(t, assertion: assertion, scope: "https://graph.microsoft.com/User.ReadWrite"), "invalid_scope",
                "AADSTS65001")
            // Revoked since: the person's grants were revoked after the token was issued.
            try await t.advanceClock(60)
            _ = try t.emulator.store.revokeGrants(oid: alice.oid, now: t.emulator.clock.now())
            refused(try await Self.obo(t, assertion: assertion), "invalid_grant", "AADSTS50173")
            // Expired.
            try await t.advanceClock(7200)
            refused(try await Self.obo(t, assertion: assertion), "invalid_grant", "AADSTS500133")
        }
        // B2C: no on-behalf-of at a policy.
        try await TestTenant.with { t in
            let r = try await Self.obo(t, assertion: "x", path: "/contoso.onmicrosoft.com/B2C_1_susi/oauth2/v2.0/token")
            expectB2CError(r, error: "unsupported_grant_type", code: "AADB2C90086")
        }
    }
}
