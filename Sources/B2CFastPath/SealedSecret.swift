import COpenSSL

/// The store's sealed secrets: AES-256-GCM with the row's identity (table and key columns) as associated data, so that a
/// ciphertext moved to another row does not open. A sealed value is version byte 1, the 12-byte nonce, the ciphertext
/// and the 16-byte tag. (Sealing is B2CKit's, with swift-crypto; opening is here, with libcrypto, for both programs.)
public enum SealedSecret {
    public static let version: UInt8 = 1

    /// The associated data of a row: what a seal binds the ciphertext to.
    public static func associatedData(_ identity: String) -> [UInt8] { Array("b2c/v1\0\(identity)".utf8) }

    /// The text sealed in `blob` for `identity`; nil when it is not b2c's form or does not open with `key` for that row.
    public static func open(_ blob: [UInt8], key: [UInt8], row identity: String) -> String? {
        guard key.count == 32, blob.count >= 1 + 12 + 16, blob[0] == version, let ctx = EVP_CIPHER_CTX_new() else { return nil }
        defer { EVP_CIPHER_CTX_free(ctx) }
        let nonce = Array(blob[1..<13]), cipher = Array(blob[13..<(blob.count - 16)]), tag = Array(blob[(blob.count - 16)...])
        let aad = associatedData(identity)
        var plain = [UInt8](repeating: 0, count: cipher.count + 16)
        var length: Int32 = 0, final: Int32 = 0
        var tagCopy = tag
        guard EVP_DecryptInit_ex(ctx, EVP_aes_256_gcm(), nil, nil, nil) == 1,
            EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_SET_IVLEN, 12, nil) == 1,
            EVP_DecryptInit_ex(ctx, nil, nil, key, nonce) == 1,
            EVP_DecryptUpdate(ctx, nil, &length, aad, Int32(aad.count)) == 1,
            EVP_DecryptUpdate(ctx, &plain, &length, cipher, Int32(cipher.count)) == 1,
            EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_SET_TAG, 16, &tagCopy) == 1
        else { return nil }
        let written = Int(length)
        guard plain.withUnsafeMutableBufferPointer({ EVP_DecryptFinal_ex(ctx, $0.baseAddress! + written, &final) }) == 1 else {
            return nil
        }
        return String(decoding: plain[0..<(written + Int(final))], as: UTF8.self)
    }

    /// The row identity of an access token.
    public static func accessTokenRow(_ environment: String, _ client: String, _ account: String, _ target: String) -> String {
        "access_tokens\0\(environment)\0\(client)\0\(account)\0\(target)"
    }

    /// A short public name of a key (never the key): base64url of a hash, 16 characters.
    public static func keyID(_ key: [UInt8]) -> String {
        String(Digest.base64URL(Digest.sha256(Array("b2c store key id\0".utf8) + key)).prefix(16))
    }

    /// What a key is checked against: a known text sealed with it when the store was encrypted.
    public static let checkText = "b2c store key check"
    public static let checkRow = "settings\0key_check"

    /// The kernel keyring description under which a store's key is cached.
    public static func kernelCacheName(storeID: String, keyID: String) -> String { "b2c:store-key:\(storeID):\(keyID)" }
}
