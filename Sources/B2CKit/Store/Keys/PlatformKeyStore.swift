import Foundation

#if canImport(Glibc)
import SecretService
#endif
#if canImport(Security)
import Security
#endif

/// Why the machine's key store could not give or keep a key, in words (no session bus, no keyring daemon, locked…).
struct PlatformKeyStoreError: Error, CustomStringConvertible {
    let description: String
}

/// The machine's own key store for the store's data key: the freedesktop Secret Service (Linux, BSD), reached over the
/// session bus with every call bounded by a short timeout, or the macOS Keychain (compiled on Darwin only; not
/// exercised by this project's tests, which run on Linux). Items are named by the store's id and the key's id, so a
/// key rotation can keep the old key until the store no longer needs it.
struct PlatformKeyStore: Sendable {
    let source: StoreKeySource
    #if canImport(Glibc)
    let secretService: SecretServiceKeyStore
    #endif

    /// The key store this machine offers; nil when there is none to try (Linux without a session bus address).
    static func current(environment: [String: String]) -> PlatformKeyStore? {
        #if canImport(Glibc)
        var address = environment["DBUS_SESSION_BUS_ADDRESS"].flatMap { $0.isEmpty ? nil : $0 }
        if address == nil, let runtime = environment["XDG_RUNTIME_DIR"], !runtime.isEmpty,
            FileManager.default.fileExists(atPath: runtime + "/bus")
        {
            address = "unix:path=\(runtime)/bus"
        }
        guard let address else { return nil }
        return PlatformKeyStore(source: .secretService, secretService: SecretServiceKeyStore(address: address, timeout: .seconds(2)))
        #elseif canImport(Security)
        return PlatformKeyStore(source: .keychain)
        #else
        return nil
        #endif
    }

    static func attributes(storeID: String, keyID: String) -> [String: String] {
        ["application": "b2c", "b2c-store": storeID, "b2c-key": keyID]
    }

    func read(storeID: String, keyID: String) throws -> Data? {
        #if canImport(Glibc)
        do { return try secretService.read(attributes: Self.attributes(storeID: storeID, keyID: keyID)) } catch {
            throw PlatformKeyStoreError(description: error.description)
        }
        #elseif canImport(Security)
        var query = keychainQuery(storeID: storeID, keyID: keyID)
        query[kSecReturnData as String] = true
        query[kSecMatchLimit as String] = kSecMatchLimitOne
        var item: CFTypeRef?
        let status = SecItemCopyMatching(query as CFDictionary, &item)
        if status == errSecItemNotFound { return nil }
        guard status == errSecSuccess, let data = item as? Data else { throw keychainError(status) }
        return data
        #else
        throw PlatformKeyStoreError(description: "this system has no key store b2c can use")
        #endif
    }

    func write(_ key: Data, storeID: String, keyID: String, label: String) throws {
        #if canImport(Glibc)
        do { try secretService.write(key, label: label, attributes: Self.attributes(storeID: storeID, keyID: keyID)) } catch {
            throw PlatformKeyStoreError(description: error.description)
        }
        #elseif canImport(Security)
        var query = keychainQuery(storeID: storeID, keyID: keyID)
        SecItemDelete(query as CFDictionary)
        query[kSecValueData as String] = key
        query[kSecAttrLabel as String] = label
        query[kSecAttrAccessible as String] = kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly
        let status = SecItemAdd(query as CFDictionary, nil)
        guard status == errSecSuccess else { throw keychainError(status) }
        #else
        throw PlatformKeyStoreError(description: "this system has no key store b2c can use")
        #endif
    }

    func delete(storeID: String, keyID: String) throws {
        #if canImport(Glibc)
        do { try secretService.delete(attributes: Self.attributes(storeID: storeID, keyID: keyID)) } catch {
            throw PlatformKeyStoreError(description: error.description)
        }
        #elseif canImport(Security)
        let status = SecItemDelete(keychainQuery(storeID: storeID, keyID: keyID) as CFDictionary)
        guard status == errSecSuccess || status == errSecItemNotFound else { throw keychainError(status) }
        #endif
    }

    #if canImport(Security) && !canImport(Glibc)
    func keychainQuery(storeID: String, keyID: String) -> [String: Any] {
        [kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: "b2c", kSecAttrAccount as String: "\(storeID):\(keyID)"]
    }

    func keychainError(_ status: OSStatus) -> PlatformKeyStoreError {
        let text = SecCopyErrorMessageString(status, nil).map { $0 as String } ?? "OSStatus \(status)"
        return PlatformKeyStoreError(description: "the Keychain refused: \(text)")
    }
    #endif
}
