import CStoreCrypto

/// AES-256-GCM through libcrypto's low-level interface (CStoreCrypto): a 32-byte key, a 12-byte nonce, a 16-byte tag. The
/// store's sealed secrets open with it, and the tenant seals and opens its refresh tokens with it (swift-crypto's `AES.GCM`
/// round trips through `Data` cost a refresh grant more than the cipher).
public enum AES256GCM {
    /// The ciphertext (as long as `plaintext`) and its tag; nil when the key or nonce has the wrong length, or libcrypto
    /// fails.
    public static func seal(_ plaintext: [UInt8], key: [UInt8], nonce: [UInt8], aad: [UInt8]) -> (ciphertext: [UInt8], tag: [UInt8])? {
        guard key.count == 32, nonce.count == 12 else { return nil }
        var ciphertext = [UInt8](repeating: 0, count: plaintext.count)
        var tag = [UInt8](repeating: 0, count: 16)
        guard b2c_aes256gcm_seal(key, nonce, aad, aad.count, plaintext, plaintext.count, &ciphertext, &tag) == 1 else { return nil }
        return (ciphertext, tag)
    }

    /// The plaintext; nil when the tag does not match (another key, nonce or associated data, or an altered ciphertext).
    public static func open(_ ciphertext: [UInt8], tag: [UInt8], key: [UInt8], nonce: [UInt8], aad: [UInt8]) -> [UInt8]? {
        guard key.count == 32, nonce.count == 12, tag.count == 16 else { return nil }
        var plaintext = [UInt8](repeating: 0, count: ciphertext.count)
        guard b2c_aes256gcm_open(key, nonce, aad, aad.count, ciphertext, ciphertext.count, tag, &plaintext) == 1 else { return nil }
        return plaintext
    }
}
