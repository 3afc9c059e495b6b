import B2CProtocol
import CTokenSigning
import Crypto
import Foundation
import _CryptoExtras

/// One signing key's RS256 signatures, made by the system's libcrypto: OpenSSL's RSA signs as fast as swift-crypto's on
/// the processors measured and more than twice as fast where AVX-512 IFMA is there (bench/README.md, "Signing at the
/// machine's limit"), and a token is one signature per answer. The key stays where it was (the state's `signing_keys`);
/// libcrypto holds copies in memory only, made from swift-crypto's (one per signing thread, up to 16: threads sharing
/// one RSA object sign a tenth slower, CTokenSigning), and frees them with this signer.
///
/// The two are held to the same answer: RSASSA-PKCS1-v1_5 is deterministic, so at load libcrypto signs a probe and its
/// signature must be swift-crypto's, byte for byte; a key libcrypto cannot read or answers differently is signed by
/// swift-crypto (`usesLibcrypto` says which). Public for `b2c-bench sign-bound`, which measures the bound it signs at.
public final class RS256Signer: @unchecked Sendable {
    // @unchecked: `native` is set once and never changed; it signs from several threads at once (each with the copy of
    // its slot, CTokenSigning).

    public let key: _RSA.Signing.PrivateKey
    private let native: OpaquePointer?

    public init(_ key: _RSA.Signing.PrivateKey) {
        self.key = key
        native = Self.libcryptoKey(key)
    }

    deinit { if let native { b2c_rsa_key_free(native) } }

    /// Whether libcrypto makes this key's signatures.
    public var usesLibcrypto: Bool { native != nil }

    /// The RS256 signature of a JWS signing input, base64url.
    public func signature(signingInput: String) throws -> String {
        guard let native else { return try JWT.signature(signingInput: signingInput, key: key) }
        return Base64URL.encode(try Self.sign(Array(signingInput.utf8), with: native))
    }

    /// A signed token (`typ`, `alg`, `kid` in its header) of these claims.
    public func sign(_ claims: JSONValue, kid: String) throws -> String {
        try JWT.sign(claims: claims, kid: kid) { try signature(signingInput: $0) }
    }

    private static func libcryptoKey(_ key: _RSA.Signing.PrivateKey) -> OpaquePointer? {
        var der = [UInt8](key.derRepresentation)
        defer { der.withUnsafeMutableBytes { if let base = $0.baseAddress { _ = memset(base, 0, $0.count) } } }
        guard let native = der.withUnsafeBufferPointer({ b2c_rsa_key_from_der($0.baseAddress, $0.count) }) else { return nil }
        let probe = Array("b2c local tenant: libcrypto and swift-crypto sign alike".utf8)
        guard let ours = try? sign(probe, with: native),
            let theirs = try? key.signature(for: Data(probe), padding: .insecurePKCS1v1_5).rawRepresentation,
            ours == [UInt8](theirs)
        else {
            b2c_rsa_key_free(native)
            return nil
        }
        return native
    }

    private static func sign(_ input: [UInt8], with native: OpaquePointer) throws -> [UInt8] {
        var signature = [UInt8](repeating: 0, count: b2c_rsa_key_size(native))
        let written = input.withUnsafeBufferPointer { data in
            signature.withUnsafeMutableBufferPointer { b2c_rsa_sign_sha256(native, data.baseAddress, data.count, $0.baseAddress) }
        }
        guard written == signature.count else { throw SigningFailure() }
        return signature
    }

    /// libcrypto refused to sign (it does not, for a key it read): the token is not issued.
    struct SigningFailure: Error, CustomStringConvertible {
        var description: String { "the tenant's signing key could not sign (libcrypto refused)" }
    }
}
