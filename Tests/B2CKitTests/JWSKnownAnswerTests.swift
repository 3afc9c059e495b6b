import _CryptoExtras
@testable import B2CKit
import Foundation
import Testing

/// Our RS256 signer and verifier against RFC 7515 appendix A.2 (PKCS#1 v1.5 is deterministic, so the signature itself
/// is the known answer), and the client's jwt-kit verifier against the same vector: neither can pass by agreeing with
/// the other.
@Suite struct JWSKnownAnswerTests {
    static let n =
        "ofgWCuLjybRlzo0tZWJjNiuSfb4p4fAkd_wWJcyQoTbji9k0l8W26mPddxHmfHQp-Vaw-4qPCJrcS2mJPMEzP1Pt0Bm4d4QlL-yRT-SFd2lZS-pCgNMsD1W_YpRPE"
        + "wOWvG6b32690r"
        + "2jZ47soMZo9wGzjb_7OMg0LOL-bSf63kpaSHSXndS5z5rexMdbBYUsLA9e-KXBdQOS-UTo7WTBEMa2R2CapHg665xsmtdVMTBQY4uDZlxvb3qCo5ZwKh9kG4LT6"
        + "_I5IhlJH7aG"
        + "hyxXFvUK-DWNmoudF8NAco9_h9iaGNj8q2ethFkMLs91kzk2PAcDTW9gb54h4FRWyuXpoQ"
    static let e = "AQAB"
    static let d =
        "Eq5xpGnNCivDflJsRQBXHx1hdR1k6Ulwe2JZD50LpXyWPEAeP88vLNO97IjlA7_GQ5sLKMgvfTeXZx9SE-7YwVol2NXOoAJe46sui395IW_GO-pWJ1O0BkTGoVEn2bK"
        + "VRUCgu-GjBVaYLU6f3l9kJfFNS3E0QbVdxzubSu3Mkqzjkn439X0M_V51gfpRLI9JYanrC4D4qAdGcopV_0ZHHzQlBjudU2QvXt4ehNYTCBr6XCLQUShb1juUO1"
        + "ZdiYoFaFQ"
        + "T5Tw8bGUl_x_jTj3ccPDVZFD9pIuhLhBOneufuBiB4cS98l2SR_RQyGWSeWjnczT0QU91p1DhOVRuOopznQ"
    static let p =
        "4BzEEOtIpmVdVEZNCqS7baC4crd0pqnRH_5IB3jw3bcxGn6QLvnEtfdUdiYrqBdss1l58BQ3KhooKeQTa9AB0Hw_Py5PJdTJNPY8cQn7ouZ2KKDcmnPGBY5t7yLc1QlQ5x"
        + "HdwW1VhvKn-nXqhJTBgIPgtldC-KDV5z-y2XDwGUc"
    static let q =
        "uQPEfgmVtjL0Uyyx88GZFF1fOunH3-7cepKmtH4pxhtCoHqpWmT8YAmZxaewHgHAjLYsp1ZSe7zFYHj7C6ul7TjeLQeZD_YwD66t62wDmpe_HlB-TnBA-njbglfIsRLtX"
        + "lnDzQkv5dTltRJ11BKBBypeeF6689rjcJIDEz9RWdc"
    /// BASE64URL(UTF8({"alg":"RS256"})) . BASE64URL(the payload of A.1, CRLF line breaks included)
    static let signingInput =
        "eyJhbGciOiJSUzI1NiJ9.eyJpc3MiOiJqb2UiLA0KICJleHAiOjEzMDA4MTkzODAsDQogImh0dHA6Ly9leGFtcGxlLmNvbS9pc19yb290Ijp0cnVlfQ"
    static let signature =
        "cC4hiUPoj9Eetdgtv3hF80EGrhuB__dzERat0XF9g2VtQgr9PJbu3XOiZj5RZmh7AAuHIm4Bh-0Qc_lF5YKt_O8W2Fp5jujGbds9uJdbF9CUAr7t1dnZcAcQjbKB"
        + "YNX4BAynRFdiuB--f_nZLgrnbyTyWzO75vRK5h6xBArLIARNPvkSjtQBMHlb1L07Qe7K0GarZRmB_eSN9383LcOLn6_dO--xi12jzDwusC-eOkHWEsqtFZESc6B"
        + "fI7noOPq"
        + "vhJ1phCnvWh6IeYI2w9QOYEUipUTI8np6LbgGY9Fs98rqVt5AXLIhWkWywlVmtVrBp0igcN_IoypGlUPQGe77Rw"

    static func bytes(_ s: String) -> Data { Base64URL.decode(s)! }

    static var jwks: (set: JWKSet, document: Data) {
        let document = Data(#"{"keys":[{"kty":"RSA","kid":"2010-12-29","n":"\#(n)","e":"\#(e)"}]}"#.utf8)
        return (try! JWKSet.parse(document), document)
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
