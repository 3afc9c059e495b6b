#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A `b2c token` command line in its plain forms (`--name value`, `--name=value`, each at most once but `--scope`), read
/// without ArgumentParser: the one reader of these forms, for the fast path (`TokenQuestion`) and for the full client
/// (`Token.fastParse`), since ArgumentParser's reflection over the command tree costs a cache hit a large share of its run
/// (bench/README.md, "token cache hit"). nil for anything else — help, an unknown or repeated option, a value that does
/// not validate, an empty value or one starting with '-' —, which ArgumentParser then parses with its messages.
public struct TokenCommandLine: Sendable, Equatable {
    public var policy: String?
    public var account: String?
    public var api: String?
    public var scopes: [String] = []
    public var minValid = 300
    public var format: TokenText.Format = .raw
    public var config: String?
    public var profile: String?
    public var httpTimeout: Int?
    public var forceRefresh = false
    public var verbose = false
    public var app = false
    public var clientSecretStdin = false

    /// `arguments` without the program name.
    public init?(_ arguments: [String]) {
        guard arguments.first == "token",
            let options = OptionScan.scan(
                arguments.dropFirst(), flags: ["--force-refresh", "--verbose", "-v", "--app", "--client-secret-stdin"],
                valued: [
                    "--config", "--profile", "--http-timeout", "--policy", "--account", "--api", "--scope", "--min-valid", "--format",
                ], repeatable: ["--scope"], aliases: ["--output": "--format", "-o": "--format"], negativeNumbers: ["--min-valid"])
        else { return nil }
        for (name, v) in options {
            switch name {
            case "--force-refresh": forceRefresh = true
            case "--app": app = true
            case "--client-secret-stdin": clientSecretStdin = true
            case "--verbose", "-v": verbose = true
            case "--config": config = v
            case "--profile": profile = v
            case "--http-timeout":
                guard let n = Int(v), (1...600).contains(n) else { return nil }
                httpTimeout = n
            case "--policy": policy = v
            case "--account": account = v
            case "--api": api = v
            case "--scope": scopes.append(v)
            case "--min-valid":
                guard let n = Int(v) else { return nil }
                minValid = n
            default:
                guard let f = TokenText.Format(rawValue: v) else { return nil }
                format = f
            }
        }
    }

    /// Whether the fast path may answer it: none of the options that only the full client acts on.
    var isAQuestion: Bool { profile == nil && httpTimeout == nil && !forceRefresh && !verbose && !app && !clientSecretStdin }
}

/// A `b2c token` command reduced to what decides its answer: the options (in their plain forms only), the variables that
/// choose the configuration, and the working directory. The full client files the answer it gave under the question's
/// hash; the fast path asks the store with the same hash. Anything unusual — help, an option the fast path does not
/// take (`--app`, `--force-refresh`, `--verbose`, `--decode`…), a repeated option, a value that starts with '-' — is no
/// question: the full client answers it (`TokenCommandLine` reads the forms).
public struct TokenQuestion: Sendable, Equatable {
    /// The command line's options (only ones the fast path answers: `TokenCommandLine.isAQuestion`).
    public var options: TokenCommandLine
    /// `B2C_CONFIG`, `B2C_PROFILE`, `HOME`, `XDG_CONFIG_HOME` as set (empty when not).
    public var environment: [String] = []
    public var workingDirectory: String

    /// Whether the configuration is found rather than named (no `--config`, `B2C_CONFIG` or `B2C_PROFILE`): the full client
    /// then looks at `./policies.json` first.
    public var findsConfiguration: Bool { options.config == nil && environment[0].isEmpty && environment[1].isEmpty }

    static let variables = ["B2C_CONFIG", "B2C_PROFILE", "HOME", "XDG_CONFIG_HOME"]

