import CKeyring

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The error codes that mean "the key facility itself is unusable here", as opposed to one call failing.
/// EPERM is what Docker's default seccomp profile returns for add_key/keyctl/request_key (podman's profile is said to
/// allow keyctl but not add_key, so there only `store` fails); ENOSYS comes from kernels without CONFIG_KEYS and from
/// profiles that pretend the syscall does not exist. Our own calls do not otherwise get EPERM: the kernel reserves it
/// for descriptions starting with "." (rejected earlier by `validate`), internal key types and kernel-pinned keys.
func meansUnavailable(_ code: Int32) -> Bool {
    code == EPERM || code == ENOSYS
}

/// The error codes that mean "no usable key by that name": never stored, expired by its timeout, invalidated or
/// revoked (possibly by another process between our search and our read).
/// (Plain comparisons rather than a Set: a global Set costs hashing setup on the first miss of every process.)
func meansMissingKey(_ code: Int32) -> Bool {
    code == ENOKEY || code == EKEYEXPIRED || code == EKEYREVOKED
}

/// Outcome of one shim call: the non-negative result, or the errno the kernel gave.
enum SyscallResult {
    case success(Int)
    case failure(Int32)

    init(_ raw: Int) {
        self = raw >= 0 ? .success(raw) : .failure(Int32(truncatingIfNeeded: -raw))
    }
}

/// Run one shim and turn a failure into the right `KernelKeyringError`.
func keyringCheck(_ call: String, _ raw: Int) throws(KernelKeyringError) -> Int {
    switch SyscallResult(raw) {
    case .success(let value):
        return value
    case .failure(let code):
        throw keyringError(for: call, code)
    }
}

func keyringError(for call: String, _ code: Int32) -> KernelKeyringError {
    meansUnavailable(code) ? .unavailable(errno: code) : .failed(call: call, errno: code)
}

/// Only the "user" key type is used: a plain blob, readable back with KEYCTL_READ, at most 32767 bytes.
let userKeyType = "user"
