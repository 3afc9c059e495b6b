import B2CProtocol
import Crypto
import Foundation
import X509
import _CryptoExtras

/// The password an `OnPasswordSubmit` extension receives, as `encryptedPasswordContext`: a compact JWE (RFC 7516) encrypted
/// to the extension app's certificate — `RSA-OAEP-256` (or `RSA-OAEP`) for the content key, `A256GCM` for the content —
/// whose plaintext is an unsecured JWT (`alg: none`) of `user-password`, `username` and `nonce`, as Microsoft's sample
/// function decodes it. Microsoft's guide does not name the algorithms: `RSA-OAEP-256` with `A256GCM` is the emulator's
/// choice, `RSA-OAEP` a seed knob.
enum PasswordEncryption {
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// The RSA public key of a PEM certificate or public key file.
    static func publicKey(file: String) throws -> _RSA.Encryption.PublicKey {
        guard let data = FileManager.default.contents(atPath: file), let pem = String(data: data, encoding: .utf8) else {
            throw Failure(description: "cannot be read")
        }
        if pem.contains("BEGIN CERTIFICATE") {
            let certificate: Certificate
            do { certificate = try Certificate(pemEncoded: pem) } catch {
                throw Failure(description: "is not a PEM certificate that can be read")
            }
            do {
                return try _RSA.Encryption.PublicKey(derRepresentation: Array(certificate.publicKey.subjectPublicKeyInfoBytes))
            } catch {
                throw Failure(description: "holds a certificate whose key is not RSA")
            }
        }
        do { return try _RSA.Encryption.PublicKey(pemRepresentation: pem) } catch {
            throw Failure(description: "is neither a PEM certificate nor an RSA public key (PEM)")
        }
    }

    /// The compact JWE of `claims` for `key`.
    static func encrypt(_ claims: JSONValue, to key: _RSA.Encryption.PublicKey, algorithm: String) throws -> String {
        let inner =
            Base64URL.encode(Data(#"{"alg":"none","typ":"JWT"}"#.utf8)) + "." + Base64URL.encode(Data(claims.serialized().utf8)) + "."
        let header: JSONValue = ["alg": .string(algorithm), "enc": "A256GCM", "cty": "JWT"]
        let protected = Base64URL.encode(Data(header.serialized().utf8))
        let contentKey = SymmetricKey(size: .bits256)
        let wrapped = try contentKey.withUnsafeBytes { raw in
            try key.encrypt(Data(raw), padding: algorithm == "RSA-OAEP" ? .PKCS1_OAEP : .PKCS1_OAEP_SHA256)
        }
        let nonce = AES.GCM.Nonce()
        let sealed = try AES.GCM.seal(Data(inner.utf8), using: contentKey, nonce: nonce, authenticating: Data(protected.utf8))
        return [
            protected, Base64URL.encode(wrapped), Base64URL.encode(Data(nonce)), Base64URL.encode(sealed.ciphertext),
            Base64URL.encode(sealed.tag),
        ].joined(separator: ".")
    }
}
