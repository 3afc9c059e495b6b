@testable import B2CKit
import B2CProtocol
import Foundation
import Testing

/// The last check before a token is stored or served: it must come from one of the configuration's hosts, for the
/// account's (and the configured) tenant, to the configuration's app. Every way a token can fail it, and the shapes that
/// pass (B2C's v1 tokens with `azp`, app tokens with only `aud`, External ID's `<tenant>.ciamlogin.com` issuer).
@Suite struct TokenOwnershipTests {
    static let tenant = "8f2c6d4e-1a3b-4c5d-9e7f-0a1b2c3d4e5f"
    static let client = "3f6b8c9d-2e1a-4b7c-8d9e-0f1a2b3c4d5e"

    static func configuration(tenantID: String? = nil) throws -> ClientConfiguration {
        let id = tenantID.map { #", "id": "\#($0)""# } ?? ""
        let json = """
            {"tenant": {"name": "contoso.onmicrosoft.com"\(id)}, "authorityHost": "https://contoso.b2clogin.com",
             "clientId": "\(client)", "knownAuthorities": ["contoso.b2clogin.com", "login.contoso.com"],
             "policies": [{"name": "B2C_1_susi", "role": "signUpSignIn"}], "redirectUri": "http://localhost"}
            """
        return try ClientConfiguration.parse(Data(json.utf8), source: "policies.json")
    }

    /// An unsigned JWT with these claims (ownership reads claims; signatures are checked elsewhere).
    static func token(_ claims: JSONValue) -> String {
        Base64URL.encode(Array(#"{"alg":"RS256","typ":"JWT"}"#.utf8)) + "." + Base64URL.encode(claims.serialized()) + ".c2ln"
    }

    static func problem(_ claims: JSONValue, tenantID: String? = nil) throws -> String? {
        TokenOwnership.problem(accessToken: token(claims), config: try configuration(tenantID: tenantID), tenantID: tenant)
    }

    @Test func aTokenOfThisConfigurationPasses() throws {
        let iss = JSONValue.string("https://contoso.b2clogin.com/\(Self.tenant)/v2.0/")
        #expect(try Self.problem(["iss": iss, "azp": .string(Self.client), "aud": "5a7b9c1d-3e2f-4a6b-8c0d-1e2f3a4b5c6d"]) == nil)
        // Upper-case ids, a custom domain among knownAuthorities, an app token that names the client only in aud.
        #expect(
            try Self.problem([
                "iss": .string("https://login.contoso.com/\(Self.tenant.uppercased())/v2.0/"),
                "azp": .string(Self.client.uppercased()),
            ]) == nil)
        #expect(try Self.problem(["iss": iss, "aud": .array([.string(Self.client)])]) == nil)
        // External ID's issuer host is the tenant's own ciamlogin.com name, not a configured host.
        #expect(
            try Self.problem([
                "iss": .string("https://\(Self.tenant).ciamlogin.com/\(Self.tenant)/v2.0"),
                "azp": .string(Self.client),
            ]) == nil)
        // The configured tenant id matches.
        #expect(try Self.problem(["iss": iss, "azp": .string(Self.client)], tenantID: Self.tenant) == nil)
        // Not a JWT: nothing to read, not judged here.
        #expect(TokenOwnership.problem(accessToken: "opaque", config: try Self.configuration(), tenantID: Self.tenant) == nil)
    }

    @Test func aTokenFromAnotherHostTenantOrAppIsRefused() throws {
        let own = "https://contoso.b2clogin.com/\(Self.tenant)/v2.0/"
        let other = "11111111-2222-4333-8444-555555555555"
        let foreignHost = try #require(
            try Self.problem(["iss": .string("https://fabrikam.b2clogin.com/\(Self.tenant)/v2.0/"), "azp": .string(Self.client)]))
        #expect(foreignHost.contains("fabrikam.b2clogin.com") && foreignHost.contains("knownAuthorities"))
        // The same host and port matter: a second emulator on another port is another authority.
        #expect(
            try Self.problem(["iss": .string("https://contoso.b2clogin.com:8443/\(Self.tenant)/v2.0/"), "azp": .string(Self.client)]) != nil
        )
        let foreignTenant = try #require(
            try Self.problem(["iss": .string("https://contoso.b2clogin.com/\(other)/v2.0/"), "azp": .string(Self.client)]))
        #expect(foreignTenant.contains("tenant \(other)"))
        let notConfigured = try #require(
            try Self.problem(["iss": .string(own), "azp": .string(Self.client)], tenantID: other))
        #expect(notConfigured.contains("the configured \(other)"))
        let otherApp = try #require(try Self.problem(["iss": .string(own), "azp": "99999999-9999-4999-8999-999999999999"]))
        #expect(otherApp.contains("issued to the app 99999999-9999-4999-8999-999999999999"))
        let noParty = try #require(try Self.problem(["iss": .string(own), "aud": "5a7b9c1d-3e2f-4a6b-8c0d-1e2f3a4b5c6d"]))
        #expect(noParty.contains("names no app of this configuration"))
        #expect(try Self.problem(["iss": "not a url", "azp": .string(Self.client)])?.contains("is not a URL") == true)
    }
}
