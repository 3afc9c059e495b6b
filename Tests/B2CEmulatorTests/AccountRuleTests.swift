import B2CProtocol
import Foundation
import Testing

@testable import B2CEmulator

/// What the directory says of a person, held on every path (`AccountRule`): a disabled account (Graph's `accountEnabled`
/// false) gets no token through the sign-in page, an SSO session, a refresh, ROPC or native authentication; a password
/// change an administrator asked for (`forceChangePasswordNextSignIn`) is a page of its own where the tenant honours it.
@Suite struct AccountRuleTests {
    static let disabledWords = "Your account has been locked"

    /// Graph's `PATCH /users/{id}` of alice, as an administrator's script sends it.
    static func patchAlice(_ t: TestTenant, _ changes: JSONValue) async throws {
        let token = try await GraphUsersTests.appToken(t)
        let r = try await GraphUsersTests.graph(t, .PATCH, "/users/\(alice.oid)", token: token, changes)
        #expect(r.status == 204, "\(r.body)")
    }

    /// The External ID side's authorize URL (no policy in the path) for the default public client.
    static func externalAuthorize(_ pkce: PKCE) -> String {
        authorizeURL(policy: "_", pkce: pkce).replacingOccurrences(of: "/contoso.onmicrosoft.com/_/", with: "/contoso.onmicrosoft.com/")
    }

    @Test func aDisabledAccountGetsNoTokenOnAnyPath() async throws {
        try await TestTenant.with { t in
            let signedIn = Browser(t)
            let before = try await signInAndRedeem(t, signedIn)
            let refreshToken = try #require(before["refresh_token"]?.stringValue)
            try await Self.patchAlice(t, ["accountEnabled": false])

            // The sign-in page: a right password says the account is locked; a wrong one says only that it is wrong.
            let page = try await Browser(t).signIn(email: alice.email, password: alice.password)
            #expect(page.status == 200 && page.body.contains(Self.disabledWords) && page.location == nil, "\(page.body.prefix(400))")
            let wrong = try await Browser(t).signIn(email: alice.email, password: "Not-her-2026!")
            #expect(wrong.body.contains("Your password is incorrect.") && !wrong.body.contains(Self.disabledWords))

            // The SSO session of the earlier sign-in names her: the journey ends at the directory read, back to the app.
            let session = try await signedIn.get(authorizeURL(pkce: PKCE()))
            #expect(session.redirectParams["error"] == "access_denied", "\(session.location ?? String(session.body.prefix(300)))")
            #expect(session.redirectParams["error_description"]?.hasPrefix("AADSTS50057: ") == true)
            #expect(session.redirectParams["code"] == nil)

            // The token endpoint: her refresh token and ROPC.
            let refresh = try await t.token(
                "B2C_1_susi", ["grant_type": "refresh_token", "client_id": clientID, "refresh_token": refreshToken])
            expectB2CError(refresh, error: "invalid_grant", code: "AADSTS50057")
            expectB2CError(try await GraphUsersTests.ropc(t, alice.email, alice.password), error: "invalid_grant", code: "AADSTS50057")

            // Enabled again, every path works, the refresh token included (disabling revoked nothing).
            try await Self.patchAlice(t, ["accountEnabled": true])
            #expect(try await GraphUsersTests.ropc(t, alice.email, alice.password).status == 200)
            let again = try await t.token(
                "B2C_1_susi", ["grant_type": "refresh_token", "client_id": clientID, "refresh_token": refreshToken])
            #expect(again.status == 200, "\(again.body)")
        }
    }

    @Test func aCustomPolicysJourneyEndsAtTheDirectoryReadForADisabledAccount() async throws {
        let t = try await CustomPolicyJourneyTests.tenantWithExamples()
        defer { Task { await t.stop() } }
        let policy = CustomPolicyJourneyTests.policy
        let tokens = try await CustomPolicyJourneyTests.signInTokens(t)
        let refreshToken = try #require(tokens.json["refresh_token"]?.stringValue, "\(tokens.body)")
        try await Self.patchAlice(t, ["accountEnabled": false])
        // The policy's own password check (login-NonInteractive) passes; the journey ends before any code is made.
        let b = Browser(t)
        let page = try await b.get(authorizeURL(policy: policy, pkce: PKCE()))
        let done = try await b.submit(page, form: "localAccountForm", ["signInName": alice.email, "password": alice.password])
        #expect(done.redirectParams["error"] == "access_denied" && done.redirectParams["code"] == nil, "\(done.location ?? "")")
        #expect(done.redirectParams["error_description"]?.hasPrefix("AADSTS50057") == true)
        // Its refresh runs the Token journey, and the issuer refuses.
        let refresh = try await t.token(policy, ["grant_type": "refresh_token", "client_id": clientID, "refresh_token": refreshToken])
        expectB2CError(refresh, error: "invalid_grant", code: "AADSTS50057")
    }

