import B2CKit
import B2CProtocol
import Foundation
import Testing

@testable import B2CEmulator

/// A custom policy's `SAML2` technical profile: the tenant is the service provider of a third-party SAML identity
/// provider (`Tests/interop/saml_idp.py`), the assertion's subject and attributes go into the claims bag by the profile's
/// partner names, and the journey links the person to this directory's account by email.
@Suite(.serialized) struct CustomPolicyFederationTests {
    static func samlPolicy(_ metadata: String, signing: String = #"<Item Key="WantsSignedRequests">false</Item>"#) -> String {
        let ws = "http://schemas.xmlsoap.org/ws/2005/05/identity/claims/"
        return """
            <TrustFrameworkPolicy xmlns="http://schemas.microsoft.com/online/cpim/schemas/2013/06" PolicySchemaVersion="0.3.0.0"
              TenantId="contoso.onmicrosoft.com" PolicyId="B2C_1A_saml">
              <BasePolicy><TenantId>contoso.onmicrosoft.com</TenantId><PolicyId>B2C_1A_TrustFrameworkExtensions</PolicyId></BasePolicy>
              <BuildingBlocks><ClaimsSchema>
                <ClaimType Id="issuerUserId"><DisplayName>Subject</DisplayName><DataType>string</DataType></ClaimType>
              </ClaimsSchema></BuildingBlocks>
              <ClaimsProviders><ClaimsProvider><DisplayName>Contoso SAML</DisplayName><TechnicalProfiles>
                <TechnicalProfile Id="Contoso-SAML2">
                  <DisplayName>Contoso SAML</DisplayName>
                  <Protocol Name="SAML2" />
                  <Metadata><Item Key="PartnerEntity">\(metadata)</Item>\(signing)</Metadata>
                  <OutputClaims>
                    <OutputClaim ClaimTypeReferenceId="issuerUserId" PartnerClaimType="assertionSubjectName" />
                    <OutputClaim ClaimTypeReferenceId="email" PartnerClaimType="\(ws)emailaddress" />
                    <OutputClaim ClaimTypeReferenceId="givenName" PartnerClaimType="\(ws)givenname" />
                  </OutputClaims>
                  <UseTechnicalProfileForSessionManagement ReferenceId="SM-Saml-idp" />
                </TechnicalProfile>
                <TechnicalProfile Id="SM-Saml-idp">
                  <DisplayName>The SAML identity provider's session</DisplayName>
                  <Protocol Name="Proprietary" Handler="Web.TPEngine.SSO.SamlSSOSessionProvider, Web.TPEngine" />
                  <Metadata><Item Key="IncludeSessionIndex">false</Item><Item Key="RegisterServiceProviders">false</Item></Metadata>
                </TechnicalProfile>
              </TechnicalProfiles></ClaimsProvider></ClaimsProviders>
              <UserJourneys><UserJourney Id="Saml"><OrchestrationSteps>
                <OrchestrationStep Order="1" Type="ClaimsProviderSelection">
                  <ClaimsProviderSelections><ClaimsProviderSelection TargetClaimsExchangeId="ContosoExchange" /></ClaimsProviderSelections>
                </OrchestrationStep>
                <OrchestrationStep Order="2" Type="ClaimsExchange">
                  <ClaimsExchanges><ClaimsExchange Id="ContosoExchange" TechnicalProfileReferenceId="Contoso-SAML2" /></ClaimsExchanges>
                </OrchestrationStep>
                <OrchestrationStep Order="3" Type="ClaimsExchange">
                  <ClaimsExchanges>
                    <ClaimsExchange Id="Link" TechnicalProfileReferenceId="AAD-UserReadUsingEmailAddress" />
                  </ClaimsExchanges>
                </OrchestrationStep>
                <OrchestrationStep Order="4" Type="SendClaims" CpimIssuerTechnicalProfileReferenceId="JwtIssuer" />
              </OrchestrationSteps></UserJourney></UserJourneys>
              <RelyingParty>
                <DefaultUserJourney ReferenceId="Saml" />
                <TechnicalProfile Id="PolicyProfile">
                  <Protocol Name="OpenIdConnect" />
                  <OutputClaims>
                    <OutputClaim ClaimTypeReferenceId="objectId" PartnerClaimType="sub" />
                    <OutputClaim ClaimTypeReferenceId="email" />
                    <OutputClaim ClaimTypeReferenceId="givenName" PartnerClaimType="given_name" />
                    <OutputClaim ClaimTypeReferenceId="issuerUserId" PartnerClaimType="saml_subject" />
                  </OutputClaims>
                  <SubjectNamingInfo ClaimType="sub" />
                </TechnicalProfile>
              </RelyingParty>
            </TrustFrameworkPolicy>
            """
    }

