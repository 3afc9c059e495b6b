import B2CKit
import B2CProtocol
import Foundation
import Testing

@testable import B2CEmulator

/// A custom policy's pages beyond the example set's, over real HTTP: a self-asserted page of every input type (a drop-down,
/// radio buttons, a read-only value, an email box; each with its claim type's id), predicates (`MatchesRegex`,
/// `IsDateRange`), and the policy's own layouts (`LoadUri`) for its self-asserted and error pages, with scripts only when
/// the relying party allows them (`UserJourneyBehaviors/ScriptExecution`).
@Suite(.serialized) struct CustomPolicyPageTests {
    static let policy = "B2C_1A_preferences"

    /// After the local sign-in, a page of the person's preferences, whose claims reach the token.
    static var preferencesPolicy: String {
        let handler = CustomPolicyOrchestrationTests.handler("SelfAssertedAttributeProvider")
        func claim(_ id: String, _ name: String, _ input: String, type: String = "string", _ more: String = "") -> String {
            "<ClaimType Id=\"\(id)\"><DisplayName>\(name)</DisplayName><DataType>\(type)</DataType>\(more)"
                + "<UserInputType>\(input)</UserInputType></ClaimType>"
        }
        let predicate = { (id: String, method: String, help: String, parameters: String) in
            "<Predicate Id=\"\(id)\" Method=\"\(method)\" HelpText=\"\(help)\"><Parameters>\(parameters)</Parameters></Predicate>"
        }
        let validation = { (id: String, predicate: String) in
            "<PredicateValidation Id=\"\(id)\"><PredicateGroups><PredicateGroup Id=\"\(id)Group\"><PredicateReferences>"
                + "<PredicateReference Id=\"\(predicate)\" /></PredicateReferences></PredicateGroup></PredicateGroups>"
                + "</PredicateValidation>"
        }
        let outputs = ["country", "plan", "memberSince", "contactEmail", "nickname", "birthDate"]
        return CustomPolicyOrchestrationTests.relyingParty(
            policy,
            blocks: """
                <ClaimsSchema>
                  \(claim("country", "Country", "DropdownSingleSelect", """
                    <Restriction><Enumeration Text="France" Value="FR" /><Enumeration Text="Japan" Value="JP" /></Restriction>
                    """))
                  \(claim("plan", "Plan", "RadioSingleSelect", """
                    <Restriction><Enumeration Text="Basic" Value="basic" /><Enumeration Text="Premium" Value="premium" /></Restriction>
                    """))
                  \(claim("memberSince", "Member since", "Readonly"))
                  \(claim("contactEmail", "Contact email", "EmailBox"))
                  \(claim("nickname", "Nickname", "TextBox", "<PredicateValidationReference Id=\"Nickname\" />"))
                  \(claim("birthDate", "Date of birth", "TextBox", type: "date", "<PredicateValidationReference Id=\"BirthDate\" />"))
                </ClaimsSchema>
                <Predicates>
                  \(predicate("LowercaseOnly", "MatchesRegex", "A nickname is lower-case letters only.",
                    #"<Parameter Id="RegularExpression">^[a-z]+$</Parameter>"#))
                  \(predicate("NotInTheFuture", "IsDateRange", "The date must be between 1900-01-01 and today.",
                    #"<Parameter Id="Minimum">1900-01-01</Parameter><Parameter Id="Maximum">Today</Parameter>"#))
                </Predicates>
                <PredicateValidations>
                  \(validation("Nickname", "LowercaseOnly"))\(validation("BirthDate", "NotInTheFuture"))
                </PredicateValidations>
                """,
            profiles: """
                <TechnicalProfile Id="SelfAsserted-Preferences">
                  <DisplayName>Your preferences</DisplayName>
                  <Protocol Name="Proprietary" Handler="\(handler)" />
                  <Metadata><Item Key="ContentDefinitionReferenceId">api.selfasserted</Item></Metadata>
                  <InputClaims>
                    <InputClaim ClaimTypeReferenceId="memberSince" DefaultValue="2019" />
                    <InputClaim ClaimTypeReferenceId="plan" DefaultValue="basic" />
                  </InputClaims>
                  <OutputClaims>
                    <OutputClaim ClaimTypeReferenceId="country" Required="true" />
                    <OutputClaim ClaimTypeReferenceId="plan" Required="true" />
                    <OutputClaim ClaimTypeReferenceId="memberSince" />
                    <OutputClaim ClaimTypeReferenceId="contactEmail" />
                    <OutputClaim ClaimTypeReferenceId="nickname" />
                    <OutputClaim ClaimTypeReferenceId="birthDate" />
                  </OutputClaims>
                </TechnicalProfile>
                """,
            steps: CustomPolicyOrchestrationTests.localSignIn + """
                <OrchestrationStep Order="2" Type="ClaimsExchange">
                  <ClaimsExchanges>
                    <ClaimsExchange Id="Preferences" TechnicalProfileReferenceId="SelfAsserted-Preferences" />
                  </ClaimsExchanges>
                </OrchestrationStep>
                <OrchestrationStep Order="3" Type="SendClaims" CpimIssuerTechnicalProfileReferenceId="JwtIssuer" />
                """,
            claims: outputs.map { "<OutputClaim ClaimTypeReferenceId=\"\($0)\" />" }.joined())
    }

