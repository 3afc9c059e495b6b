import _CryptoExtras
@testable import B2CKit
import Foundation
import Testing
import TestSupport

/// Our RS256 signer and verifier against RFC 7515 appendix A.2 (PKCS#1 v1.5 is deterministic, so the signature itself
/// is the known answer), and the client's jwt-kit verifier against the same vector: neither can pass by agreeing with
/// the other.
@Suite struct JWSKnownAnswerTests {
    static let n = RFC7515A2.n
    static let e = RFC7515A2.e
    static let d = RFC7515A2.d
    static let p = RFC7515A2.p
    static let q = RFC7515A2.q
    static let signingInput = RFC7515A2.signingInput
    static let signature = RFC7515A2.signature

    static func bytes(_ s: String) -> Data { Base64URL.decode(s)! }

    static var jwks: (set: JWKSet, document: Data) {
        let document = Data(#"{"keys":[{"kty":"RSA","kid":"2010-12-29","n":"\#(n)","e":"\#(e)"}]}"#.utf8)
        return (try! JWKSet.parse(document), document)
    }

    /// The header a signed token carries is the bytes `JSONValue` writes for the same dictionary, whatever the kid holds.
    @Test func headerAsTheDictionaryWroteIt() throws {
        let kids = ["7iTGHXGaoNjrDKMdtVrqa2e4-LoNFVbLcakxITYlC70", "", "a\"b", "back\\slash/and/slash", "tab\tnew\nline", "\u{1}", "é✓😀"]
        for kid in kids {
            let token = JWT.sign(claims: ["iss": "x"], kid: kid) { _ in "sig" }
            let header = try #require(Base64URL.decode(String(token.split(separator: ".")[0])))
            let dictionary: JSONValue = ["typ": "JWT", "alg": "RS256", "kid": .string(kid)]
            #expect(Array(header) == dictionary.serializedBytes(), "\(kid.debugDescription)")
            #expect(try JWT.decode(token).header["kid"]?.stringValue == kid)
        }
    }

    @Test func ourSignerProducesTheRFCSignature() throws {
        let key = try _RSA.Signing.PrivateKey(
            n: Self.bytes(Self.n), e: Self.bytes(Self.e), d: Self.bytes(Self.d), p: Self.bytes(Self.p),
            q: Self.bytes(Self.q))
        #expect(try JWT.signature(signingInput: Self.signingInput, key: key) == Self.signature)
    }

    @Test func ourVerifierAcceptsTheRFCTokenAndRefusesATamperedOne() throws {
        let token = try JWT.decode(Self.signingInput + "." + Self.signature)
        try token.verifySignature(with: JWKSet(keys: [JWK(kid: "2010-12-29", n: Self.n, e: Self.e)]))
        let payload = String(decoding: Self.bytes(String(Self.signingInput.split(separator: ".")[1])), as: UTF8.self)
        let tampered = try JWT.decode(
            "eyJhbGciOiJSUzI1NiJ9." + Base64URL.encode(payload.replacingOccurrences(of: "joe", with: "eve")) + "." + Self.signature)
        #expect(throws: JWTError.badSignature) {
            try tampered.verifySignature(with: JWKSet(keys: [JWK(kid: "2010-12-29", n: Self.n, e: Self.e)]))
        }
    }

    @Test func theClientsJWTKitVerifierAcceptsTheRFCTokenAndRefusesOthers() async throws {
        let (set, document) = Self.jwks
        let token = Self.signingInput + "." + Self.signature
        // The RFC header has no kid: jwt-kit uses the set's only key.
        try await SignatureCheck.verify(token, decoded: try JWT.decode(token), keys: set, document: document)
        let forged = Self.signingInput + "." + Self.signature.replacingOccurrences(of: "cC4h", with: "dC4h")
        await #expect(throws: JWTError.badSignature) {
            try await SignatureCheck.verify(forged, decoded: try JWT.decode(forged), keys: set, document: document)
        }
        // A token that names a key the set does not have: unknownKey, so that the client refetches the key set once.
        let other = try _RSA.Signing.PrivateKey(keySize: .bits2048)
        let foreign = try JWT.sign(claims: ["iss": "x"], kid: "rotated-key", key: other)
        await #expect(throws: JWTError.unknownKey(kid: "rotated-key")) {
            try await SignatureCheck.verify(foreign, decoded: try JWT.decode(foreign), keys: set, document: document)
        }
        let none = "eyJhbGciOiJub25lIn0." + Self.signingInput.split(separator: ".")[1] + "."
        await #expect(throws: JWTError.unsupportedAlgorithm("none")) {
            try await SignatureCheck.verify(none, decoded: try JWT.decode(none), keys: set, document: document)
        }
    }

    @Test func tokensOfOurSignerVerifyWithJWTKit() async throws {
        let key = try _RSA.Signing.PrivateKey(keySize: .bits2048)
        let jwk = try JWK(publicKey: key.publicKey)
        let token = try JWT.sign(claims: ["iss": "https://issuer/", "aud": "client"], kid: jwk.kid, key: key)
        let document = Data(JWKSet(keys: [jwk]).json.serialized().utf8)
        try await SignatureCheck.verify(token, decoded: try JWT.decode(token), keys: JWKSet(keys: [jwk]), document: document)
    }
}
