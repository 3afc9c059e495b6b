/// The store's sealed secrets: AES-256-GCM with the row's identity (table and key columns) as associated data, so that a
/// ciphertext moved to another row does not open. A sealed value is version byte 1, the 12-byte nonce, the ciphertext
/// and the 16-byte tag. (Sealing is B2CKit's, with swift-crypto; opening is here, with libcrypto, for both programs.)
public enum SealedSecret {
    public static let version: UInt8 = 1

    /// The associated data of a row: what a seal binds the ciphertext to.
    public static func associatedData(_ identity: String) -> [UInt8] { Array("b2c/v1\0\(identity)".utf8) }

    /// The text sealed in `blob` for `identity`; nil when it is not b2c's form or does not open with `key` for that row.
    public static func open(_ blob: [UInt8], key: [UInt8], row identity: String) -> String? {
        guard key.count == 32, blob.count >= 1 + 12 + 16, blob[0] == version else { return nil }
        let nonce = Array(blob[1..<13]), cipher = Array(blob[13..<(blob.count - 16)]), tag = Array(blob[(blob.count - 16)...])
        guard let plain = AES256GCM.open(cipher, tag: tag, key: key, nonce: nonce, aad: associatedData(identity)) else { return nil }
        return String(decoding: plain, as: UTF8.self)
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
