import B2CKit
import B2CProtocol
import Foundation
import Testing

@testable import B2CEmulator

/// Orchestration and handlers the example set does not use, each in a small relying party of our own over it, over real
/// HTTP: a `Transfer` sub-journey, a validation profile's `ContinueOnError`, `DeleteClaimsPrincipal`, a REST API asked
/// with `SendClaimsIn` `QueryString`, and an `OAuth2` profile to Google's endpoints (the tenant's mock Google).
@Suite(.serialized) struct CustomPolicyOrchestrationTests {
    static func handler(_ provider: String) -> String {
        "Web.TPEngine.Providers.\(provider), Web.TPEngine, Version=1.0.0.0, Culture=neutral, PublicKeyToken=null"
    }

    /// The example set's local sign-in as a journey's first step.
    static let localSignIn = """
        <OrchestrationStep Order="1" Type="CombinedSignInAndSignUp" ContentDefinitionReferenceId="api.signuporsignin">
          <ClaimsProviderSelections><ClaimsProviderSelection ValidationClaimsExchangeId="Local" /></ClaimsProviderSelections>
          <ClaimsExchanges>
            <ClaimsExchange Id="Local" TechnicalProfileReferenceId="SelfAsserted-LocalAccountSignin-Email" />
          </ClaimsExchanges>
        </OrchestrationStep>
        """

    /// A claims transformation profile that sets the claim `stamp` to `value` (with the `Stamp-{value}` transformation
    /// `blocks` must declare: `stampTransformation(value)`).
    static func stampProfile(_ value: String) -> String {
        """
        <TechnicalProfile Id="Stamp-\(value)">
          <Protocol Name="Proprietary" Handler="\(handler("ClaimsTransformationProtocolProvider"))" />
          <OutputClaims><OutputClaim ClaimTypeReferenceId="stamp" /></OutputClaims>
          <OutputClaimsTransformations><OutputClaimsTransformation ReferenceId="Stamp-\(value)" /></OutputClaimsTransformations>
        </TechnicalProfile>
        """
    }

    static func stampTransformation(_ value: String) -> String {
        """
        <ClaimsTransformation Id="Stamp-\(value)" TransformationMethod="CreateStringClaim">
          <InputParameters><InputParameter Id="value" DataType="string" Value="\(value)" /></InputParameters>
          <OutputClaims><OutputClaim ClaimTypeReferenceId="stamp" TransformationClaimType="createdClaim" /></OutputClaims>
        </ClaimsTransformation>
        """
    }

    static let stampClaimType = #"<ClaimType Id="stamp"><DisplayName>Stamp</DisplayName><DataType>string</DataType></ClaimType>"#

    /// A relying party `id` over the example set (`B2C_1A_TrustFrameworkExtensions`): its building blocks, technical
    /// profiles, journey steps (none: the base's `SignUpOrSignIn`), sub-journeys, `UserJourneyBehaviors`, and the token's
    /// claims besides `sub`.
    static func relyingParty(
        _ id: String, blocks: String = "", profiles: String = "", steps: String = "", subJourneys: String = "", behaviors: String = "",
        claims: String = ""
    ) -> String {
        let journey =
            steps.isEmpty
            ? "" : "<UserJourneys><UserJourney Id=\"\(id)\"><OrchestrationSteps>\(steps)</OrchestrationSteps></UserJourney></UserJourneys>"
        return """
            <TrustFrameworkPolicy xmlns="http://schemas.microsoft.com/online/cpim/schemas/2013/06" PolicySchemaVersion="0.3.0.0"
              TenantId="contoso.onmicrosoft.com" PolicyId="\(id)">
              <BasePolicy><TenantId>contoso.onmicrosoft.com</TenantId><PolicyId>B2C_1A_TrustFrameworkExtensions</PolicyId></BasePolicy>
              <BuildingBlocks>\(blocks)</BuildingBlocks>
              <ClaimsProviders><ClaimsProvider><DisplayName>\(id)</DisplayName><TechnicalProfiles>\(profiles)</TechnicalProfiles>
              </ClaimsProvider></ClaimsProviders>
              \(journey)
              \(subJourneys.isEmpty ? "" : "<SubJourneys>\(subJourneys)</SubJourneys>")
              <RelyingParty>
                <DefaultUserJourney ReferenceId="\(steps.isEmpty ? "SignUpOrSignIn" : id)" />
                \(behaviors)
                <TechnicalProfile Id="PolicyProfile">
                  <Protocol Name="OpenIdConnect" />
                  <OutputClaims><OutputClaim ClaimTypeReferenceId="objectId" PartnerClaimType="sub" />\(claims)</OutputClaims>
                  <SubjectNamingInfo ClaimType="sub" />
                </TechnicalProfile>
              </RelyingParty>
            </TrustFrameworkPolicy>
            """
    }