    /// The question `arguments` (without the program name) ask, or nil when the fast path does not answer such a command.
    public init?(arguments: [String], environment: [String: String], workingDirectory: String) {
        guard let line = TokenCommandLine(arguments), line.isAQuestion else { return nil }
        options = line
        self.workingDirectory = workingDirectory
        self.environment = Self.variables.map { environment[$0] ?? "" }
    }

    /// The hash the answer is filed under: SHA-256 of every part, NUL-separated, in hex.
    public var key: String {
        let o = options
        var parts = ["token/v1", o.policy ?? "", o.account ?? "", o.api ?? ""] + o.scopes.map { "scope=\($0)" }
        parts += [String(o.minValid), o.format.rawValue, o.config ?? ""] + environment + [workingDirectory]
        return Digest.sha256Hex(Array(parts.joined(separator: "\0").utf8))
    }
}

/// What the full client answered a question, filed in the store for the fast path: which configuration file (and its
/// content's hash), which access-token row, what the answer said beside the token, and the hash of the token it served.
/// Kept as one line per field (a field with a line break is never filed).
public struct TokenAnswer: Sendable, Equatable {
    public var configPath: String
    public var configHash: String
    /// The configuration was `./policies.json`, found in the working directory (not named): the fast path then makes the
    /// full client's checks of such a file (ours, not writable by others, allowed as it is) and says which file it used.
    public var found: Bool
    /// A CA file the configuration names: it must still be there (the full client refuses a missing one); empty: none.
    public var caFile: String
    /// The store's generation when the answer was given: any change to its accounts or current accounts makes it stale.
    public var generation: Int
    public var environment: String
    public var clientID: String
    public var accountID: String
    public var target: String
    public var policy: String
    /// SHA-256 of the token the full client checked (its issuer, tenant and app) and served: the fast path serves the row
    /// only while it holds that very token.
    public var secretHash: String

    public init(
        configPath: String, configHash: String, found: Bool, caFile: String, generation: Int, environment: String, clientID: String,
        accountID: String, target: String, policy: String, secretHash: String
    ) {
        self.configPath = configPath; self.configHash = configHash; self.found = found; self.caFile = caFile
        self.generation = generation
        self.environment = environment; self.clientID = clientID; self.accountID = accountID; self.target = target
        self.policy = policy; self.secretHash = secretHash
    }

    static let version = "b2c-fast-answer/2"

    /// The filed form; nil when a field holds a line break (such an answer is not filed).
    public var encoded: String? {
        let fields = [
            Self.version, configPath, configHash, found ? "found" : "named", caFile, String(generation), environment, clientID, accountID,
            target, policy,
            secretHash,
        ]
        guard !fields.contains(where: { $0.contains("\n") }) else { return nil }
        return fields.joined(separator: "\n")
    }

    public init?(encoded: String) {
        let f = encoded.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        guard f.count == 12, f[0] == Self.version, f[3] == "found" || f[3] == "named", let generation = Int(f[5]) else { return nil }
        self.init(
            configPath: f[1], configHash: f[2], found: f[3] == "found", caFile: f[4], generation: generation, environment: f[6],
            clientID: f[7], accountID: f[8], target: f[9], policy: f[10], secretHash: f[11])
    }

    /// SHA-256 of bytes, in hex.
    public static func digest(_ bytes: [UInt8]) -> String { Digest.sha256Hex(bytes) }

    /// SHA-256 of a file's bytes, in hex; nil when it cannot be read.
    public static func hash(ofFile path: String) -> String? { FileBytes.contents(of: path).map(digest) }
}

/// A whole small file, read with the C library.
public enum FileBytes {
    public static func contents(of path: String, limit: Int = 1 << 20) -> [UInt8]? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        return contents(ofDescriptor: fd, limit: limit)
    }

    /// The rest of an open file's bytes.
    public static func contents(ofDescriptor fd: Int32, limit: Int = 1 << 20) -> [UInt8]? {
        var out: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 16384)
        while true {
            let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n < 0 { return nil }
            if n == 0 { return out }
            out += buffer[0..<n]
            if out.count > limit { return nil }
        }
    }
}
