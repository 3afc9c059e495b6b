import Foundation

/// A file b2c was told to read (a configuration, a request body, an MSAL cache), read whole; what went wrong in plain
/// words with the path, never Foundation's sentence or error domain.
package enum LocalFile {
    /// The whole file at `path`; a path that is missing, a directory or unreadable, or a failed read, throws
    /// `LocalFileError`.
    public static func read(_ path: String) throws(LocalFileError) -> Data {
        var info = stat()
        guard stat(path, &info) == 0 else { throw LocalFileError(path: path, errno: errno) }
        if info.st_mode & S_IFMT == S_IFDIR { throw LocalFileError(path: path, problem: .directory) }
        guard access(path, R_OK) == 0 else { throw LocalFileError(path: path, errno: errno) }
        guard let data = FileManager.default.contents(atPath: path) else {
            throw LocalFileError(path: path, problem: .other("the read failed"))
        }
        return data
    }
}

/// Why a file could not be read.
package struct LocalFileError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What kept the file from being read.
    public enum Problem: Sendable, Equatable {
        /// Nothing at the path (or a directory on the way is missing).
        case missing
        /// A directory where a file was expected.
        case directory
        /// Not readable by this user.
        case permissionDenied
        /// Anything else the system said, in its words (strerror).
        case other(String)
    }

    /// The file, as given.
    public var path: String
    /// What went wrong.
    public var problem: Problem

    /// An error for `path` with a known problem.
    public init(path: String, problem: Problem) { self.path = path; self.problem = problem }

    init(path: String, errno code: Int32) {
        self.path = path
        switch code {
        case ENOENT, ENOTDIR: problem = .missing
        case EACCES, EPERM: problem = .permissionDenied
        case EISDIR: problem = .directory
        default: problem = .other(String(cString: strerror(code)).lowercased())
        }
    }

    /// What is wrong, after the path ("'x' does not exist").
    public var reason: String {
        switch problem {
        case .missing: "does not exist"
        case .directory: "is a directory, not a file"
        case .permissionDenied: "cannot be read: permission denied (it must be readable by you)"
        case .other(let detail): "cannot be read: \(detail)"
        }
    }

    /// The path, quoted, then the reason.
    public var description: String { "'\(path)' \(reason)" }
}
