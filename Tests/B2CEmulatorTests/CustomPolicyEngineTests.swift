import B2CKit
import B2CProtocol
import Foundation
import Testing

@testable import B2CEmulator

/// The engine's parts that the example set does not use, in one relying party of our own (`B2C_1A_engine`): display
/// controls (`VerificationControl`) with B2C's email service (`AadSsprProtocolProvider`) and with the OTP service
/// (`OneTimePasswordProtocolProvider`) whose code a REST API mails (`GenerateJson` body, `ApiKeyHeader` credentials from
/// a policy key's value), then a sub-journey (`InvokeSubJourney`, `Call`) before the token — over real HTTP.
@Suite struct CustomPolicyEngineTests {
    static let policy = "B2C_1A_engine"
    static let apiKey = "mail-api-key-2026"

    static func enginePolicy(_ url: String) -> String {
        let assembly = ", Web.TPEngine, Version=1.0.0.0, Culture=neutral, PublicKeyToken=null"
        let sspr = "Web.TPEngine.Providers.AadSsprProtocolProvider" + assembly
        let otp =
            "Web.TPEngine.Providers.OneTimePasswordProtocolProvider" + assembly
        let rest = "Web.TPEngine.Providers.RestfulProvider" + assembly
        let selfAsserted =
            "Web.TPEngine.Providers.SelfAssertedAttributeProvider" + assembly
        let transformation =
            "Web.TPEngine.Providers.ClaimsTransformationProtocolProvider" + assembly
        func action(_ id: String, _ profiles: String...) -> String {
            "<Action Id=\"\(id)\"><ValidationClaimsExchange>"
                + profiles.map { "<ValidationClaimsExchangeTechnicalProfile TechnicalProfileReferenceId=\"\($0)\" />" }.joined()
                + "</ValidationClaimsExchange></Action>"
        }
        return """
            <TrustFrameworkPolicy xmlns="http://schemas.microsoft.com/online/cpim/schemas/2013/06" PolicySchemaVersion="0.3.0.0"
              TenantId="contoso.onmicrosoft.com" PolicyId="\(policy)">
              <BasePolicy><TenantId>contoso.onmicrosoft.com</TenantId><PolicyId>B2C_1A_TrustFrameworkExtensions</PolicyId></BasePolicy>
              <BuildingBlocks>
                <ClaimsSchema>
                  <ClaimType Id="verificationCode"><DisplayName>Verification code</DisplayName><DataType>string</DataType>
                    <UserInputType>TextBox</UserInputType></ClaimType>
                  <ClaimType Id="backupEmail"><DisplayName>Backup email</DisplayName><DataType>string</DataType>
                    <UserInputType>TextBox</UserInputType></ClaimType>
                  <ClaimType Id="otp"><DisplayName>One-time code</DisplayName><DataType>string</DataType></ClaimType>
                  <ClaimType Id="otpBody"><DisplayName>Mail body</DisplayName><DataType>string</DataType></ClaimType>
                  <ClaimType Id="stamp"><DisplayName>Stamp</DisplayName><DataType>string</DataType></ClaimType>
                </ClaimsSchema>
                <ClaimsTransformations>
                  <ClaimsTransformation Id="MakeOtpMail" TransformationMethod="GenerateJson">
                    <InputClaims>
                      <InputClaim ClaimTypeReferenceId="backupEmail" TransformationClaimType="personalizations.0.to.0.email" />
                      <InputClaim ClaimTypeReferenceId="otp" TransformationClaimType="personalizations.0.dynamic_template_data.otp" />
                    </InputClaims>
                    <InputParameters><InputParameter Id="template_id" DataType="string" Value="d-otp" /></InputParameters>
                    <OutputClaims><OutputClaim ClaimTypeReferenceId="otpBody" TransformationClaimType="outputClaim" /></OutputClaims>
                  </ClaimsTransformation>
                  <ClaimsTransformation Id="StampIt" TransformationMethod="CreateStringClaim">
                    <InputParameters><InputParameter Id="value" DataType="string" Value="via-subjourney" /></InputParameters>
                    <OutputClaims><OutputClaim ClaimTypeReferenceId="stamp" TransformationClaimType="createdClaim" /></OutputClaims>
                  </ClaimsTransformation>
                </ClaimsTransformations>
                <DisplayControls>
                  <DisplayControl Id="emailVerificationControl" UserInterfaceControlType="VerificationControl">
                    <DisplayClaims>
                      <DisplayClaim ClaimTypeReferenceId="email" Required="true" />
                      <DisplayClaim ClaimTypeReferenceId="verificationCode" ControlClaimType="VerificationCode" Required="true" />
                    </DisplayClaims>
                    <OutputClaims><OutputClaim ClaimTypeReferenceId="email" /></OutputClaims>
                    <Actions>\(action("SendCode", "AadSspr-SendCode"))\(action("VerifyCode", "AadSspr-VerifyCode"))</Actions>
                  </DisplayControl>
                  <DisplayControl Id="backupControl" UserInterfaceControlType="VerificationControl">
                    <DisplayClaims>
                      <DisplayClaim ClaimTypeReferenceId="backupEmail" Required="true" />
                      <DisplayClaim ClaimTypeReferenceId="verificationCode" ControlClaimType="VerificationCode" Required="true" />
                    </DisplayClaims>
                    <Actions>\(action("SendCode", "OTP-Generate", "REST-SendOtp"))\(action("VerifyCode", "OTP-Verify"))</Actions>
                  </DisplayControl>
                </DisplayControls>
              </BuildingBlocks>
              <ClaimsProviders><ClaimsProvider><DisplayName>Engine</DisplayName><TechnicalProfiles>
                <TechnicalProfile Id="AadSspr-SendCode">
                  <Protocol Name="Proprietary" Handler="\(sspr)" />
                  <Metadata><Item Key="Operation">SendCode</Item></Metadata>
                  <InputClaims><InputClaim ClaimTypeReferenceId="email" PartnerClaimType="emailAddress" /></InputClaims>
                </TechnicalProfile>
                <TechnicalProfile Id="AadSspr-VerifyCode">
                  <Protocol Name="Proprietary" Handler="\(sspr)" />
                  <Metadata><Item Key="Operation">VerifyCode</Item></Metadata>
                  <InputClaims>
                    <InputClaim ClaimTypeReferenceId="verificationCode" />
                    <InputClaim ClaimTypeReferenceId="email" PartnerClaimType="emailAddress" />
                  </InputClaims>
                </TechnicalProfile>
                <TechnicalProfile Id="OTP-Generate">
                  <Protocol Name="Proprietary" Handler="\(otp)" />
                  <Metadata><Item Key="Operation">GenerateCode</Item><Item Key="CodeLength">8</Item></Metadata>
                  <InputClaims><InputClaim ClaimTypeReferenceId="backupEmail" PartnerClaimType="identifier" /></InputClaims>
                  <OutputClaims><OutputClaim ClaimTypeReferenceId="otp" PartnerClaimType="otpGenerated" /></OutputClaims>
                </TechnicalProfile>
                <TechnicalProfile Id="REST-SendOtp">
                  <Protocol Name="Proprietary" Handler="\(rest)" />
                  <Metadata>
                    <Item Key="ServiceUrl">\(url)/none/mail</Item>
                    <Item Key="AuthenticationType">ApiKeyHeader</Item>
                    <Item Key="SendClaimsIn">Body</Item>
                    <Item Key="ClaimUsedForRequestPayload">otpBody</Item>
                  </Metadata>
                  <CryptographicKeys><Key Id="x-functions-key" StorageReferenceId="B2C_1A_MailApiKey" /></CryptographicKeys>
                  <InputClaimsTransformations><InputClaimsTransformation ReferenceId="MakeOtpMail" /></InputClaimsTransformations>
                  <InputClaims><InputClaim ClaimTypeReferenceId="otpBody" /></InputClaims>
                </TechnicalProfile>
                <TechnicalProfile Id="OTP-Verify">
                  <Protocol Name="Proprietary" Handler="\(otp)" />
                  <Metadata><Item Key="Operation">VerifyCode</Item><Item Key="NumRetryAttempts">2</Item></Metadata>
                  <InputClaims>
                    <InputClaim ClaimTypeReferenceId="backupEmail" PartnerClaimType="identifier" />
                    <InputClaim ClaimTypeReferenceId="verificationCode" PartnerClaimType="otpToVerify" />
                  </InputClaims>
                </TechnicalProfile>
                <TechnicalProfile Id="SignUp-WithControls">
                  <DisplayName>Sign up</DisplayName>
                  <Protocol Name="Proprietary" Handler="\(selfAsserted)" />
                  <Metadata><Item Key="ContentDefinitionReferenceId">api.localaccountsignup</Item></Metadata>
                  <DisplayClaims>
                    <DisplayClaim DisplayControlReferenceId="emailVerificationControl" />
                    <DisplayClaim DisplayControlReferenceId="backupControl" />
                    <DisplayClaim ClaimTypeReferenceId="newPassword" Required="true" />
                    <DisplayClaim ClaimTypeReferenceId="reenterPassword" Required="true" />
                    <DisplayClaim ClaimTypeReferenceId="displayName" />
                  </DisplayClaims>
                  <OutputClaims>
                    <OutputClaim ClaimTypeReferenceId="email" Required="true" />
                    <OutputClaim ClaimTypeReferenceId="objectId" />
                    <OutputClaim ClaimTypeReferenceId="newPassword" Required="true" />
                    <OutputClaim ClaimTypeReferenceId="reenterPassword" Required="true" />
                    <OutputClaim ClaimTypeReferenceId="displayName" />
                    <OutputClaim ClaimTypeReferenceId="newUser" />
                    <OutputClaim ClaimTypeReferenceId="executed-SelfAsserted-Input" DefaultValue="true" />
                  </OutputClaims>
                  <ValidationTechnicalProfiles>
                    <ValidationTechnicalProfile ReferenceId="AAD-UserWriteUsingLogonEmail" />
                  </ValidationTechnicalProfiles>
                  <UseTechnicalProfileForSessionManagement ReferenceId="SM-AAD" />
                </TechnicalProfile>
                <TechnicalProfile Id="Stamp">
                  <Protocol Name="Proprietary" Handler="\(transformation)" />
                  <OutputClaims><OutputClaim ClaimTypeReferenceId="stamp" /></OutputClaims>
                  <OutputClaimsTransformations><OutputClaimsTransformation ReferenceId="StampIt" /></OutputClaimsTransformations>
                </TechnicalProfile>
              </TechnicalProfiles></ClaimsProvider></ClaimsProviders>
              <UserJourneys><UserJourney Id="Engine"><OrchestrationSteps>
                <OrchestrationStep Order="1" Type="CombinedSignInAndSignUp" ContentDefinitionReferenceId="api.signuporsignin">
                  <ClaimsProviderSelections><ClaimsProviderSelection ValidationClaimsExchangeId="Local" /></ClaimsProviderSelections>
                  <ClaimsExchanges><ClaimsExchange Id="Local" TechnicalProfileReferenceId="SelfAsserted-LocalAccountSignin-Email" />
                  </ClaimsExchanges>
                </OrchestrationStep>
                <OrchestrationStep Order="2" Type="ClaimsExchange">
                  <Preconditions><Precondition Type="ClaimsExist" ExecuteActionsIf="true"><Value>objectId</Value>
                    <Action>SkipThisOrchestrationStep</Action></Precondition></Preconditions>
                  <ClaimsExchanges><ClaimsExchange Id="SignUpWithLogonEmailExchange" TechnicalProfileReferenceId="SignUp-WithControls" />
                  </ClaimsExchanges>
                </OrchestrationStep>
                <OrchestrationStep Order="3" Type="InvokeSubJourney">
                  <JourneyList><Candidate SubJourneyReferenceId="ReadAndStamp" /></JourneyList>
                </OrchestrationStep>
                <OrchestrationStep Order="4" Type="SendClaims" CpimIssuerTechnicalProfileReferenceId="JwtIssuer" />
              </OrchestrationSteps></UserJourney></UserJourneys>
              <SubJourneys><SubJourney Id="ReadAndStamp" Type="Call"><OrchestrationSteps>
                <OrchestrationStep Order="1" Type="ClaimsExchange">
                  <ClaimsExchanges><ClaimsExchange Id="Read" TechnicalProfileReferenceId="AAD-UserReadUsingObjectId" /></ClaimsExchanges>
                </OrchestrationStep>
                <OrchestrationStep Order="2" Type="ClaimsExchange">
                  <ClaimsExchanges><ClaimsExchange Id="Stamp" TechnicalProfileReferenceId="Stamp" /></ClaimsExchanges>
                </OrchestrationStep>
              </OrchestrationSteps></SubJourney></SubJourneys>
              <RelyingParty>
                <DefaultUserJourney ReferenceId="Engine" />
                <TechnicalProfile Id="PolicyProfile">
                  <Protocol Name="OpenIdConnect" />
                  <OutputClaims>
                    <OutputClaim ClaimTypeReferenceId="objectId" PartnerClaimType="sub" />
                    <OutputClaim ClaimTypeReferenceId="email" />
                    <OutputClaim ClaimTypeReferenceId="displayName" PartnerClaimType="name" />
                    <OutputClaim ClaimTypeReferenceId="stamp" />
                  </OutputClaims>
                  <SubjectNamingInfo ClaimType="sub" />
                </TechnicalProfile>
              </RelyingParty>
            </TrustFrameworkPolicy>
            """
    }

