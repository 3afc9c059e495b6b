import CKeyring

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A per-user cache for b2c's unwrapped data key in the Linux kernel key-retention service.
///
/// Why: fetching the data key from the Secret Service costs a D-Bus round trip on every `b2c token`. The kernel
/// keyring keeps it in kernel memory instead: only this uid (and root) can read it, every process of the uid finds it
/// (other shells, ssh sessions, cron), it disappears on reboot, and a timeout bounds how long it lives after unlock.
///
/// Where: the user keyring (`@u`, KEY_SPEC_USER_KEYRING), searched directly rather than through the session keyring,
/// so it works whatever session keyring a process was started with. Each key gets the mask
/// `KeyPermissions.cachedDataKey` so same-uid processes that do not "possess" it can still read it.
///
/// All calls are synchronous syscalls without blocking waits; the whole enum is stateless and thread-safe.
package enum KernelKeyring {
    /// Largest payload the kernel's "user" key type accepts.
    public static let maximumKeySize = 32_767
    /// Keyring descriptions are copied with a 4096-byte limit including the terminating NUL.
    public static let maximumDescriptionLength = 4_095

    /// Cache `key` under `description` in the user keyring, replacing any previous key with that description, and
    /// let the kernel delete it `timeoutSeconds` from now.
    ///
    /// The key is built in this process's private keyring first (add, set permissions, set timeout) and only then
    /// linked into `@u`, which atomically displaces an older key of the same description. So no other process can
    /// ever see a half-configured key (e.g. one without a timeout, if we crashed in between), and readers never see
    /// a gap where no key exists.
    public static func store(_ key: Data, description: String, timeoutSeconds: UInt32) throws(KernelKeyringError) {
        try validate(description: description)
        guard (1...maximumKeySize).contains(key.count) else {
            throw .invalidArgument("key must be 1...\(maximumKeySize) bytes, got \(key.count)")
        }
        guard timeoutSeconds > 0 else {
            throw .invalidArgument("a timeout of 0 would mean 'never expires'")
        }
        let serial = try addToProcessKeyring(key, description: description)
        do {
            try configure(serial, timeoutSeconds: timeoutSeconds)
            _ = try keyringCheck("keyctl(KEYCTL_LINK)", ckr_link(serial, Int32(CKR_SPEC_USER_KEYRING)))
        } catch {
            _ = ckr_invalidate(serial)  // best effort: do not leave a stray copy in the process keyring
            throw error
        }
        // Dropping our extra link is tidiness only (the process keyring dies with the process), so errors are ignored.
        _ = ckr_unlink(serial, Int32(CKR_SPEC_PROCESS_KEYRING))
    }

    /// The cached key, or nil if there is none (never stored, expired, removed).
    public static func read(description: String) throws(KernelKeyringError) -> Data? {
        try validate(description: description)
        guard let serial = try search(description: description) else { return nil }
        return try readPayload(of: serial)
    }

    /// Delete the cached key now (e.g. on `b2c lock` or when the store's data key changes). No key is not an error.
    public static func remove(description: String) throws(KernelKeyringError) {
        try validate(description: description)
        guard let serial = try search(description: description) else { return }
        switch SyscallResult(ckr_invalidate(serial)) {
        case .success:
            return
        case .failure(let code) where meansMissingKey(code):
            return  // it expired or someone else removed it between search and invalidate
        case .failure(let code):
            throw keyringError(for: "keyctl(KEYCTL_INVALIDATE)", code)
        }
    }

    /// Whether this process can use the key syscalls at all: one cheap keyctl that resolves `@u`. Lets the caller
    /// skip the cache (and log once) inside containers whose seccomp profile blocks keyctl.
    public static func availability() -> Result<Void, KernelKeyringError> {
        switch SyscallResult(ckr_get_keyring_id(Int32(CKR_SPEC_USER_KEYRING), 1)) {
        case .success: .success(())
        case .failure(let code): .failure(keyringError(for: "keyctl(KEYCTL_GET_KEYRING_ID)", code))
        }
    }

    /// The description under which the data key of the store at `storePath` is cached: "b2c:store-key:" plus a
    /// 64-bit FNV-1a hash of the path. The hash only keeps descriptions short and free of odd characters; it is not
    /// secret (descriptions are visible to the uid in /proc/keys) and a collision would merely make AES-GCM
    /// authentication fail, which the caller treats as a cache miss. Pass the canonical absolute path.
    public static func description(forStorePath storePath: String) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in storePath.utf8 {
            hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01b3
        }
        let hex = String(hash, radix: 16)
        return "b2c:store-key:" + String(repeating: "0", count: 16 - hex.count) + hex
    }
}

