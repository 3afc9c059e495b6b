import B2CKit
@testable import B2CEmulator
import Foundation
import Testing

private let root = "/contoso.onmicrosoft.com"

/// An External ID tenant whose user flow asks `attributes` at sign-up and `mfa` at sign-in, and `extra` users.
private func externalID(
    attributes: [EmulatorSeed.Attribute] = EmulatorSeed.Attribute.defaults, mfa: EmulatorSeed.MFA? = nil,
    extra: [EmulatorSeed.User] = []
) -> EmulatorSeed {
    var seed = EmulatorSeed.defaultExternalID
    let i = seed.policies.firstIndex { $0.id == "B2C_1_susi" }!
    seed.policies[i].attributes = attributes
    seed.policies[i].mfa = mfa
    seed.users += extra
    return seed
}

private func expectRefusal(
    _ r: TestResponse, _ error: String, code: Int, suberror: String? = nil, sourceLocation: SourceLocation = #_sourceLocation
) {
    #expect(r.status == 400, "\(r.body)", sourceLocation: sourceLocation)
    #expect(r.json["error"]?.stringValue == error, "\(r.body)", sourceLocation: sourceLocation)
    #expect(r.json["error_codes"]?.arrayValue?.first?.lenientInt == code, "\(r.body)", sourceLocation: sourceLocation)
    #expect(r.json["suberror"]?.stringValue == suberror, "\(r.body)", sourceLocation: sourceLocation)
}

extension TestResponse {
    var continuation: String { json["continuation_token"]?.stringValue ?? "" }
}

extension TestTenant {
    func native(_ path: String, _ form: [String: String]) async throws -> TestResponse {
        try await post("\(root)/\(path)", form.merging(["client_id": clientID]) { old, _ in old })
    }
}

@Suite("Native sign-up, password reset, MFA and registration (the tenant)")
struct NativeJourneyTests {
    static let loyalty = EmulatorSeed.Attribute(name: "extension_loyaltyNumber", kind: .int, required: true, label: "Loyalty number")
    static let displayName = EmulatorSeed.Attribute(name: "displayName", required: true, label: "Display Name")

    @Test func signUpWithPasswordAndAttributes() async throws {
        try await TestTenant.with(seed: externalID(attributes: [Self.displayName, Self.loyalty])) { t in
            let erin = "erin@contoso.com"
            expectRefusal(
                try await t.native("signup/v1.0/start", ["username": alice.email, "challenge_type": "oob password redirect"]),
                "user_already_exists", code: 1003037)
            expectRefusal(
                try await t.native(
                    "signup/v1.0/start", ["username": erin, "challenge_type": "oob password redirect", "password": "short"]),
                "invalid_grant", code: 399246, suberror: "password_too_short")
            let start = try await t.native("signup/v1.0/start", ["username": erin, "challenge_type": "oob password redirect"])
            #expect(start.status == 200, "\(start.body)")
            // A password before the address is proven: verification_required, the flow goes on.
            let early = try await t.native(
                "signup/v1.0/continue", ["grant_type": "password", "password": "Erin-2026-pass!", "continuation_token": start.continuation])
            expectRefusal(early, "verification_required", code: 55104)
            #expect(early.json["unverified_attributes"]?.arrayValue?.first?["name"] == "email")
            let challenge = try await t.native("signup/v1.0/challenge", ["continuation_token": early.continuation])
            #expect(challenge.json["challenge_type"] == "oob" && challenge.json["code_length"] == 8, "\(challenge.body)")
            let code = try await t.latestCode(to: erin)
            let verified = try await t.native(
                "signup/v1.0/continue", ["grant_type": "oob", "oob": code, "continuation_token": challenge.continuation])
            expectRefusal(verified, "credential_required", code: 55103)
            let pwChallenge = try await t.native(
                "signup/v1.0/challenge", ["continuation_token": verified.continuation, "challenge_type": "oob password redirect"])
            #expect(pwChallenge.json["challenge_type"] == "password", "\(pwChallenge.body)")
            expectRefusal(
                try await t.native(
                    "signup/v1.0/continue",
                    ["grant_type": "password", "password": "alllowercase", "continuation_token": pwChallenge.continuation]),
                "invalid_grant", code: 399246, suberror: "password_too_weak")
            let withPassword = try await t.native(
                "signup/v1.0/continue",
                ["grant_type": "password", "password": "Erin-2026-pass!", "continuation_token": pwChallenge.continuation])
            expectRefusal(withPassword, "attributes_required", code: 55106)
            let required = try #require(withPassword.json["required_attributes"]?.arrayValue)
            let appID = EmulatorSeed.defaultExternalID.tenant.extensionsAppIdOrDefault.replacingOccurrences(of: "-", with: "")
            #expect(required.compactMap { $0["name"]?.stringValue }.sorted() == ["displayName", "extension_\(appID)_loyaltyNumber"])
            #expect(required.first { $0["type"] == "int" }?["options"]?["regex"] != nil)
            let bad = try await t.native(
                "signup/v1.0/continue",
                [
                    "grant_type": "attributes", "continuation_token": withPassword.continuation,
                    "attributes": #"{"displayName": "Erin", "extension_\#(appID)_loyaltyNumber": "L-42"}"#,
                ])
            expectRefusal(bad, "invalid_grant", code: 55108, suberror: "attribute_validation_failed")
            #expect(bad.json["invalid_attributes"]?.arrayValue?.first?["name"]?.stringValue == "extension_\(appID)_loyaltyNumber")
            let done = try await t.native(
                "signup/v1.0/continue",
                [
                    "grant_type": "attributes", "continuation_token": withPassword.continuation,
                    "attributes": #"{"displayName": "Erin", "extension_\#(appID)_loyaltyNumber": 42, "unknownThing": 1}"#,
                ])
            #expect(done.status == 200 && !done.continuation.isEmpty, "\(done.body)")
            let tokens = try await t.native(
                "oauth2/v2.0/token",
                [
                    "grant_type": "continuation_token", "continuation_token": done.continuation, "username": erin,
                    "scope": "openid offline_access",
                ])
            #expect(tokens.status == 200, "\(tokens.body)")
            let id = try claims(tokens.json["id_token"]?.stringValue)
            #expect(id["name"]?.stringValue == "Erin" && id["preferred_username"]?.stringValue == erin)
            let user = try #require(try t.emulator.store.user(email: erin))
            #expect(user.attributes["extension_loyaltyNumber"] == JSONValue(42))
            #expect(try t.emulator.store.checkPassword(email: erin, password: "Erin-2026-pass!") != nil)
            // The continuation token was spent, and the address is taken now.
            expectRefusal(
                try await t.native("oauth2/v2.0/token", ["grant_type": "continuation_token", "continuation_token": done.continuation]),
                "invalid_grant", code: 55113)
            expectRefusal(
                try await t.native("signup/v1.0/start", ["username": erin, "challenge_type": "oob password redirect"]),
                "user_already_exists", code: 1003037)
        }
    }

