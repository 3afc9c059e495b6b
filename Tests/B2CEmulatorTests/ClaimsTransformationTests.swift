import B2CProtocol
import Foundation
import Testing

@testable import B2CEmulator

/// B2C's claims-transformation methods against the examples of Microsoft's reference pages (string, boolean, date,
/// integer, string collection, JSON, social accounts): the same inputs give the documented outputs, and the asserting
/// methods fail as documented.
@Suite struct ClaimsTransformationTests {
    typealias T = ClaimsTransformations

    static func run(_ method: String, _ inputs: T.Inputs = [:], _ parameters: T.Parameters = [:]) throws -> T.Inputs {
        try T.apply(method, inputs, parameters, now: Date(timeIntervalSince1970: 1_795_000_000))
    }

    @Test func stringMethodsGiveTheDocumentedOutputs() throws {
        #expect(
            try Self.run("ChangeCase", ["inputClaim1": .string("SomeOne@contoso.com")], ["toCase": "LOWER"]) == [
                "outputClaim": .string("someone@contoso.com")
            ])
        #expect(
            try Self.run("CreateStringClaim", [:], ["value": "Contoso terms of service..."]) == [
                "createdClaim": .string("Contoso terms of service...")
            ])
        #expect(
            try Self.run(
                "CompareClaims", ["inputClaim1": .string("someone@contoso.com"), "inputClaim2": .string("someone@outlook.com")],
                ["operator": "NOT EQUAL", "ignoreCase": "true"]) == ["outputClaim": .bool(true)])
        #expect(
            try Self.run(
                "CompareClaimToValue", ["inputClaim1": .string("v1")], ["compareTo": "V1", "operator": "EQUAL", "ignoreCase": "true"])
                == ["outputClaim": .bool(true)])
        #expect(
            try Self.run(
                "FormatStringClaim", ["inputClaim": .string("5164db16-3eee-4629-bfda-dcc3326790e9")],
                ["stringFormat": "cpim_{0}@b2cdemo.onmicrosoft.com"])
                == ["outputClaim": .string("cpim_5164db16-3eee-4629-bfda-dcc3326790e9@b2cdemo.onmicrosoft.com")])
        #expect(
            try Self.run(
                "FormatStringMultipleClaims", ["inputClaim1": .string("Joe"), "inputClaim2": .string("Fernando")],
                ["stringFormat": "{0} {1}"])
                == ["outputClaim": .string("Joe Fernando")])
        #expect(T.format("{{literal}} {0}", ["x"]) == "{literal} x", "C#'s doubled braces")
        #expect(
            try Self.run("StringSubstring", ["inputClaim": .string("+1213-555-1234")], ["startIndex": "0", "length": "2"]) == [
                "outputClaim": .string("+1")
            ])
        #expect(
            try Self.run("StringReplace", ["inputClaim": .string("+1 (123) 456-7890")], ["oldValue": "-", "newValue": ""])
                == ["outputClaim": .string("+1 (123) 4567890")])
        #expect(
            try Self.run("StringJoin", ["inputClaim": .collection(["Admin", "Author", "Reader"])], ["delimiter": ","])
                == ["outputClaim": .string("Admin,Author,Reader")])
        #expect(
            try Self.run("StringSplit", ["inputClaim": .string("Admin,Author,Reader")], ["delimiter": ","])
                == ["outputClaim": .collection(["Admin", "Author", "Reader"])])
        #expect(
            try Self.run("StringContains", ["inputClaim": .string("Admin, Reviewer")], ["contains": "admin", "ignoreCase": "true"]) == [
                "outputClaim": .bool(true)
            ])
        // Random strings: a GUID, or a formatted integer no larger than the maximum.
        let guid = try #require(try Self.run("CreateRandomString", [:], ["randomGeneratorType": "GUID"])["outputClaim"]?.text)
        #expect(UUID(uuidString: guid) != nil)
        let otp = try #require(
            try Self.run(
                "CreateRandomString", [:],
                ["randomGeneratorType": "INTEGER", "maximumNumber": "1000", "stringFormat": "OTP_{0}", "base64": "false"])[
                    "outputClaim"]?.text)
        #expect(otp.hasPrefix("OTP_") && (Int(otp.dropFirst(4)) ?? 1001) <= 1000)
    }

    /// The catalogue's other methods, with the reference pages' examples (string, integer, string collection).
    @Test func catalogueMethodsGiveTheDocumentedOutputs() throws {
        #expect(try Self.run("ParseDomain", ["emailAddress": .string("joe@outlook.com")]) == ["domain": .string("outlook.com")])
        #expect(throws: TransformationFailure.self) { try Self.run("ParseDomain", ["emailAddress": .string("joe")]) }
        #expect(
            try Self.run(
                "SetClaimsIfStringsAreEqual", ["inputClaim": .string("v1")],
                [
                    "matchTo": "V1", "stringComparison": "ordinalIgnoreCase", "stringMatchMsg": "B2C_V1_90005",
                    "stringMatchMsgCode": "The TOS is upgraded to v2",
                ])
                == [
                    "outputClaim1": .string("B2C_V1_90005"), "outputClaim2": .string("The TOS is upgraded to v2"),
                    "stringCompareResultClaim": .bool(true),
                ])
        #expect(
            try Self.run("SetClaimsIfStringsAreEqual", ["inputClaim": .string("v1")], ["matchTo": "V1", "stringComparison": "ordinal"])
                == ["stringCompareResultClaim": .bool(false)], "Ordinal is exact")
        #expect(
            try Self.run(
                "SetClaimsIfStringsMatch", ["claimToMatch": .string("Minor")],
                ["matchTo": "Minor", "stringComparison": "ordinalIgnoreCase", "outputClaimIfMatched": "B2C_V1_90001"])
                == ["outputClaim": .string("B2C_V1_90001"), "stringCompareResultClaim": .bool(true)])
        let lookup: T.Parameters = [
            "contoso.com": "13c15f79-8fb1-4e29-a6c9-be0d36ff19f1", "microsoft.com": "0213308f-17cb-4398-b97e-01da7bd4804e",
            "test.com": "c7026f88-4299-4cdb-965d-3f166464b8a9", "errorOnFailedLookup": "false",
        ]
        #expect(
            try Self.run("LookupValue", ["inputParameterId": .string("test.com")], lookup) == [
                "outputClaim": .string("c7026f88-4299-4cdb-965d-3f166464b8a9")
            ])
        #expect(try Self.run("LookupValue", ["inputParameterId": .string("fabrikam.com")], lookup) == [:])
        var strict = lookup
        strict["errorOnFailedLookup"] = "true"
        #expect(throws: TransformationFailure.self) { try Self.run("LookupValue", ["inputParameterId": .string("fabrikam.com")], strict) }
        // AssertNumber: the reference's attempts over five, as an assertion and as an evaluation.
        #expect(
            throws: TransformationFailure.assertion(key: "AssertNumberError", fallback: "The number is out of range.")
        ) {
            try Self.run(
                "AssertNumber", ["inputClaim": .int(10)], ["Operator": "GreaterThan", "CompareToValue": "5", "throwError": "true"])
        }
        #expect(try Self.run("AssertNumber", ["inputClaim": .int(3)], ["Operator": "GreaterThan", "CompareToValue": "5"]) == [:])
        #expect(
            try Self.run(
                "AssertNumber", ["inputClaim": .int(10)], ["Operator": "GreaterThan", "CompareToValue": "5", "throwError": "false"])
                == ["outputClaim": .bool(true)])
        #expect(
            try Self.run(
                "AssertNumber", ["inputClaim": .int(5)], ["Operator": "LessThanOrEqual", "CompareToValue": "5", "throwError": "false"])
                == ["outputClaim": .bool(true)])
        #expect(
            try Self.run(
                "StringCollectionContainsClaim", ["collection": .collection(["Admin", "Reader"]), "item": .string("admin")],
                ["ignoreCase": "true"]) == ["outputClaim": .bool(true)])
        #expect(
            try Self.run("StringCollectionContainsClaim", ["collection": .collection(["Admin", "Reader"]), "item": .string("admin")])
                == ["outputClaim": .bool(false)])
        #expect(try Self.run("NullClaim") == [:], "its outputs are taken out of the bag by the run")
        #expect(try Self.run("CopyClaim", ["inputClaim": .int(7)]) == ["outputClaim": .int(7)])
        #expect(try Self.run("DoesClaimExist", ["inputClaim": .string("x")]) == ["outputClaim": .bool(true)])
        #expect(try Self.run("DoesClaimExist") == ["outputClaim": .bool(false)])
    }

    @Test func assertingMethodsFailWithTheirMetadataKey() throws {
        #expect(
            throws: TransformationFailure.assertion(
                key: "UserMessageIfClaimsTransformationStringsAreNotEqual", fallback: "The claims are not equal.")
        ) {
            try Self.run(
                "AssertStringClaimsAreEqual",
                ["inputClaim1": .string("someone@contoso.com"), "inputClaim2": .string("someone@outlook.com")],
                ["stringComparison": "ordinalIgnoreCase"])
        }
        #expect(
            try Self.run(
                "AssertStringClaimsAreEqual",
                ["inputClaim1": .string("Someone@contoso.com"), "inputClaim2": .string("someone@contoso.com")],
                ["stringComparison": "ordinalIgnoreCase"]
            ).isEmpty)
        // The starter pack's AssertAccountEnabledIsTrue.
        #expect(throws: TransformationFailure.self) {
            try Self.run("AssertBooleanClaimIsEqualToValue", ["inputClaim": .bool(false)], ["valueToCompareTo": "true"])
        }
        #expect(try Self.run("AssertBooleanClaimIsEqualToValue", ["inputClaim": .bool(true)], ["valueToCompareTo": "true"]).isEmpty)
        // The starter pack's refresh-token check: a token issued before the user's valid-from date is refused.
        let issued = ClaimValue.string("2026-11-01T00:00:00Z"), validFrom = ClaimValue.string("2026-11-02T00:00:00Z")
        let params = ["AssertIfEqualTo": "false", "AssertIfRightOperandIsNotPresent": "true", "TreatAsEqualIfWithinMillseconds": "80000"]
        #expect(throws: TransformationFailure.self) {
            try Self.run("AssertDateTimeIsGreaterThan", ["leftOperand": issued, "rightOperand": validFrom], params)
        }
        #expect(try Self.run("AssertDateTimeIsGreaterThan", ["leftOperand": validFrom, "rightOperand": issued], params).isEmpty)
        #expect(throws: TransformationFailure.self) { try Self.run("AssertDateTimeIsGreaterThan", ["leftOperand": issued], params) }
        #expect(throws: TransformationFailure.unsupported("Teleport")) { try Self.run("Teleport") }
    }

    @Test func booleanDateIntegerCollectionJsonAndSocialMethods() throws {
        #expect(try Self.run("AndClaims", ["inputClaim1": .bool(true), "inputClaim2": .bool(false)]) == ["outputClaim": .bool(false)])
        #expect(try Self.run("OrClaims", ["inputClaim1": .bool(true), "inputClaim2": .bool(false)]) == ["outputClaim": .bool(true)])
        #expect(try Self.run("NotClaims", ["inputClaim": .bool(true)]) == ["outputClaim": .bool(false)])
        #expect(
            try Self.run("CompareBooleanClaimToValue", ["inputClaim": .bool(true)], ["valueToCompareTo": "true"]) == [
                "compareResult": .bool(true)
            ])
        #expect(try Self.run("GetCurrentDateTime") == ["currentDateTime": .dateTime(Date(timeIntervalSince1970: 1_795_000_000))])
        #expect(
            try Self.run(
                "DateTimeComparison",
                ["firstDateTime": .string("2026-11-28T10:00:00Z"), "secondDateTime": .string("2026-11-28T09:00:00Z")],
                ["operator": "later than", "timeSpanInSeconds": "1800"]) == ["result": .bool(true)])
        #expect(try Self.run("AdjustNumber", ["inputClaim": .int(1)], ["Operator": "INCREMENT"]) == ["outputClaim": .int(2)])
        #expect(try Self.run("ConvertNumberToStringClaim", ["inputClaim": .int(1234)]) == ["outputClaim": .string("1234")])
        #expect(
            try Self.run(
                "AddItemToStringCollection", ["item": .string("admin@contoso.com"), "collection": .collection(["someone@outlook.com"])])
                == ["collection": .collection(["someone@outlook.com", "admin@contoso.com"])])
        #expect(
            try Self.run("AddParameterToStringCollection", [:], ["item": "admin@contoso.com"]) == [
                "collection": .collection(["admin@contoso.com"])
            ])
        #expect(
            try Self.run("GetSingleItemFromStringCollection", ["collection": .collection(["someone@outlook.com", "someone@contoso.com"])])
                == ["extractedItem": .string("someone@outlook.com")])
        #expect(
            try Self.run(
                "StringCollectionContains", ["inputClaim": .collection(["contributor", "Admin"])], ["item": "Admin", "ignoreCase": "true"])
                == ["outputClaim": .bool(true)])
        #expect(
            try Self.run(
                "GetClaimFromJson", ["inputJson": .string(#"{"emailAddress": "someone@example.com", "displayName": "Someone"}"#)],
                ["claimToExtract": "emailAddress"])
                == ["extractedClaim": .string("someone@example.com")])
        let altSecId = try #require(
            try Self.run("CreateAlternativeSecurityId", ["key": .string("12334"), "identityProvider": .string("Facebook.com")])[
                "alternativeSecurityId"]?.text)
        #expect(altSecId.contains(#""issuer":"Facebook.com""#) && altSecId.contains(#""issuerUserId":"MTIzMzQ=""#), "\(altSecId)")
        #expect(T.methods.count == 45)
    }
}

