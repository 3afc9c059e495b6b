import B2CKit
import Foundation
import Testing

/// Finding 5 of the security review (docs/security.md): `b2c import` took unsigned, forged id tokens and overwrote the
/// accounts already in the store.
@Suite struct ImportSecurityTests {
    static func b64(_ s: String) -> String { Base64URL.encode(Data(s.utf8)) }

    /// An exported cache, changed by `edit` (the cache's sections as a mutable dictionary), written to a file.
    static func tampered(_ w: World, _ edit: (inout [String: JSONValue]) throws -> Void) async throws -> String {
        let export = try await w.b2c(["export", "--format", "msal", "--stdout"])
        #expect(export.status == 0, "\(export.stderr)")
        var cache = export.json.objectValue ?? [:]
        try edit(&cache)
        let file = w.dir.appendingPathComponent("cache-\(UUID().uuidString.prefix(6)).json")
        try Data(JSONValue.object(cache).serialized().utf8).write(to: file)
        return file.path
    }

    /// Sets `field` of every entry of `section` to `value`.
    static func set(_ cache: inout [String: JSONValue], _ section: String, _ field: String, _ value: JSONValue) {
        var entries = cache[section]?.objectValue ?? [:]
        for (k, v) in entries {
            var e = v.objectValue ?? [:]
            e[field] = value
            entries[k] = .object(e)
        }
        cache[section] = .object(entries)
    }

    @Test func anUnsignedIdTokenWithSomeoneElsesClaimsIsRefused() async throws {
        try await World.with { w in
            #expect(try await w.b2c(["signin"], as: alice).status == 0)
            let before = try await w.b2c(["whoami", "-o", "json"])
            let secretsBefore = try w.storeSecrets()
            let forged =
                Self.b64(#"{"alg":"none","typ":"JWT"}"#) + "."
                + Self.b64(
                    #"{"iss":"\#(w.server.baseURL)/\#(tenantID)/v2.0/","aud":"3f6b8c9d-2e1a-4b7c-8d9e-0f1a2b3c4d5e","oid":"\#(alice.oid)","#
                        + #""sub":"\#(alice.oid)","tfp":"B2C_1_susi","name":"Mallory","emails":["mallory@evil.example"],"#
                        + #""exp":9999999999,"iat":1}"#) + "."
            let file = try await Self.tampered(w) { cache in
                Self.set(&cache, "IdToken", "secret", .string(forged))
                Self.set(&cache, "RefreshToken", "secret", .string("forged-refresh-token"))
            }
            let r = try await w.b2c(["import", "--format", "msal", file, "--replace"])
            #expect(r.status == 1, "\(r.stderr)")
            #expect(r.stderr.contains("not signed by B2C_1_susi's keys"), "\(r.stderr)")
            #expect(try await w.b2c(["whoami", "-o", "json"]).stdout == before.stdout)
            #expect(try w.storeSecrets().sorted() == secretsBefore.sorted())
        }
    }

    @Test func aSignedTokenOfAnotherPersonOrPolicyIsRefused() async throws {
        try await World.with { w in
            #expect(try await w.b2c(["signin", "--prompt", "login"], as: bob, jar: "b").status == 0)
            let bobsIdToken = try await Self.tampered(w) { _ in }
            let bobsToken = try JSONValue.parse(Data(contentsOf: URL(fileURLWithPath: bobsIdToken)))["IdToken"]?.objectValue?.values.first?[
                "secret"]
            #expect(try await w.b2c(["signout", "--all"]).status == 0)
            #expect(try await w.b2c(["signin"], as: alice, jar: "a").status == 0)
            let file = try await Self.tampered(w) { cache in Self.set(&cache, "IdToken", "secret", bobsToken ?? .null) }
            let r = try await w.b2c(["import", "--format", "msal", file, "--replace"])
            #expect(r.status == 1 && r.stderr.contains("names another person"), "\(r.stderr)")
        }
    }

    @Test func anAccountInTheStoreKeepsItsRefreshTokenUnlessReplaced() async throws {
        try await World.with { w in
            #expect(try await w.b2c(["signin"], as: alice).status == 0)
            let file = try await Self.tampered(w) { _ in }
            #expect(try await w.b2c(["token", "--force-refresh"]).status == 0)  // the store's refresh token rotates
            let rotated = try w.storeSecrets()
            let kept = try await w.b2c(["import", "--format", "msal", file])
            #expect(kept.status == 1 && kept.stderr.contains("already in the store") && kept.stderr.contains("kept"), "\(kept.stderr)")
            #expect(try w.storeSecrets().sorted() == rotated.sorted())
            let replaced = try await w.b2c(["import", "--format", "msal", file, "--replace"])
            #expect(replaced.status == 0 && replaced.stdout.contains("Imported"), "\(replaced.stderr)")
        }
    }
}
