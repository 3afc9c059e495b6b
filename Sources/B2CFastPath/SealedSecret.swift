import Crypto
import Foundation

/// The store's sealed secrets: AES-256-GCM with the row's identity (table and key columns) as associated data, so that a
/// ciphertext moved to another row does not open. A sealed value is version byte 1, the 12-byte nonce, the ciphertext
/// and the 16-byte tag.
public enum SealedSecret {
    public static let version: UInt8 = 1

    public static func seal(_ text: String, key: SymmetricKey, row identity: String) throws -> Data {
        let box = try AES.GCM.seal(Data(text.utf8), using: key, authenticating: associatedData(identity))
        var blob = Data([version])
        blob.append(contentsOf: box.nonce)
        blob.append(box.ciphertext)
        blob.append(box.tag)
        return blob
    }

    /// The text sealed in `blob` for `identity`; nil when it is not b2c's form or does not open with `key` for that row.
    public static func open(_ blob: Data, key: SymmetricKey, row identity: String) -> String? {
        guard blob.count >= 1 + 12 + 16, blob.first == version,
            let nonce = try? AES.GCM.Nonce(data: blob.dropFirst().prefix(12)),
            let box = try? AES.GCM.SealedBox(nonce: nonce, ciphertext: blob.dropFirst(13).dropLast(16), tag: blob.suffix(16)),
            let plain = try? AES.GCM.open(box, using: key, authenticating: associatedData(identity))
        else { return nil }
        return String(decoding: plain, as: UTF8.self)
    }

    static func associatedData(_ identity: String) -> Data { Data("b2c/v1\0\(identity)".utf8) }

    /// The row identity of an access token.
    public static func accessTokenRow(_ environment: String, _ client: String, _ account: String, _ target: String) -> String {
        "access_tokens\0\(environment)\0\(client)\0\(account)\0\(target)"
    }

    /// A short public name of a key (never the key): base64url of a hash, 16 characters.
    public static func keyID(_ key: SymmetricKey) -> String {
        let digest = key.withUnsafeBytes { SHA256.hash(data: Data("b2c store key id\0".utf8) + Data($0)) }
        let b64 = Data(digest).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
        return String(b64.prefix(16))
    }

    /// What a key is checked against: a known text sealed with it when the store was encrypted.
    public static let checkText = "b2c store key check"
    public static let checkRow = "settings\0key_check"

    /// The kernel keyring description under which a store's key is cached.
    public static func kernelCacheName(storeID: String, keyID: String) -> String { "b2c:store-key:\(storeID):\(keyID)" }
}
