import B2CProtocol
import Crypto
import Foundation
import Testing

@testable import B2CEmulator

/// The byte-level matching of a scope to its API decides as the `String.hasPrefix` and `dropFirst` it replaced, for ASCII
/// and non-ASCII scopes and App ID URIs (a combining mark, the Kelvin sign, which is canonically a capital K).
@Suite struct APIScopeMatchTests {
    @Test func agreesWithStringPrefixMatching() {
        let pieces = ["https://c.example/api", "/", "read", "K", "\u{212a}", "e", "\u{301}", "\u{e9}", "x", ""]
        let uris = ["https://c.example/api", "https://c.example/apiK", "https://c.example/api\u{212a}", "caf\u{e9}", "cafe\u{301}", "x"]
        let apis = uris.enumerated().map { i, uri in
            EmulatorSeed.API(name: "a\(i)", appId: "id\(i)", identifierUri: uri, scopes: ["read"], requiredScope: nil)
        }
        func old(_ item: String) -> (String, String)? {
            guard let api = apis.first(where: { item.hasPrefix($0.identifierUri + "/") }) else { return nil }
            return (api.name, String(item.dropFirst(api.identifierUri.count + 1)))
        }
        var rng = SystemRandomNumberGenerator()
        var matched = 0
        for _ in 0..<5_000 {
            // Half of them start with a URI and a slash, so that the matching branch is reached often.
            let start = Bool.random(using: &rng) ? uris.randomElement(using: &rng)! + "/" : ""
            let item = start + (0..<Int.random(in: 1...4, using: &rng)).map { _ in pieces.randomElement(using: &rng)! }.joined()
            let new = TokenIssuer.apiScope(item, of: apis).map { ($0.0.name, $0.1) }
            #expect(new?.0 == old(item)?.0 && new?.1 == old(item)?.1, "\(item.unicodeScalars.map { $0.value })")
            if new != nil { matched += 1 }
        }
        #expect(matched > 1_000, "the random scopes reach the matching branch")
    }
}

/// The store's digests (token and secret hashes, `at_hash`) come from libcrypto; they are the bytes swift-crypto gave, so
/// that the hashes in an existing state file still match.
@Suite struct TokenDigestTests {
    @Test func libcryptoDigestsMatchSwiftCrypto() {
        var rng = SystemRandomNumberGenerator()
        let alphabet = Array("aZ09-_.~ \u{e9}\u{1f600}")
        for length in [0, 1, 55, 56, 63, 64, 65, 119, 120, 1_000, 1_500] {
            let text = String((0..<length).map { _ in alphabet.randomElement(using: &rng)! })
            #expect(EmulatorStore.sha256(text) == Array(SHA256.hash(data: Data(text.utf8))), "length \(length)")
            #expect(EmulatorStore.hash(text) == Base64URL.encode(Data(SHA256.hash(data: Data(text.utf8)))))
        }
        // Entra's pairwise subject: stable across the change of library (a person's `sub` at an app must not move).
        let pairwise = "pairwise:8f2c6d4e-1a3b-4c5d-9e7f-0a1b2c3d4e5f:7c2f1d3b-8e5a-4f4c-8b9d-3a6e2f1c8d0b:oid-1"
        #expect(
            TokenIssuer.pairwiseSubject(
                tenantID: "8f2c6d4e-1a3b-4c5d-9e7f-0a1b2c3d4e5f", clientId: "7C2F1D3B-8E5A-4F4C-8B9D-3A6E2F1C8D0B", oid: "oid-1")
                == Base64URL.encode(Data(SHA256.hash(data: Data(pairwise.utf8)))))
        // OIDC Core's at_hash of its example access token (§A.3 and the specification's examples).
        #expect(TokenIssuer.leftHalfHash("jHkWEdUXMU1BwAsC4vtUsZwnNvTIxEl0z9K3vx5KF0Y") == "77QmUPtjPfzWtF2AnpK9RQ")
    }
}
