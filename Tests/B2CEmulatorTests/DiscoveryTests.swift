import B2CEmulator
import B2CKit
import Foundation
import Crypto
import Testing
import X509
import _CryptoExtras

@Suite struct DiscoveryTests {
    @Test func everyAuthorityFormServesDiscoveryThatMirrorsIt() async throws {
        try await TestTenant.with { t in
            let host = t.base
            let forms: [(String, String)] = [
                (
                    "/contoso.onmicrosoft.com/B2C_1_susi/v2.0/.well-known/openid-configuration",
                    "\(host)/contoso.onmicrosoft.com/b2c_1_susi/oauth2/v2.0/authorize"
                ),
                (
                    "/tfp/contoso.onmicrosoft.com/B2C_1_susi/v2.0/.well-known/openid-configuration",
                    "\(host)/tfp/contoso.onmicrosoft.com/b2c_1_susi/oauth2/v2.0/authorize"
                ),
                ("/\(tenantID)/b2c_1_SUSI/v2.0/.well-known/openid-configuration", "\(host)/\(tenantID)/b2c_1_susi/oauth2/v2.0/authorize"),
                (
                    "/contoso.onmicrosoft.com/v2.0/.well-known/openid-configuration?p=B2C_1_susi",
                    "\(host)/contoso.onmicrosoft.com/oauth2/v2.0/authorize?p=b2c_1_susi"
                ),
                // passport-azure-ad appends a redundant p= and x-client-* parameters.
                (
                    "/contoso.onmicrosoft.com/B2C_1_susi/v2.0/.well-known/openid-configuration?p=B2C_1_susi&x-client-SKU=node&"
                        + "x-client-Ver=1",
                    "\(host)/contoso.onmicrosoft.com/b2c_1_susi/oauth2/v2.0/authorize"
                ),
                ("/contoso/B2C_1_susi/v2.0/.well-known/openid-configuration", "\(host)/contoso/b2c_1_susi/oauth2/v2.0/authorize"),
            ]
            for (path, authorize) in forms {
                let r = try await t.get(path)
                #expect(r.status == 200, "\(path): \(r.body)")
                #expect(r.json["authorization_endpoint"]?.stringValue == authorize, "\(path)")
                #expect(r.json["issuer"]?.stringValue == "\(host)/\(tenantID)/v2.0/")
                let tokenURL = try #require(r.json["token_endpoint"]?.stringValue)
                #expect(tokenURL.hasPrefix(host) && tokenURL.contains("oauth2/v2.0/token"))
                #expect(r.json["end_session_endpoint"]?.stringValue?.contains("oauth2/v2.0/logout") == true)
                #expect(r.json["response_modes_supported"] == ["query", "fragment", "form_post"])
                // The keys URL it names works.
                let keys = try await t.get(try #require(r.json["jwks_uri"]?.stringValue))
                #expect(keys.status == 200)
            }
        }
    }

    @Test func jwksPublishesTheSigningKey() async throws {
        try await TestTenant.with { t in
            let r = try await t.get("/contoso.onmicrosoft.com/B2C_1_susi/discovery/v2.0/keys")
            let key = try #require(r.json["keys"]?.arrayValue?.first)
            for field in ["kid", "kty", "use", "n", "e"] { #expect(key[field]?.stringValue?.isEmpty == false, "\(field)") }
            #expect(key["kty"] == "RSA")
            #expect(key["use"] == "sig")
            let set = try JWKSet.parse(Data(r.body.utf8))
            #expect(try set.keys[0].rsaPublicKey().keySizeInBits == 2048)
        }
    }

    /// Each side publishes what it publishes: B2C's keys say since when they sign (`nbf`), Entra's carry their
    /// certificate (`x5t`, `x5c`) — whose key is the published one and whose SHA-1 thumbprint is `x5t`.
    @Test func eachSidesJWKSCarriesItsOwnFields() async throws {
        try await TestTenant.with { t in
            let keys = try await t.get("/contoso.onmicrosoft.com/B2C_1_susi/discovery/v2.0/keys").json["keys"]?.arrayValue
            let key = try #require(keys?.first)
            #expect((key["nbf"]?.lenientInt ?? 0) > 1_500_000_000 && key["x5c"] == nil, "\(key)")
        }
        try await TestTenant.with(seed: .defaultExternalID) { t in
            let r = try await t.get("/contoso.onmicrosoft.com/discovery/v2.0/keys")
            let key = try #require(r.json["keys"]?.arrayValue?.first, "\(r.body)")
            #expect(key["nbf"] == nil)
            let der = try #require(key["x5c"]?.arrayValue?.first?.stringValue.flatMap { Data(base64Encoded: $0) })
            #expect(key["x5t"]?.stringValue == Base64URL.encode(Data(Insecure.SHA1.hash(data: der))))
            let certificate = try Certificate(derEncoded: Array(der))
            let published = try JWKSet.parse(Data(r.body.utf8)).keys[0].rsaPublicKey()
            #expect(certificate.publicKey == Certificate.PublicKey(published))
            // The same key publishes the same certificate on the next request.
            let again = try await t.get("/contoso.onmicrosoft.com/discovery/v2.0/keys").json["keys"]?.arrayValue?.first
            #expect(again?["x5c"] == key["x5c"])
        }
    }

    @Test func tfpIssuerPatternAndAcrClaimFollowThePolicy() async throws {
        var seed = EmulatorSeed.default
        seed.policies[0].issuerPattern = "tfp"
        seed.policies[0].policyClaim = "acr"
        try await TestTenant.with(seed: seed) { t in
            let d = try await t.get("/contoso.onmicrosoft.com/B2C_1_susi/v2.0/.well-known/openid-configuration")
            #expect(d.json["issuer"]?.stringValue == "\(t.base)/tfp/\(tenantID)/b2c_1_susi/v2.0/")
            let tokens = try await signInAndRedeem(t)
            let c = try claims(tokens["id_token"]?.stringValue)
            #expect(c["acr"] == "b2c_1_susi")
            #expect(c["tfp"] == nil)
            #expect(c["iss"]?.stringValue == d.json["issuer"]?.stringValue)
        }
    }

    @Test func unknownPolicyTenantAndPathsAreClearErrors() async throws {
        try await TestTenant.with { t in
            let p = try await t.get("/contoso.onmicrosoft.com/B2C_1_nope/v2.0/.well-known/openid-configuration")
            #expect(p.status == 404)
            #expect(p.json["error_description"]?.stringValue?.contains("B2C_1_nope") == true)
            let q = try await t.get("/contoso.onmicrosoft.com/v2.0/.well-known/openid-configuration?p=B2C_1_other")
            #expect(q.status == 404)
            let tenant = try await t.get("/fabrikam.onmicrosoft.com/B2C_1_susi/v2.0/.well-known/openid-configuration")
            #expect(tenant.status == 404)
            #expect(tenant.json["error_description"]?.stringValue?.contains("fabrikam.onmicrosoft.com") == true)
            let nothing = try await t.get("/contoso.onmicrosoft.com/B2C_1_susi/nothing/here")
            #expect(nothing.status == 404)
            let noPolicy = try await t.get("/contoso.onmicrosoft.com/oauth2/v2.0/authorize?client_id=\(clientID)")
            expectB2CError(noPolicy, error: "invalid_request", code: "AADB2C90055")
        }
    }

    @Test func userRealmProbeIs404() async throws {
        try await TestTenant.with { t in
            let r = try await t.get("/common/userrealm/alice@contoso.com?api-version=1.0", headers: [("Accept", "application/json")])
            #expect(r.status == 404)
        }
    }

    @Test func policyWithoutPathSegmentServesNativeDiscovery() async throws {
        try await TestTenant.with { t in
            let r = try await t.get("/contoso.onmicrosoft.com/v2.0/.well-known/openid-configuration")
            #expect(r.status == 200)
            #expect(r.json["token_endpoint"]?.stringValue == "\(t.base)/contoso.onmicrosoft.com/oauth2/v2.0/token")
        }
    }
}