    /// A tenant for the length of `body`, with the example set and `policies` (file name → XML) loaded beside it.
    static func withTenant(
        _ policies: [String: String], seed: EmulatorSeed = .default, _ body: (TestTenant) async throws -> Void
    ) async throws {
        try await TestTenant.with(seed: seed) { t in
            let dir = try CustomPolicyTests.folder()
            defer { try? FileManager.default.removeItem(at: dir) }
            for (name, xml) in policies { try Data(xml.utf8).write(to: dir.appendingPathComponent(name)) }
            try t.emulator.customPolicies.load(directory: dir)
            try await body(t)
        }
    }

    /// The id token's claims for the code a journey ended with.
    static func idToken(_ t: TestTenant, _ policy: String, _ done: TestResponse, _ pkce: PKCE) async throws -> [String: JSONValue] {
        let said = done.body.components(separatedBy: "<main").last?.prefix(900).description ?? ""
        let code = try #require(done.redirectParams["code"], "\(done.status) \(done.location ?? said)")
        let tokens = try await t.token(policy, redeemForm(code: code, verifier: pkce.verifier))
        return try claims(tokens.json["id_token"]?.stringValue)
    }

    /// The recorder's events of the newest journey of `policy`.
    static func recorded(_ t: TestTenant, _ policy: String) async throws -> [JSONValue] {
        let list = try await t.admin(.GET, "/journeys?policy=\(policy)")
        let id = try #require(list.json["journeys"]?.arrayValue?.first?["id"]?.stringValue, "\(list.body)")
        return try await t.admin(.GET, "/journeys/\(id)").json["events"]?.arrayValue ?? []
    }

    // MARK: a Transfer sub-journey

    static func transferPolicy(sendsClaims: Bool) -> String {
        let sendClaims = #"<OrchestrationStep Order="3" Type="SendClaims" CpimIssuerTechnicalProfileReferenceId="JwtIssuer" />"#
        return relyingParty(
            "B2C_1A_transfer",
            blocks: "<ClaimsSchema>\(stampClaimType)</ClaimsSchema><ClaimsTransformations>"
                + stampTransformation("transferred") + stampTransformation("parent") + "</ClaimsTransformations>",
            profiles: stampProfile("transferred") + stampProfile("parent"),
            steps: localSignIn + """
                <OrchestrationStep Order="2" Type="InvokeSubJourney">
                  <JourneyList><Candidate SubJourneyReferenceId="Finish" /></JourneyList>
                </OrchestrationStep>
                <OrchestrationStep Order="3" Type="ClaimsExchange">
                  <ClaimsExchanges><ClaimsExchange Id="Parent" TechnicalProfileReferenceId="Stamp-parent" /></ClaimsExchanges>
                </OrchestrationStep>
                <OrchestrationStep Order="4" Type="SendClaims" CpimIssuerTechnicalProfileReferenceId="JwtIssuer" />
                """,
            subJourneys: """
                <SubJourney Id="Finish" Type="Transfer"><OrchestrationSteps>
                  <OrchestrationStep Order="1" Type="ClaimsExchange">
                    <ClaimsExchanges><ClaimsExchange Id="Read" TechnicalProfileReferenceId="AAD-UserReadUsingObjectId" /></ClaimsExchanges>
                  </OrchestrationStep>
                  <OrchestrationStep Order="2" Type="ClaimsExchange">
                    <ClaimsExchanges><ClaimsExchange Id="Stamp" TechnicalProfileReferenceId="Stamp-transferred" /></ClaimsExchanges>
                  </OrchestrationStep>
                  \(sendsClaims ? sendClaims : "")
                </OrchestrationSteps></SubJourney>
                """,
            claims: #"<OutputClaim ClaimTypeReferenceId="stamp" /><OutputClaim ClaimTypeReferenceId="email" />"#)
    }

    /// `InvokeSubJourney` of a `Transfer` sub-journey: the journey never comes back to its caller, and the sub-journey's
    /// own `SendClaims` issues the token; one that ends without `SendClaims` ends the journey with B2C's error.
    @Test func aTransferSubJourneyEndsTheJourneyWithItsOwnSendClaims() async throws {
        try await Self.withTenant(["Transfer.xml": Self.transferPolicy(sendsClaims: true)]) { t in
            let b = Browser(t)
            let pkce = PKCE()
            let page = try await b.get(authorizeURL(policy: "B2C_1A_transfer", pkce: pkce))
            let done = try await b.submit(page, form: "localAccountForm", ["signInName": alice.email, "password": alice.password])
            let id = try await Self.idToken(t, "B2C_1A_transfer", done, pkce)
            #expect(id["stamp"] == "transferred" && id["email"] == .string(alice.email) && id["sub"] == .string(alice.oid), "\(id)")
            let names = try await Self.recorded(t, "B2C_1A_transfer").compactMap { $0["name"]?.stringValue }
            #expect(names.contains("sub-journey Finish entered") && names.contains("sub-journey Finish, orchestration step 3: SendClaims"))
            #expect(!names.contains("sub-journey Finish ended") && !names.contains("technical profile Stamp-parent"), "\(names)")

            // Without SendClaims, the sub-journey ends the journey: B2C's error, not the caller's next step.
            _ = try t.emulator.customPolicies.upload(Data(Self.transferPolicy(sendsClaims: false).utf8), id: "B2C_1A_transfer")
            let c = Browser(t)
            let again = try await c.get(authorizeURL(policy: "B2C_1A_transfer"))
            let failed = try await c.submit(again, form: "localAccountForm", ["signInName": alice.email, "password": alice.password])
            #expect(
                failed.redirectParams["code"] == nil && failed.body.contains("AADB2C90067"), "\(failed.status) \(failed.body.prefix(900))")
            #expect(failed.body.contains("The sub-journey &#39;Finish&#39; (Transfer) ended without a SendClaims step."))
            let events = try await Self.recorded(t, "B2C_1A_transfer")
            #expect(events.last?["name"] == "AADB2C90067" && !events.contains { $0["name"] == "technical profile Stamp-parent" })
        }
    }