    @Test func aSAML2ProfileSignsInAtAThirdPartyIdentityProvider() async throws {
        let idp = try await SAMLTestIdP()
        defer { idp.stop() }
        var seed = EmulatorSeed.default
        let local = "0c0c0000-5eed-4c0c-8000-0000000005a1"
        seed.users.append(
            .init(oid: local, email: "sam@saml.test", password: "Local-2026-pw!", displayName: "Sam Here", givenName: "S", surname: "H"))
        try await TestTenant.with(seed: seed) { t in
            try t.emulator.customPolicies.load(directory: CustomPolicyTests.examples)
            let dir = try CustomPolicyTests.folder()
            defer { try? FileManager.default.removeItem(at: dir) }
            try Data(Self.samlPolicy(idp.base + "/metadata").utf8).write(to: dir.appendingPathComponent("Saml.xml"))
            try t.emulator.customPolicies.load(directory: dir)
            let sam = ScriptedBrowser.Persona(email: "sam@saml.test", password: "unused")
            let pkce = PKCE()
            let code = try await scriptedCode(t.base + authorizeURL(policy: "B2C_1A_saml", pkce: pkce), as: sam)
            let c = try claims(
                try await t.token("B2C_1A_saml", redeemForm(code: code, verifier: pkce.verifier)).json["id_token"]?.stringValue)
            #expect(c["sub"]?.stringValue == local && c["email"] == "sam@saml.test" && c["given_name"] == "Sam", "\(c)")
            #expect(c["saml_subject"]?.stringValue?.isEmpty == false, "\(c)")
            // The provider received an AuthnRequest from the custom policy's entity id; the metadata an IdP administrator
            // imports names the profile.
            let last = try await t.get(idp.base + "/last").json
            #expect(last["issuer"] == .string(t.base + "/contoso.onmicrosoft.com/B2C_1A_saml"), "\(last)")
            let md = try await t.get("/contoso.onmicrosoft.com/B2C_1A_saml/samlp/metadata?idptp=Contoso-SAML2")
            #expect(md.status == 200 && md.body.contains("AssertionConsumerService"), "\(md.body.prefix(300))")
            // One provider to choose from: a new sign-in goes straight to it, without a page of the tenant.
            let b = Browser(t)
            let sent = try await b.get(authorizeURL(policy: "B2C_1A_saml"))
            #expect(sent.location?.hasPrefix(idp.base) == true, "\(sent.status) \(sent.body.prefix(300))")
        }
    }

    /// B2C signs a SAML profile's requests unless `WantsSignedRequests` is false (HTTP-Redirect binding: `SigAlg`, then
    /// `Signature` over the query), with `XmlSignatureAlgorithm` (Sha1 by default); its metadata says
    /// `AuthnRequestsSigned` and carries the certificate. The test IdP (Python's cryptography) trusts that certificate and
    /// refuses a request without a valid signature, as an IdP that wants signed requests does.
    @Test func aSAML2ProfileSignsItsRequestsAsTheMetadataSays() async throws {
        let idp = try await SAMLTestIdP()
        defer { idp.stop() }
        var seed = EmulatorSeed.default
        seed.users.append(
            .init(
                oid: "0c0c0000-5eed-4c0c-8000-0000000005a2", email: "sam@saml.test", password: "Local-2026-pw!", displayName: "Sam",
                givenName: "S", surname: "H"))
        try await TestTenant.with(seed: seed) { t in
            try t.emulator.customPolicies.load(directory: CustomPolicyTests.examples)
            let dir = try CustomPolicyTests.folder()
            defer { try? FileManager.default.removeItem(at: dir) }
            func load(_ signing: String) throws {
                try Data(Self.samlPolicy(idp.base + "/metadata", signing: signing).utf8).write(to: dir.appendingPathComponent("Saml.xml"))
                try t.emulator.customPolicies.load(directory: dir)
            }
            try load("")  // B2C's defaults: signed, Sha1
            let md = try await t.get("/contoso.onmicrosoft.com/B2C_1A_saml/samlp/metadata?idptp=Contoso-SAML2")
            #expect(md.body.contains("AuthnRequestsSigned=\"true\""), "\(md.body)")
            let certificate = try #require(
                md.body.components(separatedBy: "<X509Certificate>").dropFirst().first?.components(separatedBy: "<").first, "\(md.body)")
            let trusted = try await t.get(idp.base + "/trust?" + FormEncoding.encode([("cert", certificate)]))
            #expect(trusted.status == 200)
            let sam = ScriptedBrowser.Persona(email: "sam@saml.test", password: "unused")
            for (signing, uri) in [
                ("", "http://www.w3.org/2000/09/xmldsig#rsa-sha1"),
                (#"<Item Key="XmlSignatureAlgorithm">Sha256</Item>"#, "http://www.w3.org/2001/04/xmldsig-more#rsa-sha256"),
            ] {
                try load(signing)
                _ = try await scriptedCode(t.base + authorizeURL(policy: "B2C_1A_saml", pkce: PKCE()), as: sam)
                let last = try await t.get(idp.base + "/last").json
                #expect(last["sigAlg"]?.stringValue == uri && last["signature"] == "valid", "\(last)")
            }
            // Unsigned requests: the metadata says so, and this IdP refuses them.
            try load(#"<Item Key="WantsSignedRequests">false</Item>"#)
            let unsignedMetadata = try await t.get("/contoso.onmicrosoft.com/B2C_1A_saml/samlp/metadata?idptp=Contoso-SAML2")
            #expect(unsignedMetadata.body.contains("AuthnRequestsSigned=\"false\"") && !unsignedMetadata.body.contains("X509Certificate"))
            let sent = try await Browser(t).get(authorizeURL(policy: "B2C_1A_saml"))
            let refused = try await t.get(try #require(sent.location, "\(sent.status) \(sent.body.prefix(300))"))
            #expect(refused.status == 403 && refused.body.contains("no SigAlg and Signature"), "\(refused.status) \(refused.body)")
            // An algorithm B2C does not know is refused at upload, naming the item.
            #expect(throws: PolicyLoadError.self) { try load(#"<Item Key="XmlSignatureAlgorithm">Md5</Item>"#) }
        }
    }
}