    @Test func passwordlessSignUpAndClientsThatCannotTakeACode() async throws {
        try await TestTenant.with(seed: externalID()) { t in
            let redirect = try await t.native("signup/v1.0/start", ["username": "fay@contoso.com", "challenge_type": "password redirect"])
            #expect(redirect.status == 200 && redirect.json["challenge_type"] == "redirect")
            let start = try await t.native(
                "signup/v1.0/start",
                ["username": "fay@contoso.com", "challenge_type": "oob redirect", "attributes": #"{"displayName": "Fay"}"#])
            let challenge = try await t.native("signup/v1.0/challenge", ["continuation_token": start.continuation])
            let done = try await t.native(
                "signup/v1.0/continue",
                ["grant_type": "oob", "oob": try await t.latestCode(to: "fay@contoso.com"), "continuation_token": challenge.continuation])
            #expect(done.status == 200, "\(done.body)")
            #expect(try t.emulator.store.user(email: "fay@contoso.com")?.displayName == "Fay")
        }
    }

    @Test func passwordResetThenSignedIn() async throws {
        try await TestTenant.with(seed: externalID()) { t in
            expectRefusal(
                try await t.native("resetpassword/v1.0/start", ["username": "ghost@contoso.com", "challenge_type": "oob redirect"]),
                "user_not_found", code: 50034)
            // An earlier sign-in's refresh token, which the reset revokes.
            let before = try await t.token(
                "B2C_1_ROPC_Auth",
                [
                    "grant_type": "password", "client_id": clientID, "username": alice.email, "password": alice.password,
                    "scope": "openid offline_access",
                ])
            let start = try await t.native("resetpassword/v1.0/start", ["username": alice.email, "challenge_type": "oob redirect"])
            let challenge = try await t.native("resetpassword/v1.0/challenge", ["continuation_token": start.continuation])
            #expect(challenge.json["challenge_type"] == "oob" && challenge.json["challenge_channel"] == "email")
            expectRefusal(
                try await t.native("resetpassword/v1.0/submit", ["continuation_token": challenge.continuation, "new_password": "X"]),
                "invalid_request", code: 55114)
            let verified = try await t.native(
                "resetpassword/v1.0/continue",
                ["grant_type": "oob", "oob": try await t.latestCode(to: alice.email), "continuation_token": challenge.continuation])
            #expect(verified.status == 200 && verified.json["expires_in"] != nil, "\(verified.body)")
            expectRefusal(
                try await t.native(
                    "resetpassword/v1.0/submit", ["continuation_token": verified.continuation, "new_password": alice.password]),
                "invalid_grant", code: 399246, suberror: "password_recently_used")
            let submitted = try await t.native(
                "resetpassword/v1.0/submit", ["continuation_token": verified.continuation, "new_password": "Alice-new-2026!"])
            #expect(submitted.status == 200 && submitted.json["poll_interval"] == 1, "\(submitted.body)")
            let first = try await t.native("resetpassword/v1.0/poll_completion", ["continuation_token": submitted.continuation])
            #expect(first.json["status"] == "in_progress")
            let second = try await t.native("resetpassword/v1.0/poll_completion", ["continuation_token": first.continuation])
            #expect(second.json["status"] == "succeeded")
            let tokens = try await t.native(
                "oauth2/v2.0/token",
                ["grant_type": "continuation_token", "continuation_token": second.continuation, "scope": "openid offline_access"])
            #expect(tokens.status == 200, "\(tokens.body)")
            #expect(try t.emulator.store.checkPassword(email: alice.email, password: "Alice-new-2026!") != nil)
            let oldRefresh = try #require(before.json["refresh_token"]?.stringValue)
            #expect(
                try await t.token("B2C_1_ROPC_Auth", ["grant_type": "refresh_token", "client_id": clientID, "refresh_token": oldRefresh])
                    .status == 400)
        }
    }

    /// A password sign-in up to the token request, with `capabilities`.
    private func passwordStep(_ t: TestTenant, _ email: String, _ password: String, capabilities: String?) async throws -> TestResponse {
        var form = ["username": email, "challenge_type": "oob password redirect"]
        if let capabilities { form["capabilities"] = capabilities }
        let start = try await t.native("oauth2/v2.0/initiate", form)
        let challenge = try await t.native("oauth2/v2.0/challenge", ["continuation_token": start.continuation])
        guard challenge.json["challenge_type"] == "password" else { return challenge }
        return try await t.native(
            "oauth2/v2.0/token",
            [
                "grant_type": "password", "password": password, "continuation_token": challenge.continuation,
                "scope": "openid offline_access",
            ])
    }

    @Test func mfaWithTheRegisteredEmail() async throws {
        try await TestTenant.with(seed: externalID(mfa: .init(methods: [.email], enforcement: .always))) { t in
            // A client that cannot take a second factor goes to the browser.
            let old = try await passwordStep(t, alice.email, alice.password, capabilities: nil)
            #expect(old.status == 200 && old.json["challenge_type"] == "redirect", "\(old.body)")
            let mfa = try await passwordStep(t, alice.email, alice.password, capabilities: "mfa_required registration_required")
            expectRefusal(mfa, "invalid_grant", code: 50076, suberror: "mfa_required")
            let methods = try await t.native("oauth2/v2.0/introspect", ["continuation_token": mfa.continuation])
            let method = try #require(methods.json["methods"]?.arrayValue?.first)
            #expect(method["challenge_channel"] == "email" && method["login_hint"]?.stringValue?.contains("***") == true)
            let id = try #require(method["id"]?.stringValue)
            // The ids stay the same for a test to rely on.
            let again = try await passwordStep(t, alice.email, alice.password, capabilities: "mfa_required")
            let methods2 = try await t.native("oauth2/v2.0/introspect", ["continuation_token": again.continuation])
            #expect(methods2.json["methods"]?.arrayValue?.first?["id"]?.stringValue == id)
            expectRefusal(
                try await t.native("oauth2/v2.0/challenge", ["continuation_token": methods.continuation, "id": "nope"]),
                "invalid_request", code: 55110)
            let challenge = try await t.native(
                "oauth2/v2.0/challenge", ["continuation_token": methods.continuation, "challenge_type": "oob redirect", "id": id])
            #expect(challenge.json["challenge_type"] == "oob", "\(challenge.body)")
            expectRefusal(
                try await t.native(
                    "oauth2/v2.0/token",
                    ["grant_type": "mfa_oob", "oob": "00000000", "continuation_token": challenge.continuation, "scope": "openid"]),
                "invalid_grant", code: 50181, suberror: "invalid_oob_value")
            let tokens = try await t.native(
                "oauth2/v2.0/token",
                [
                    "grant_type": "mfa_oob", "oob": try await t.latestCode(to: alice.email), "continuation_token": challenge.continuation,
                    "scope": "openid offline_access",
                ])
            #expect(tokens.status == 200, "\(tokens.body)")
            #expect(try claims(tokens.json["id_token"]?.stringValue)["oid"]?.stringValue == alice.oid)
        }
    }

    @Test func registrationPreverifiedAndBySMS() async throws {
        let gil = EmulatorSeed.User(
            oid: "0611a000-5eed-4611-8000-000000000611", email: "gil@contoso.com", password: "Gil-dev-2026!", displayName: "Gil",
            givenName: "Gil", surname: "", mfaEnrolled: false)
        let hal = EmulatorSeed.User(
            oid: "0a1a0000-5eed-4a1a-8000-000000000a1a", email: "hal@contoso.com", password: "Hal-dev-2026!", displayName: "Hal",
            givenName: "Hal", surname: "", mfaEnrolled: false, mfaRequired: true)
        try await TestTenant.with(seed: externalID(mfa: .init(methods: [.email, .phone], enforcement: .conditional), extra: [gil, hal])) {
            t in
            // Conditional and not risky: Gil signs in with the password alone; Hal's own mfaRequired asks him.
            #expect(try await passwordStep(t, gil.email, gil.password, capabilities: "mfa_required registration_required").status == 200)
            _ = try await t.admin(.POST, "/users/\(gil.email)/mfa", ["risky": true])
            let gilNeeds = try await passwordStep(t, gil.email, gil.password, capabilities: "mfa_required registration_required")
            expectRefusal(gilNeeds, "invalid_grant", code: 50079, suberror: "registration_required")
            let choices = try await t.native("register/v1.0/introspect", ["continuation_token": gilNeeds.continuation])
            #expect(choices.json["methods"]?.arrayValue?.compactMap { $0["challenge_channel"]?.stringValue } == ["email", "sms"])
            expectRefusal(
                try await t.native(
                    "register/v1.0/challenge",
                    [
                        "continuation_token": choices.continuation, "challenge_type": "oob", "challenge_channel": "sms",
                        "challenge_target": "555",
                    ]),
                "invalid_request", code: 901001)
            let pre = try await t.native(
                "register/v1.0/challenge",
                [
                    "continuation_token": choices.continuation, "challenge_type": "oob", "challenge_channel": "email",
                    "challenge_target": gil.email,
                ])
            #expect(pre.json["challenge_type"] == "preverified", "\(pre.body)")
            let gilTokens = try await t.native(
                "oauth2/v2.0/token", ["grant_type": "continuation_token", "continuation_token": pre.continuation, "scope": "openid"])
            #expect(gilTokens.status == 200, "\(gilTokens.body)")
            // Registered: the next sign-in asks the second factor instead.
            expectRefusal(
                try await passwordStep(t, gil.email, gil.password, capabilities: "mfa_required registration_required"), "invalid_grant",
                code: 50076, suberror: "mfa_required")

            let halNeeds = try await passwordStep(t, hal.email, hal.password, capabilities: "registration_required")
            expectRefusal(halNeeds, "invalid_grant", code: 50079, suberror: "registration_required")
            let phone = "+14255550142"
            let sms = try await t.native(
                "register/v1.0/challenge",
                [
                    "continuation_token": halNeeds.continuation, "challenge_type": "oob", "challenge_channel": "sms",
                    "challenge_target": phone,
                ])
            #expect(sms.json["challenge_type"] == "oob" && sms.json["challenge_target"]?.stringValue == phone, "\(sms.body)")
            let registered = try await t.native(
                "register/v1.0/continue",
                ["grant_type": "oob", "oob": try await t.latestCode(to: "%2B" + phone.dropFirst()), "continuation_token": sms.continuation])
            #expect(registered.status == 200, "\(registered.body)")
            #expect(
                try await t.native(
                    "oauth2/v2.0/token",
                    ["grant_type": "continuation_token", "continuation_token": registered.continuation, "scope": "openid"]
                ).status == 200)
            #expect(try t.emulator.store.mfaState(oid: hal.oid).phoneEnrolled)
        }
    }

