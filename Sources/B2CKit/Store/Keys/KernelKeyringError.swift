#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Why a kernel-keyring operation failed. Every case means "use the slow path": the caller falls back to the
/// Secret Service and b2c keeps working, only slower.
package enum KernelKeyringError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The key syscalls are not usable at all in this process: blocked by a seccomp profile (Docker's default
    /// profile answers EPERM), or the kernel was built without CONFIG_KEYS (ENOSYS). Worth remembering for the rest
    /// of the process; every further call will fail the same way.
    case unavailable(errno: Int32)
    /// A call that is normally allowed failed, e.g. EDQUOT (per-user key quota), EACCES (an LSM, or a key left
    /// behind with other permissions). `call` names the syscall for the log line.
    case failed(call: String, errno: Int32)
    /// The arguments can never succeed (empty key, timeout of 0, description the kernel would reject).
    case invalidArgument(String)

    /// The failure, with the errno's symbol and text, for the log.
    public var description: String {
        switch self {
        case .unavailable(let code):
            "kernel keyring unavailable (\(Self.name(of: code)))"
        case .failed(let call, let code):
            "\(call) failed (\(Self.name(of: code)))"
        case .invalidArgument(let reason):
            "invalid argument: \(reason)"
        }
    }

    /// "EPERM: Operation not permitted"-style text, so log lines are greppable and still readable.
    static func name(of code: Int32) -> String {
        let symbol: String =
            switch code {
            case EPERM: "EPERM"
            case ENOSYS: "ENOSYS"
            case EACCES: "EACCES"
            case EDQUOT: "EDQUOT"
            case EINVAL: "EINVAL"
            case ENOKEY: "ENOKEY"
            case EKEYEXPIRED: "EKEYEXPIRED"
            case EKEYREVOKED: "EKEYREVOKED"
            case ENOMEM: "ENOMEM"
            default: "errno \(code)"
            }
        return "\(symbol): \(String(cString: strerror(code)))"
    }
}