    static func tenant(_ endpoint: ConnectorEndpoint) async throws -> TestTenant {
        var seed = EmulatorSeed.default
        seed.tenant.policyKeyValues = ["B2C_1A_MailApiKey": apiKey]
        let t = try await TestTenant.start(seed: seed)
        try t.emulator.customPolicies.load(directory: CustomPolicyTests.examples)
        let dir = try CustomPolicyTests.folder()
        defer { try? FileManager.default.removeItem(at: dir) }
        try Data(enginePolicy(endpoint.http).utf8).write(to: dir.appendingPathComponent("Engine.xml"))
        try t.emulator.customPolicies.load(directory: dir)
        return t
    }

    @Test func displayControlsVerifyByBothCodeServicesThenASubJourneyRunsBeforeTheToken() async throws {
        let endpoint = try await ConnectorEndpoint()
        defer { endpoint.stop() }
        let t = try await Self.tenant(endpoint)
        defer { Task { await t.stop() } }
        let b = Browser(t)
        let pkce = PKCE()
        let page = try await b.follow(try await b.get(authorizeURL(policy: Self.policy, pkce: pkce)), link: "createAccount")
        // B2C's display-control markup: the controls' buttons, no code field until a code is sent.
        for id in ["emailVerificationControl_but_send_code", "backupControl_but_send_code", "email", "backupEmail", "newPassword"] {
            #expect(page.body.contains("id=\"\(id)\""), "no #\(id) in \(page.body.prefix(900))")
        }
        #expect(!page.body.contains("id=\"verificationCode\""))
        let gina = "gina.controls@example.com", backup = "gina.backup@example.com"
        let fields = ["newPassword": "Gina-2026-pw!", "reenterPassword": "Gina-2026-pw!", "displayName": "Gina"]
        let early = try await b.submit(page, form: "attributeVerification", fields.merging(["email": gina, "step": "continue"]) { $1 })
        #expect(early.body.contains("Please verify email address before you continue."), "\(early.body.prefix(900))")

        // B2C's own email service: the code to the outbox; a wrong code is the control's error, the right one verifies.
        let sent = try await b.submit(early, form: "attributeVerification", ["email": gina, "step": "emailVerificationControl:SendCode"])
        #expect(sent.body.contains("id=\"emailVerificationControl_but_verify_code\"") && sent.body.contains("id=\"verificationCode\""))
        let code = try await t.latestCode(to: gina)
        let wrong = try await b.submit(
            sent, form: "attributeVerification",
            ["verificationCode": code == "000000" ? "111111" : "000000", "step": "emailVerificationControl:VerifyCode"])
        #expect(wrong.body.contains("id=\"emailVerificationControl_error_message\"") && wrong.body.contains("That code is incorrect"))
        let verified = try await b.submit(
            wrong, form: "attributeVerification", ["verificationCode": code, "step": "emailVerificationControl:VerifyCode"])
        #expect(verified.body.contains("id=\"emailVerificationControl_success_message\""), "\(verified.body.prefix(900))")

        // The OTP service: its code goes to the app's mail API as the GenerateJson body, with the policy key's header.
        let otpSent = try await b.submit(
            verified, form: "attributeVerification", ["backupEmail": backup, "step": "backupControl:SendCode"])
        #expect(otpSent.body.contains("id=\"backupControl_but_verify_code\""), "\(otpSent.body.prefix(900))")
        let mail = try #require(try await endpoint.received(t).last)
        #expect(mail["apiKey"]?.stringValue == Self.apiKey && mail["path"]?.stringValue == "/none/mail", "\(mail)")
        let personalization = mail["body"]?["personalizations"]?.arrayValue?.first
        #expect(personalization?["to"]?.arrayValue?.first?["email"]?.stringValue == backup && mail["body"]?["template_id"] == "d-otp")
        let otp = try #require(personalization?["dynamic_template_data"]?["otp"]?.stringValue)
        #expect(otp.count == 8 && otp.allSatisfy(\.isNumber), "\(otp)")
        let otpVerified = try await b.submit(
            otpSent, form: "attributeVerification", ["verificationCode": otp, "step": "backupControl:VerifyCode"])
        #expect(otpVerified.body.contains("id=\"backupControl_success_message\""), "\(otpVerified.body.prefix(900))")
        // The verified address cannot change behind the control's back: the page's email is the one verified.
        let done = try await b.submit(
            otpVerified, form: "attributeVerification", fields.merging(["email": "someone.else@example.com", "step": "continue"]) { $1 })
        let authCode = try #require(done.redirectParams["code"], "\(done.status) \(done.body.prefix(900))")
        let id = try claims(
            try await t.token(Self.policy, redeemForm(code: authCode, verifier: pkce.verifier)).json["id_token"]?.stringValue)
        let user = try #require(try t.emulator.store.user(email: gina))
        #expect(id["sub"]?.stringValue == user.oid && id["email"]?.stringValue == gina && id["stamp"]?.stringValue == "via-subjourney")
        #expect(try t.emulator.store.user(email: "someone.else@example.com") == nil)

        // The recorder: the controls' actions, the sub-journey's steps under its name, the OTP never in clear.
        let list = try await t.admin(.GET, "/journeys?policy=\(Self.policy)")
        let journeyID = try #require(list.json["journeys"]?.arrayValue?.first?["id"]?.stringValue)
        let journey = try await t.admin(.GET, "/journeys/\(journeyID)")
        let names = journey.json["events"]?.arrayValue?.compactMap { $0["name"]?.stringValue } ?? []
        for name in [
            "display control emailVerificationControl: SendCode", "display control emailVerificationControl: VerifyCode refused",
            "display control backupControl: VerifyCode", "sub-journey ReadAndStamp entered",
            "sub-journey ReadAndStamp, orchestration step 2: ClaimsExchange", "sub-journey ReadAndStamp ended",
        ] {
            #expect(names.contains(name), "no '\(name)' in \(names)")
        }
        // A transformation's inputs, parameters and output, by their transformation names.
        let mailEvent = journey.json["events"]?.arrayValue?.first { $0["name"] == "claims transformation MakeOtpMail" }
        #expect(
            mailEvent?["detail"]?["inputs"]?["personalizations.0.to.0.email"]?.stringValue == backup, "\(String(describing: mailEvent))")
        #expect(mailEvent?["detail"]?["parameters"]?["template_id"] == "d-otp" && mailEvent?["detail"]?["outputs"]?["outputClaim"] != nil)
        let leaks = (journey.json["events"]?.arrayValue ?? []).filter { $0.serialized().contains(otp) || $0.serialized().contains(code) }
        #expect(leaks.isEmpty, "a code is in the recorder: \(leaks)")
    }

    @Test func theOTPServiceCountsWrongAnswersAndACodeIsSpentOnce() async throws {
        let endpoint = try await ConnectorEndpoint()
        defer { endpoint.stop() }
        let t = try await Self.tenant(endpoint)
        defer { Task { await t.stop() } }
        let b = Browser(t)
        let page = try await b.follow(try await b.get(authorizeURL(policy: Self.policy)), link: "createAccount")
        let sent = try await b.submit(
            page, form: "attributeVerification", ["backupEmail": "h@example.com", "step": "backupControl:SendCode"])
        let otp = try #require(
            try await endpoint.received(t).last?["body"]?["personalizations"]?.arrayValue?.first?[
                "dynamic_template_data"]?["otp"]?.stringValue)
        let first = try await b.submit(sent, form: "attributeVerification", ["verificationCode": "1", "step": "backupControl:VerifyCode"])
        #expect(first.body.contains("Wrong code has been entered"), "\(first.body.prefix(900))")
        // NumRetryAttempts 2: the second wrong answer uses the code up; the right one then no longer works.
        let second = try await b.submit(
            first, form: "attributeVerification", ["verificationCode": "2", "step": "backupControl:VerifyCode"])
        #expect(second.body.contains("wrong code too many times"), "\(second.body.prefix(900))")
        let late = try await b.submit(second, form: "attributeVerification", ["verificationCode": otp, "step": "backupControl:VerifyCode"])
        #expect(late.body.contains("wrong code too many times") && !late.body.contains("id=\"backupControl_success_message\""))
        // An action the control does not have, or a control the page does not have, is refused.
        let bogus = try await b.submit(late, form: "attributeVerification", ["step": "backupControl:Explode"])
        #expect(bogus.body.contains("has no action"), "\(bogus.status) \(bogus.body.prefix(600))")
    }

    /// `NullClaim` takes its output claims out of the bag (a claim without a value, not an empty string), as the reference
    /// page's `SetTOSToNull` does; the other claims stay.
    @Test func nullClaimTakesItsClaimOutOfTheBag() throws {
        let dir = try CustomPolicyTests.folder("TrustFrameworkBase.xml") {
            $0.replacingOccurrences(
                of: "<ClaimsTransformations>",
                with: """
                    <ClaimsTransformations><ClaimsTransformation Id="ClearEmail" TransformationMethod="NullClaim"><OutputClaims>\
                    <OutputClaim ClaimTypeReferenceId="email" TransformationClaimType="claim_to_null" />\
                    </OutputClaims></ClaimsTransformation>
                    """)
        }
        defer { try? FileManager.default.removeItem(at: dir) }
        let policy = try PolicySet.load(directory: dir, tenant: CustomPolicyTests.tenant).effective("B2C_1A_signup_signin")
        let run = PolicyRun(
            policy: policy,
            resolvers: ClaimResolvers.of(
                tenantName: "contoso.onmicrosoft.com", tenantId: tenantID, policyId: "B2C_1A_signup_signin", request: [:], language: "en",
                correlationId: "c", now: Date()),
            store: try EmulatorStore.inMemory(), tenantName: "contoso.onmicrosoft.com", now: 0, note: { _, _ in })
        var bag: [String: ClaimValue] = ["email": .string("pia@contoso.com"), "givenName": .string("Pia")]
        try run.transform("ClearEmail", &bag)
        #expect(bag == ["givenName": .string("Pia")])
    }

    /// A REST API's credentials come from the tenant's policy keys; a key without a value is a clear error, and the
    /// values never reach the recorder.
    @Test func restCredentialsComeFromPolicyKeyValues() throws {
        let base = try PolicySet.load(directory: CustomPolicyTests.examples, tenant: CustomPolicyTests.tenant).effective(
            "B2C_1A_signup_signin")
        func profile(_ auth: String, _ keys: String) throws -> TechnicalProfile {
            let xml = """
                <TechnicalProfile Id="REST"><Protocol Name="Proprietary" Handler="Web.TPEngine.Providers.RestfulProvider, Web.TPEngine" />
                <Metadata><Item Key="AuthenticationType">\(auth)</Item></Metadata>
                <CryptographicKeys>\(keys)</CryptographicKeys></TechnicalProfile>
                """
            let node = try PolicyXML.parse(Data(xml.utf8))
            return TechnicalProfile(id: "REST", node: node, handler: .restful)
        }
        let run = PolicyRun(
            policy: base,
            resolvers: ClaimResolvers.of(
                tenantName: "contoso.onmicrosoft.com", tenantId: tenantID, policyId: "B2C_1A_signup_signin", request: [:], language: "en",
                correlationId: "c", now: Date()),
            store: try EmulatorStore.inMemory(), tenantName: "contoso.onmicrosoft.com", now: 0, note: { _, _ in },
            policyKeys: [
                "B2C_1A_RestUser": "connector", "B2C_1A_RestPassword": "s3cret-Passw0rd", "B2C_1A_RestToken": "static-connector-token",
            ])
        let basic = try run.authorization(
            try profile(
                "Basic",
                #"<Key Id="BasicAuthenticationUsername" StorageReferenceId="B2C_1A_RestUser" />"#
                    + #"<Key Id="BasicAuthenticationPassword" StorageReferenceId="b2c_1a_restpassword" />"#))
        #expect(basic.first?.1 == "Basic " + Data("connector:s3cret-Passw0rd".utf8).base64EncodedString())
        let bearer = try run.authorization(
            try profile("Bearer", #"<Key Id="BearerAuthenticationToken" StorageReferenceId="B2C_1A_RestToken" />"#))
        #expect(bearer.first?.1 == "Bearer static-connector-token")
        #expect(throws: CustomPolicyError.self) {
            try run.authorization(try profile("Bearer", #"<Key Id="BearerAuthenticationToken" StorageReferenceId="B2C_1A_NoValue" />"#))
        }
        // A client certificate without its key, or over http, is said before any call.
        #expect(
            throws: CustomPolicyError(
                code: "AADB2C90250",
                message: "The technical profile 'REST' authenticates with ClientCertificate and has no key 'ClientCertificate'.")
        ) { try run.clientTLS(try profile("ClientCertificate", ""), url: "https://api.example/") }
        #expect(throws: CustomPolicyError.self) {
            try run.clientTLS(
                try profile("ClientCertificate", #"<Key Id="ClientCertificate" StorageReferenceId="B2C_1A_RestToken" />"#),
                url: "http://api.example/")
        }
    }

    @Test func subJourneysThatCallEachOtherInACircleAreRefusedAtUpload() throws {
        let dir = try CustomPolicyTests.folder("SignUpOrSignin.xml") {
            $0.replacingOccurrences(
                of: "  <RelyingParty>",
                with: """
                      <SubJourneys>
                        <SubJourney Id="A" Type="Call"><OrchestrationSteps><OrchestrationStep Order="1" Type="InvokeSubJourney">
                          <JourneyList><Candidate SubJourneyReferenceId="B" /></JourneyList>
                          </OrchestrationStep></OrchestrationSteps></SubJourney>
                        <SubJourney Id="B" Type="Call"><OrchestrationSteps><OrchestrationStep Order="1" Type="InvokeSubJourney">
                          <JourneyList><Candidate SubJourneyReferenceId="A" /></JourneyList>
                          </OrchestrationStep></OrchestrationSteps></SubJourney>
                      </SubJourneys>
                      <RelyingParty>
                    """)
        }
        defer { try? FileManager.default.removeItem(at: dir) }
        #expect {
            try PolicySet.load(directory: dir, tenant: CustomPolicyTests.tenant)
        } throws: { error in
            "\(error)".contains("The sub-journeys form a cycle: A → B → A.") && "\(error)".contains("SignUpOrSignin.xml")
        }
    }

    /// A relying party over the example set that brands its sign-in page: its content definition's `LoadUri` is the
    /// developer's own template, and its `Localization` gives English and French words.
    static func brandedPolicy(_ url: String) -> String {
        func resources(_ language: String, _ button: String, _ label: String) -> String {
            """
            <LocalizedResources Id="api.signuporsignin.\(language)"><LocalizedStrings>
              <LocalizedString ElementType="UxElement" StringId="button_signin">\(button)</LocalizedString>
              <LocalizedString ElementType="ClaimType" ElementId="signInName" StringId="DisplayName">\(label)</LocalizedString>
            </LocalizedStrings></LocalizedResources>
            """
        }
        return """
            <TrustFrameworkPolicy xmlns="http://schemas.microsoft.com/online/cpim/schemas/2013/06" PolicySchemaVersion="0.3.0.0"
              TenantId="contoso.onmicrosoft.com" PolicyId="B2C_1A_branded">
              <BasePolicy><TenantId>contoso.onmicrosoft.com</TenantId><PolicyId>B2C_1A_TrustFrameworkExtensions</PolicyId></BasePolicy>
              <BuildingBlocks>
                <ContentDefinitions><ContentDefinition Id="api.signuporsignin">
                  <LoadUri>\(url)/layout/unified.html</LoadUri>
                  <LocalizedResourcesReferences>
                    <LocalizedResourcesReference Language="en" LocalizedResourcesReferenceId="api.signuporsignin.en" />
                    <LocalizedResourcesReference Language="fr" LocalizedResourcesReferenceId="api.signuporsignin.fr" />
                  </LocalizedResourcesReferences>
                </ContentDefinition></ContentDefinitions>
                <Localization Enabled="true">
                  <SupportedLanguages DefaultLanguage="en" MergeBehavior="ReplaceAll">
                    <SupportedLanguage>en</SupportedLanguage><SupportedLanguage>fr</SupportedLanguage>
                  </SupportedLanguages>
                  \(resources("en", "Log in now", "Your work email"))
                  \(resources("fr", "Se connecter maintenant", "Votre adresse professionnelle"))
                </Localization>
              </BuildingBlocks>
              <RelyingParty>
                <DefaultUserJourney ReferenceId="SignUpOrSignIn" />
                <TechnicalProfile Id="PolicyProfile">
                  <Protocol Name="OpenIdConnect" />
                  <OutputClaims><OutputClaim ClaimTypeReferenceId="objectId" PartnerClaimType="sub" /></OutputClaims>
                  <SubjectNamingInfo ClaimType="sub" />
                </TechnicalProfile>
              </RelyingParty>
            </TrustFrameworkPolicy>
            """
    }

    @Test func aContentDefinitionsLoadUriLaysOutThePageInTheLanguageAsked() async throws {
        let endpoint = try await ConnectorEndpoint()
        defer { endpoint.stop() }
        let t = try await TestTenant.start()
        defer { Task { await t.stop() } }
        try t.emulator.customPolicies.load(directory: CustomPolicyTests.examples)
        let dir = try CustomPolicyTests.folder()
        defer { try? FileManager.default.removeItem(at: dir) }
        try Data(Self.brandedPolicy(endpoint.http).utf8).write(to: dir.appendingPathComponent("Branded.xml"))
        try t.emulator.customPolicies.load(directory: dir)
        let english = try await Browser(t).get(authorizeURL(policy: "B2C_1A_branded"))
        // The developer's template around the tenant's fragment (its scripts and iframe taken out, as B2C does).
        #expect(
            english.body.contains("data-path=\"/layout/unified.html\"") && english.body.contains("contoso-panel"),
            "\(english.body.prefix(600))")
        #expect(english.body.contains("data-name=\"Unified\"") && !english.body.contains("<iframe"))
        #expect(english.body.contains(">Log in now<") && english.body.contains(">Your work email<"), "\(english.body)")
        let french = try await Browser(t).get(authorizeURL(policy: "B2C_1A_branded", extra: ["ui_locales": "fr-FR"]))
        #expect(french.body.contains(">Se connecter maintenant<") && french.body.contains(">Votre adresse professionnelle<"))
        // The example set's own relying party keeps the tenant's look and words.
        let plain = try await Browser(t).get(authorizeURL(policy: "B2C_1A_signup_signin"))
        #expect(!plain.body.contains("contoso-panel") && plain.body.contains(">Sign in<"))
        // A reference to localized resources the chain does not declare is refused at upload, naming it.
        let broken = Self.brandedPolicy(endpoint.http).replacingOccurrences(
            of: "LocalizedResourcesReferenceId=\"api.signuporsignin.fr\"",
            with: "LocalizedResourcesReferenceId=\"api.signuporsignin.de\"")
        #expect(throws: PolicyLoadError.self) { try t.emulator.customPolicies.upload(Data(broken.utf8), id: "B2C_1A_branded") }
    }

    /// A `ClaimsProviderSelection` step of buttons only is B2C's provider selection page (`data-name="IdpSelections"`), laid
    /// out by the policy's `providerselection` content definition; a button takes the person to its exchange.
    @Test func aSelectionOfProvidersIsTheProviderSelectionPage() async throws {
        let endpoint = try await ConnectorEndpoint()
        defer { endpoint.stop() }
        let t = try await TestTenant.start()
        defer { Task { await t.stop() } }
        let dir = try CustomPolicyTests.folder()
        defer { try? FileManager.default.removeItem(at: dir) }
        let pick = """
            <TrustFrameworkPolicy xmlns="http://schemas.microsoft.com/online/cpim/schemas/2013/06" PolicySchemaVersion="0.3.0.0"
              TenantId="contoso.onmicrosoft.com" PolicyId="B2C_1A_pick">
              <BasePolicy><TenantId>contoso.onmicrosoft.com</TenantId><PolicyId>B2C_1A_TrustFrameworkExtensions</PolicyId></BasePolicy>
              <BuildingBlocks><ContentDefinitions><ContentDefinition Id="api.idpselections">
                <LoadUri>\(endpoint.http)/layout/pick.html</LoadUri>
                <DataUri>urn:com:microsoft:aad:b2c:elements:contract:providerselection:1.2.1</DataUri>
              </ContentDefinition></ContentDefinitions></BuildingBlocks>
              <UserJourneys><UserJourney Id="Pick"><OrchestrationSteps>
                <OrchestrationStep Order="1" Type="ClaimsProviderSelection" ContentDefinitionReferenceId="api.idpselections">
                  <ClaimsProviderSelections>
                    <ClaimsProviderSelection TargetClaimsExchangeId="LocalExchange" />
                    <ClaimsProviderSelection TargetClaimsExchangeId="ResetExchange" />
                  </ClaimsProviderSelections>
                </OrchestrationStep>
                <OrchestrationStep Order="2" Type="ClaimsExchange">
                  <ClaimsExchanges>
                    <ClaimsExchange Id="LocalExchange" TechnicalProfileReferenceId="SelfAsserted-LocalAccountSignin-Email" />
                    <ClaimsExchange Id="ResetExchange" TechnicalProfileReferenceId="LocalAccountDiscoveryUsingEmailAddress" />
                  </ClaimsExchanges>
                </OrchestrationStep>
                <OrchestrationStep Order="3" Type="SendClaims" CpimIssuerTechnicalProfileReferenceId="JwtIssuer" />
              </OrchestrationSteps></UserJourney></UserJourneys>
              <RelyingParty>
                <DefaultUserJourney ReferenceId="Pick" />
                <TechnicalProfile Id="PolicyProfile">
                  <Protocol Name="OpenIdConnect" />
                  <OutputClaims><OutputClaim ClaimTypeReferenceId="objectId" PartnerClaimType="sub" /></OutputClaims>
                  <SubjectNamingInfo ClaimType="sub" />
                </TechnicalProfile>
              </RelyingParty>
            </TrustFrameworkPolicy>
            """
        try Data(pick.utf8).write(to: dir.appendingPathComponent("Pick.xml"))
        try t.emulator.customPolicies.load(directory: dir)
        let b = Browser(t)
        let page = try await b.get(authorizeURL(policy: "B2C_1A_pick"))
        #expect(page.status == 200 && page.body.contains(#"data-name="IdpSelections""#), "\(page.body.prefix(800))")
        #expect(page.body.contains(#"data-path="/layout/pick.html""#), "laid out by the providerselection definition")
        #expect(page.body.contains(#"id="LocalExchange""#) && page.body.contains(">Local Account Signin<"), "\(page.body)")
        #expect(page.body.contains(#"id="ResetExchange""#) && page.body.contains(">Reset your password<"))
        #expect(page.form("localAccountForm") == nil, "buttons only")
        let chosen = try await b.submit(page, form: "idp_ResetExchange", [:])
        #expect(chosen.status == 200 && chosen.body.contains(#"data-name="SelfAsserted""#), "\(chosen.status) \(chosen.body.prefix(800))")
    }

    /// An `OpenIdConnect` technical profile to a provider of your own (here another tenant): the tenant is its relying party
    /// (code flow, PKCE, the client secret from a policy key's value, the id token checked), the provider's claims go into
    /// the bag by the profile's partner names, and the journey links the person to this directory's account by email.
    static func upstreamPolicy(_ discovery: String) -> String {
        """
        <TrustFrameworkPolicy xmlns="http://schemas.microsoft.com/online/cpim/schemas/2013/06" PolicySchemaVersion="0.3.0.0"
          TenantId="contoso.onmicrosoft.com" PolicyId="B2C_1A_upstream">
          <BasePolicy><TenantId>contoso.onmicrosoft.com</TenantId><PolicyId>B2C_1A_TrustFrameworkExtensions</PolicyId></BasePolicy>
          <ClaimsProviders><ClaimsProvider><DisplayName>Upstream</DisplayName><TechnicalProfiles>
            <TechnicalProfile Id="Upstream-OpenIdConnect">
              <DisplayName>Upstream tenant</DisplayName>
              <Protocol Name="OpenIdConnect" />
              <Metadata>
                <Item Key="METADATA">\(discovery)</Item>
                <Item Key="client_id">\(EmulatorSeed.defaultWebAppID)</Item>
                <Item Key="response_types">code</Item>
                <Item Key="scope">openid</Item>
                <Item Key="response_mode">form_post</Item>
              </Metadata>
              <CryptographicKeys><Key Id="client_secret" StorageReferenceId="B2C_1A_UpstreamSecret" /></CryptographicKeys>
              <OutputClaims>
                <OutputClaim ClaimTypeReferenceId="email" />
                <OutputClaim ClaimTypeReferenceId="displayName" PartnerClaimType="name" />
              </OutputClaims>
            </TechnicalProfile>
          </TechnicalProfiles></ClaimsProvider></ClaimsProviders>
          <UserJourneys><UserJourney Id="Upstream"><OrchestrationSteps>
            <OrchestrationStep Order="1" Type="ClaimsProviderSelection">
              <ClaimsProviderSelections><ClaimsProviderSelection TargetClaimsExchangeId="UpstreamExchange" /></ClaimsProviderSelections>
            </OrchestrationStep>
            <OrchestrationStep Order="2" Type="ClaimsExchange">
              <ClaimsExchanges>
                <ClaimsExchange Id="UpstreamExchange" TechnicalProfileReferenceId="Upstream-OpenIdConnect" />
              </ClaimsExchanges>
            </OrchestrationStep>
            <OrchestrationStep Order="3" Type="ClaimsExchange">
              <ClaimsExchanges><ClaimsExchange Id="Link" TechnicalProfileReferenceId="AAD-UserReadUsingEmailAddress" /></ClaimsExchanges>
            </OrchestrationStep>
            <OrchestrationStep Order="4" Type="SendClaims" CpimIssuerTechnicalProfileReferenceId="JwtIssuer" />
          </OrchestrationSteps></UserJourney></UserJourneys>
          <RelyingParty>
            <DefaultUserJourney ReferenceId="Upstream" />
            <TechnicalProfile Id="PolicyProfile">
              <Protocol Name="OpenIdConnect" />
              <OutputClaims>
                <OutputClaim ClaimTypeReferenceId="objectId" PartnerClaimType="sub" />
                <OutputClaim ClaimTypeReferenceId="email" />
                <OutputClaim ClaimTypeReferenceId="displayName" PartnerClaimType="name" />
              </OutputClaims>
              <SubjectNamingInfo ClaimType="sub" />
            </TechnicalProfile>
          </RelyingParty>
        </TrustFrameworkPolicy>
        """
    }

    @Test func anOpenIdConnectProfileSignsInAtAProviderOfYourOwn() async throws {
        try await TestTenant.with(seed: FederationTests.upstreamSeed) { upstream in
            var seed = EmulatorSeed.default
            seed.tenant.policyKeyValues = ["B2C_1A_UpstreamSecret": EmulatorSeed.defaultWebAppSecret]
            let local = "0c0c0000-5eed-4c0c-8000-00000000beef"
            seed.users.append(
                .init(
                    oid: local, email: "uma@upstream.test", password: "Local-2026-pw!", displayName: "Uma Here", givenName: "Uma",
                    surname: "H"))
            try await TestTenant.with(seed: seed) { t in
                try t.emulator.customPolicies.load(directory: CustomPolicyTests.examples)
                let dir = try CustomPolicyTests.folder()
                defer { try? FileManager.default.removeItem(at: dir) }
                let discovery = upstream.base + "/contoso.onmicrosoft.com/B2C_1_susi/v2.0/.well-known/openid-configuration"
                try Data(Self.upstreamPolicy(discovery).utf8).write(to: dir.appendingPathComponent("Upstream.xml"))
                try t.emulator.customPolicies.load(directory: dir)
                // One provider to choose: straight to it, with PKCE and a nonce.
                let sent = try await Browser(t).get(authorizeURL(policy: "B2C_1A_upstream"))
                #expect(sent.location?.hasPrefix(upstream.base + "/contoso.onmicrosoft.com/b2c_1_susi/oauth2/v2.0/authorize?") == true)
                #expect(
                    sent.redirectParams["code_challenge_method"] == "S256"
                        && sent.redirectParams["client_id"] == EmulatorSeed.defaultWebAppID)
                let uma = ScriptedBrowser.Persona(email: "uma@upstream.test", password: "Uma-dev-2026!")
                let pkce = PKCE()
                let code = try await scriptedCode(t.base + authorizeURL(policy: "B2C_1A_upstream", pkce: pkce), as: uma)
                let c = try claims(
                    try await t.token("B2C_1A_upstream", redeemForm(code: code, verifier: pkce.verifier)).json["id_token"]?.stringValue)
                // This directory's account (linked by the provider's email), the provider's name for the person.
                #expect(c["sub"]?.stringValue == local && c["email"] == "uma@upstream.test" && c["name"] == "Uma Up", "\(c)")
                // The secret went to the provider's token endpoint: the upstream tenant redeemed a confidential client's code.
                #expect(
                    try upstream.emulator.store.requests.entries().contains {
                        $0.grantType == "authorization_code" && $0.clientId == EmulatorSeed.defaultWebAppID && $0.outcome == "ok"
                    })
            }
        }
    }
}