    @Test func tokensAreSpentOnceAndTriesAreCappedUnderRacingRequests() async throws {
        try await TestTenant.with(seed: externalID()) { t in
            // Two redemptions of one continuation token at once: one gets tokens, the other is refused.
            let start = try await t.native("signup/v1.0/start", ["username": "lin@contoso.com", "challenge_type": "oob redirect"])
            let challenge = try await t.native("signup/v1.0/challenge", ["continuation_token": start.continuation])
            let done = try await t.native(
                "signup/v1.0/continue",
                ["grant_type": "oob", "oob": try await t.latestCode(to: "lin@contoso.com"), "continuation_token": challenge.continuation])
            let grant = ["grant_type": "continuation_token", "continuation_token": done.continuation, "scope": "openid"]
            async let a = t.native("oauth2/v2.0/token", grant)
            async let b = t.native("oauth2/v2.0/token", grant)
            let statuses = [try await a.status, try await b.status].sorted()
            #expect(statuses == [200, 400], "\(statuses)")
            // Ten wrong codes at once on one token: the cap (5) holds, and the right code no longer works.
            let reset = try await t.native("resetpassword/v1.0/start", ["username": alice.email, "challenge_type": "oob redirect"])
            let sent = try await t.native("resetpassword/v1.0/challenge", ["continuation_token": reset.continuation])
            let wrong = ["grant_type": "oob", "oob": "00000000", "continuation_token": sent.continuation]
            let answers = try await withThrowingTaskGroup(of: Int.self) { group in
                for _ in 0..<10 {
                    group.addTask {
                        try await t.native("resetpassword/v1.0/continue", wrong).json["error_codes"]?.arrayValue?.first?.lenientInt ?? 0
                    }
                }
                return try await group.reduce(into: [Int]()) { $0.append($1) }
            }
            #expect(answers.filter { $0 == 50181 }.count <= 4, "\(answers)")
            let right = try await t.native(
                "resetpassword/v1.0/continue",
                ["grant_type": "oob", "oob": try await t.latestCode(to: alice.email), "continuation_token": sent.continuation])
            #expect(right.status == 400, "the flow ended at the cap: \(right.body)")
            // Resends are capped too: the seventh code of one flow is refused.
            var ct = try await t.native("resetpassword/v1.0/start", ["username": bob.email, "challenge_type": "oob redirect"]).continuation
            var last = TestResponse(status: 0, headers: .init(), body: "")
            for _ in 0..<7 {
                last = try await t.native("resetpassword/v1.0/challenge", ["continuation_token": ct])
                if last.status != 200 { break }
                ct = last.continuation
            }
            expectRefusal(last, "invalid_grant", code: 50196)
        }
    }

