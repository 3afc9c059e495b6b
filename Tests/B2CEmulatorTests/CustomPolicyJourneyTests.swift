import B2CKit
import B2CProtocol
import Foundation
import Testing

@testable import B2CEmulator

/// A loaded custom policy is an authority whose journey is its XML: the example set's sign-up-or-sign-in through its pages
/// over real HTTP (the password checked by `login-NonInteractive` against the directory, the sign-up page with its email
/// verification and the directory write), tokens with the relying party's claims, a refresh, and the recorder's account.
@Suite struct CustomPolicyJourneyTests {
    static let policy = "B2C_1A_signup_signin"

    static func tenantWithExamples() async throws -> TestTenant {
        let t = try await TestTenant.start()
        try t.emulator.customPolicies.load(directory: CustomPolicyTests.examples)
        return t
    }

    /// Alice's local sign-in at `policy`'s unified page, and the token endpoint's answer to its code.
    static func signInTokens(_ t: TestTenant, policy: String = policy) async throws -> TestResponse {
        let b = Browser(t)
        let pkce = PKCE()
        let page = try await b.get(authorizeURL(policy: policy, pkce: pkce))
        let done = try await b.submit(page, form: "localAccountForm", ["signInName": alice.email, "password": alice.password])
        return try await t.token(policy, redeemForm(code: try #require(done.redirectParams["code"]), verifier: pkce.verifier))
    }

    @Test func signInRunsTheRelyingPartysJourneyAndItsTokensCarryItsClaims() async throws {
        let t = try await Self.tenantWithExamples()
        defer { Task { await t.stop() } }
        let b = Browser(t)
        let pkce = PKCE()
        let page = try await b.get(authorizeURL(policy: Self.policy, pkce: pkce, extra: ["login_hint": alice.email]))
        #expect(page.status == 200 && page.body.contains("data-name=\"Unified\""), "\(page.body.prefix(400))")
        // Element ids are the claim type ids; the login hint fills signInName ({OIDC:LoginHint}).
        let form = try #require(page.form("localAccountForm"))
        #expect(form.fields["signInName"] == alice.email && page.body.contains("id=\"password\""))
        #expect(page.link("createAccount") != nil && page.link("forgotPassword") != nil)
        let wrong = try await b.submit(page, form: "localAccountForm", ["password": "nope"])
        #expect(wrong.status == 200 && wrong.body.contains("Your password is incorrect"), "\(wrong.body.prefix(600))")
        let nobody = try await b.submit(wrong, form: "localAccountForm", ["signInName": "nobody@contoso.com", "password": "x"])
        #expect(nobody.body.contains("We can&#39;t seem to find your account") || nobody.body.contains("seem to find your account"))
        let done = try await b.submit(nobody, form: "localAccountForm", ["signInName": alice.email, "password": alice.password])
        let code = try #require(done.redirectParams["code"], "\(done.status) \(done.location ?? done.body.prefix(600).description)")
        let tokens = try await t.token(Self.policy, redeemForm(code: code, verifier: pkce.verifier))
        #expect(tokens.status == 200, "\(tokens.body)")
        let id = try claims(tokens.json["id_token"]?.stringValue)
        // What SignUpOrSignin.xml's relying party names, and the protocol's claims; nothing of a user flow's.
        #expect(id["sub"]?.stringValue == alice.oid && id["tid"]?.stringValue == tenantID)
        #expect(id["email"]?.stringValue == alice.email && id["name"] != nil && id["given_name"] != nil && id["family_name"] != nil)
        #expect(id["acr"]?.stringValue == Self.policy.lowercased() && id["nonce"]?.stringValue == "n-456")
        #expect(id["oid"] == nil && id["emails"] == nil && id["tfp"] == nil, "\(id.keys.sorted())")
        // The refresh gives the same claims.
        let refreshed = try await t.token(
            Self.policy,
            ["grant_type": "refresh_token", "client_id": clientID, "refresh_token": tokens.json["refresh_token"]?.stringValue ?? ""])
        #expect(refreshed.status == 200, "\(refreshed.body)")
        let again = try claims(refreshed.json["id_token"]?.stringValue)
        #expect(again["sub"] == id["sub"] && again["email"] == id["email"] && again["tid"] == id["tid"] && again["oid"] == nil)
        // The recorder tells the journey: its orchestration steps, the skipped sign-up, the password check.
        let list = try await t.admin(.GET, "/journeys?policy=\(Self.policy)")
        let journeyID = try #require(list.json["journeys"]?.arrayValue?.first?["id"]?.stringValue, "\(list.body)")
        let journey = try await t.admin(.GET, "/journeys/\(journeyID)")
        let names = journey.json["events"]?.arrayValue?.compactMap { $0["name"]?.stringValue } ?? []
        #expect(names.contains("orchestration step 1: CombinedSignInAndSignUp"), "\(names)")
        #expect(names.contains("orchestration step 2 skipped: ClaimsExchange"), "\(names)")
        #expect(names.contains("technical profile login-NonInteractive") && names.contains("send claims"), "\(names)")
    }

    @Test func signUpVerifiesTheEmailAndWritesTheAccount() async throws {
        let t = try await Self.tenantWithExamples()
        defer { Task { await t.stop() } }
        let b = Browser(t)
        let pkce = PKCE()
        let first = try await b.get(authorizeURL(policy: Self.policy, pkce: pkce))
        let page = try await b.follow(first, link: "createAccount")
        #expect(page.body.contains("data-name=\"SelfAsserted\""), "\(page.body.prefix(600))")
        for id in ["email", "newPassword", "reenterPassword", "displayName", "givenName", "surname", "email_ver_but_send", "continue"] {
            #expect(page.body.contains("id=\"\(id)\""), "no #\(id)")
        }
        let erin = "erin.policy@example.com"
        let fields = [
            "email": erin, "newPassword": "Erin-2026-pw!", "reenterPassword": "Erin-2026-pw!", "displayName": "Erin",
            "givenName": "Erin", "surname": "Ek",
        ]
        let unverified = try await b.submit(page, form: "attributeVerification", fields)
        #expect(unverified.body.contains("verify your email"), "\(unverified.body.prefix(600))")
        let sent = try await b.submit(unverified, form: "attributeVerification", ["email": erin, "step": "send"])
        #expect(sent.body.contains("id=\"email_ver_input\""))
        let code = try await t.latestCode(to: erin)
        let wrongCode = try await b.submit(sent, form: "attributeVerification", ["email_ver_input": "000000", "step": "verify"])
        #expect(code == "000000" || wrongCode.body.contains("does not match"))
        let resent = try await b.submit(wrongCode, form: "attributeVerification", ["email": erin, "step": "send"])
        let verified = try await b.submit(
            resent, form: "attributeVerification", ["email_ver_input": try await t.latestCode(to: erin), "step": "verify"])
        #expect(verified.body.contains("id=\"email_success\""), "\(verified.body.prefix(800))")
        let mismatch = try await b.submit(
            verified, form: "attributeVerification", fields.merging(["reenterPassword": "Other-2026-pw!", "step": "continue"]) { $1 })
        #expect(mismatch.body.contains("do not match"))
        let weak = try await b.submit(
            mismatch, form: "attributeVerification", fields.merging(["newPassword": "short", "reenterPassword": "short"]) { $1 })
        #expect(weak.body.contains("8 to 64 characters"), "\(weak.body.prefix(800))")
        let done = try await b.submit(weak, form: "attributeVerification", fields.merging(["step": "continue"]) { $1 })
        let authCode = try #require(done.redirectParams["code"], "\(done.status) \(done.body.prefix(800))")
        let tokens = try await t.token(Self.policy, redeemForm(code: authCode, verifier: pkce.verifier))
        let id = try claims(tokens.json["id_token"]?.stringValue)
        let user = try #require(try t.emulator.store.user(email: erin))
        #expect(id["sub"]?.stringValue == user.oid && id["email"]?.stringValue == erin && id["family_name"]?.stringValue == "Ek")
        // The same address again: the directory write refuses it on the page (RaiseErrorIfClaimsPrincipalAlreadyExists).
        let b2 = Browser(t)
        let second = try await b2.follow(try await b2.get(authorizeURL(policy: Self.policy)), link: "createAccount")
        let sent2 = try await b2.submit(second, form: "attributeVerification", ["email": erin, "step": "send"])
        let ok2 = try await b2.submit(
            sent2, form: "attributeVerification", ["email_ver_input": try await t.latestCode(to: erin), "step": "verify"])
        let exists = try await b2.submit(ok2, form: "attributeVerification", fields.merging(["step": "continue"]) { $1 })
        #expect(exists.status == 200 && exists.body.contains("already exists"), "\(exists.body.prefix(800))")
    }

    @Test func theSSOSessionSkipsTheSignInAndAPageOutOfTurnIsRefused() async throws {
        let t = try await Self.tenantWithExamples()
        defer { Task { await t.stop() } }
        let b = Browser(t)
        let page = try await b.get(authorizeURL(policy: Self.policy))
        let done = try await b.submit(page, form: "localAccountForm", ["signInName": alice.email, "password": alice.password])
        #expect(done.redirectParams["code"] != nil)
        // The session answers the next authorize: no page, a code.
        let silent = try await b.get(authorizeURL(policy: Self.policy, extra: ["prompt": "none"]))
        #expect(
            silent.redirectParams["code"] != nil,
            "\(silent.status) \(silent.location ?? "") \(silent.body.components(separatedBy: "<main>").last?.prefix(500) ?? "")")
        // A user flow's sign-in form posted to the custom policy's transaction is not its step.
        let fresh = try await Browser(t).get(authorizeURL(policy: Self.policy))
        let tx = try #require(fresh.form("localAccountForm")?.fields["tx"])
        let outOfTurn = try await t.post(
            "/contoso.onmicrosoft.com/\(Self.policy.lowercased())/emulator/signin",
            ["tx": tx, "logonIdentifier": alice.email, "password": alice.password])
        #expect(outOfTurn.status >= 400 && outOfTurn.redirectParams["code"] == nil, "\(outOfTurn.status)")
    }

    @Test func profileEditIsAnsweredByTheSessionAndResetChangesThePassword() async throws {
        let t = try await Self.tenantWithExamples()
        defer { Task { await t.stop() } }
        let b = Browser(t)
        let signIn = try await b.get(authorizeURL(policy: Self.policy))
        _ = try await b.submit(signIn, form: "localAccountForm", ["signInName": alice.email, "password": alice.password])
        // ProfileEdit: its one provider chosen without a page, its sign-in answered by the SSO session (SM-AAD), the
        // profile page filled from the directory.
        let pkce = PKCE()
        let profile = try await b.get(authorizeURL(policy: "B2C_1A_ProfileEdit", pkce: pkce))
        let form = try #require(profile.form("attributeVerification"), "\(profile.body.prefix(600))")
        #expect(form.fields["givenName"] == "Alice" && profile.body.contains("<h1>Your profile</h1>"))
        let edited = try await b.submit(profile, form: "attributeVerification", ["surname": "Edited", "step": "continue"])
        #expect(edited.redirectParams["code"] != nil, "\(edited.body.prefix(400))")
        #expect(try t.emulator.store.user(oid: alice.oid)?.surname == "Edited")
        // PasswordReset: the address verified, then a new password; the old one no longer signs in.
        let r = Browser(t)
        let first = try await r.get(authorizeURL(policy: "B2C_1A_PasswordReset"))
        let sent = try await r.submit(first, form: "attributeVerification", ["email": bob.email, "step": "send"])
        let ok = try await r.submit(
            sent, form: "attributeVerification", ["email_ver_input": try await t.latestCode(to: bob.email), "step": "verify"])
        let next = try await r.submit(ok, form: "attributeVerification", ["step": "continue"])
        #expect(
            next.body.contains("id=\"newPassword\"") && next.body.contains("<h1>Choose a new password</h1>"), "\(next.body.prefix(600))")
        let done = try await r.submit(
            next, form: "attributeVerification", ["newPassword": "Bob-2026-new!", "reenterPassword": "Bob-2026-new!"])
        #expect(done.redirectParams["code"] != nil, "\(done.body.prefix(400))")
        #expect(try t.emulator.store.checkPassword(email: bob.email, password: bob.password) == nil)
        #expect(try t.emulator.store.checkPassword(email: bob.email, password: "Bob-2026-new!") != nil)
    }

