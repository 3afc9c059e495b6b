import B2CKit
import B2CProtocol
import Foundation
import Synchronization
import Testing

@testable import B2CEmulator

/// Custom policies (reference: b2c-custom-policies.md): a folder loaded base before child, the chain merged by element id,
/// B2C's upload checks with errors that name the file and the element, hostile files refused, and Graph's
/// trustFramework API over real HTTP with an app-only token.
@Suite struct CustomPolicyTests {
    static let examples = packageRoot.appendingPathComponent("Examples/custom-policies")
    static let tenant = "contoso.onmicrosoft.com"

    static func xml(_ name: String) throws -> String {
        try String(contentsOf: examples.appendingPathComponent(name), encoding: .utf8)
    }

    /// A folder holding the example set with `change` applied to one of its files (or a file added).
    static func folder(_ file: String? = nil, _ change: (String) -> String = { $0 }) throws -> URL {
        let dir = temporaryDirectory()
        for name in ["TrustFrameworkBase.xml", "TrustFrameworkExtensions.xml", "SignUpOrSignin.xml"] {
            let text = try xml(name)
            try Data((name == file ? change(text) : text).utf8).write(to: dir.appendingPathComponent(name))
        }
        return dir
    }

    static func refusal(_ dir: URL) -> PolicyLoadError? {
        do {
            _ = try PolicySet.load(directory: dir, tenant: tenant)
            return nil
        } catch let e as PolicyLoadError { return e } catch {
            Issue.record("not a policy error: \(error)")
            return nil
        }
    }