    // MARK: a validation profile's ContinueOnError

    static func continuePolicy(_ url: String, continueOnError: Bool) -> String {
        relyingParty(
            "B2C_1A_continue",
            blocks: """
                <ClaimsSchema>\(stampClaimType)
                  <ClaimType Id="nickname"><DisplayName>Nickname</DisplayName><DataType>string</DataType>
                    <UserInputType>TextBox</UserInputType></ClaimType>
                </ClaimsSchema><ClaimsTransformations>\(stampTransformation("validated"))</ClaimsTransformations>
                """,
            profiles: stampProfile("validated") + """
                <TechnicalProfile Id="REST-CheckNickname">
                  <Protocol Name="Proprietary" Handler="\(handler("RestfulProvider"))" />
                  <Metadata><Item Key="ServiceUrl">\(url)/none/nickname</Item><Item Key="AuthenticationType">None</Item></Metadata>
                  <InputClaims><InputClaim ClaimTypeReferenceId="nickname" /></InputClaims>
                </TechnicalProfile>
                <TechnicalProfile Id="SelfAsserted-Nickname">
                  <DisplayName>Your nickname</DisplayName>
                  <Protocol Name="Proprietary" Handler="\(handler("SelfAssertedAttributeProvider"))" />
                  <Metadata><Item Key="ContentDefinitionReferenceId">api.selfasserted</Item></Metadata>
                  <OutputClaims><OutputClaim ClaimTypeReferenceId="nickname" Required="true" /></OutputClaims>
                  <ValidationTechnicalProfiles>
                    <ValidationTechnicalProfile ReferenceId="REST-CheckNickname" ContinueOnError="\(continueOnError)" />
                    <ValidationTechnicalProfile ReferenceId="Stamp-validated" />
                  </ValidationTechnicalProfiles>
                </TechnicalProfile>
                """,
            steps: localSignIn + """
                <OrchestrationStep Order="2" Type="ClaimsExchange">
                  <ClaimsExchanges><ClaimsExchange Id="Nickname" TechnicalProfileReferenceId="SelfAsserted-Nickname" /></ClaimsExchanges>
                </OrchestrationStep>
                <OrchestrationStep Order="3" Type="SendClaims" CpimIssuerTechnicalProfileReferenceId="JwtIssuer" />
                """,
            claims: #"<OutputClaim ClaimTypeReferenceId="nickname" /><OutputClaim ClaimTypeReferenceId="stamp" />"#)
    }

    /// A validation profile that fails with `ContinueOnError="true"`: the page goes on to the next validation profile and
    /// the journey to the token, and the recorder says why; without it, its message is the page's error.
    @Test(arguments: [true, false]) func aValidationProfileThatFails(continueOnError: Bool) async throws {
        let endpoint = try await ConnectorEndpoint()
        defer { endpoint.stop() }
        try await Self.withTenant(["Continue.xml": Self.continuePolicy(endpoint.http, continueOnError: continueOnError)]) { t in
            try await endpoint.queue(
                t, [["status": 409, "body": ["version": "1.0.0", "status": 409, "userMessage": "That nickname is taken."]]])
            let b = Browser(t)
            let pkce = PKCE()
            let first = try await b.get(authorizeURL(policy: "B2C_1A_continue", pkce: pkce))
            let page = try await b.submit(first, form: "localAccountForm", ["signInName": alice.email, "password": alice.password])
            #expect(page.body.contains(#"id="nickname""#), "\(page.body.prefix(900))")
            let done = try await b.submit(page, form: "attributeVerification", ["nickname": "ally"])
            #expect(try await endpoint.received(t).last?["body"]?["nickname"] == "ally")
            let events = try await Self.recorded(t, "B2C_1A_continue")
            if continueOnError {
                let id = try await Self.idToken(t, "B2C_1A_continue", done, pkce)
                #expect(id["nickname"] == "ally" && id["stamp"] == "validated", "the next validation profile ran: \(id)")
                let noted = try #require(
                    events.first { $0["name"] == "validation profile REST-CheckNickname failed, and the page goes on" })
                #expect(noted["detail"]?["error"] == "AADB2C90075" && noted["detail"]?["message"] == "That nickname is taken.", "\(noted)")
            } else {
                #expect(done.redirectParams["code"] == nil && done.body.contains("That nickname is taken."), "\(done.body.prefix(900))")
                #expect(events.contains { $0["name"] == "validation profile REST-CheckNickname failed" })
                #expect(!events.contains { $0["name"] == "technical profile Stamp-validated" }, "the next validation profile did not run")
            }
        }
    }

