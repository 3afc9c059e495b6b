import B2CKit
import B2CProtocol
import Foundation
import Testing

@testable import B2CEmulator

/// A relying party's tokens follow its issuer profile's metadata (`JwtIssuer`: lifetimes, the issuer's form, the policy
/// claim, numbers as strings), over real HTTP; a value B2C would not take is refused at upload, naming the item.
@Suite struct CustomPolicyTokenSettingsTests {
    static let policy = "B2C_1A_signup_signin"

    /// The example set with the issuer's metadata items replaced by `items`.
    static func examples(issuerItems items: [String: String]) throws -> URL {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("b2c-jwtissuer-\(UUID().uuidString)")
        try FileManager.default.copyItem(at: CustomPolicyTests.examples, to: dir)
        let base = dir.appendingPathComponent("TrustFrameworkBase.xml")
        let anchor = "<Item Key=\"SendTokenResponseBodyWithJsonNumbers\">true</Item>"
        let xml = try String(contentsOf: base, encoding: .utf8)
        #expect(xml.contains(anchor), "the example issuer profile changed; update this test")
        let replaced = items.sorted { $0.key < $1.key }.map { "<Item Key=\"\($0.key)\">\($0.value)</Item>" }.joined(separator: "\n")
        try xml.replacingOccurrences(of: anchor, with: replaced).write(to: base, atomically: true, encoding: .utf8)
        return dir
    }

    @Test func theIssuersMetadataSetsLifetimesIssuerPolicyClaimAndNumberForm() async throws {
        let dir = try Self.examples(issuerItems: [
            "token_lifetime_secs": "900", "id_token_lifetime_secs": "600", "refresh_token_lifetime_secs": "86400",
            "rolling_refresh_token_lifetime_secs": "172800", "IssuanceClaimPattern": "AuthorityWithTfp",
            "AuthenticationContextReferenceClaimPattern": "None", "SendTokenResponseBodyWithJsonNumbers": "false",
        ])
        defer { try? FileManager.default.removeItem(at: dir) }
        let t = try await TestTenant.start()
        defer { Task { await t.stop() } }
        try t.emulator.customPolicies.load(directory: dir)
        let tokens = try await CustomPolicyJourneyTests.signInTokens(t)
        #expect(tokens.status == 200, "\(tokens.body)")
        // Numbers as strings (the legacy form), with the lifetimes the metadata gives.
        #expect(tokens.json["expires_in"] == "900" && tokens.json["id_token_expires_in"] == "600", "\(tokens.body)")
        #expect(tokens.json["refresh_token_expires_in"] == "86400", "\(tokens.body)")
        let id = try claims(tokens.json["id_token"]?.stringValue)
        let at = try claims(tokens.json["access_token"]?.stringValue)
        #expect(id["exp"]?.doubleValue.map { $0 - (id["iat"]?.doubleValue ?? 0) } == 600)
        #expect(at["exp"]?.doubleValue.map { $0 - (at["iat"]?.doubleValue ?? 0) } == 900)
        // AuthorityWithTfp: the issuer names the policy; None: no acr (and no tfp, which this relying party does not output).
        let issuer = try #require(id["iss"]?.stringValue)
        #expect(issuer.hasSuffix("/tfp/\(t.emulator.tenantID)/\(Self.policy.lowercased())/v2.0/"), "\(issuer)")
        #expect(id["acr"] == nil && id["tfp"] == nil && at["acr"] == nil, "\(id.keys.sorted())")
        // Discovery says the same issuer and no policy claim; userinfo still answers for the token.
        let discovery = try await t.get("/contoso.onmicrosoft.com/\(Self.policy)/v2.0/.well-known/openid-configuration")
        #expect(discovery.json["issuer"]?.stringValue == issuer, "\(discovery.body)")
        #expect(discovery.json["claims_supported"]?.arrayValue?.contains("acr") == false, "\(discovery.body)")
        let accessToken = try #require(tokens.json["access_token"]?.stringValue)
        let info = try await t.get(
            "/contoso.onmicrosoft.com/\(Self.policy)/openid/v2.0/userinfo", headers: [("Authorization", "Bearer \(accessToken)")])
        #expect(info.status == 200 && info.json["sub"] == .string(alice.oid), "\(info.body)")
        // The refresh token lives a day: past it, the grant is refused.
        let refresh = [
            "grant_type": "refresh_token", "client_id": clientID, "refresh_token": tokens.json["refresh_token"]?.stringValue ?? "",
        ]
        try await t.advanceClock(86400 + 60)
        let expired = try await t.token(Self.policy, refresh)
        #expect(expired.status == 400 && expired.json["error"]?.stringValue == "invalid_grant", "\(expired.body)")
    }

    @Test func theStarterPacksIssuerKeepsTheSeedsSettingsAndNumbers() async throws {
        let t = try await CustomPolicyJourneyTests.tenantWithExamples()
        defer { Task { await t.stop() } }
        let tokens = try await CustomPolicyJourneyTests.signInTokens(t)
        #expect(tokens.json["expires_in"] == 3600, "\(tokens.body)")
        let id = try claims(tokens.json["id_token"]?.stringValue)
        #expect(id["acr"]?.stringValue == Self.policy.lowercased())
        #expect(id["iss"]?.stringValue?.hasSuffix("/\(t.emulator.tenantID)/v2.0/") == true, "\(id["iss"] ?? nil)")
    }

    @Test(arguments: [
        ("token_lifetime_secs", "60", "from 300 to 86400"),
        ("refresh_token_lifetime_secs", "ninety", "from 86400 to 7776000"),
        ("IssuanceClaimPattern", "Tenant", "\"AuthorityAndTenantGuid\" or \"AuthorityWithTfp\""),
    ])
    func aValueB2CWouldNotTakeIsRefusedNamingTheItem(item: String, value: String, expected: String) async throws {
        let dir = try Self.examples(issuerItems: [item: value])
        defer { try? FileManager.default.removeItem(at: dir) }
        let t = try await TestTenant.start()
        defer { Task { await t.stop() } }
        let error = #expect(throws: PolicyLoadError.self) { try t.emulator.customPolicies.load(directory: dir) }
        let text = error.map { "\($0)" } ?? ""
        #expect(text.contains("<Item Key=\"\(item)\">") && text.contains("\"\(value)\"") && text.contains(expected), "\(text)")
        #expect(text.contains("TrustFrameworkBase.xml"), "\(text)")
    }
}