    @Test func aRefreshRunsTheTokenJourneyWhichRefusesARevokedGrant() async throws {
        let t = try await Self.tenantWithExamples()
        defer { Task { await t.stop() } }
        let tokens = try await Self.signInTokens(t)
        let refresh = [
            "grant_type": "refresh_token", "client_id": clientID, "refresh_token": tokens.json["refresh_token"]?.stringValue ?? "",
        ]
        let first = try await t.token(Self.policy, refresh)
        #expect(first.status == 200, "\(first.body)")
        // The directory's refreshTokensValidFromDateTime moved past the grant (beyond the transformation's five minutes),
        // the refresh token itself untouched: only the Token journey's assertion can refuse it.
        try await t.advanceClock(600)
        let now = t.emulator.clock.now()
        try await t.emulator.store.db.write {
            try $0.execute(sql: "UPDATE users SET tokens_valid_from = ? WHERE oid = ?", arguments: [now, alice.oid])
        }
        let refused = try await t.token(
            Self.policy, refresh.merging(["refresh_token": first.json["refresh_token"]?.stringValue ?? ""]) { $1 })
        #expect(refused.status == 400 && refused.json["error"]?.stringValue == "invalid_grant", "\(refused.body)")
        #expect(refused.json["error_description"]?.stringValue?.hasPrefix("AADB2C90129") == false, "\(refused.body)")
    }