    // MARK: DeleteClaimsPrincipal

    /// `AzureActiveDirectoryProvider` with `Operation` `DeleteClaimsPrincipal`: the signed-in person is gone from the
    /// directory, and the next sign-in no longer finds them. The tenant issues tokens only to a person of its directory, so
    /// the journey's `SendClaims` then ends it with `AADB2C99002` (the emulator's limit: B2C issues them from the bag).
    @Test func deleteClaimsPrincipalRemovesThePersonFromTheDirectory() async throws {
        let policy = Self.relyingParty(
            "B2C_1A_delete",
            profiles: """
                <TechnicalProfile Id="AAD-DeleteUserUsingObjectId">
                  <Metadata><Item Key="Operation">DeleteClaimsPrincipal</Item></Metadata>
                  <InputClaims><InputClaim ClaimTypeReferenceId="objectId" Required="true" /></InputClaims>
                  <OutputClaims />
                  <IncludeTechnicalProfile ReferenceId="AAD-Common" />
                </TechnicalProfile>
                """,
            steps: Self.localSignIn + """
                <OrchestrationStep Order="2" Type="ClaimsExchange">
                  <ClaimsExchanges>
                    <ClaimsExchange Id="Delete" TechnicalProfileReferenceId="AAD-DeleteUserUsingObjectId" />
                  </ClaimsExchanges>
                </OrchestrationStep>
                <OrchestrationStep Order="3" Type="SendClaims" CpimIssuerTechnicalProfileReferenceId="JwtIssuer" />
                """)
        try await Self.withTenant(["Delete.xml": policy]) { t in
            #expect(try t.emulator.store.user(oid: bob.oid) != nil)
            let b = Browser(t)
            let page = try await b.get(authorizeURL(policy: "B2C_1A_delete"))
            let done = try await b.submit(page, form: "localAccountForm", ["signInName": bob.email, "password": bob.password])
            #expect(try t.emulator.store.user(oid: bob.oid) == nil && t.emulator.store.user(email: bob.email) == nil)
            #expect(done.redirectParams["code"] == nil && done.body.contains("AADB2C99002"), "\(done.status) \(done.body.prefix(900))")
            let events = try await Self.recorded(t, "B2C_1A_delete")
            #expect(
                events.contains { $0["name"] == "technical profile AAD-DeleteUserUsingObjectId" } && events.last?["name"] == "AADB2C99002")
            let c = Browser(t)
            let signIn = try await c.get(authorizeURL(policy: "B2C_1A_signup_signin"))
            let gone = try await c.submit(signIn, form: "localAccountForm", ["signInName": bob.email, "password": bob.password])
            #expect(gone.body.contains("seem to find your account"), "\(gone.body.prefix(900))")
        }
    }

    // MARK: a REST API asked with SendClaimsIn QueryString

    /// `SendClaimsIn` `QueryString`: B2C asks with a GET, the input claims by their partner names in the query and no body;
    /// the answer's claims reach the token as with a body.
    @Test func aRestfulProfileSendsItsClaimsInTheQueryWithAGet() async throws {
        let endpoint = try await ConnectorEndpoint()
        defer { endpoint.stop() }
        let policy = CustomPolicyJourneyTests.restfulPolicy(endpoint.http + "/none/loyalty?source=b2c").replacingOccurrences(
            of: #"<Item Key="SendClaimsIn">Body</Item>"#, with: #"<Item Key="SendClaimsIn">QueryString</Item>"#)
        try await Self.withTenant(["Loyalty.xml": policy]) { t in
            try await endpoint.queue(t, [["status": 200, "body": ["number": "L-0099", "tier": 1]]])
            let b = Browser(t)
            let pkce = PKCE()
            let page = try await b.get(authorizeURL(policy: "B2C_1A_loyalty", pkce: pkce))
            let done = try await b.submit(page, form: "localAccountForm", ["signInName": alice.email, "password": alice.password])
            let id = try await Self.idToken(t, "B2C_1A_loyalty", done, pkce)
            #expect(id["loyalty_number"] == "L-0099" && id["tier"]?.doubleValue == 1, "\(id)")
            let call = try #require(try await endpoint.received(t).last)
            let query = "source=b2c&email=\(FormEncoding.escape(alice.email))&userId=\(alice.oid)"
            #expect(call["method"] == "GET" && call["path"] == .string("/none/loyalty?" + query), "\(call)")
            #expect(call["body"] == .null, "no body: \(call)")
        }
    }

    // MARK: an OAuth2 profile to Google

    /// The example set's social journey with Google in Facebook's place — Google's own endpoints, claim names and secret
    /// (`B2C_1A_GoogleSecret`), as B2C's Google setup writes the profile — without its phone steps.
    static func googlePolicy() throws -> String {
        let social = try CustomPolicyTests.xml("SignUpOrSigninSocialMfa.xml")
        let start = try #require(social.range(of: #"<TechnicalProfile Id="Facebook-OAUTH">"#))
        let end = try #require(social.range(of: "</TechnicalProfile>", range: start.upperBound..<social.endIndex))
        let google = """
            <TechnicalProfile Id="Google-OAUTH">
              <DisplayName>Google</DisplayName>
              <Protocol Name="OAuth2" />
              <Metadata>
                <Item Key="ProviderName">google</Item>
                <Item Key="authorization_endpoint">https://accounts.google.com/o/oauth2/auth</Item>
                <Item Key="AccessTokenEndpoint">https://accounts.google.com/o/oauth2/token</Item>
                <Item Key="ClaimsEndpoint">https://www.googleapis.com/oauth2/v1/userinfo</Item>
                <Item Key="scope">email profile</Item>
                <Item Key="HttpBinding">POST</Item>
                <Item Key="UsePolicyInRedirectUri">false</Item>
                <Item Key="client_id">0000-contoso.apps.googleusercontent.com</Item>
              </Metadata>
              <CryptographicKeys><Key Id="client_secret" StorageReferenceId="B2C_1A_GoogleSecret" /></CryptographicKeys>
              <OutputClaims>
                <OutputClaim ClaimTypeReferenceId="issuerUserId" PartnerClaimType="id" />
                <OutputClaim ClaimTypeReferenceId="email" PartnerClaimType="email" />
                <OutputClaim ClaimTypeReferenceId="givenName" PartnerClaimType="given_name" />
                <OutputClaim ClaimTypeReferenceId="surname" PartnerClaimType="family_name" />
                <OutputClaim ClaimTypeReferenceId="displayName" PartnerClaimType="name" />
                <OutputClaim ClaimTypeReferenceId="identityProvider" DefaultValue="google.com" AlwaysUseDefaultValue="true" />
                <OutputClaim ClaimTypeReferenceId="authenticationSource" DefaultValue="socialIdpAuthentication"
                  AlwaysUseDefaultValue="true" />
              </OutputClaims>
              <OutputClaimsTransformations>
                <OutputClaimsTransformation ReferenceId="CreateAlternativeSecurityId" />
              </OutputClaimsTransformations>
              <UseTechnicalProfileForSessionManagement ReferenceId="SM-SocialLogin" />
            """
        let phoneSteps = try #require(social.range(of: #"<OrchestrationStep Order="6""#))
        let sendClaims = try #require(social.range(of: #"<OrchestrationStep Order="9""#))
        return social.replacingCharacters(in: phoneSteps.lowerBound..<sendClaims.lowerBound, with: "")
            .replacingCharacters(in: start.lowerBound..<end.lowerBound, with: google)
            .replacingOccurrences(of: "FacebookExchange", with: "GoogleExchange")
            .replacingOccurrences(of: "Facebook-OAUTH", with: "Google-OAUTH")
            .replacingOccurrences(of: "B2C_1A_signup_signin_social_mfa", with: "B2C_1A_signup_signin_google")
    }

    /// An `OAuth2` profile naming Google's endpoints: the tenant's mock Google answers (nothing goes to Google), Google's
    /// claim names (`given_name`, `family_name`) reach the bag, a first-time person signs up and a returning one goes straight
    /// on.
    @Test func anOAuth2ProfileToGoogleIsAnsweredByTheMockGoogle() async throws {
        var seed = EmulatorSeed.default
        seed.tenant.policyKeys.append("B2C_1A_GoogleSecret")
        try await Self.withTenant(["Google.xml": try Self.googlePolicy()], seed: seed) { t in
            let policy = "B2C_1A_signup_signin_google"
            func google(_ b: Browser, pkce: PKCE = PKCE()) async throws -> TestResponse {
                let page = try await b.get(authorizeURL(policy: policy, pkce: pkce))
                #expect(page.body.contains(#"id="GoogleExchange">Google</button>"#) && page.form("localAccountForm") != nil)
                let sent = try await b.submit(page, form: "idp_google", [:])
                let location = try #require(sent.location, "\(sent.status) \(sent.body.prefix(600))")
                #expect(location.hasPrefix(t.base + "/_idp/google/authorize?"), "the mock Google, not accounts.google.com: \(location)")
                let idp = try await b.get(location)
                let answer = try await b.submit(
                    idp, form: "idpSignIn", ["email": "gus@gmail.example", "name": "Gus Goo", "givenName": "Gus", "surname": "Goo"])
                return try await b.submit(answer, form: "hiddenform", [:])
            }
            let b = Browser(t)
            let pkce = PKCE()
            let about = try await google(b, pkce: pkce)
            let form = try #require(about.form("attributeVerification"), "\(about.body.prefix(900))")
            #expect(form.fields["givenName"] == "Gus" && form.fields["surname"] == "Goo" && form.fields["displayName"] == "Gus Goo")
            let done = try await b.submit(about, form: "attributeVerification", ["step": "continue"])
            let id = try await Self.idToken(t, policy, done, pkce)
            #expect(id["idp"] == "google.com" && id["newUser"] == true && id["name"] == "Gus Goo" && id["email"] == "gus@gmail.example")
            let gus = try #require(try t.emulator.store.user(oid: id["sub"]?.stringValue ?? ""))
            #expect(gus.idp == "google.com", "\(gus)")
            let profile = try #require(try await Self.recorded(t, policy).first { $0["name"] == "technical profile Google-OAUTH" })
            #expect(profile["detail"]?["handler"] == "OAuth2" && profile["detail"]?["claims"]?["identityProvider"] == "google.com")
            #expect(profile["detail"]?["claims"]?["givenName"] == "Gus" && profile["detail"]?["claims"]?["surname"] == "Goo", "\(profile)")
            // Another browser: Google again, a returning person — no page, a code.
            let again = try await google(Browser(t))
            #expect(again.redirectParams["code"] != nil, "\(again.status) \(again.body.prefix(600))")
        }
    }
}
