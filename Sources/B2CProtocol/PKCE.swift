import Crypto
import Foundation

/// Proof Key for Code Exchange (RFC 7636).
public struct PKCE: Sendable {
    public let verifier: String
    public var challenge: String { PKCE.s256Challenge(for: verifier) }
    public let method = "S256"

    public init(verifier: String = Random.token(bytes: 32)) { self.verifier = verifier }

    public static func s256Challenge(for verifier: String) -> String {
        Base64URL.encode(Data(SHA256.hash(data: Data(verifier.utf8))))
    }

    /// RFC 7636 §4.1: 43–128 characters of [A-Z a-z 0-9 - . _ ~].
    public static func isValidVerifier(_ s: String) -> Bool {
        (43...128).contains(s.count)
            && s.unicodeScalars.allSatisfy { $0.isASCII && (CharacterSet.alphanumerics.contains($0) || "-._~".unicodeScalars.contains($0)) }
    }
}
