import B2CFastPath
import Foundation

/// Whose store this is. The directory is made 0700 when b2c makes it and is never chmod-ed otherwise; a directory or
/// store file that belongs to another user, or that others may write to, is refused as ssh refuses such a
/// `~/.ssh` (docs/security.md): another local user could otherwise plant a store that this user's tokens go into, or
/// read them from.
enum StoreDirectory {
    /// Makes the directory (0700, parents too) or checks the one that is there.
    static func prepare(_ directory: URL) throws {
        let path = directory.path
        var info = stat()
        if stat(path, &info) != 0 {
            guard errno == ENOENT else { throw unusable(path, "cannot be examined (\(String(cString: strerror(errno))))") }
            do {
                try FileManager.default.createDirectory(
                    at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            } catch {
                throw B2CError.store(
                    "cannot create the store directory '\(path)' (\(reason(error))). Set B2C_HOME to a directory of yours that you can "
                        + "write to.", configuration: true)
            }
            return
        }
        guard info.st_mode & S_IFMT == S_IFDIR else { throw unusable(path, "is not a directory") }
        try checkOwnership(info, path: path, what: "store directory")
    }

    /// The store file and its companions, when they exist: this user's, and writable by nobody else.
    static func checkFiles(_ file: String) throws {
        for suffix in [""] + StoreRules.companionSuffixes {
            var info = stat()
            guard lstat(file + suffix, &info) == 0 else { continue }
            guard info.st_mode & S_IFMT == S_IFREG else { throw unusable(file + suffix, "is not a regular file (a link or a device)") }
            try checkOwnership(info, path: file + suffix, what: "store file")
        }
    }

    /// Creates an empty file with mode 0600 (an empty file is a new SQLite database); an existing one is left alone.
    static func createPrivateFile(_ path: String) throws {
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o600)
        if fd >= 0 {
            close(fd)
        } else if errno != EEXIST {
            throw B2CError.store(
                "cannot create the store '\(path)' (\(String(cString: strerror(errno)))). Check that its directory is yours and writable, "
                    + "or set B2C_HOME.", configuration: true)
        }
    }

    static func checkOwnership(_ info: stat, path: String, what: String) throws {
        switch StoreRules.unfit(info) {
        case nil: return
        case .anotherOwner(let uid):
            throw unusable(
                path, "belongs to another user (uid \(uid), you are \(geteuid())); b2c keeps tokens only where you alone own them")
        case .writableByOthers(let bits):
            let mode = String(bits, radix: 8)
            throw unusable(
                path,
                "is writable by other users (mode \(mode)); b2c keeps tokens only where nobody else can write. Run `chmod go-w '\(path)'` "
                    + "if this \(what) is yours")
        }
    }

    static func unusable(_ path: String, _ why: String) -> B2CError {
        B2CError.store(
            "the store location '\(path)' \(why). Set B2C_HOME to a directory of your own (b2c creates it 0700).", configuration: true)
    }

    static func reason(_ error: Error) -> String {
        let code = ((error as NSError).userInfo[NSUnderlyingErrorKey] as? NSError)?.code ?? (error as NSError).code
        if let posix = POSIXErrorCode(rawValue: Int32(code)), posix == .EACCES || posix == .EPERM { return "permission denied" }
        if let posix = POSIXErrorCode(rawValue: Int32(code)), posix == .EROFS { return "read-only file system" }
        if let posix = POSIXErrorCode(rawValue: Int32(code)), posix == .ENOTDIR { return "a part of the path is a file" }
        return "the system refused"
    }
}
