#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The rules both programs apply — the full client (B2CKit's `StoreLocation`, `StoreDirectory`, `ConfigurationTrust`,
/// `NetworkEnvironment`) and the fast path (`b2c`, Sources/b2c/main.swift) — stated once: where the store lives, what
/// counts as a private path, how an allow record reads, which network variables count as set. The fast path may be
/// stricter than a rule (it hands over whenever it doubts), never looser; the equivalence test compares the two programs.
public enum StoreRules {
    /// The configuration's file name: looked for in the working directory first (used there only once allowed:
    /// `AllowRecord`), then in `$XDG_CONFIG_HOME/b2c/`.
    public static let configurationFileName = "policies.json"

    /// What either program says on stderr when it uses the configuration found in the working directory (after the
    /// program's name and ": ").
    public static let foundConfigurationNotice = "using ./policies.json (found in the current directory)"

    /// The store file's name in the store directory.
    public static let fileName = "store.sqlite"
    /// The files SQLite keeps beside the store (its write-ahead log and shared memory).
    public static let companionSuffixes = ["-wal", "-shm"]

    /// The store directory: `$B2C_HOME`, else `$XDG_DATA_HOME/b2c`, else `<home>/.local/share/b2c` (`home`: `$HOME`, or
    /// what the caller knows of it); nil when none of them is known. An empty variable counts as unset.
    public static func directory(_ variable: (String) -> String?, home: String?) -> String? {
        if let b2cHome = variable("B2C_HOME"), !b2cHome.isEmpty { return b2cHome }
        if let data = variable("XDG_DATA_HOME"), !data.isEmpty { return data + "/b2c" }
        return home.map { $0 + "/.local/share/b2c" }
    }

    /// Why a path may not hold tokens, by its status: another user owns it, or others may write to it.
    public enum Unfit: Sendable, Equatable {
        case anotherOwner(uid: UInt32)
        case writableByOthers(mode: UInt32)
    }

    /// nil when the status is this user's and nobody else may write (the rule for the store directory, its files and a
    /// configuration found in the working directory).
    public static func unfit(_ info: stat) -> Unfit? {
        if info.st_uid != geteuid() { return .anotherOwner(uid: UInt32(info.st_uid)) }
        if info.st_mode & (S_IWGRP | S_IWOTH) != 0 { return .writableByOthers(mode: UInt32(info.st_mode & 0o7777)) }
        return nil
    }
}

/// The records of configurations found in the working directory that the user allowed (`b2c config allow`, or the prompt):
/// in the store directory's `allowed/`, one file per path, named by the SHA-256 of the canonical path, whose first line is
/// the SHA-256 of the allowed bytes and whose second line is the path.
public enum AllowRecord {
    public static let folder = "allowed"

    /// The record's file name for a canonical path.
    public static func name(canonicalPath: String) -> String { Digest.sha256Hex(Array(canonicalPath.utf8)) }

    /// The record's content for allowed bytes of that hash.
    public static func content(hash: String, canonicalPath: String) -> String { hash + "\n" + canonicalPath + "\n" }

    /// The allowed bytes' hash in a record's content; nil when it is not UTF-8 text.
    public static func allowedHash(_ record: [UInt8]) -> String? {
        guard let text = String(validating: record, as: UTF8.self) else { return nil }
        return text.split(separator: "\n", omittingEmptySubsequences: false).first.map(String.init)
    }
}

/// The network variables, read as curl, Go and Python read them: a value of only blanks is unset; `SSL_CERT_DIR` counts
/// by its first entry; a proxy variable is taken in either case, the lower-case first.
public enum NetworkVariables {
    public static let trustFile = "SSL_CERT_FILE"
    public static let trustDirectory = "SSL_CERT_DIR"
    public static let httpsProxy = ["https_proxy", "HTTPS_PROXY"]
    public static let httpProxy = ["http_proxy", "HTTP_PROXY"]
    public static let noProxy = ["no_proxy", "NO_PROXY"]

    /// The first of `names` that is set to more than blanks.
    public static func value(_ variable: (String) -> String?, _ names: [String]) -> String? {
        for name in names {
            if let v = variable(name), !v.allSatisfy({ $0 == " " || $0 == "\t" }) { return v }
        }
        return nil
    }

    /// The directory `SSL_CERT_DIR` names (its first entry).
    public static func firstDirectory(_ value: String) -> String { String(value.split(separator: ":").first ?? "") }
}
