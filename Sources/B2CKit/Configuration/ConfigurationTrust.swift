import B2CFastPath
import Crypto
import Foundation

/// Which configurations found implicitly (`./policies.json` in the working directory, named by no flag or variable) the
/// user has allowed, as direnv allows an `.envrc`: per file path and content hash, kept in the store directory's
/// `allowed/` (`AllowRecord`: one file per path, named by the path's hash, holding the content's hash and the path; the fast
/// path reads the same records). A changed file must be allowed
/// again. A file owned by another user, or writable by others, is refused outright: such a file could send the user's
/// tokens anywhere (its `apis[].baseUrl`) and trust any CA (its `caFile`).
package struct ConfigurationTrust: Sendable {
    /// `allowed/` in the store directory: one record per allowed path.
    public let directory: URL

    /// The records kept under `storeDirectory`.
    public init(storeDirectory: URL) { directory = storeDirectory.appendingPathComponent(AllowRecord.folder) }

    /// Whether a configuration file, as read, may be used.
    public enum Verdict: Sendable, Equatable {
        /// Allowed, and unchanged since.
        case allowed
        /// Never allowed, or allowed before it changed.
        case unknown(changed: Bool)
    }

    /// A configuration file read once, after the ownership rule: the bytes whose hash is checked are the bytes parsed.
    public struct Candidate: Sendable {
        /// The path, as given.
        public let path: String
        /// The bytes read: the ones hashed, and the ones parsed.
        public let data: Data
        let canonical: String
        var hash: String { SHA256.hash(data: data).map { String(format: "%02x", $0) }.joined() }

        /// Parsed as the configuration it is.
        public func configuration() throws -> ClientConfiguration { try ClientConfiguration.load(data, path: path) }
    }

    /// Whether the file, as read, was allowed.
    public func verdict(for file: Candidate) -> Verdict {
        guard
            let recorded = FileManager.default.contents(atPath: record(file.canonical).path).flatMap({
                AllowRecord.allowedHash([UInt8]($0))
            })
        else { return .unknown(changed: false) }
        return recorded == file.hash ? .allowed : .unknown(changed: true)
    }

    /// Records the file, as read, as allowed.
    public func allow(_ file: Candidate) throws {
        try StoreDirectory.prepare(directory.deletingLastPathComponent())
        if !FileManager.default.fileExists(atPath: directory.path) {
            try FileManager.default.createDirectory(
                at: directory, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
        }
        let fd = open(record(file.canonical).path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard fd >= 0 else {
            throw ConfigurationRefused(path: file.path, message: "cannot be recorded as allowed (\(String(cString: strerror(errno))))")
        }
        defer { close(fd) }
        let line = AllowRecord.content(hash: file.hash, canonicalPath: file.canonical)
        guard line.withCString({ write(fd, $0, strlen($0)) }) == line.utf8.count else {
            throw ConfigurationRefused(path: file.path, message: "cannot be recorded as allowed (the write failed)")
        }
    }

    /// Forgets that the file was allowed; true when it had been.
    @discardableResult
    public func deny(_ path: String) -> Bool { unlink(record(Self.canonicalPath(path)).path) == 0 }

    private func record(_ canonical: String) -> URL {
        directory.appendingPathComponent(AllowRecord.name(canonicalPath: canonical))
    }

    static func canonicalPath(_ path: String) -> String {
        URL(fileURLWithPath: path).standardizedFileURL.resolvingSymlinksInPath().path
    }

    /// Reads the file, refusing one that is another user's or that others may write.
    public static func read(_ path: String) throws -> Candidate {
        let canonical = canonicalPath(path)
        var info = stat()
        guard stat(canonical, &info) == 0 else {
            throw ConfigurationRefused(path: path, message: "cannot be read (\(String(cString: strerror(errno))))")
        }
        switch StoreRules.unfit(info) {
        case nil: break
        case .anotherOwner(let uid):
            throw ConfigurationRefused(
                path: path,
                message: "belongs to another user (uid \(uid)): b2c does not use a configuration found in the current directory "
                    + "that is not yours, since it decides where your tokens go")
        case .writableByOthers(let mode):
            throw ConfigurationRefused(
                path: path,
                message:
                    "is writable by other users (mode \(String(mode & 0o777, radix: 8))): b2c does not use such a configuration "
                    + "found in the current directory, since it decides where your tokens go. Remove their write permission (chmod go-w)")
        }
        guard let data = FileManager.default.contents(atPath: canonical) else {
            throw ConfigurationRefused(path: path, message: "cannot be read")
        }
        return Candidate(path: path, data: data, canonical: canonical)
    }
}

extension ClientConfiguration {
    /// Every host the configuration sends requests or tokens to, with its port when it has one: what a person checks
    /// before allowing it, and where its `caFile` is trusted.
    public var hosts: [String] {
        var out: [String] = [Authority.hostAndPort(of: authorityHost)]
        out += knownAuthorities.map { $0.lowercased() }
        if let nativeAuth { out.append(Authority.hostAndPort(of: nativeAuth.authority)) }
        out += apis.map { Authority.hostAndPort(of: $0.baseURL) }
        var seen = Set<String>()
        return out.filter { seen.insert($0).inserted }
    }

    /// The host names (without ports) of `hosts`.
    public var hostNames: Set<String> {
        Set(
            hosts.map { hp in
                if hp.hasPrefix("["), let end = hp.firstIndex(of: "]") { return String(hp[hp.index(after: hp.startIndex)..<end]) }
                return String(hp.split(separator: ":").first ?? "")
            })
    }

    /// What a person is shown before allowing a configuration: tenant, hosts, APIs and the extra CA.
    public var trustSummary: [(String, String)] {
        var rows: [(String, String)] = [("tenant", [tenantName, tenantID].compactMap { $0 }.joined(separator: " "))]
        rows.append(("sign-in host", authorityHost.absoluteString))
        if !knownAuthorities.isEmpty { rows.append(("known authorities", knownAuthorities.joined(separator: ", "))) }
        if let nativeAuth { rows.append(("native auth", nativeAuth.authority.absoluteString)) }
        for api in apis { rows.append(("API \(api.name)", api.baseURL.absoluteString + " (gets your access tokens)")) }
        if let caFile { rows.append(("extra CA", caFile + " (trusted for the hosts above)")) }
        return rows
    }
}

/// A configuration that may not be used (found implicitly, and not the user's own), or could not be recorded.
public struct ConfigurationRefused: Error, CustomStringConvertible {
    /// The configuration's path, as given.
    public var path: String
    /// Why it is refused, said after the path.
    public var message: String
    /// The path, then why.
    public var description: String { "the configuration '\(path)' \(message)" }
}
