import B2CEmulator
import B2CKit
import Crypto
import Foundation
import SwiftASN1
import Testing
import X509

/// Findings 1 and 7 of the security review (docs/security.md): a web page on this machine must not drive or read the
/// tenant's admin surface, and the tenant's CA must not be able to vouch for any other site.
@Suite struct EmulatorSecurityTests {
    static let curl = URL(fileURLWithPath: "/usr/bin/curl")

    func curl(_ w: World, _ args: [String]) async throws -> (status: Int, body: String) {
        let r = try await run(
            Self.curl, ["-sS", "--cacert", w.caPath, "-o", "-", "-w", "\n%{http_code}"] + args,
            environment: ProcessInfo.processInfo.environment)
        let lines = r.stdout.split(separator: "\n", omittingEmptySubsequences: false)
        return (Int(lines.last ?? "") ?? 0, lines.dropLast().joined(separator: "\n"))
    }

    /// Finding 1: the cross-site POST a page can send without a preflight (`text/plain`, an `Origin` of another site)
    /// changed the tenant; now it is refused and nothing changes.
    @Test func aPagesTextPlainPostCannotDriveTheAdminSurface() async throws {
        try await World.with { w in
            let users = try await w.admin("GET", "/users")["users"]?.arrayValue?.count
            let keys = try await w.admin("GET", "/keys")
            let forged = try await curl(
                w,
                [
                    "-X", "POST", "-H", "Content-Type: text/plain", "-H", "Origin: http://evil.example", "--data",
                    #"{"email":"mallory@evil.example","password":"Mallory-2026!"}"#, w.server.baseURL + "/_admin/users",
                ])
            #expect(forged.status == 403, "\(forged)")
            // Without Origin (a form or sendBeacon may omit it), text/plain is still not JSON: 415.
            let plain = try await curl(
                w,
                [
                    "-X", "POST", "-H", "Content-Type: text/plain", "--data", #"{"advanceSeconds":86400}"#,
                    w.server.baseURL + "/_admin/clock",
                ])
            #expect(plain.status == 415 && plain.body.contains("application/json"), "\(plain)")
            let fetchMetadata = try await curl(
                w,
                [
                    "-X", "POST", "-H", "Content-Type: application/json", "-H", "Sec-Fetch-Site: cross-site", "--data", "{}",
                    w.server.baseURL + "/_admin/keys/rotate",
                ])
            #expect(fetchMetadata.status == 403, "\(fetchMetadata)")
            #expect(try await w.admin("GET", "/users")["users"]?.arrayValue?.count == users)
            #expect(try await w.admin("GET", "/clock")["offsetSeconds"]?.lenientInt == 0)
            #expect(try await w.admin("GET", "/keys") == keys)
            // The real clients still work: JSON with its content type, and no browser's headers (a page of the tenant's
            // own origin is refused too: SecurityReviewTests.theAdminSurfaceAnswersNoPageItsOwnIncluded).
            let created = try await curl(
                w,
                [
                    "-X", "POST", "-H", "Content-Type: application/json", "--data",
                    #"{"email":"erin@contoso.com","password":"Erin-2026-pw!"}"#, w.server.baseURL + "/_admin/users",
                ])
            #expect(created.status == 201, "\(created)")
        }
    }

    /// Finding 1: after DNS rebinding, a page's requests carry its own name in Host; the seed (secrets, passwords) and
    /// discovery (which reflected the Host into the issuer) are not served to it.
    @Test func aReboundNameGetsNothing() async throws {
        try await World.with { w in
            let rebound = "evil.example:\(w.server.port)"
            for path in ["/_admin/seed", "/_admin/outbox", "/contoso.onmicrosoft.com/B2C_1_susi/v2.0/.well-known/openid-configuration"] {
                let r = try await curl(w, ["-H", "Host: \(rebound)", w.server.baseURL + path])
                #expect(r.status == 421, "\(path): \(r)")
                #expect(!r.body.contains("password") && !r.body.contains("evil.example/"), "\(path): \(r.body)")
                #expect(r.body.contains("DNS rebinding"))
            }
            // The names it serves still answer: an address, localhost.
            for host in ["127.0.0.1:\(w.server.port)", "localhost:\(w.server.port)"] {
                let r = try await curl(w, ["-H", "Host: \(host)", w.server.baseURL + "/_admin/seed"])
                #expect(r.status == 200, "\(host): \(r.status)")
            }
        }
    }

    /// Finding 7: whoever reads the state directory's CA key could mint a certificate for any site that a browser
    /// trusting the CA would accept. The CA now names the host names it may vouch for (Name Constraints) and lives 30 days
    /// (IP addresses stay unconstrained: docs/security.md).
    @Test func theTenantsCACannotVouchForOtherSites() async throws {
        try await World.with(hostNames: ["login.contoso.test"]) { w in
            let state = w.dir.appendingPathComponent("state")
            let caPEM = try String(contentsOf: state.appendingPathComponent("ca.pem"), encoding: .utf8)
            let ca = try Certificate(pemEncoded: caPEM)
            let key = try P256.Signing.PrivateKey(
                pemRepresentation: try String(contentsOf: state.appendingPathComponent("ca-key.pem"), encoding: .utf8))
            #expect(ca.notValidAfter.timeIntervalSinceNow < 31 * 86_400)
            func verify(_ san: GeneralName, _ name: String) async throws -> Run {
                let leafKey = P256.Signing.PrivateKey()
                let leaf = try Certificate(
                    version: .v3, serialNumber: .init(), publicKey: .init(leafKey.publicKey),
                    notValidBefore: Date().addingTimeInterval(-60),
                    notValidAfter: Date().addingTimeInterval(86_400), issuer: ca.subject,
                    subject: try DistinguishedName { CommonName("b2c test leaf") }, signatureAlgorithm: .ecdsaWithSHA256,
                    extensions: try Certificate.Extensions {
                        Critical(BasicConstraints.notCertificateAuthority)
                        try ExtendedKeyUsage([.serverAuth])
                        SubjectAlternativeNames([san])
                    }, issuerPrivateKey: .init(key))
                let file = w.dir.appendingPathComponent("leaf-\(name).pem")
                try Data(try leaf.serializeAsPEM().pemString.utf8).write(to: file)
                return try await run(
                    URL(fileURLWithPath: "/usr/bin/openssl"), ["verify", "-CAfile", w.caPath, file.path],
                    environment: ProcessInfo.processInfo.environment)
            }
            let forged = try await verify(.dnsName("login.microsoftonline.com"), "login.microsoftonline.com")
            #expect(forged.status != 0 && (forged.stdout + forged.stderr).contains("permitted subtree"), "\(forged)")
            let subdomain = try await verify(.dnsName("login.contoso.test.evil.example"), "suffix")
            #expect(subdomain.status != 0, "\(subdomain)")
            for (san, name) in [
                (GeneralName.dnsName("localhost"), "localhost"), (.dnsName("login.contoso.test"), "login.contoso.test"),
                (.ipAddress(ASN1OctetString(contentBytes: [127, 0, 0, 1])), "127.0.0.1"),
            ] {
                let ok = try await verify(san, name)
                #expect(ok.status == 0, "\(name): \(ok)")
            }
        }
    }
}