    static func preferencesPage(_ t: TestTenant, _ b: Browser, pkce: PKCE) async throws -> TestResponse {
        let first = try await b.get(authorizeURL(policy: Self.policy, pkce: pkce))
        let page = try await b.submit(first, form: "localAccountForm", ["signInName": alice.email, "password": alice.password])
        #expect(page.body.contains(#"data-name="SelfAsserted""#), "\(page.body.prefix(900))")
        return page
    }

    /// Each input type as B2C renders it, with the claim type's id as the element's id and the field's name; a read-only
    /// value is shown and not taken back from the form; a choice the page did not offer is refused.
    @Test func aSelfAssertedPageRendersEachInputTypeAndKeepsAReadOnlyValue() async throws {
        try await CustomPolicyOrchestrationTests.withTenant(["Preferences.xml": Self.preferencesPolicy]) { t in
            let b = Browser(t)
            let pkce = PKCE()
            let page = try await Self.preferencesPage(t, b, pkce: pkce)
            let body = page.body
            #expect(
                body.contains(#"<select id="country" name="country">"#) && body.contains(#"<option value="JP">Japan</option>"#), "\(body)")
            #expect(body.contains(#"<div id="plan" class="radio" role="radiogroup">"#), "\(body)")
            #expect(body.contains(#"<input type="radio" id="plan_basic" name="plan" value="basic" checked>"#), "\(body)")
            #expect(body.contains(#"<input type="radio" id="plan_premium" name="plan" value="premium">"#))
            #expect(body.contains(#"<label for="plan_premium">Premium</label>"#))
            #expect(body.contains(#"<input type="text" id="memberSince" name="memberSince" value="2019" readonly>"#), "\(body)")
            #expect(body.contains(#"<input type="email" id="contactEmail" name="contactEmail""#) && body.contains(#"id="nickname""#))
            let stranger = try await b.submit(page, form: "attributeVerification", ["country": "XX", "plan": "premium"])
            #expect(stranger.body.contains("&#39;XX&#39; is not one of the choices for Country."), "\(stranger.body.prefix(900))")
            let radio = try await b.submit(stranger, form: "attributeVerification", ["country": "JP", "plan": "gold"])
            #expect(radio.body.contains("&#39;gold&#39; is not one of the choices for Plan."), "\(radio.body.prefix(900))")
            // The read-only value sent back changed: not taken.
            let done = try await b.submit(
                radio, form: "attributeVerification",
                ["country": "JP", "plan": "premium", "memberSince": "1999", "contactEmail": "ally@example.com", "nickname": "ally"])
            let id = try await CustomPolicyOrchestrationTests.idToken(t, Self.policy, done, pkce)
            #expect(id["country"] == "JP" && id["plan"] == "premium" && id["memberSince"] == "2019", "\(id)")
            #expect(id["contactEmail"] == "ally@example.com" && id["nickname"] == "ally", "\(id)")
        }
    }

    /// Predicates of a claim type's `PredicateValidationReference`: `MatchesRegex`, and `IsDateRange` whose `Maximum` is
    /// `Today` (the tenant clock's date), each refusal in the predicate's `HelpText`.
    @Test(arguments: [
        ("nickname", "Ally", "A nickname is lower-case letters only."),
        ("nickname", "ally 2", "A nickname is lower-case letters only."),
        ("birthDate", "1899-12-31", "The date must be between 1900-01-01 and today."),
        ("birthDate", "tomorrow", "The date must be between 1900-01-01 and today."),
        ("birthDate", "not a date", "The date must be between 1900-01-01 and today."),
        ("nickname", "ally", nil),
        ("birthDate", "1900-01-01", nil),
        ("birthDate", "today", nil),
    ])
    func predicatesRefuseAValue(claim: String, value: String, refusal: String?) async throws {
        try await CustomPolicyOrchestrationTests.withTenant(["Preferences.xml": Self.preferencesPolicy]) { t in
            let b = Browser(t)
            let pkce = PKCE()
            let page = try await Self.preferencesPage(t, b, pkce: pkce)
            let day = 86_400
            let today = Date(timeIntervalSince1970: Double(t.emulator.clock.now() / day * day))
            let f = DateFormatter()
            (f.dateFormat, f.timeZone) = ("yyyy-MM-dd", TimeZone(identifier: "UTC"))
            let typed = ["today": f.string(from: today), "tomorrow": f.string(from: today.addingTimeInterval(Double(day)))][value] ?? value
            let done = try await b.submit(page, form: "attributeVerification", ["country": "FR", "plan": "basic", claim: typed])
            if let refusal {
                #expect(done.redirectParams["code"] == nil && done.body.contains(refusal), "\(typed): \(done.body.prefix(900))")
            } else {
                let id = try await CustomPolicyOrchestrationTests.idToken(t, Self.policy, done, pkce)
                #expect(id[claim]?.stringValue?.hasPrefix(typed) == true, "\(typed): \(id)")
            }
        }
    }

    /// A relying party over the example set whose content definitions lay out its pages with the developer's templates
    /// (`LoadUri` on the connector endpoint): `unifiedssp` (when `unified`), `selfasserted` and `globalexception`.
    static func laidOutPolicy(_ url: String, unified: String? = nil, scripts: String? = nil) -> String {
        func definition(_ id: String, _ path: String, _ dataUri: String? = nil) -> String {
            "<ContentDefinition Id=\"\(id)\"><LoadUri>\(url)/layout/\(path)</LoadUri>"
                + (dataUri.map { "<DataUri>\($0)</DataUri>" } ?? "") + "</ContentDefinition>"
        }
        let definitions =
            definition("api.localaccountsignup", "selfasserted.html") + definition("api.error", "error.html")
            + (unified.map { definition("api.signuporsignin", "unified.html", $0) } ?? "")
        return CustomPolicyOrchestrationTests.relyingParty(
            "B2C_1A_laidout", blocks: "<ContentDefinitions>\(definitions)</ContentDefinitions>",
            behaviors: scripts.map { "<UserJourneyBehaviors><ScriptExecution>\($0)</ScriptExecution></UserJourneyBehaviors>" } ?? "")
    }

    /// `selfasserted` and `globalexception` content definitions with a `LoadUri`: the sign-up page and the error page in
    /// the developer's templates (B2C's ids kept, the templates' scripts and frames taken out), the sign-in page not.
    @Test func contentDefinitionsLayOutTheSelfAssertedAndErrorPages() async throws {
        let endpoint = try await ConnectorEndpoint()
        defer { endpoint.stop() }
        try await CustomPolicyOrchestrationTests.withTenant(["LaidOut.xml": Self.laidOutPolicy(endpoint.http)]) { t in
            let b = Browser(t)
            let signIn = try await b.get(authorizeURL(policy: "B2C_1A_laidout"))
            #expect(signIn.body.contains(#"data-name="Unified""#) && !signIn.body.contains("contoso-panel"), "\(signIn.body.prefix(600))")
            let signUp = try await b.follow(signIn, link: "createAccount")
            #expect(signUp.body.contains(#"data-path="/layout/selfasserted.html""#), "\(signUp.body.prefix(900))")
            #expect(signUp.body.contains(#"<div id="api" data-name="SelfAsserted" role="main" class="contoso-panel">"#), "\(signUp.body)")
            for id in ["attributeVerification", "email", "email_ver_but_send", "newPassword", "continue"] {
                #expect(signUp.body.contains("id=\"\(id)\""), "no #\(id)")
            }
            #expect(!signUp.body.contains("<script") && !signUp.body.contains("<iframe"))
            // The page still works in the layout: the code is sent from it.
            let sent = try await b.submit(signUp, form: "attributeVerification", ["email": "lou@example.com", "step": "send"])
            #expect(sent.body.contains(#"id="email_ver_input""#) && sent.body.contains("contoso-panel"))
            let error = try await t.post("/contoso.onmicrosoft.com/B2C_1A_laidout/emulator/policy", ["tx": "gone"])
            #expect(
                error.body.contains(#"data-path="/layout/error.html""#) && error.body.contains("AADB2C90208"), "\(error.body.prefix(900))")
            #expect(error.body.contains(#"data-name="GlobalException""#) && !error.body.contains("<script"), "\(error.body)")
        }
    }

    /// The layout's scripts stay only when the relying party's `UserJourneyBehaviors/ScriptExecution` is `Allow` and the
    /// content definition names a page contract (`…:contract:…`), as B2C requires; the page's CSP then lets them run.
    @Test(arguments: [
        ("Allow", "urn:com:microsoft:aad:b2c:elements:contract:unifiedssp:2.1.5", true),
        ("Disallow", "urn:com:microsoft:aad:b2c:elements:contract:unifiedssp:2.1.5", false),
        (nil, "urn:com:microsoft:aad:b2c:elements:contract:unifiedssp:2.1.5", false),
        ("Allow", "urn:com:microsoft:aad:b2c:elements:unifiedssp:1.0.0", false),
    ])
    func scriptsRunOnlyWhenTheRelyingPartyAllowsThem(execution: String?, dataUri: String, kept: Bool) async throws {
        let endpoint = try await ConnectorEndpoint()
        defer { endpoint.stop() }
        let xml = Self.laidOutPolicy(endpoint.http, unified: dataUri, scripts: execution)
        try await CustomPolicyOrchestrationTests.withTenant(["LaidOut.xml": xml]) { t in
            let page = try await Browser(t).get(authorizeURL(policy: "B2C_1A_laidout"))
            #expect(page.body.contains(#"data-path="/layout/unified.html""#) && page.body.contains(#"data-name="Unified""#))
            #expect(page.body.contains(#"<script src="https://cdn.contoso.test/app.js"></script>"#) == kept, "\(page.body.prefix(600))")
            let csp = page.headers.first(name: "content-security-policy")
            #expect(csp == (kept ? HTML.contentSecurityPolicyWithScripts : HTML.contentSecurityPolicy), "\(csp ?? "none")")
        }
    }
}
