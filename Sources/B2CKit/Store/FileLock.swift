import Foundation

/// An exclusive, cross-process lock on a file in the store directory (flock): used to make refreshes single-flight.
public final class FileLock {
    private let fd: Int32

    public init(path: String) throws {
        fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw StoreError("cannot open the lock file '\(path)': \(String(cString: strerror(errno)))") }
        while flock(fd, LOCK_EX) != 0 {
            if errno != EINTR {
                close(fd)
                throw StoreError("cannot lock '\(path)': \(String(cString: strerror(errno)))")
            }
        }
    }

    deinit {
        flock(fd, LOCK_UN)
        close(fd)
    }
}