    @Test func facebookSignUpThenAPhoneCodeAndTheSessionRemembersTheMFA() async throws {
        let t = try await Self.tenantWithExamples()
        defer { Task { await t.stop() } }
        let policy = "B2C_1A_signup_signin_social_mfa"
        let b = Browser(t)
        let pkce = PKCE()
        let page = try await b.get(authorizeURL(policy: policy, pkce: pkce))
        // The button is the exchange's (B2C's id), labelled by its profile, in a form of its own.
        #expect(page.body.contains("id=\"FacebookExchange\">Facebook</button>") && page.form("localAccountForm") != nil)
        // A button the page did not offer is refused.
        let forged = try await b.submit(page, form: "idp_facebook", ["exchange": "SignUpWithLogonEmailExchange"])
        #expect(forged.status >= 400 && forged.body.contains("AADB2C90051"), "\(forged.status)")
        let fresh = try await b.get(authorizeURL(policy: policy, pkce: pkce))
        let sent = try await b.submit(fresh, form: "idp_facebook", [:])
        #expect(
            sent.location?.contains("/_idp/facebook/authorize") == true,
            "\(sent.status) \(sent.location ?? sent.body.prefix(300).description)")
        let social = try await FederationTests.providerPage(b, sent, email: "fay@facebook.example", name: "Fay Book")
        let about = try #require(social.form("attributeVerification"), "\(social.body.prefix(600))")
        #expect(about.fields["displayName"] == "Fay Book")
        let phonePage = try await b.submit(social, form: "attributeVerification", ["step": "continue"])
        #expect(
            phonePage.body.contains("data-name=\"Phonefactor\"") && phonePage.body.contains("id=\"number\""),
            "\(phonePage.body.prefix(600))")
        let badNumber = try await b.submit(phonePage, form: "phoneSendForm", ["countryCode": "", "number": "12"])
        #expect(badNumber.body.contains("id=\"number\"") && !badNumber.body.contains("codeVerification"))
        let codePage = try await b.submit(badNumber, form: "phoneSendForm", ["countryCode": "+1", "number": "5555550142"])
        let messages = try await t.admin(.GET, "/outbox?to=%2B15555550142")
        let code = try #require(messages.json["messages"]?.arrayValue?.first?["code"]?.stringValue, "\(messages.body)")
        let wrong = try await b.submit(codePage, form: "codeVerification", ["verificationCode": code == "000000" ? "111111" : "000000"])
        #expect(wrong.body.contains("codeVerification"))
        let done = try await b.submit(wrong, form: "codeVerification", ["verificationCode": code])
        let authCode = try #require(done.redirectParams["code"], "\(done.status) \(done.body.prefix(600))")
        let id = try claims(try await t.token(policy, redeemForm(code: authCode, verifier: pkce.verifier)).json["id_token"]?.stringValue)
        #expect(id["idp"]?.stringValue == "facebook.com" && id["newUser"]?.boolValue == true && id["name"]?.stringValue == "Fay Book")
        let fay = try #require(
            try t.emulator.store.federatedUser(FederatedIdentity(issuer: "facebook.com", subject: "", email: ""))
                ?? t.emulator.store.user(email: "fay@facebook.example"))
        #expect(try t.emulator.store.mfaState(oid: fay.oid).phone == "+15555550142")
        // The session did MFA: a silent sign-in skips the phone (SM-MFA's isActiveMFASession) and needs no page.
        let silent = try await b.get(authorizeURL(policy: policy, extra: ["prompt": "none"]))
        #expect(
            silent.redirectParams["code"] != nil,
            "\(silent.status) \(silent.location ?? "") \(silent.body.components(separatedBy: "<main>").last?.prefix(500) ?? "")")
        // Another browser: Facebook again (a returning person, no sign-up page), the code to the number on record.
        let c = Browser(t)
        let again = try await c.submit(try await c.get(authorizeURL(policy: policy)), form: "idp_facebook", [:])
        let returning = try await FederationTests.providerPage(c, again, email: "fay@facebook.example", name: "Fay Book")
        #expect(returning.body.contains("id=\"maskedNumber\">XXXXXXXX0142<"), "\(returning.body.prefix(600))")
    }

    /// A relying party over the example set whose journey asks the app's REST API (`RestfulProvider`) for a claim.
    static func restfulPolicy(_ serviceURL: String, authentication: String = "None", keys: String = "") -> String {
        """
        <TrustFrameworkPolicy xmlns="http://schemas.microsoft.com/online/cpim/schemas/2013/06" PolicySchemaVersion="0.3.0.0"
          TenantId="contoso.onmicrosoft.com" PolicyId="B2C_1A_loyalty">
          <BasePolicy><TenantId>contoso.onmicrosoft.com</TenantId><PolicyId>B2C_1A_TrustFrameworkExtensions</PolicyId></BasePolicy>
          <BuildingBlocks><ClaimsSchema>
            <ClaimType Id="loyaltyNumber"><DisplayName>Loyalty number</DisplayName><DataType>string</DataType></ClaimType>
            <ClaimType Id="tier"><DisplayName>Tier</DisplayName><DataType>int</DataType></ClaimType>
          </ClaimsSchema></BuildingBlocks>
          <ClaimsProviders><ClaimsProvider><DisplayName>REST</DisplayName><TechnicalProfiles>
            <TechnicalProfile Id="REST-GetLoyalty">
              <DisplayName>Loyalty</DisplayName>
              <Protocol Name="Proprietary" Handler="Web.TPEngine.Providers.RestfulProvider, Web.TPEngine" />
              <Metadata>
                <Item Key="ServiceUrl">\(serviceURL)</Item>
                <Item Key="AuthenticationType">\(authentication)</Item>
                <Item Key="SendClaimsIn">Body</Item>
              </Metadata>
              <CryptographicKeys>\(keys)</CryptographicKeys>
              <InputClaims>
                <InputClaim ClaimTypeReferenceId="objectId" PartnerClaimType="userId" />
                <InputClaim ClaimTypeReferenceId="email" />
              </InputClaims>
              <OutputClaims>
                <OutputClaim ClaimTypeReferenceId="loyaltyNumber" PartnerClaimType="number" />
                <OutputClaim ClaimTypeReferenceId="tier" />
              </OutputClaims>
            </TechnicalProfile>
          </TechnicalProfiles></ClaimsProvider></ClaimsProviders>
          <UserJourneys><UserJourney Id="Loyalty"><OrchestrationSteps>
            <OrchestrationStep Order="1" Type="CombinedSignInAndSignUp" ContentDefinitionReferenceId="api.signuporsignin">
              <ClaimsProviderSelections><ClaimsProviderSelection ValidationClaimsExchangeId="Local" /></ClaimsProviderSelections>
              <ClaimsExchanges>
                <ClaimsExchange Id="Local" TechnicalProfileReferenceId="SelfAsserted-LocalAccountSignin-Email" />
              </ClaimsExchanges>
            </OrchestrationStep>
            <OrchestrationStep Order="2" Type="ClaimsExchange">
              <ClaimsExchanges><ClaimsExchange Id="Read" TechnicalProfileReferenceId="AAD-UserReadUsingObjectId" /></ClaimsExchanges>
            </OrchestrationStep>
            <OrchestrationStep Order="3" Type="ClaimsExchange">
              <ClaimsExchanges><ClaimsExchange Id="Loyalty" TechnicalProfileReferenceId="REST-GetLoyalty" /></ClaimsExchanges>
            </OrchestrationStep>
            <OrchestrationStep Order="4" Type="SendClaims" CpimIssuerTechnicalProfileReferenceId="JwtIssuer" />
          </OrchestrationSteps></UserJourney></UserJourneys>
          <RelyingParty>
            <DefaultUserJourney ReferenceId="Loyalty" />
            <TechnicalProfile Id="PolicyProfile">
              <Protocol Name="OpenIdConnect" />
              <OutputClaims>
                <OutputClaim ClaimTypeReferenceId="objectId" PartnerClaimType="sub" />
                <OutputClaim ClaimTypeReferenceId="loyaltyNumber" PartnerClaimType="loyalty_number" />
                <OutputClaim ClaimTypeReferenceId="tier" />
              </OutputClaims>
              <SubjectNamingInfo ClaimType="sub" />
            </TechnicalProfile>
          </RelyingParty>
        </TrustFrameworkPolicy>
        """
    }

    @Test func aRestfulProfileSendsTheClaimsAndItsAnswerReachesTheToken() async throws {
        let endpoint = try await ConnectorEndpoint()
        defer { endpoint.stop() }
        let t = try await Self.tenantWithExamples()
        defer { Task { await t.stop() } }
        let dir = try CustomPolicyTests.folder()
        defer { try? FileManager.default.removeItem(at: dir) }
        try Data(Self.restfulPolicy(endpoint.http + "/none/loyalty").utf8).write(to: dir.appendingPathComponent("Loyalty.xml"))
        try t.emulator.customPolicies.load(directory: dir)
        try await endpoint.queue(t, [["status": 200, "body": ["number": "L-0042", "tier": 3]]])
        let b = Browser(t)
        let pkce = PKCE()
        let page = try await b.get(authorizeURL(policy: "B2C_1A_loyalty", pkce: pkce))
        let done = try await b.submit(page, form: "localAccountForm", ["signInName": alice.email, "password": alice.password])
        let code = try #require(done.redirectParams["code"], "\(done.status) \(done.body.prefix(600))")
        let id = try claims(
            try await t.token("B2C_1A_loyalty", redeemForm(code: code, verifier: pkce.verifier)).json["id_token"]?.stringValue)
        #expect(id["loyalty_number"]?.stringValue == "L-0042" && id["tier"]?.doubleValue == 3, "\(id)")
        // What the API received: the input claims by their partner names, as JSON.
        let call = try #require(try await endpoint.received(t).last)
        #expect(call["body"]?["userId"]?.stringValue == alice.oid && call["body"]?["email"]?.stringValue == alice.email, "\(call)")
        #expect(call["path"]?.stringValue == "/none/loyalty")
        // B2C's error contract (409 with userMessage) ends the journey with that message; another status with B2C's.
        try await endpoint.queue(t, [["status": 409, "body": ["version": "1.0.0", "status": 409, "userMessage": "No loyalty here."]]])
        let refused = try await Browser(t).submit(
            try await Browser(t).get(authorizeURL(policy: "B2C_1A_loyalty")), form: "localAccountForm",
            ["signInName": alice.email, "password": alice.password])
        #expect(refused.body.contains("No loyalty here."), "\(refused.status) \(refused.body.prefix(600))")
        try await endpoint.queue(t, [["status": 500, "body": "oops"]])
        let broken = try await Browser(t).submit(
            try await Browser(t).get(authorizeURL(policy: "B2C_1A_loyalty")), form: "localAccountForm",
            ["signInName": alice.email, "password": alice.password])
        #expect(broken.body.contains("returned HTTP error response with Code &#39;500&#39;"), "\(broken.body.prefix(900))")
        let callouts = try await t.admin(.GET, "/callouts")
        #expect(callouts.body.contains("\"kind\":\"restful\"") && callouts.body.contains("REST-GetLoyalty"), "\(callouts.body.prefix(400))")
    }

    /// A loaded relying party is an authority like a user flow in each of B2C's four forms (path, `tfp/`, `?p=`, the tenant's
    /// GUID): discovery and keys answer there, with the endpoints in the form asked; its logout ends the SSO session.
    @Test func aLoadedRelyingPartyAnswersInEveryAuthorityFormAndSignsOut() async throws {
        let t = try await Self.tenantWithExamples()
        defer { Task { await t.stop() } }
        let id = "B2C_1A_ProfileEdit"
        let forms = [
            "/contoso.onmicrosoft.com/\(id)/v2.0/.well-known/openid-configuration",
            "/tfp/contoso.onmicrosoft.com/\(id)/v2.0/.well-known/openid-configuration",
            "/contoso.onmicrosoft.com/v2.0/.well-known/openid-configuration?p=\(id)",
            "/\(tenantID)/\(id)/v2.0/.well-known/openid-configuration",
        ]
        var issuers: Set<String> = []
        for path in forms {
            let d = try await t.get(path)
            #expect(d.status == 200, "\(path): \(d.status) \(d.body.prefix(200))")
            issuers.insert(d.json["issuer"]?.stringValue ?? "")
            let keys = try await t.get(try #require(d.json["jwks_uri"]?.stringValue, "\(path)"))
            #expect(keys.status == 200 && (keys.json["keys"]?.arrayValue?.isEmpty == false), "\(path): \(keys.body.prefix(200))")
            #expect(d.json["end_session_endpoint"]?.stringValue?.contains("logout") == true)
        }
        #expect(issuers.count == 1, "one issuer whatever the form: \(issuers)")
        // Sign in, then sign out at the relying party's logout: the next sign-in shows the page again.
        let b = Browser(t)
        let page = try await b.get(authorizeURL(policy: Self.policy))
        _ = try await b.submit(page, form: "localAccountForm", ["signInName": alice.email, "password": alice.password])
        #expect(try await b.get(authorizeURL(policy: Self.policy)).status == 302, "answered by the session")
        let out = try await b.get(
            "/contoso.onmicrosoft.com/\(Self.policy)/oauth2/v2.0/logout?post_logout_redirect_uri=\(FormEncoding.escape(appRedirect))")
        #expect(out.status == 302 && out.location == appRedirect, "\(out.status) \(out.location ?? out.body.prefix(300).description)")
        #expect(try await b.get(authorizeURL(policy: Self.policy)).status == 200, "signed out")
    }

    /// The starter pack's password check needs the two IEF apps as B2C's setup makes them; each step left out is Entra's
    /// error on the sign-in page: a placeholder for the proxy app (AADSTS700016) or the resource (AADSTS500011), the proxy
    /// app not a public client (AADSTS7000218), or without its permission on the IEF API (AADSTS65001).
    @Test func theIEFAppsSetUpHalfWayAreEntrasErrorsOnTheSignInPage() async throws {
        func signIn(_ seed: EmulatorSeed, extensions change: (String) -> String = { $0 }) async throws -> String {
            let t = try await TestTenant.start(seed: seed)
            defer { Task { await t.stop() } }
            let dir = try CustomPolicyTests.folder("TrustFrameworkExtensions.xml", change)
            defer { try? FileManager.default.removeItem(at: dir) }
            try t.emulator.customPolicies.load(directory: dir)
            let b = Browser(t)
            let page = try await b.get(authorizeURL(policy: Self.policy))
            let done = try await b.submit(page, form: "localAccountForm", ["signInName": alice.email, "password": alice.password])
            return done.redirectParams["code"] != nil ? "signed in" : done.body
        }
        let proxy = EmulatorSeed.proxyIdentityExperienceFrameworkID, ief = EmulatorSeed.identityExperienceFrameworkID
        #expect(try await signIn(.default) == "signed in")
        let placeholder = try await signIn(.default) { $0.replacingOccurrences(of: proxy, with: "ProxyIdentityExperienceFrameworkAppId") }
        #expect(
            placeholder.contains("AADSTS700016: Application with identifier &#39;ProxyIdentityExperienceFrameworkAppId&#39;"),
            "\(placeholder.prefix(900))")
        let resource = try await signIn(.default) { $0.replacingOccurrences(of: ief, with: "IdentityExperienceFrameworkAppId") }
        #expect(resource.contains("AADSTS500011: The resource principal named IdentityExperienceFrameworkAppId"), "\(resource.prefix(900))")
        var confidential = EmulatorSeed.default
        let i = try #require(confidential.apps.firstIndex { $0.clientId == proxy })
        confidential.apps[i].redirects = []
        #expect(try await signIn(confidential).contains("AADSTS7000218"))
        var unconsented = EmulatorSeed.default
        unconsented.apps[i].apiPermissions = []
        let consent = try await signIn(unconsented)
        #expect(consent.contains("AADSTS65001") && consent.contains("ProxyIdentityExperienceFramework"), "\(consent.prefix(900))")
    }

    /// A self-asserted profile's `setting.*` metadata shapes its page: no cancel link, no "forgot your password" link, no
    /// sign-up link, a user name instead of an address; without them the page has all of those.
    @Test func settingMetadataShapesTheSignInPage() async throws {
        let t = try await TestTenant.start()
        defer { Task { await t.stop() } }
        let dir = try CustomPolicyTests.folder()
        defer { try? FileManager.default.removeItem(at: dir) }
        try t.emulator.customPolicies.load(directory: dir)
        let plain = try await Browser(t).get(authorizeURL(policy: Self.policy))
        #expect(plain.body.contains(#"id="cancel""#) && plain.body.contains(#"id="forgotPassword""#), "\(plain.body.prefix(800))")
        #expect(plain.body.contains(#"id="createAccount""#) && plain.body.contains(#"type="email" id="signInName""#))
        let settings = """
            <ClaimsProviders><ClaimsProvider><DisplayName>Local</DisplayName><TechnicalProfiles>
            <TechnicalProfile Id="SelfAsserted-LocalAccountSignin-Email"><Metadata>
            <Item Key="setting.showCancelButton">false</Item><Item Key="setting.forgotPasswordLinkLocation">None</Item>
            <Item Key="setting.showSignupLink">false</Item><Item Key="setting.operatingMode">Username</Item>
            </Metadata></TechnicalProfile></TechnicalProfiles></ClaimsProvider>
            """
        let extensions = dir.appendingPathComponent("TrustFrameworkExtensions.xml")
        let text = try String(contentsOf: extensions, encoding: .utf8).replacingOccurrences(of: "<ClaimsProviders>", with: settings)
        try Data(text.utf8).write(to: extensions)
        try t.emulator.customPolicies.load(directory: dir)
        let shaped = try await Browser(t).get(authorizeURL(policy: Self.policy))
        #expect(shaped.status == 200 && shaped.body.contains("localAccountForm"), "\(shaped.body.prefix(800))")
        #expect(!shaped.body.contains(#"id="cancel""#) && !shaped.body.contains(#"id="forgotPassword""#), "\(shaped.body.prefix(1200))")
        #expect(!shaped.body.contains(#"id="createAccount""#) && shaped.body.contains(#"type="text" id="signInName""#))
    }

    /// `GetClaims` puts the relying party's input claims in the bag: a value the app sent on the authorize request
    /// (`{OAUTH-KV:campaignId}`) reaches the token; an id token hint issuer is refused by name.
    @Test func getClaimsTakesTheRelyingPartysInputClaimsFromTheRequest() async throws {
        let t = try await Self.tenantWithExamples()
        defer { Task { await t.stop() } }
        let dir = try CustomPolicyTests.folder()
        defer { try? FileManager.default.removeItem(at: dir) }
        func policy(getClaims: String) -> String {
            """
            <TrustFrameworkPolicy xmlns="http://schemas.microsoft.com/online/cpim/schemas/2013/06" PolicySchemaVersion="0.3.0.0"
              TenantId="contoso.onmicrosoft.com" PolicyId="B2C_1A_campaign">
              <BasePolicy><TenantId>contoso.onmicrosoft.com</TenantId><PolicyId>B2C_1A_TrustFrameworkExtensions</PolicyId></BasePolicy>
              <BuildingBlocks><ClaimsSchema>
                <ClaimType Id="campaignId"><DisplayName>Campaign</DisplayName><DataType>string</DataType></ClaimType>
              </ClaimsSchema></BuildingBlocks>
              <UserJourneys><UserJourney Id="Campaign"><OrchestrationSteps>
                \(getClaims)
                <OrchestrationStep Order="2" Type="CombinedSignInAndSignUp" ContentDefinitionReferenceId="api.signuporsignin">
                  <ClaimsProviderSelections><ClaimsProviderSelection ValidationClaimsExchangeId="Local" /></ClaimsProviderSelections>
                  <ClaimsExchanges>
                    <ClaimsExchange Id="Local" TechnicalProfileReferenceId="SelfAsserted-LocalAccountSignin-Email" />
                  </ClaimsExchanges>
                </OrchestrationStep>
                <OrchestrationStep Order="3" Type="SendClaims" CpimIssuerTechnicalProfileReferenceId="JwtIssuer" />
              </OrchestrationSteps></UserJourney></UserJourneys>
              <RelyingParty>
                <DefaultUserJourney ReferenceId="Campaign" />
                <TechnicalProfile Id="PolicyProfile">
                  <Protocol Name="OpenIdConnect" />
                  <InputClaims><InputClaim ClaimTypeReferenceId="campaignId" DefaultValue="{OAUTH-KV:campaignId}" /></InputClaims>
                  <OutputClaims>
                    <OutputClaim ClaimTypeReferenceId="objectId" PartnerClaimType="sub" />
                    <OutputClaim ClaimTypeReferenceId="campaignId" PartnerClaimType="campaign" />
                  </OutputClaims>
                  <SubjectNamingInfo ClaimType="sub" />
                </TechnicalProfile>
              </RelyingParty>
            </TrustFrameworkPolicy>
            """
        }
        try Data(policy(getClaims: #"<OrchestrationStep Order="1" Type="GetClaims" />"#).utf8)
            .write(to: dir.appendingPathComponent("Campaign.xml"))
        try t.emulator.customPolicies.load(directory: dir)
        let b = Browser(t)
        let pkce = PKCE()
        let page = try await b.get(authorizeURL(policy: "B2C_1A_campaign", pkce: pkce, extra: ["campaignId": "hawaii"]))
        let done = try await b.submit(page, form: "localAccountForm", ["signInName": alice.email, "password": alice.password])
        let code = try #require(done.redirectParams["code"], "\(done.status) \(done.body.prefix(600))")
        let id = try claims(
            try await t.token("B2C_1A_campaign", redeemForm(code: code, verifier: pkce.verifier)).json["id_token"]?.stringValue)
        #expect(id["campaign"]?.stringValue == "hawaii", "\(id)")
        // With an id token hint's issuer: refused by name, not ignored.
        try Data(
            policy(getClaims: #"<OrchestrationStep Order="1" Type="GetClaims" CpimIssuerTechnicalProfileReferenceId="JwtIssuer" />"#).utf8
        ).write(to: dir.appendingPathComponent("Campaign.xml"))
        try t.emulator.customPolicies.load(directory: dir)
        let hinted = try await Browser(t).get(authorizeURL(policy: "B2C_1A_campaign", extra: ["campaignId": "hawaii"]))
        #expect(hinted.body.contains("id_token_hint") && hinted.body.contains("AADB2C90250"), "\(hinted.status) \(hinted.body.prefix(600))")
    }

    /// `AuthenticationType` `ClientCertificate`: the certificate (a policy key whose value is its PEM file) goes in the TLS
    /// handshake to an endpoint that requires it, whose private CA the seed's `customPolicyCAFile` trusts.
    @Test func aRestfulProfileAuthenticatesWithAClientCertificate() async throws {
        let endpoint = try await ConnectorEndpoint()
        defer { endpoint.stop() }
        let bundle = endpoint.directory.appendingPathComponent("client-bundle.pem")
        try
            (try String(contentsOfFile: endpoint.clientCert, encoding: .utf8) + "\n"
            + (try String(contentsOfFile: endpoint.clientKey, encoding: .utf8)))
            .write(to: bundle, atomically: true, encoding: .utf8)
        var seed = EmulatorSeed.default
        seed.tenant.policyKeyValues["B2C_1A_RestClientCertificate"] = bundle.path
        seed.tenant.customPolicyCAFile = endpoint.ca
        let t = try await TestTenant.start(seed: seed)
        defer { Task { await t.stop() } }
        try t.emulator.customPolicies.load(directory: CustomPolicyTests.examples)
        let dir = try CustomPolicyTests.folder()
        defer { try? FileManager.default.removeItem(at: dir) }
        let key = #"<Key Id="ClientCertificate" StorageReferenceId="B2C_1A_RestClientCertificate" />"#
        try Data(Self.restfulPolicy(endpoint.https + "/certificate/loyalty", authentication: "ClientCertificate", keys: key).utf8)
            .write(to: dir.appendingPathComponent("Loyalty.xml"))
        try t.emulator.customPolicies.load(directory: dir)
        try await endpoint.queue(t, [["status": 200, "body": ["number": "L-0077", "tier": 2]]])
        let pkce = PKCE()
        let b = Browser(t)
        let done = try await b.submit(
            try await b.get(authorizeURL(policy: "B2C_1A_loyalty", pkce: pkce)), form: "localAccountForm",
            ["signInName": alice.email, "password": alice.password])
        let code = try #require(done.redirectParams["code"], "\(done.status) \(done.body.prefix(900))")
        let id = try claims(
            try await t.token("B2C_1A_loyalty", redeemForm(code: code, verifier: pkce.verifier)).json["id_token"]?.stringValue)
        #expect(id["loyalty_number"]?.stringValue == "L-0077", "\(id)")
        let call = try #require(try await endpoint.received(t).last)
        #expect(call["clientCN"]?.stringValue?.isEmpty == false && call["path"]?.stringValue == "/certificate/loyalty", "\(call)")
        // Over plain http a client certificate cannot be sent: the journey says so.
        try Data(Self.restfulPolicy(endpoint.http + "/none/loyalty", authentication: "ClientCertificate", keys: key).utf8)
            .write(to: dir.appendingPathComponent("Loyalty.xml"))
        try t.emulator.customPolicies.load(directory: dir)
        let refused = try await Browser(t).submit(
            try await Browser(t).get(authorizeURL(policy: "B2C_1A_loyalty")), form: "localAccountForm",
            ["signInName": alice.email, "password": alice.password])
        #expect(refused.body.contains("needs an https ServiceUrl"), "\(refused.status) \(refused.body.prefix(900))")
    }
}