// MARK: - Steps

extension KernelKeyring {
    /// Reject descriptions the kernel would refuse or misinterpret; the kernel's own EINVAL would be less clear.
    static func validate(description: String) throws(KernelKeyringError) {
        let bytes = description.utf8
        guard !bytes.isEmpty, bytes.count <= maximumDescriptionLength else {
            throw .invalidArgument("description must be 1...\(maximumDescriptionLength) bytes")
        }
        guard !bytes.contains(0) else {
            throw .invalidArgument("description must not contain NUL")
        }
        guard bytes.first != UInt8(ascii: ".") else {
            throw .invalidArgument("descriptions starting with '.' are reserved for the kernel")
        }
    }

    /// add_key into the process keyring (@p, created on demand): private to this process, which possesses the key
    /// through it, so the following SETPERM/SET_TIMEOUT/LINK are allowed whatever the final mask is.
    static func addToProcessKeyring(_ key: Data, description: String) throws(KernelKeyringError) -> Int32 {
        let raw = key.withUnsafeBytes { bytes in
            ckr_add_key(userKeyType, description, bytes.baseAddress, bytes.count, Int32(CKR_SPEC_PROCESS_KEYRING))
        }
        return Int32(truncatingIfNeeded: try keyringCheck("add_key", raw))
    }

    static func configure(_ serial: Int32, timeoutSeconds: UInt32) throws(KernelKeyringError) {
        _ = try keyringCheck("keyctl(KEYCTL_SETPERM)", ckr_set_perm(serial, KeyPermissions.cachedDataKey))
        _ = try keyringCheck("keyctl(KEYCTL_SET_TIMEOUT)", ckr_set_timeout(serial, timeoutSeconds))
    }

    /// KEYCTL_SEARCH of @u itself. Searching @u directly (rather than request_key's session-keyring walk) finds the
    /// key even from processes whose session keyring does not link @u.
    static func search(description: String) throws(KernelKeyringError) -> Int32? {
        switch SyscallResult(ckr_search(Int32(CKR_SPEC_USER_KEYRING), userKeyType, description)) {
        case .success(let serial):
            return Int32(truncatingIfNeeded: serial)
        case .failure(let code) where meansMissingKey(code):
            return nil
        case .failure(let code):
            throw keyringError(for: "keyctl(KEYCTL_SEARCH)", code)
        }
    }

    /// KEYCTL_READ into a stack buffer, copied out, then wiped. KEYCTL_READ reports the payload's full size, so a
    /// too-small buffer costs one retry at exactly that size; the payload could only keep growing if someone kept
    /// rewriting the key, so a few attempts are plenty.
    static func readPayload(of serial: Int32) throws(KernelKeyringError) -> Data? {
        var capacity = 64
        for _ in 0..<3 {
            switch readAttempt(serial, capacity: capacity) {
            case .payload(let data): return data
            case .missing: return nil
            case .needs(let size): capacity = size
            case .failed(let failure): throw failure
            }
        }
        throw .failed(call: "keyctl(KEYCTL_READ)", errno: EAGAIN)
    }

    enum ReadAttempt {
        case payload(Data)
        case missing
        case needs(Int)
        case failed(KernelKeyringError)
    }

    static func readAttempt(_ serial: Int32, capacity: Int) -> ReadAttempt {
        withUnsafeTemporaryAllocation(byteCount: capacity, alignment: 16) { buffer in
            defer { ckr_wipe(buffer.baseAddress, buffer.count) }
            switch SyscallResult(ckr_read(serial, buffer.baseAddress, buffer.count)) {
            case .success(let length) where length <= buffer.count:
                return .payload(Data(UnsafeRawBufferPointer(rebasing: buffer[..<length])))
            case .success(let length):
                return .needs(length)
            case .failure(let code) where meansMissingKey(code):
                return .missing  // expired or invalidated between our search and this read
            case .failure(let code):
                return .failed(keyringError(for: "keyctl(KEYCTL_READ)", code))
            }
        }
    }
}