    @Test func onBehalfOfRefusesADisabledAccount() async throws {
        try await TestTenant.with(seed: .defaultExternalID) { t in
            let tokens = try await t.nativePasswordTokens(alice.email, alice.password, scope: "openid \(helloScope)")
            let assertion = try #require(tokens.json["access_token"]?.stringValue, "\(tokens.body)")
            #expect(try await OnBehalfOfTests.obo(t, assertion: assertion).status == 200)
            try await Self.patchAlice(t, ["accountEnabled": false])
            // The middle tier's exchange for a person disabled since her token was issued: Entra's "user still valid".
            let refused = try await OnBehalfOfTests.obo(t, assertion: assertion)
            #expect(refused.status == 400 && refused.json["error"] == "invalid_grant", "\(refused.body)")
            #expect(refused.json["error_description"]?.stringValue?.hasPrefix("AADSTS50057") == true, "\(refused.body)")
        }
    }

    @Test func nativeAuthenticationRefusesADisabledAccount() async throws {
        try await TestTenant.with(seed: .defaultExternalID) { t in
            try await Self.patchAlice(t, ["accountEnabled": false])
            let refused = try await t.nativePasswordTokens(alice.email, alice.password)
            #expect(refused.status == 400 && refused.json["error"] == "invalid_grant", "\(refused.body)")
            #expect(refused.json["error_codes"] == [50057], "\(refused.body)")
            let wrong = try await t.nativePasswordTokens(alice.email, "Not-her-2026!")
            #expect(wrong.json["error_codes"] == [50126], "a wrong password says no more: \(wrong.body)")
        }
    }

    @Test func aB2CUserFlowAsksForANewPasswordOnlyWithForcedPasswordReset() async throws {
        // Off (B2C's default): the flag changes nothing.
        try await TestTenant.with { t in
            try await Self.patchAlice(t, ["passwordProfile": ["forceChangePasswordNextSignIn": true]])
            let answer = try await Browser(t).signIn(email: alice.email, password: alice.password)
            #expect(answer.redirectParams["code"] != nil, "\(answer.body.prefix(300))")
        }
        var seed = EmulatorSeed.default
        let susi = try #require(seed.policies.firstIndex { $0.id == "B2C_1_susi" })
        seed.policies[susi].forcedPasswordReset = true
        try await TestTenant.with(seed: seed) { t in
            try await Self.patchAlice(t, ["passwordProfile": ["forceChangePasswordNextSignIn": true]])
            // ROPC has no page to ask on: B2C's ROPC flow has no such setting, and the password still signs in.
            #expect(try await GraphUsersTests.ropc(t, alice.email, alice.password).status == 200)

            let b = Browser(t)
            let pkce = PKCE()
            let first = try await b.get(authorizeURL(pkce: pkce))
            let page = try await b.submit(first, form: "localAccountForm", ["logonIdentifier": alice.email, "password": alice.password])
            #expect(page.status == 200 && page.body.contains("id=\"passwordChangeIntro\""), "\(page.body.prefix(400))")
            func refused(_ new: String, _ again: String, _ words: String) async throws {
                let r = try await b.submit(page, form: "attributeVerification", ["newPassword": new, "reenterPassword": again])
                #expect(r.status == 200 && r.body.contains(words) && r.location == nil, "\(words): \(r.body.prefix(500))")
            }
            try await refused("short", "short", "between 8 and 64 characters")
            try await refused("Chosen-2026-pass!", "Chosen-2026-pass?", "do not match")
            try await refused(alice.password, alice.password, "must differ")
            // The sign-in page posted again is refused while the journey waits for the new password.
            let outOfTurn = try await b.submit(
                first, form: "localAccountForm", ["logonIdentifier": alice.email, "password": alice.password])
            #expect(outOfTurn.status == 400 && outOfTurn.body.contains("waits for the new password"), "\(outOfTurn.body.prefix(400))")
            let done = try await b.submit(
                page, form: "attributeVerification", ["newPassword": "Chosen-2026-pass!", "reenterPassword": "Chosen-2026-pass!"])
            let code = try #require(done.redirectParams["code"], "\(done.location ?? String(done.body.prefix(400)))")
            let tokens = try await t.token("B2C_1_susi", redeemForm(code: code, verifier: pkce.verifier))
            #expect(tokens.status == 200, "\(tokens.body)")
            #expect(try claims(tokens.json["id_token"]?.stringValue)["oid"] == .string(alice.oid))

            // The change is done: the old password no longer signs in, the new one does, without the page.
            #expect(try await Browser(t).signIn(email: alice.email, password: alice.password).body.contains("incorrect"))
            let next = try await Browser(t).signIn(email: alice.email, password: "Chosen-2026-pass!")
            #expect(next.redirectParams["code"] != nil, "\(next.body.prefix(300))")
            // The recorder shows the step and the change.
            let listed = try await t.admin(.GET, "/journeys?user=\(alice.email)").json["journeys"]?.arrayValue ?? []
            var recorded = ""
            for journey in listed {
                recorded += try await t.admin(.GET, "/journeys/\(journey["id"]?.stringValue ?? "")").body
            }
            #expect(recorded.contains("passwordChange") && recorded.contains("password changed"), "\(listed)")
        }
    }

