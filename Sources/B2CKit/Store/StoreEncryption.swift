import B2CFastPath
import Crypto
import Foundation
import GRDB
import NIOConcurrencyHelpers

/// How the store keeps tokens: encrypted (the default, with a data key from a key store), or in plaintext — only
/// when chosen explicitly (`b2c config set storage plaintext`), remembered in the store and shown on every sign-in.
public enum StorageMode: String, Sendable {
    case encrypted, plaintext
}

/// Where a store's 256-bit data key lives.
public enum StoreKeySource: String, Sendable {
    /// The freedesktop Secret Service (GNOME Keyring, KWallet), reached over the session bus.
    case secretService = "secret-service"
    /// The macOS Keychain.
    case keychain
    /// `$B2C_STORE_KEY` (base64 of 32 bytes), for CI and containers: from the CI's secret store.
    case environment
    /// A key that lives only in this process (the demo's temporary store).
    case ephemeral

    /// In words, for messages.
    public var place: String {
        switch self {
        case .secretService: "the Secret Service (GNOME Keyring or KWallet on the session bus)"
        case .keychain: "the macOS Keychain"
        case .environment: "B2C_STORE_KEY"
        case .ephemeral: "this process only"
        }
    }
}

/// The places this process may take a data key from, in the order a new store chooses them: the platform's key store
/// (Secret Service or Keychain), then `$B2C_STORE_KEY`. An existing store needs the source it was encrypted with.
package struct StoreKeySources: Sendable {
    /// The environment: `B2C_STORE_KEY`, and the session bus address the Secret Service is reached at.
    public var environment: [String: String]
    /// Whether the platform's key store (Secret Service or Keychain) may be used.
    public var platformKeyStore: Bool
    /// Cache a key from the platform key store in the kernel's user keyring (Linux), so that a cache hit does not
    /// pay a D-Bus round trip: readable by this user only, gone at reboot, expiring after `cacheSeconds`.
    public var kernelCache: Bool
    /// How long a key cached in the kernel keyring lives, in seconds (8 hours by default).
    public var cacheSeconds: UInt32 = 8 * 3600
    /// A key that lives only in this process; when there is one, it comes before every other source.
    public var ephemeralKey: SymmetricKey?

    /// The sources as given; `system(environment:)` and `ephemeral(_:)` make the usual ones.
    public init(environment: [String: String], platformKeyStore: Bool, kernelCache: Bool, ephemeralKey: SymmetricKey? = nil) {
        self.environment = environment; self.platformKeyStore = platformKeyStore; self.kernelCache = kernelCache
        self.ephemeralKey = ephemeralKey
    }

    /// What a command uses: the platform key store with the kernel cache, and `$B2C_STORE_KEY`.
    public static func system(environment: [String: String] = ProcessEnvironment.current()) -> StoreKeySources {
        StoreKeySources(environment: environment, platformKeyStore: true, kernelCache: true)
    }

    /// One key known to this process only (a temporary store, tests).
    public static func ephemeral(_ key: SymmetricKey = SymmetricKey(size: .bits256)) -> StoreKeySources {
        StoreKeySources(environment: [:], platformKeyStore: false, kernelCache: false, ephemeralKey: key)
    }

    /// Whether a new store could get a key here at all (ephemeral, a platform key store, or `$B2C_STORE_KEY`): asked before
    /// anything is created for a store that must outlive the process.
    public var offersKey: Bool {
        ephemeralKey != nil || platform != nil || !(environment["B2C_STORE_KEY"] ?? "").isEmpty
    }

    /// The platform key store, when this machine has one.
    var platform: PlatformKeyStore? { platformKeyStore ? PlatformKeyStore.current(environment: environment) : nil }
}

/// Seals and opens the store's secret columns. AES-256-GCM; the row's identity (table, key columns) is the associated
/// data, so a ciphertext moved to another row does not open. Stored as a BLOB: version byte 1, 12-byte nonce,
/// ciphertext, 16-byte tag. Without a key (plaintext mode) values are TEXT, as before.
struct StoreCipher: Sendable {
    let key: SymmetricKey?

    func seal(_ text: String, row identity: String) throws -> DatabaseValue {
        guard let key else { return text.databaseValue }
        let box = try AES.GCM.seal(Data(text.utf8), using: key, authenticating: Data(SealedSecret.associatedData(identity)))
        var blob = Data([SealedSecret.version])
        blob.append(contentsOf: box.nonce)
        blob.append(box.ciphertext)
        blob.append(box.tag)
        return blob.databaseValue
    }

    func open(_ value: DatabaseValue, row identity: String) throws -> String {
        switch (value.storage, key) {
        case (.string(let text), nil): return text
        case (.blob(let blob), let key?):
            guard blob.count >= 1 + 12 + 16, blob.first == SealedSecret.version else {
                throw B2CError.store(
                    "a token in the store is not in b2c's encrypted form (\(identity.split(separator: "\0").first ?? "")); sign in again")
            }
            guard let text = SealedSecret.open([UInt8](blob), key: key.withUnsafeBytes { [UInt8]($0) }, row: identity) else {
                throw B2CError.store(
                    "a token in the store does not decrypt for its row (\(identity.split(separator: "\0").first ?? "")): it was moved or "
                        + "altered; it is not served. Sign in again")
            }
            return text
        case (.string, _?):
            throw B2CError.store(
                "the store is encrypted, but a token in it is in plaintext (it was written by something else); sign in again")
        case (.blob, nil):
            throw B2CError.store("the store is in plaintext mode, but a token in it is encrypted", remedy: .encryptStore)
        default:
            throw B2CError.store("a token column of the store holds neither text nor an encrypted value")
        }
    }

    /// The row identities of the secret columns.
    static func accessToken(_ environment: String, _ client: String, _ account: String, _ target: String) -> String {
        SealedSecret.accessTokenRow(environment, client, account, target)
    }
    static func refreshToken(_ environment: String, _ client: String, _ account: String) -> String {
        "refresh_tokens\0\(environment)\0\(client)\0\(account)"
    }
    static func idToken(_ environment: String, _ client: String, _ account: String) -> String {
        "accounts\0\(environment)\0\(client)\0\(account)"
    }
    static func appToken(_ environment: String, _ client: String, _ resource: String) -> String {
        "app_tokens\0\(environment)\0\(client)\0\(resource)"
    }

    /// A short public name of a key (never the key): base64url of a hash, 16 characters.
    static func keyID(_ key: SymmetricKey) -> String { SealedSecret.keyID(key.withUnsafeBytes { [UInt8]($0) }) }

    /// What a key is checked against: a known text sealed with it when the store was encrypted.
    static let checkText = SealedSecret.checkText
}

/// What the store's `settings` table says about its secrets.
public struct StorageStatus: Sendable, Equatable {
    /// nil: not decided yet (a new store, or one written before encryption existed).
    public var mode: StorageMode?
    /// Where the data key comes from, when the store is encrypted.
    public var source: StoreKeySource?
    /// A short public name of the store's key, derived from it by a hash; never the key.
    public var keyID: String?
    /// The store's own random id; the platform key store keeps the key under it.
    public var storeID: String
}
