import CTokenSigning

/// An AES-256-GCM key of the tenant (its refresh tokens are sealed with it), used through libcrypto's EVP interface
/// (CTokenSigning): AES-NI and carry-less multiplication where the processor has them, the key's schedule made once.
/// Nonces of 12 bytes, tags of 16. The client's store keeps `AES256GCM` (B2CFastPath), whose low-level calls do not start
/// OpenSSL's providers: a cache hit opens one secret, a refresh grant opens one token and seals another, and with the
/// low-level AES (no AES-NI) those two were 112,000 instructions, a sixth of what the grant spent outside RSA.
final class GCMKey: @unchecked Sendable {
    // @unchecked: `native` is set once and never changed; each operation takes a libcrypto context of its own from it.
    private let native: OpaquePointer

    /// Nil when the key is not 32 bytes or libcrypto has no AES-256-GCM.
    init?(_ key: [UInt8]) {
        guard key.count == 32, let native = b2c_gcm_key_new(key) else { return nil }
        self.native = native
    }

    deinit { b2c_gcm_key_free(native) }

    /// The ciphertext (as long as `plaintext`) and its tag; nil when the nonce is not 12 bytes or libcrypto fails.
    func seal(_ plaintext: [UInt8], nonce: [UInt8], aad: [UInt8]) -> (ciphertext: [UInt8], tag: [UInt8])? {
        guard nonce.count == 12 else { return nil }
        var ciphertext = [UInt8](repeating: 0, count: plaintext.count)
        var tag = [UInt8](repeating: 0, count: 16)
        let sealed = ciphertext.withUnsafeMutableBufferPointer { out in
            b2c_gcm_seal(native, nonce, aad, aad.count, plaintext, plaintext.count, out.baseAddress, &tag)
        }
        return sealed == 1 ? (ciphertext, tag) : nil
    }

    /// The plaintext; nil when the tag does not match (another key, nonce or associated data, or an altered ciphertext).
    func open(_ ciphertext: [UInt8], tag: [UInt8], nonce: [UInt8], aad: [UInt8]) -> [UInt8]? {
        guard nonce.count == 12, tag.count == 16 else { return nil }
        var plaintext = [UInt8](repeating: 0, count: ciphertext.count)
        let opened = plaintext.withUnsafeMutableBufferPointer { out in
            b2c_gcm_open(native, nonce, aad, aad.count, ciphertext, ciphertext.count, tag, out.baseAddress)
        }
        return opened == 1 ? plaintext : nil
    }
}