    @Test func externalIDAlwaysAsksAndNativeAuthenticationSaysPasswordExpired() async throws {
        try await TestTenant.with(seed: .defaultExternalID) { t in
            try await Self.patchAlice(t, ["passwordProfile": ["forceChangePasswordNextSignIn": true]])
            let native = try await t.nativePasswordTokens(alice.email, alice.password)
            #expect(native.json["suberror"] == "password_expired" && native.json["error_codes"] == [50055], "\(native.body)")

            let b = Browser(t)
            let page = try await b.get(Self.externalAuthorize(PKCE()))
            let asked = try await b.submit(page, form: "localAccountForm", ["logonIdentifier": alice.email, "password": alice.password])
            #expect(asked.body.contains("id=\"passwordChangeIntro\""), "\(asked.body.prefix(400))")
            let done = try await b.submit(
                asked, form: "attributeVerification", ["newPassword": "Chosen-2026-pass!", "reenterPassword": "Chosen-2026-pass!"])
            #expect(done.redirectParams["code"] != nil, "\(done.location ?? String(done.body.prefix(400)))")
            #expect(try await t.nativePasswordTokens(alice.email, "Chosen-2026-pass!").status == 200)
        }
    }

    @Test func theScriptedBrowserChoosesTheNewPasswordItWasGiven() async throws {
        try await TestTenant.with(seed: .defaultExternalID) { t in
            try await Self.patchAlice(t, ["passwordProfile": ["forceChangePasswordNextSignIn": true]])
            let url = t.base + Self.externalAuthorize(PKCE())
            await #expect(throws: (any Error).self) {
                _ = try await scriptedCode(url, as: .init(email: alice.email, password: alice.password))
            }
            let code = try await scriptedCode(
                url, as: .init(email: alice.email, password: alice.password, newPassword: "Chosen-2026-pass!"))
            #expect(!code.isEmpty)
        }
    }

    @Test func theSeedSettingIsOnlyForSignInUserFlows() throws {
        #expect(try parsePolicySeed("\"forcedPasswordReset\": true").forcedPasswordReset)
        let refusal = #expect(throws: (any Error).self) { try parsePolicySeed("\"forcedPasswordReset\": true", kind: "resetPassword") }
        #expect("\(refusal.map { "\($0)" } ?? "")".contains("forcedPasswordReset"), "the message names the setting")
        let seed = try parsePolicySeed("\"forcedPasswordReset\": true", kind: "signIn")
        #expect(seed.json["forcedPasswordReset"] == true)
        #expect(try parsePolicySeed("").json["forcedPasswordReset"] == nil, "the default is not written")
    }
}