/// The JSON, phone-number and pattern methods against the reference pages' examples.
@Suite struct StructuredTransformationTests {
    typealias T = ClaimsTransformations

    @Test func generateJsonBuildsTheSendGridBodyOfTheReferencePage() throws {
        let out = try ClaimsTransformationTests.run(
            "GenerateJson",
            [
                "personalizations.0.to.0.email": .string("someone@example.com"),
                "personalizations.0.dynamic_template_data.otp": .string("346349"),
                "personalizations.0.dynamic_template_data.verify-email": .string("someone@example.com"),
            ],
            [
                "template_id": "d-989077fbba9746e89f3f6411f596fb96", "from.email": "service@contoso.com",
                "personalizations.0.dynamic_template_data.subject": "Contoso account email verification code",
            ])
        let json = try JSONValue.parse(try #require(out["outputClaim"]?.text))
        let expected = try JSONValue.parse(
            #"{"personalizations":[{"to":[{"email":"someone@example.com"}],"dynamic_template_data":{"otp":"346349","#
                + #""verify-email":"someone@example.com","subject":"Contoso account email verification code"}}],"#
                + #""template_id":"d-989077fbba9746e89f3f6411f596fb96","from":{"email":"service@contoso.com"}}"#)
        #expect(json == expected)
        #expect(
            try ClaimsTransformationTests.run(
                "GetNumericClaimFromJson", ["inputJson": .string(#"{"emailAddress":"a@b.c","loyaltyNumber":1234}"#)],
                ["claimToExtract": "loyaltyNumber"]) == ["extractedClaim": .int(1234)])
        #expect(
            try ClaimsTransformationTests.run("GetSingleValueFromJsonArray", ["inputJsonClaim": .string(#"["someone@example.com", true]"#)])
                == ["extractedClaim": .string("someone@example.com")])
        #expect(
            try ClaimsTransformationTests.run(
                "GetClaimFromJson", ["inputJson": .string(#"{"a":{"b":[{"c":"deep"}]}}"#)], ["claimToExtract": "a.b.0.c"])
                == ["extractedClaim": .string("deep")])
    }

    @Test func phoneNumbersAreReadIntoE164AndSplitByCountry() throws {
        #expect(
            try ClaimsTransformationTests.run("ConvertStringToPhoneNumberClaim", ["inputClaim": .string("+1 (123) 456-7890")])
                == ["outputClaim": .string("+11234567890")])
        #expect(
            try ClaimsTransformationTests.run(
                "ConvertStringToPhoneNumberClaim", ["phoneNumberString": .string("020 7946 0958"), "country": .string("GB")])
                == ["outputClaim": .string("+442079460958")])
        #expect(
            throws: TransformationFailure.assertion(
                key: "UserMessageIfClaimsTransformationInvalidPhoneNumber", fallback: "The phone number you provided is not valid.")
        ) {
            try ClaimsTransformationTests.run("ConvertStringToPhoneNumberClaim", ["inputClaim": .string("call me maybe")])
        }
        let german = ["phoneNumber": ClaimValue.string("+49 (123) 456-7890")]
        #expect(
            try ClaimsTransformationTests.run(
                "GetNationalNumberAndCountryCodeFromPhoneNumberString", german, ["countryCodeType": "ISO3166"])
                == ["nationalNumber": .string("1234567890"), "countryCode": .string("DE")])
        #expect(
            try ClaimsTransformationTests.run(
                "GetNationalNumberAndCountryCodeFromPhoneNumberString", german, ["countryCodeType": "CallingCode"])
                == ["nationalNumber": .string("1234567890"), "countryCode": .string("+49")])
        let bad = ["phoneNumber": ClaimValue.string("12")]
        #expect(try ClaimsTransformationTests.run("GetNationalNumberAndCountryCodeFromPhoneNumberString", bad).isEmpty)
        #expect(throws: TransformationFailure.self) {
            try ClaimsTransformationTests.run(
                "GetNationalNumberAndCountryCodeFromPhoneNumberString", bad, ["throwExceptionOnFailure": "true"])
        }
        #expect(
            try ClaimsTransformationTests.run("ConvertPhoneNumberClaimToString", ["phoneNumber": .string("+11234567890")])
                == ["phoneNumberString": .string("+11234567890")])
    }