    @Test func aSecondFactorAfterASignUpOrAReset() async throws {
        try await TestTenant.with(seed: externalID(mfa: .init(methods: [.email], enforcement: .always))) { t in
            // A new account with a password under "always": it registers its method (its own address: preverified) before its
            // tokens. (One without a password signs in by codes, which ask no second factor.)
            let start = try await t.native(
                "signup/v1.0/start",
                [
                    "username": "max@contoso.com", "challenge_type": "oob password redirect", "password": "Max-2026-pass!",
                    "capabilities": "mfa_required registration_required",
                ])
            let challenge = try await t.native("signup/v1.0/challenge", ["continuation_token": start.continuation])
            let done = try await t.native(
                "signup/v1.0/continue",
                ["grant_type": "oob", "oob": try await t.latestCode(to: "max@contoso.com"), "continuation_token": challenge.continuation])
            let asked = try await t.native(
                "oauth2/v2.0/token", ["grant_type": "continuation_token", "continuation_token": done.continuation, "scope": "openid"])
            expectRefusal(asked, "invalid_grant", code: 50079, suberror: "registration_required")
            // A reset by a client that cannot take a second factor: no tokens, the browser instead.
            let reset = try await t.native("resetpassword/v1.0/start", ["username": alice.email, "challenge_type": "oob redirect"])
            let sent = try await t.native("resetpassword/v1.0/challenge", ["continuation_token": reset.continuation])
            let verified = try await t.native(
                "resetpassword/v1.0/continue",
                ["grant_type": "oob", "oob": try await t.latestCode(to: alice.email), "continuation_token": sent.continuation])
            let submitted = try await t.native(
                "resetpassword/v1.0/submit", ["continuation_token": verified.continuation, "new_password": "Alice-new-2026!"])
            var polled = try await t.native("resetpassword/v1.0/poll_completion", ["continuation_token": submitted.continuation])
            polled = try await t.native("resetpassword/v1.0/poll_completion", ["continuation_token": polled.continuation])
            let refused = try await t.native(
                "oauth2/v2.0/token", ["grant_type": "continuation_token", "continuation_token": polled.continuation, "scope": "openid"])
            expectRefusal(refused, "invalid_grant", code: 50076)
            #expect(refused.json["access_token"] == nil)
        }
    }
}
