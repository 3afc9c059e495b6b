import Foundation

/// A file written aside, created with its mode (O_EXCL, so never readable by others even for a moment), then renamed into
/// place.
package func writeFile(_ data: Data, to path: String, mode: Int) throws {
    // Past `ulimit -f` the kernel would kill us with SIGXFSZ; ignored, the write fails with EFBIG and is reported.
    signal(SIGXFSZ, SIG_IGN)
    let aside = path + ".tmp-\(getpid())"
    let fd = open(aside, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode_t(mode))
    guard fd >= 0 else { throw FileWriteError(path: path, code: errno) }
    var failure: Int32 = 0
    data.withUnsafeBytes { raw in
        var offset = 0
        while offset < raw.count {
            let n = write(fd, raw.baseAddress! + offset, raw.count - offset)
            if n < 0 {
                if errno == EINTR { continue }
                failure = errno
                return
            }
            if n == 0 { failure = EIO; return }
            offset += n
        }
    }
    if failure == 0 && fchmod(fd, mode_t(mode)) != 0 { failure = errno }  // the umask may have narrowed a 0644
    if failure == 0 && fsync(fd) != 0 { failure = errno }
    if close(fd) != 0 && failure == 0 { failure = errno }
    if failure == 0 && rename(aside, path) != 0 { failure = errno }
    guard failure == 0 else {
        unlink(aside)
        throw FileWriteError(path: path, code: failure)
    }
    // The rename is durable once the directory is synced.
    let directory = open(
        (path as NSString).deletingLastPathComponent.isEmpty ? "." : (path as NSString).deletingLastPathComponent, O_RDONLY)
    if directory >= 0 {
        fsync(directory)
        close(directory)
    }
}

/// Creates the missing directories above `path`, each 0700 (only the owner may list what b2c writes there); existing
/// ones are left as they are.
package func makeParentDirectories(of path: String) throws {
    var missing: [String] = []
    var dir = (path as NSString).deletingLastPathComponent
    var isDirectory: ObjCBool = false
    while !dir.isEmpty && dir != "/" && !FileManager.default.fileExists(atPath: dir, isDirectory: &isDirectory) {
        missing.append(dir)
        dir = (dir as NSString).deletingLastPathComponent
    }
    for d in missing.reversed() where mkdir(d, 0o700) != 0 && errno != EEXIST {
        throw FileWriteError(path: path, code: errno, directory: d)
    }
}

/// A file that could not be written whole; nothing was left in its place.
package struct FileWriteError: Error, CustomStringConvertible {
    package var path: String
    package var code: Int32
    /// The directory that could not be made for it, if that was the failure.
    package var directory: String?

    package init(path: String, code: Int32, directory: String? = nil) { self.path = path; self.code = code; self.directory = directory }

    package var description: String {
        let why: String
        switch code {
        case ENOSPC, EDQUOT: why = "the disk (or your quota) is full"
        case EFBIG: why = "the file is larger than this shell allows (ulimit -f)"
        case EACCES, EPERM: why = "permission denied"
        case ENOENT: why = "its directory does not exist"
        case EROFS: why = "the file system is read-only"
        case EEXIST: why = "a temporary file of the same name is in the way"
        default: why = String(cString: strerror(code))
        }
        if let directory { return "cannot create the directory '\(directory)' for '\(path)': \(why); nothing was written" }
        return "cannot write '\(path)': \(why); nothing was written there"
    }
}
