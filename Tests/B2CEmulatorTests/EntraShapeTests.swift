import AsyncHTTPClient
import B2CKit
import Foundation
import NIOCore
import Testing

@testable import B2CEmulator

/// What an External ID tenant issues is Entra's shape, not B2C's (reference: b2c-protocol.md §13.6): app-only tokens with
/// the application permissions in `roles` and `idtyp: app`; the sample API takes both shapes; a tenant behind a host name
/// accepts the tokens it issued under that name.
@Suite struct EntraShapeTests {
    static func appToken(_ t: TestTenant, policy: String = "B2C_1_susi", headers: [(String, String)] = []) async throws -> String {
        let r = try await t.token(
            policy,
            [
                "grant_type": "client_credentials", "client_id": EmulatorSeed.defaultDaemonID,
                "client_secret": EmulatorSeed.defaultDaemonSecret, "scope": helloDefault,
            ], headers: headers)
        return try #require(r.json["access_token"]?.stringValue, "\(r.status) \(r.body)")
    }

    @Test func externalIDAppTokensCarryRolesAndB2COnesScp() async throws {
        var seed = EmulatorSeed.default
        seed.tenant.externalId = true
        try await TestTenant.with(seed: seed) { t in
            let token = try await Self.appToken(t)
            let c = try claims(token)
            #expect(c["roles"] == ["hello.read.all"] && c["idtyp"] == "app" && c["scp"] == nil, "\(c)")
            #expect(c["tfp"] == nil && c["acr"] == nil && c["ver"] == "2.0" && c["tid"] == .string(tenantID) && c["oid"] != nil)
            let api = try await t.get("/hello", headers: [("Authorization", "Bearer \(token)")])
            #expect(api.status == 200 && api.json["roles"] == ["hello.read.all"], "\(api.status) \(api.body)")
            let person = try claims(try await signInAndRedeem(t)["access_token"]?.stringValue)
            #expect(person["idtyp"] == nil && person["scp"] != nil && person["roles"] == nil && person["tfp"] == nil, "\(person)")
        }
        try await TestTenant.with { t in
            let c = try claims(try await Self.appToken(t))
            #expect(c["scp"] == "hello.read.all" && c["roles"] == nil && c["idtyp"] == nil && c["tfp"] == "B2C_1_susi", "\(c)")
        }
    }

    /// `--host-name contoso.b2clogin.test`: a token issued to a client that named the tenant so is accepted by its API.
    @Test func theSampleAPIAcceptsTokensIssuedUnderTheTenantsHostName() async throws {
        try await TestTenant.with { t in
            t.emulator.answer(to: ["contoso.b2clogin.test"])
            let port = try #require(URL(string: t.base)?.port)
            let named = [("Host", "contoso.b2clogin.test:\(port)")]
            let token = try await Self.appToken(t, headers: named)
            #expect(try claims(token)["iss"] == .string("http://contoso.b2clogin.test:\(port)/\(tenantID)/v2.0/"))
            let api = try await t.get("/hello", headers: named + [("Authorization", "Bearer \(token)")])
            #expect(api.status == 200, "\(api.status) \(api.body)")
            // A name the tenant does not answer to is no issuer of its tokens.
            let forged = try await t.get("/hello", headers: [("Authorization", "Bearer \(token.dropLast(4))AAAA")])
            #expect(forged.status == 401)
        }
    }
}
