import B2CKit
import Foundation
import Testing

/// The claim mapping of `b2c migrate diff` (docs/migration.md), line by line.
@Suite struct ClaimComparisonTests {
    static let oid = "0a11ce00-5eed-4a11-8000-00000000a11c"

    func line(_ c: ClaimComparison, _ b2cClaim: String) -> ClaimComparison.Line? { c.lines.first { $0.b2cClaim == b2cClaim } }

    @Test func customAttributesMapToTheirExtensionNamesAndDifferencesBreak() throws {
        let b2c: JSONValue = [
            "oid": .string(Self.oid), "sub": .string(Self.oid), "tfp": "B2C_1_susi", "emails": ["a@contoso.com"],
            "extension_LoyaltyId": "L-7", "extension_Tier": "gold", "city": "Lyon", "exp": 1, "iat": 2, "nonce": "n",
        ]
        let eid: JSONValue = [
            "oid": .string(Self.oid), "sub": "pairwise", "email": "A@contoso.com",
            "extension_0123456789abcdef0123456789abcdef_LoyaltyId": "L-7", "city": "Paris", "tid": "t", "exp": 3,
        ]
        let c = ClaimComparison(b2c: b2c, externalId: eid)
        #expect(line(c, "extension_LoyaltyId")?.verdict == .same)
        #expect(line(c, "extension_LoyaltyId")?.externalIdClaim == "extension_0123456789abcdef0123456789abcdef_LoyaltyId")
        #expect(line(c, "extension_Tier")?.verdict == .onlyB2C && line(c, "extension_Tier")?.breaks == true)
        #expect(line(c, "city")?.verdict == .differs && line(c, "city")?.breaks == true)
        #expect(line(c, "emails[0]")?.verdict == .same, "an address compares without regard to case")
        #expect(line(c, "tfp")?.breaks == false && line(c, "sub")?.verdict == .expected)
        #expect(!c.lines.contains { $0.b2cClaim == "exp" || $0.b2cClaim == "nonce" }, "times and nonces are not compared")
        #expect(c.lines.contains { $0.externalIdClaim == "tid" && $0.verdict == .onlyExternalId && !$0.breaks })
        #expect(c.breaks)
    }

    @Test func aCustomPolicysSubjectIsTheObjectID() {
        // The starter pack's relying party: sub is the object id, no oid, acr names the policy.
        let b2c: JSONValue = ["sub": .string(Self.oid), "acr": "b2c_1a_signup_signin", "email": "a@contoso.com", "tid": "t"]
        let eid: JSONValue = ["oid": .string(Self.oid), "sub": "pairwise", "email": "a@contoso.com", "tid": "t"]
        let c = ClaimComparison(b2c: b2c, externalId: eid)
        #expect(line(c, "oid")?.verdict == .same && line(c, "acr")?.verdict == .onlyB2C && !c.breaks, "\(c.lines)")
    }

    /// `idp` (the provider a person signed in with) keeps its name: the same provider is the same; another one, or one only
    /// B2C's token names, is something an app that reads it relies on.
    @Test(
        arguments: [
            ("google.com", "google.com", ClaimComparison.Verdict.same, false), ("google.com", "facebook.com", .differs, true),
            ("google.com", nil, .onlyB2C, true), (nil, "google.com", .onlyExternalId, false),
        ] as [(String?, String?, ClaimComparison.Verdict, Bool)])
    func theIdentityProviderComparesByItsName(
        _ b2cIdp: String?, _ externalIdIdp: String?, _ verdict: ClaimComparison.Verdict, _ breaks: Bool
    ) {
        var b2c: [String: JSONValue] = ["oid": .string(Self.oid), "tfp": "B2C_1_susi_social"]
        var eid: [String: JSONValue] = ["oid": .string(Self.oid)]
        b2c["idp"] = b2cIdp.map { .string($0) }
        eid["idp"] = externalIdIdp.map { .string($0) }
        let c = ClaimComparison(b2c: .object(b2c), externalId: .object(eid))
        let idp = c.lines.first { $0.b2cClaim == "idp" || $0.externalIdClaim == "idp" }
        #expect(idp?.b2cClaim == b2cIdp.map { _ in "idp" } && idp?.externalIdClaim == externalIdIdp.map { _ in "idp" })
        #expect(idp?.verdict == verdict && idp?.breaks == breaks && c.breaks == breaks, "\(c.lines)")
    }

    @Test func apiAnswersCompareByStatusAndMembers() {
        let same = APIAnswerComparison(
            b2cStatus: 200, b2cBody: Data(#"{"name":"A","n":1}"#.utf8), externalIdStatus: 200,
            externalIdBody: Data(#"{"n":1,"name":"A"}"#.utf8))
        #expect(!same.breaks)
        let other = APIAnswerComparison(
            b2cStatus: 200, b2cBody: Data(#"{"name":"A"}"#.utf8), externalIdStatus: 403, externalIdBody: Data("denied".utf8))
        #expect(other.breaks && other.differing.map(\.name) == ["(body)"])
    }
}
