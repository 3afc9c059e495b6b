import B2CProtocol
import Foundation
import JWTKit

/// The id-token signature check of the client, done by vapor/jwt-kit against the policy's JWKS: a verifier that shares
/// no code with the emulator's signer, so a mistake in one cannot hide behind the other.
enum SignatureCheck {
    /// jwt-kit checks the signature only; the claims are checked by `JWT.validateClaims`, with explicit times and
    /// messages in B2C terms.
    struct AnyClaims: JWTPayload {
        init(from decoder: any Decoder) throws {}
        func encode(to encoder: any Encoder) throws {}
        func verify(using algorithm: some JWTAlgorithm) throws {}
    }

    /// RS256 only; a `kid` that is not in the key set is `unknownKey` (the caller refetches the JWKS once), since
    /// jwt-kit would try its default key instead.
    static func verify(_ token: String, decoded jwt: JWT, keys: JWKSet, document: Data) async throws {
        guard jwt.algorithm == "RS256" else { throw B2CProtocol.JWTError.unsupportedAlgorithm(jwt.algorithm ?? "none") }
        if let kid = jwt.kid, keys.key(kid: kid) == nil { throw B2CProtocol.JWTError.unknownKey(kid: kid) }
        let collection = JWTKeyCollection()
        do {
            // The token's own key when it names one: jwt-kit then reads one modulus and exponent, not the whole key set
            // through its JSON decoder (a measurable share of a refresh; bench/README.md, item 3).
            if let kid = jwt.kid, let key = keys.key(kid: kid), key.kty == "RSA" {
                let publicKey = try Insecure.RSA.PublicKey(modulus: key.n, exponent: key.e)
                await collection.add(rsa: publicKey, digestAlgorithm: .sha256, kid: JWKIdentifier(string: kid))
            } else {
                try await collection.add(jwksJSON: String(decoding: document, as: UTF8.self))
            }
        } catch {
            throw B2CProtocol.JWTError.malformed("the key set cannot be used: \(error)")
        }
        do { _ = try await collection.verify(token, as: AnyClaims.self) } catch {
            throw B2CProtocol.JWTError.badSignature
        }
    }
}