    @Test func theExampleSetLoadsAndItsChainMergesByElementId() throws {
        let set = try PolicySet.load(directory: Self.examples, tenant: Self.tenant)
        #expect(
            set.ids == [
                "B2C_1A_PasswordReset", "B2C_1A_ProfileEdit", "B2C_1A_signup_signin", "B2C_1A_signup_signin_social_mfa",
                "B2C_1A_TrustFrameworkBase", "B2C_1A_TrustFrameworkExtensions",
            ])
        #expect(
            try set.chain("B2C_1A_signup_signin").map(\.policyId) == [
                "B2C_1A_TrustFrameworkBase", "B2C_1A_TrustFrameworkExtensions", "B2C_1A_signup_signin",
            ])
        let policy = try set.effective("B2C_1A_signup_signin")
        // The extensions' metadata items join the base's by key; their input claims join by claim type.
        let login = try #require(policy.element(.technicalProfile, "login-NonInteractive"))
        let items = Dictionary(
            (login.child("Metadata")?.all("Item") ?? []).map { ($0["Key"] ?? "", $0.trimmedText) }, uniquingKeysWith: { a, _ in a })
        #expect(items["client_id"] == EmulatorSeed.proxyIdentityExperienceFrameworkID)
        #expect(items["METADATA"]?.hasPrefix("https://login.microsoftonline.com/") == true && items["scope"] == "email openid")
        let inputs = login.child("InputClaims")?.all("InputClaim").compactMap { $0["ClaimTypeReferenceId"] } ?? []
        #expect(inputs == ["signInName", "password", "grant_type", "scope", "nca", "client_id", "resource_id"])
        #expect(login.child("Protocol")?["Name"] == "OpenIdConnect", "what the extensions do not say stays the base's")
        #expect(policy.relyingParty?.child("DefaultUserJourney")?["ReferenceId"] == "SignUpOrSignIn")
        #expect(policy.element(.userJourney, "SignUpOrSignIn")?.at("OrchestrationSteps")?.all("OrchestrationStep").count == 4)
    }

    /// Each check B2C makes on an upload: the refusal names the policy, the file, the element and its line.
    @Test func aBrokenPolicyIsRefusedNamingTheElement() throws {
        let undeclared = try #require(
            Self.refusal(
                try Self.folder("TrustFrameworkExtensions.xml") {
                    $0.replacingOccurrences(
                        of: #"<InputClaim ClaimTypeReferenceId="client_id""#, with: #"<InputClaim ClaimTypeReferenceId="clientIdentifier""#)
                }))
        #expect(
            undeclared.description.hasPrefix("Validation failed: 1 validation error(s) found in policy \"B2C_1A_TRUSTFRAMEWORKEXTENSIONS\"")
        )
        #expect(undeclared.description.contains("makes a reference to ClaimType with id \"clientIdentifier\" but neither the policy"))
        #expect(
            undeclared.file == "TrustFrameworkExtensions.xml"
                && undeclared.element == "<InputClaim ClaimTypeReferenceId=\"clientIdentifier\"> (line 23)", "\(undeclared)")

        let noBase = try #require(
            Self.refusal(
                try Self.folder("SignUpOrSignin.xml") {
                    $0.replacingOccurrences(of: "B2C_1A_TrustFrameworkExtensions", with: "B2C_1A_Nope")
                }))
        #expect(noBase.description.contains("The base policy \"B2C_1A_Nope\" of tenant \"contoso.onmicrosoft.com\" does not exist"))
        #expect(noBase.element?.contains("<BasePolicy>") == true)

        let tenant = try #require(
            Self.refusal(
                try Self.folder("TrustFrameworkBase.xml") {
                    $0.replacingOccurrences(of: #"TenantId="contoso.onmicrosoft.com""#, with: #"TenantId="yourtenant.onmicrosoft.com""#)
                }))
        #expect(tenant.description.contains("TenantId is 'yourtenant.onmicrosoft.com'; this tenant is 'contoso.onmicrosoft.com'"))

        let handler = try #require(
            Self.refusal(
                try Self.folder("TrustFrameworkBase.xml") {
                    $0.replacingOccurrences(of: "Providers.AzureActiveDirectoryProvider", with: "Providers.LdapProvider")
                }))
        #expect(handler.description.contains("names the protocol handler 'Web.TPEngine.Providers.LdapProvider'"))
        #expect(handler.element?.hasPrefix("<Protocol>") == true)

        let twice = try #require(
            Self.refusal(
                try Self.folder("TrustFrameworkBase.xml") {
                    $0.replacingOccurrences(of: #"<ClaimType Id="tenantId">"#, with: #"<ClaimType Id="surname">"#)
                }))
        #expect(twice.description.contains("The ClaimType with id \"surname\" is declared twice in this policy"))

        let journey = try #require(
            Self.refusal(
                try Self.folder("SignUpOrSignin.xml") {
                    $0.replacingOccurrences(of: #"ReferenceId="SignUpOrSignIn""#, with: #"ReferenceId="SignIn""#)
                }))
        #expect(journey.description.contains("makes a reference to UserJourney with id \"SignIn\""))

        let regex = try #require(
            Self.refusal(
                try Self.folder("TrustFrameworkBase.xml") {
                    $0.replacingOccurrences(of: #"(?:\.[a-zA-Z0-9-]+)*$"#, with: #"(?:(\.[a-zA-Z0-9-]+)*$"#)
                }))
        #expect(regex.description.contains("The claim type \"email\" has a Pattern whose RegularExpression is not a regular expression"))
    }

    /// `MergeBehavior` on a list a child policy redeclares (claimsschema.md's `Restriction`): the child's items after the
    /// base's, before them, or instead of them; without it the items are added after the base's.
    @Test func mergeBehaviorAppendsPrependsOrReplacesTheBasesList() throws {
        func values(_ behavior: String?) throws -> [String] {
            let attribute = behavior.map { " MergeBehavior=\"\($0)\"" } ?? ""
            let dir = temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: dir) }
            let files = [
                "TrustFrameworkBase.xml": try Self.xml("TrustFrameworkBase.xml").replacingOccurrences(
                    of: "    </ClaimsSchema>",
                    with: #"<ClaimType Id="country"><DataType>string</DataType><UserInputType>DropdownSingleSelect</UserInputType>"#
                        + #"<Restriction><Enumeration Text="Norway" Value="NO" /><Enumeration Text="Spain" Value="ES" /></Restriction>"#
                        + "</ClaimType>\n    </ClaimsSchema>"),
                "TrustFrameworkExtensions.xml": try Self.xml("TrustFrameworkExtensions.xml").replacingOccurrences(
                    of: "<BuildingBlocks />",
                    with: #"<BuildingBlocks><ClaimsSchema><ClaimType Id="country"><Restriction"# + attribute + ">"
                        + #"<Enumeration Text="Finland" Value="FI" /></Restriction></ClaimType></ClaimsSchema></BuildingBlocks>"#),
                "SignUpOrSignin.xml": try Self.xml("SignUpOrSignin.xml"),
            ]
            for (name, text) in files { try Data(text.utf8).write(to: dir.appendingPathComponent(name)) }
            let policy = try PolicySet.load(directory: dir, tenant: Self.tenant).effective("B2C_1A_signup_signin")
            return policy.element(.claimType, "country")?.at("Restriction")?.all("Enumeration").compactMap { $0["Value"] } ?? []
        }
        #expect(try values("Append") == ["NO", "ES", "FI"])
        #expect(try values("Prepend") == ["FI", "NO", "ES"])
        #expect(try values("ReplaceAll") == ["FI"])
        #expect(try values(nil) == ["NO", "ES", "FI"])
    }

    /// The rest of B2C's upload checks, each naming the element: a reference to an undeclared technical profile or content
    /// definition, profiles that include one another in a circle, a transformation method the tenant does not run, and two
    /// files of one policy id.
    @Test func moreBrokenPoliciesAreRefusedNamingTheElement() throws {
        let profile = try #require(
            Self.refusal(
                try Self.folder("TrustFrameworkBase.xml") {
                    $0.replacingOccurrences(
                        of: #"TechnicalProfileReferenceId="AAD-UserReadUsingObjectId" />"#,
                        with: #"TechnicalProfileReferenceId="AAD-UserReadUsingObjectIdz" />"#)
                }))
        #expect(profile.description.contains("makes a reference to TechnicalProfile with id \"AAD-UserReadUsingObjectIdz\""), "\(profile)")
        #expect(profile.element?.hasPrefix("<ClaimsExchange") == true, "\(profile)")

        let content = try #require(
            Self.refusal(
                try Self.folder("TrustFrameworkBase.xml") {
                    $0.replacingOccurrences(
                        of: #"<Item Key="ContentDefinitionReferenceId">api.localaccountsignup</Item>"#,
                        with: #"<Item Key="ContentDefinitionReferenceId">api.nowhere</Item>"#)
                }))
        #expect(content.description.contains("makes a reference to ContentDefinition with id \"api.nowhere\""), "\(content)")

        let circle = try #require(
            Self.refusal(
                try Self.folder("TrustFrameworkBase.xml") {
                    $0.replacingOccurrences(
                        of: #"<TechnicalProfile Id="AAD-Common">"#,
                        with: #"<TechnicalProfile Id="AAD-Common"><IncludeTechnicalProfile ReferenceId="AAD-UserWriteUsingLogonEmail" />"#)
                }))
        #expect(circle.description.contains("The technical profiles include one another in a cycle: "), "\(circle)")
        #expect(circle.description.contains("AAD-Common → AAD-UserWriteUsingLogonEmail → AAD-Common"), "\(circle)")

        let method = try #require(
            Self.refusal(
                try Self.folder("TrustFrameworkBase.xml") {
                    $0.replacingOccurrences(
                        of: #"TransformationMethod="AssertDateTimeIsGreaterThan""#, with: #"TransformationMethod="AssertTheMoonIsFull""#)
                }))
        #expect(method.description.contains("has the TransformationMethod 'AssertTheMoonIsFull', which the local tenant does not run"))
        #expect(method.element?.hasPrefix("<ClaimsTransformation") == true && method.file == "TrustFrameworkBase.xml", "\(method)")

        let dir = try Self.folder()
        try Data(try Self.xml("SignUpOrSignin.xml").utf8).write(to: dir.appendingPathComponent("Copy of SignUpOrSignin.xml"))
        let twice = try #require(Self.refusal(dir))
        #expect(
            twice.description.lowercased().contains("b2c_1a_signup_signin")
                && twice.description.contains("Two files declare this policy id"), "\(twice)")
    }

    /// Hostile files: entities, deep nesting, a gigantic file, a cycle of base policies, what is not XML. Each is refused
    /// at once, and nothing is fetched or expanded.
    @Test func hostileFilesAreRefusedQuickly() throws {
        let entity = try #require(
            Self.refusal(
                try Self.folder("TrustFrameworkBase.xml") {
                    $0.replacingOccurrences(
                        of: "<TrustFrameworkPolicy ",
                        with: "<!DOCTYPE p [<!ENTITY x SYSTEM \"file:///etc/passwd\">]>\n<TrustFrameworkPolicy ")
                }))
        #expect(entity.description.contains("declares a DTD"))

        let deep = String(repeating: "<a>", count: 200) + String(repeating: "</a>", count: 200)
        let nested = try #require(
            Self.refusal(
                try Self.folder("SignUpOrSignin.xml") { $0.replacingOccurrences(of: "<RelyingParty>", with: "<RelyingParty>" + deep) }))
        #expect(nested.description.contains("nested more than 40 deep"), "\(nested)")

        // 50,000 elements in a few hundred kilobytes: under the size limit, over the element limit.
        let many = String(repeating: "<a/>", count: PolicyXML.maximumElements)
        let crowded = try #require(
            Self.refusal(
                try Self.folder("SignUpOrSignin.xml") { $0.replacingOccurrences(of: "<RelyingParty>", with: "<RelyingParty>" + many) }))
        #expect(crowded.description.contains("the file has more than 50000 elements"), "\(crowded)")
        #expect(crowded.file == "SignUpOrSignin.xml" && crowded.policyId == "B2C_1A_signup_signin", "\(crowded)")

        let huge = try Self.folder()
        try Data(repeating: UInt8(ascii: " "), count: PolicyXML.maximumBytes + 1).write(to: huge.appendingPathComponent("Huge.xml"))
        #expect(Self.refusal(huge)?.description.contains("a policy file may have at most 1048576") == true)

        let cycle = try Self.folder("TrustFrameworkBase.xml") {
            $0.replacingOccurrences(
                of: "  <BuildingBlocks>",
                with:
                    "  <BasePolicy><TenantId>contoso.onmicrosoft.com</TenantId>"
                    + "<PolicyId>B2C_1A_signup_signin</PolicyId></BasePolicy>\n  <BuildingBlocks>"
            )
        }
        #expect(Self.refusal(cycle)?.description.contains("form a cycle") == true)

        let broken = try #require(
            Self.refusal(try Self.folder("SignUpOrSignin.xml") { $0.replacingOccurrences(of: "</RelyingParty>", with: "") }))
        #expect(broken.description.contains("is not well-formed XML") && broken.policyId == "B2C_1A_signup_signin", "\(broken)")
    }

    /// Graph's trustFramework API, as a deployment pipeline calls it: an app-only token, base before child, B2C's refusals
    /// as Graph's 400, and the permission checked.
    @Test func policiesAreUploadedListedDownloadedAndDeletedThroughGraph() async throws {
        let state = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: state) }
        try await TestTenant.with(stateDirectory: state) { t in
            let token = try await Self.graphToken(t, EmulatorSeed.defaultPolicyDeployID, EmulatorSeed.defaultPolicyDeploySecret)
            let auth = [("Authorization", "Bearer \(token)"), ("Content-Type", "application/xml")]
            let path = "/graph/beta/trustFramework/policies"
            // The child first: its base is not there yet.
            let early = try await t.request(
                .PUT, "\(path)/B2C_1A_signup_signin/$value", body: try Self.xml("SignUpOrSignin.xml"), headers: auth)
            #expect(early.status == 400 && early.body.contains("does not exist"), "\(early.body)")
            for (id, file) in [
                ("B2C_1A_TrustFrameworkBase", "TrustFrameworkBase.xml"),
                ("B2C_1A_TrustFrameworkExtensions", "TrustFrameworkExtensions.xml"),
                ("B2C_1A_signup_signin", "SignUpOrSignin.xml"),
            ] {
                let put = try await t.request(.PUT, "\(path)/\(id)/$value", body: try Self.xml(file), headers: auth)
                #expect(put.status == 201, "\(id): \(put.status) \(put.body.prefix(300))")
            }
            let again = try await t.request(
                .PUT, "\(path)/B2C_1A_signup_signin/$value", body: try Self.xml("SignUpOrSignin.xml"), headers: auth)
            #expect(again.status == 200)
            let list = try await t.request(.GET, path, headers: auth)
            #expect(list.json["value"]?.arrayValue?.compactMap { $0["id"]?.stringValue }.count == 3, "\(list.body)")
            let download = try await t.request(.GET, "\(path)/B2C_1A_TrustFrameworkExtensions/$value", headers: auth)
            let original = try Self.xml("TrustFrameworkExtensions.xml")
            #expect(download.status == 200 && download.body == original)
            let entity = try await t.request(.GET, "\(path)/B2C_1A_TrustFrameworkExtensions", headers: auth)
            #expect(entity.status == 200 && entity.json["id"]?.stringValue == "B2C_1A_TrustFrameworkExtensions", "\(entity.body)")
            // Hostile uploads through Graph, as through a folder: a DTD (entities) and a body over the size limit.
            let dtd = "<?xml version=\"1.0\"?><!DOCTYPE x [<!ENTITY a \"aaaa\">]>" + (try Self.xml("SignUpOrSignin.xml"))
            let withEntities = try await t.request(.PUT, "\(path)/B2C_1A_signup_signin/$value", body: dtd, headers: auth)
            #expect(withEntities.status == 400 && withEntities.body.contains("declares a DTD"), "\(withEntities.body)")
            let huge = String(repeating: " ", count: PolicyXML.maximumBytes + 10)
            let tooBig = try await t.request(.PUT, "\(path)/B2C_1A_signup_signin/$value", body: huge, headers: auth)
            #expect(tooBig.status == 413 && tooBig.body.contains("may have at most"), "\(tooBig.status) \(tooBig.body.prefix(200))")
            // A file for another id than the URL's, and B2C's refusals, are Graph's 400 with B2C's words.
            let mismatch = try await t.request(.PUT, "\(path)/B2C_1A_other/$value", body: try Self.xml("SignUpOrSignin.xml"), headers: auth)
            #expect(mismatch.status == 400 && mismatch.body.contains("must be the same"))
            // A base another policy builds on stays; the leaf goes, then is gone.
            let base = try await t.request(.DELETE, "\(path)/B2C_1A_TrustFrameworkExtensions", headers: auth)
            #expect(base.status == 400 && base.body.contains("as its base policy"), "\(base.body)")
            let gone = try await t.request(.DELETE, "\(path)/B2C_1A_signup_signin", headers: auth)
            #expect(gone.status == 204)
            #expect(try await t.request(.GET, "\(path)/B2C_1A_signup_signin/$value", headers: auth).status == 404)
            // Without the permission (the daemon holds only the sample API's role), or without a token: refused.
            let daemon = try await Self.graphToken(t, EmulatorSeed.defaultDaemonID, EmulatorSeed.defaultDaemonSecret)
            let denied = try await t.request(.GET, path, headers: [("Authorization", "Bearer \(daemon)")])
            #expect(denied.status == 403 && denied.body.contains("Policy.ReadWrite.TrustFramework"), "\(denied.body)")
            #expect(try await t.request(.GET, path).status == 401)
            // Wrong content type.
            let json = try await t.request(.PUT, "\(path)/B2C_1A_x/$value", body: "{}", headers: [("Authorization", "Bearer \(token)")])
            #expect(json.status == 415)
        }
        // The uploads stay with the state.
        try await TestTenant.with(stateDirectory: state) { t in
            #expect(t.emulator.customPolicies.ids == ["B2C_1A_TrustFrameworkBase", "B2C_1A_TrustFrameworkExtensions"])
        }
    }

    static func graphToken(_ t: TestTenant, _ client: String, _ secret: String) async throws -> String {
        let r = try await t.request(
            .POST, "/\(tenant)/oauth2/v2.0/token",
            form: [
                "grant_type": "client_credentials", "client_id": client, "client_secret": secret,
                "scope": "https://graph.microsoft.com/.default",
            ])
        return try #require(r.json["access_token"]?.stringValue, "\(r.status) \(r.body)")
    }

    /// `b2c-emulator example-policies DIR` writes the Examples folder's files (they are the same, byte for byte), loads as a
    /// set, and never replaces a file.
    @Test func examplePoliciesWritesTheExamplesFolderAndReplacesNothing() async throws {
        let names = try FileManager.default.contentsOfDirectory(atPath: Self.examples.path).filter { $0.hasSuffix(".xml") }.sorted()
        let dir = temporaryDirectory().appendingPathComponent("policies")
        defer { try? FileManager.default.removeItem(at: dir.deletingLastPathComponent()) }
        let wrote = try await runOffThePool(b2cBinary, ["emulator", "example-policies", dir.path])
        #expect(wrote.status == 0 && wrote.stdout.contains("TrustFrameworkBase.xml"), "\(wrote.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path).sorted() == names)
        for name in names {
            #expect(
                try Data(contentsOf: dir.appendingPathComponent(name)) == Data(contentsOf: Self.examples.appendingPathComponent(name)),
                "\(name) differs")
        }
        #expect(try PolicySet.load(directory: dir, tenant: Self.tenant).ids.count == names.count)
        try Data("mine".utf8).write(to: dir.appendingPathComponent("ProfileEdit.xml"))
        let again = try await runOffThePool(b2cBinary, ["emulator", "example-policies", dir.path])
        #expect(again.status == 1 && again.stderr.contains("already exists; nothing was written"), "\(again.stderr)")
        #expect(try String(contentsOf: dir.appendingPathComponent("ProfileEdit.xml"), encoding: .utf8) == "mine")
    }

    /// The tenant's policy keys (the default seed: what B2C's setup creates) are the only key containers a policy's
    /// `CryptographicKeys` may name.
    @Test func aPolicyKeyTheTenantDoesNotHaveIsRefused() async throws {
        #expect(EmulatorSeed.default.json["tenant"]?["policyKeys"] == JSONValue(EmulatorSeed.Tenant.setupPolicyKeys))
        let dir = try Self.folder("TrustFrameworkBase.xml") {
            $0.replacingOccurrences(of: "B2C_1A_TokenEncryptionKeyContainer", with: "B2C_1A_NoSuchKey")
        }
        defer { try? FileManager.default.removeItem(at: dir) }
        try await TestTenant.with { t in
            #expect(throws: PolicyLoadError.self) { try t.emulator.customPolicies.load(directory: dir) }
            do { try t.emulator.customPolicies.load(directory: dir) } catch let e as PolicyLoadError {
                #expect("\(e)".contains("policy key \"B2C_1A_NoSuchKey\"") && "\(e)".contains("TrustFrameworkBase.xml"), "\(e)")
            }
        }
        var seed = EmulatorSeed.default
        seed.tenant.policyKeys.append("B2C_1A_NoSuchKey")
        let reread = try EmulatorSeed.parse(Data(seed.json.serialized().utf8))
        #expect(reread.tenant.policyKeys.contains("B2C_1A_NoSuchKey"))
        try await TestTenant.with(seed: reread) { t in try t.emulator.customPolicies.load(directory: dir) }
    }

    @Test func serveRefusesABrokenFolderWithExitThree() async throws {
        let dir = try Self.folder("TrustFrameworkExtensions.xml") {
            $0.replacingOccurrences(of: #"ClaimTypeReferenceId="resource_id""#, with: #"ClaimTypeReferenceId="resourceId""#)
        }
        defer { try? FileManager.default.removeItem(at: dir) }
        let refused = try await runOffThePool(b2cBinary, ["emulator", "serve", "--port", "0", "--custom-policies", dir.path])
        #expect(refused.status == 3, "\(refused.stderr)")
        #expect(refused.stderr.contains("is refused: Validation failed") && refused.stderr.contains("\"resourceId\""), "\(refused.stderr)")
        #expect(refused.stderr.contains("file TrustFrameworkExtensions.xml"))
        let notAFolder = try await runOffThePool(
            b2cBinary, ["emulator", "serve", "--port", "0", "--custom-policies", dir.appendingPathComponent("nope").path])
        #expect(notAFolder.status == 3 && notAFolder.stderr.contains("which is not a folder"), "\(notAFolder.stderr)")
        // The container's way: the variable stands for the option.
        let fromEnvironment = try await runOffThePool(
            b2cBinary, ["emulator", "serve", "--port", "0"], environment: ["B2C_EMULATOR_CUSTOM_POLICIES": dir.path])
        #expect(fromEnvironment.status == 3 && fromEnvironment.stderr.contains("\"resourceId\""), "\(fromEnvironment.stderr)")
    }

    /// A claim type's pattern and predicate validation, as the pages will check them: the starter pack's strong password
    /// (length 8–64 and three of four character classes) and the email pattern.
    @Test func claimTypesValidateValuesByPatternAndPredicates() throws {
        let predicates = """
              <Predicates>
                <Predicate Id="IsLengthBetween8And64" Method="IsLengthRange" HelpText="The password must be between 8 and 64 characters.">
                  <Parameters><Parameter Id="Minimum">8</Parameter><Parameter Id="Maximum">64</Parameter></Parameters>
                </Predicate>
                <Predicate Id="Lowercase" Method="IncludesCharacters"><Parameters><Parameter Id="CharacterSet">a-z</Parameter></Parameters>
                </Predicate>
                <Predicate Id="Uppercase" Method="IncludesCharacters"><Parameters><Parameter Id="CharacterSet">A-Z</Parameter></Parameters>
                </Predicate>
                <Predicate Id="Number" Method="IncludesCharacters"><Parameters><Parameter Id="CharacterSet">0-9</Parameter></Parameters>
                </Predicate>
                <Predicate Id="Symbol" Method="IncludesCharacters"><Parameters><Parameter Id="CharacterSet">@#$%^&amp;*-_+=</Parameter>
                </Parameters></Predicate>
              </Predicates>
              <PredicateValidations>
                <PredicateValidation Id="StrongPassword">
                  <PredicateGroups>
                    <PredicateGroup Id="Length"><PredicateReferences><PredicateReference Id="IsLengthBetween8And64" /></PredicateReferences>
                    </PredicateGroup>
                    <PredicateGroup Id="CharacterClasses">
                      <UserHelpText>The password must have at least 3 of the following:</UserHelpText>
                      <PredicateReferences MatchAtLeast="3">
                        <PredicateReference Id="Lowercase" /><PredicateReference Id="Uppercase" /><PredicateReference Id="Number" />
                        <PredicateReference Id="Symbol" />
                      </PredicateReferences>
                    </PredicateGroup>
                  </PredicateGroups>
                </PredicateValidation>
              </PredicateValidations>
            """
        let dir = try Self.folder("TrustFrameworkBase.xml") {
            $0.replacingOccurrences(of: "    </ClaimsSchema>", with: "    </ClaimsSchema>\n" + predicates)
                .replacingOccurrences(
                    of: #"<ClaimType Id="reenterPassword">"#,
                    with:
                        #"<ClaimType Id="strongPassword"><DataType>string</DataType>"#
                        + #"<PredicateValidationReference Id="StrongPassword" /></ClaimType>"#
                        + #"<ClaimType Id="country"><DisplayName>Country</DisplayName><DataType>string</DataType>"#
                        + #"<UserInputType>DropdownSingleSelect</UserInputType><Restriction><Enumeration Text="Norway" Value="NO" />"#
                        + #"<Enumeration Text="Spain" Value="ES" /></Restriction></ClaimType>"#
                        + #"<ClaimType Id="topics"><DataType>string</DataType><UserInputType>CheckboxMultiSelect</UserInputType>"#
                        + #"<Restriction><Enumeration Text="News" Value="news" /><Enumeration Text="Offers" Value="offers" />"#
                        + #"</Restriction></ClaimType><ClaimType Id="reenterPassword">"#
                )
        }
        let policy = try PolicySet.load(directory: dir, tenant: Self.tenant).effective("B2C_1A_signup_signin")
        let v = ClaimValidation(policy: policy)
        #expect(v.problem(claimType: "strongPassword", value: "Short1!") == "The password must be between 8 and 64 characters.")
        #expect(v.problem(claimType: "strongPassword", value: "alllowercase1") == "The password must have at least 3 of the following:")
        #expect(v.problem(claimType: "strongPassword", value: "Alice-dev-2026!") == nil)
        #expect(v.problem(claimType: "email", value: "not an address") == "Please enter a valid email address.")
        #expect(v.problem(claimType: "email", value: "alice@contoso.com") == nil)
        #expect(v.problem(claimType: "displayName", value: "anything") == nil)
        // A choice the page did not offer (a hand-made POST) is refused; the offered ones, and several checkboxes, pass.
        #expect(v.problem(claimType: "country", value: "ES") == nil)
        #expect(v.problem(claimType: "country", value: "Spain") == "'Spain' is not one of the choices for Country.")
        #expect(v.problem(claimType: "topics", value: "news,offers") == nil)
        #expect(v.problem(claimType: "topics", value: "news,casino") == "'casino' is not one of the choices for topics.")
    }

    /// A pattern that backtracks without end (`^(a+)+$` against thirty-odd `a`s and a `!`: 2^33 paths) stops at ICU's time
    /// limit: a failed match, the page's help text, a note for the recorder, and the request goes on.
    @Test func aPatternThatBacktracksForeverIsAFailedMatchNotAHang() throws {
        let dir = try Self.folder("TrustFrameworkBase.xml") {
            $0.replacingOccurrences(
                of: #"<ClaimType Id="reenterPassword">"#,
                with: #"<ClaimType Id="nickname"><DataType>string</DataType><Restriction><Pattern RegularExpression="^(a+)+$" "#
                    + #"HelpText="Only a's." /></Restriction></ClaimType><ClaimType Id="reenterPassword">"#)
        }
        let policy = try PolicySet.load(directory: dir, tenant: Self.tenant).effective("B2C_1A_signup_signin")
        let notes = Mutex<[String]>([])
        let v = ClaimValidation(policy: policy) { name, _ in notes.withLock { $0.append(name) } }
        #expect(v.problem(claimType: "nickname", value: "aaaa") == nil)
        #expect(notes.withLock { $0 }.isEmpty)
        #expect(v.problem(claimType: "nickname", value: String(repeating: "a", count: 34) + "!") == "Only a's.")
        #expect(notes.withLock { $0 } == ["a pattern ran out of time"])
        #expect(PolicyRegex.compile("^(a+)+$")?.matches(String(repeating: "a", count: 40) + "!") == .timedOut)
        #expect(PolicyRegex.compile("[a-z]+@[a-z]+")?.matches("x alice@contoso y") == .match)
        #expect(PolicyRegex.compile("(unclosed") == nil)
    }
}
