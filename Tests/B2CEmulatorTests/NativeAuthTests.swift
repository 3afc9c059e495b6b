import B2CEmulator
import B2CKit
import Foundation
import Testing

private let base = "/contoso.onmicrosoft.com/oauth2/v2.0"

private func expectAADError(
    _ r: TestResponse, error: String, code: Int, suberror: String? = nil,
    sourceLocation: SourceLocation = #_sourceLocation
) {
    #expect(r.status == 400, "\(r.body)", sourceLocation: sourceLocation)
    #expect(r.json["error"]?.stringValue == error, "\(r.body)", sourceLocation: sourceLocation)
    #expect(r.json["error_codes"]?.arrayValue?.first?.lenientInt == code, "\(r.body)", sourceLocation: sourceLocation)
    #expect(r.json["trace_id"] != nil && r.json["correlation_id"] != nil && r.json["timestamp"] != nil, sourceLocation: sourceLocation)
    if let suberror { #expect(r.json["suberror"]?.stringValue == suberror, "\(r.body)", sourceLocation: sourceLocation) }
}

@Suite struct NativeAuthTests {
    /// The External ID tenant with an "Email one-time passcode" user flow: native sign-in by emailed codes.
    static var byCode: EmulatorSeed {
        var seed = EmulatorSeed.defaultExternalID
        seed.policies[seed.policies.firstIndex { $0.id == "B2C_1_susi" }!].signInMethod = .emailOtp
        return seed
    }

    @Test func emailAndPassword() async throws {
        try await TestTenant.with { t in
            let start = try await t.post(
                "\(base)/initiate", ["client_id": clientID, "challenge_type": "password redirect", "username": alice.email])
            #expect(start.status == 200)
            let ct1 = try #require(start.json["continuation_token"]?.stringValue)
            let ch = try await t.post(
                "\(base)/challenge", ["client_id": clientID, "challenge_type": "password redirect", "continuation_token": ct1])
            #expect(ch.json["challenge_type"] == "password")
            let ct2 = try #require(ch.json["continuation_token"]?.stringValue)
            let wrong = try await t.post(
                "\(base)/token",
                [
                    "client_id": clientID, "grant_type": "password", "continuation_token": ct2,
                    "password": "nope", "scope": "openid offline_access",
                ])
            expectAADError(wrong, error: "invalid_grant", code: 50126)
            let ok = try await t.post(
                "\(base)/token",
                [
                    "client_id": clientID, "grant_type": "password", "continuation_token": ct2,
                    "password": alice.password, "scope": "openid offline_access \(helloScope)",
                    "client_info": "true",
                ])
            #expect(ok.status == 200, "\(ok.body)")
            #expect(try ClientInfo.decode(try #require(ok.json["client_info"]?.stringValue)).uid == alice.oid)
            let c = try claims(ok.json["id_token"]?.stringValue)
            #expect(c["tid"]?.stringValue == tenantID && c["preferred_username"]?.stringValue == alice.email)
            #expect(try claims(ok.json["access_token"]?.stringValue)["scp"] == "demo.read")
            // The continuation token is spent.
            let again = try await t.post(
                "\(base)/token", ["client_id": clientID, "grant_type": "password", "continuation_token": ct2, "password": alice.password])
            expectAADError(again, error: "invalid_grant", code: 55113)
            // Native refresh works natively and is refused by a B2C policy.
            let rt = try #require(ok.json["refresh_token"]?.stringValue)
            let refreshed = try await t.post("\(base)/token", ["client_id": clientID, "grant_type": "refresh_token", "refresh_token": rt])
            #expect(refreshed.status == 200 && refreshed.json["refresh_token"]?.stringValue != rt)
            expectB2CError(
                try await t.token("B2C_1_susi", ["grant_type": "refresh_token", "client_id": clientID, "refresh_token": rt]),
                error: "invalid_grant", code: "AADB2C90088")
        }
    }

    @Test func emailOneTimeCodeWithResend() async throws {
        try await TestTenant.with(seed: Self.byCode) { t in
            let start = try await t.post(
                "\(base)/initiate", ["client_id": clientID, "challenge_type": "oob redirect", "username": bob.email])
            let ch = try await t.post(
                "\(base)/challenge",
                [
                    "client_id": clientID, "challenge_type": "oob redirect",
                    "continuation_token": try #require(start.json["continuation_token"]?.stringValue),
                ])
            #expect(ch.json["challenge_type"] == "oob" && ch.json["binding_method"] == "prompt" && ch.json["challenge_channel"] == "email")
            #expect(ch.json["code_length"] == 8)
            let label = try #require(ch.json["challenge_target_label"]?.stringValue)
            #expect(label != bob.email && label.contains("***") && label.hasSuffix(".com"))
            let firstCode = try await t.latestCode(to: bob.email)
            #expect(firstCode.count == 8)
            // Resend: a new code; the old code and the old continuation token stop working.
            let ct1 = try #require(ch.json["continuation_token"]?.stringValue)
            let resend = try await t.post(
                "\(base)/challenge", ["client_id": clientID, "challenge_type": "oob redirect", "continuation_token": ct1])
            let ct2 = try #require(resend.json["continuation_token"]?.stringValue)
            let secondCode = try await t.latestCode(to: bob.email)
            #expect(secondCode != firstCode)
            let oldToken = try await t.post(
                "\(base)/token", ["client_id": clientID, "grant_type": "oob", "continuation_token": ct1, "oob": secondCode])
            expectAADError(oldToken, error: "invalid_grant", code: 55113)
            let old = try await t.post(
                "\(base)/token", ["client_id": clientID, "grant_type": "oob", "continuation_token": ct2, "oob": firstCode])
            expectAADError(old, error: "invalid_grant", code: 50181, suberror: "invalid_oob_value")
            let wrong = try await t.post(
                "\(base)/token", ["client_id": clientID, "grant_type": "oob", "continuation_token": ct2, "oob": "00000000"])
            expectAADError(wrong, error: "invalid_grant", code: 50181, suberror: "invalid_oob_value")
            let ok = try await t.post(
                "\(base)/token",
                [
                    "client_id": clientID, "grant_type": "oob", "continuation_token": ct2, "oob": secondCode,
                    "scope": "openid offline_access",
                ])
            #expect(ok.status == 200, "\(ok.body)")
            #expect(try claims(ok.json["id_token"]?.stringValue)["oid"]?.stringValue == bob.oid)
        }
    }

    @Test func tooManyWrongCodesEndTheFlow() async throws {
        try await TestTenant.with(seed: Self.byCode) { t in
            let start = try await t.post(
                "\(base)/initiate", ["client_id": clientID, "challenge_type": "oob redirect", "username": bob.email])
            let ch = try await t.post(
                "\(base)/challenge",
                ["client_id": clientID, "continuation_token": try #require(start.json["continuation_token"]?.stringValue)])
            let ct = try #require(ch.json["continuation_token"]?.stringValue)
            for _ in 0..<4 {
                expectAADError(
                    try await t.post("\(base)/token", ["client_id": clientID, "grant_type": "oob", "continuation_token": ct, "oob": "1"]),
                    error: "invalid_grant", code: 50181, suberror: "invalid_oob_value")
            }
            expectAADError(
                try await t.post("\(base)/token", ["client_id": clientID, "grant_type": "oob", "continuation_token": ct, "oob": "1"]),
                error: "invalid_grant", code: 50196)
            let code = try await t.latestCode(to: bob.email)
            expectAADError(
                try await t.post("\(base)/token", ["client_id": clientID, "grant_type": "oob", "continuation_token": ct, "oob": code]),
                error: "invalid_grant", code: 55113)
        }
    }

    @Test func errorsAndRedirectFallback() async throws {
        var seed = EmulatorSeed.default
        var web = seed.apps[0]
        web.clientId = "99999999-0000-4000-8000-000000000099"
        web.nativeAuth = false
        seed.apps.append(web)
        try await TestTenant.with(seed: seed) { t in
            expectAADError(
                try await t.post(
                    "\(base)/initiate", ["client_id": clientID, "challenge_type": "oob redirect", "username": "ghost@contoso.com"]),
                error: "user_not_found", code: 50034)
            expectAADError(
                try await t.post("\(base)/initiate", ["client_id": clientID, "challenge_type": "sms redirect", "username": alice.email]),
                error: "unsupported_challenge_type", code: 55102)
            expectAADError(
                try await t.post("\(base)/initiate", ["client_id": clientID, "challenge_type": "oob", "username": alice.email]),
                error: "invalid_request", code: 901007)
            expectAADError(
                try await t.post("\(base)/initiate", ["client_id": clientID, "challenge_type": "oob redirect"]),
                error: "invalid_request", code: 900144)
            expectAADError(
                try await t.post(
                    "\(base)/initiate", ["client_id": web.clientId, "challenge_type": "oob redirect", "username": alice.email]),
                error: "unauthorized_client", code: 500207)
            expectAADError(
                try await t.post("\(base)/initiate", ["client_id": "nope", "challenge_type": "oob redirect", "username": alice.email]),
                error: "unauthorized_client", code: 700016)
            let redirect = try await t.post(
                "\(base)/initiate", ["client_id": clientID, "challenge_type": "redirect", "username": alice.email])
            #expect(redirect.status == 200 && redirect.json["challenge_type"] == "redirect")
            // Continuation tokens expire.
            let start = try await t.post(
                "\(base)/initiate", ["client_id": clientID, "challenge_type": "password redirect", "username": alice.email])
            try await t.advanceClock(601)
            expectAADError(
                try await t.post(
                    "\(base)/challenge",
                    ["client_id": clientID, "continuation_token": try #require(start.json["continuation_token"]?.stringValue)]),
                error: "expired_token", code: 552003)
            expectAADError(
                try await t.post("\(base)/token", ["client_id": clientID, "grant_type": "device_code"]), error: "unsupported_grant_type",
                code: 70003)
        }
    }
}