    @Test func setClaimsIfRegexMatchSetsTheValueAndTheResult() throws {
        let parameters = ["matchTo": "^[0-9]{4,16}$", "outputClaimIfMatched": "isPhone"]
        #expect(
            try ClaimsTransformationTests.run("SetClaimsIfRegexMatch", ["claimToMatch": .string("0123456789")], parameters)
                == ["outputClaim": .string("isPhone"), "regexCompareResultClaim": .bool(true)])
        #expect(
            try ClaimsTransformationTests.run("SetClaimsIfRegexMatch", ["claimToMatch": .string("someone@contoso.com")], parameters)
                == ["regexCompareResultClaim": .bool(false)])
    }
}

/// Claim resolvers: each kind from the request and the tenant; an unknown value is empty; a format's `{0}` stays.
@Suite struct ClaimResolverTests {
    @Test func resolversTakeTheirValuesFromTheRequestAndTheTenant() {
        let r = ClaimResolvers.of(
            tenantName: "contoso.onmicrosoft.com", tenantId: "8f2c6d4e-1a3b-4c5d-9e7f-0a1b2c3d4e5f", policyId: "B2C_1A_signup_signin",
            request: ["login_hint": "alice@contoso.com", "client_id": "c1", "campaignId": "hawaii"], language: "fr-FR",
            correlationId: "c-1",
            now: Date(timeIntervalSince1970: 0))
        #expect(r.resolve("{OIDC:LoginHint}") == "alice@contoso.com")
        #expect(r.resolve("cpim_{0}@{Policy:RelyingPartyTenantId}") == "cpim_{0}@contoso.onmicrosoft.com")
        #expect(r.resolve("{Policy:TenantObjectId}") == "8f2c6d4e-1a3b-4c5d-9e7f-0a1b2c3d4e5f")
        #expect(r.resolve("{Culture:LanguageName}-{Culture:RegionName}") == "fr-FR")
        #expect(r.resolve("{OAUTH-KV:campaignId} {Context:CorrelationId} {Context:DateTimeInUtc}") == "hawaii c-1 1970-01-01T00:00:00Z")
        #expect(r.resolve("[{OIDC:DomainHint}]") == "[]", "a resolver with no value is empty")
        #expect(r.resolve("{unknown} {") == "{unknown} {")
        // {service:te}: the engine's own address, which B2C documents no value for and the packs use only where the engine
        // ignores it (JwtIssuer's client_id, the engine profile's url): empty, like any resolver without a value.
        #expect(r.resolve("[{service:te}]") == "[]")
    }
}

/// Preconditions as B2C evaluates them: the first satisfied one skips; ClaimEquals is ordinal and ignores a claim with
/// no value.
@Suite struct PreconditionTests {
    static func node(_ xml: String) throws -> PolicyNode { try PolicyXML.parse(Data("<Preconditions>\(xml)</Preconditions>".utf8)) }

    /// One `<Precondition>` that skips the step: its type, `ExecuteActionsIf`, and its values.
    static func precondition(_ type: String, _ executeIf: Bool, _ values: String...) -> String {
        "<Precondition Type=\"\(type)\" ExecuteActionsIf=\"\(executeIf)\">" + values.map { "<Value>\($0)</Value>" }.joined()
            + "<Action>SkipThisOrchestrationStep</Action></Precondition>"
    }

    @Test func theFirstSatisfiedPreconditionSkipsTheStep() throws {
        let exists = try Self.node(Self.precondition("ClaimsExist", true, "objectId"))
        #expect(Preconditions.skipReason(exists, claims: ["objectId": .string("o")])?.hasPrefix("SkipThisOrchestrationStep") == true)
        #expect(Preconditions.skipReason(exists, claims: [:]) == nil)
        let missing = try Self.node(Self.precondition("ClaimsExist", false, "email"))
        #expect(
            Preconditions.skipReason(missing, claims: [:]) != nil
                && Preconditions.skipReason(missing, claims: ["email": .string("a@b.c")]) == nil)
        // The starter pack's MFA step: skipped when the identity provider is not local, or when an MFA session exists.
        let mfa = try Self.node(
            Self.precondition("ClaimEquals", true, "authenticationSource", "socialIdpAuthentication")
                + Self.precondition("ClaimsExist", true, "isActiveMFASession"))
        #expect(Preconditions.skipReason(mfa, claims: ["authenticationSource": .string("socialIdpAuthentication")]) != nil)
        #expect(
            Preconditions.skipReason(mfa, claims: ["authenticationSource": .string("SocialIdpAuthentication")]) == nil,
            "ordinal, case-sensitive")
        #expect(Preconditions.skipReason(mfa, claims: ["authenticationSource": .string("localAccountAuthentication")]) == nil)
        #expect(Preconditions.skipReason(mfa, claims: ["isActiveMFASession": .bool(true)]) != nil, "the second one is reached")
        // A ClaimEquals on a claim with no value is ignored, even with ExecuteActionsIf="false".
        let notEquals = try Self.node(Self.precondition("ClaimEquals", false, "newUser", "true"))
        #expect(Preconditions.skipReason(notEquals, claims: [:]) == nil)
        #expect(Preconditions.skipReason(notEquals, claims: ["newUser": .bool(false)]) != nil)
        #expect(Preconditions.skipReason(nil, claims: [:]) == nil)
    }
}
