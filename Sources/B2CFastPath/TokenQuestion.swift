import Crypto
import Foundation

/// A `b2c token` command reduced to what decides its answer: the options (in their plain forms only), the variables that
/// choose the configuration, and the working directory. The full client files the answer it gave under the question's
/// hash; the fast path asks the store with the same hash. Anything unusual — help, an option the fast path does not
/// take (`--app`, `--force-refresh`, `--verbose`, `--decode`…), a repeated option, a value that starts with '-' — is no
/// question: the full client answers it.
public struct TokenQuestion: Sendable, Equatable {
    public var policy: String?
    public var account: String?
    public var api: String?
    public var scopes: [String] = []
    public var minValid = 300
    public var format: TokenText.Format = .raw
    public var config: String?
    /// `B2C_CONFIG`, `B2C_PROFILE`, `HOME`, `XDG_CONFIG_HOME` as set (empty when not).
    public var environment: [String] = []
    public var workingDirectory: String

    /// Whether the configuration is found rather than named (no `--config`, `B2C_CONFIG` or `B2C_PROFILE`): the full client
    /// then looks at `./policies.json` first.
    public var findsConfiguration: Bool { config == nil && environment[0].isEmpty && environment[1].isEmpty }

    static let variables = ["B2C_CONFIG", "B2C_PROFILE", "HOME", "XDG_CONFIG_HOME"]

    /// The question `arguments` (without the program name) ask, or nil when the fast path does not answer such a command.
    public init?(arguments: [String], environment: [String: String], workingDirectory: String) {
        guard arguments.first == "token" else { return nil }
        self.workingDirectory = workingDirectory
        self.environment = Self.variables.map { environment[$0] ?? "" }
        guard
            let options = OptionScan.scan(
                arguments.dropFirst(), flags: [],
                valued: ["--policy", "--account", "--api", "--scope", "--config", "--min-valid", "--format"], repeatable: ["--scope"],
                aliases: ["--output": "--format", "-o": "--format"], negativeNumbers: ["--min-valid"])
        else { return nil }
        for (name, v) in options {
            switch name {
            case "--policy": policy = v
            case "--account": account = v
            case "--api": api = v
            case "--scope": scopes.append(v)
            case "--config": config = v
            case "--min-valid":
                guard let n = Int(v) else { return nil }
                minValid = n
            default:
                guard let f = TokenText.Format(rawValue: v) else { return nil }
                format = f
            }
        }
    }

    /// The hash the answer is filed under: SHA-256 of every part, NUL-separated, in hex.
    public var key: String {
        var parts = ["token/v1", policy ?? "", account ?? "", api ?? ""] + scopes.map { "scope=\($0)" }
        parts += [String(minValid), format.rawValue, config ?? ""] + environment + [workingDirectory]
        let digest = SHA256.hash(data: Data(parts.joined(separator: "\0").utf8))
        return digest.map { String(format: "%02x", $0) }.joined()
    }
}

/// What the full client answered a question, filed in the store for the fast path: which configuration file (and its
/// content's hash), which access-token row, and what the answer said beside the token.
public struct TokenAnswer: Codable, Sendable, Equatable {
    public var configPath: String
    public var configHash: String
    /// A CA file the configuration names: it must still be there (the full client refuses a missing one).
    public var caFile: String?
    /// The store's generation when the answer was given: any change to its accounts or current accounts makes it stale.
    public var generation: Int
    public var environment: String
    public var clientID: String
    public var accountID: String
    public var target: String
    public var policy: String
    /// The token's `iss` and its party (`azp`, `appid`, else `aud`) as the full client checked them: a token served from
    /// the row must name the same.
    public var issuer: String
    public var party: String

    public init(
        configPath: String, configHash: String, caFile: String?, generation: Int, environment: String, clientID: String,
        accountID: String, target: String, policy: String, issuer: String, party: String
    ) {
        self.configPath = configPath; self.configHash = configHash; self.caFile = caFile; self.generation = generation
        self.environment = environment; self.clientID = clientID; self.accountID = accountID; self.target = target
        self.policy = policy; self.issuer = issuer; self.party = party
    }

    /// SHA-256 of a file's bytes, in hex; nil when it cannot be read.
    public static func hash(ofFile path: String) -> String? {
        FileManager.default.contents(atPath: path).map(digest)
    }

    /// SHA-256 of bytes, in hex.
    public static func digest(_ data: Data) -> String { SHA256.hash(data: data).map { String(format: "%02x", $0) }.joined() }

    /// The issuer and party of a token, as the answer records them; nil when it is not a JWT with an issuer.
    public static func claims(ofToken token: String) -> (issuer: String, party: String)? {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let payload = base64URLDecode(String(parts[1])),
            let object = (try? JSONSerialization.jsonObject(with: payload)) as? [String: Any],
            let issuer = object["iss"] as? String
        else { return nil }
        let party: String
        if let azp = (object["azp"] ?? object["appid"]) as? String {
            party = azp
        } else if let aud = object["aud"] as? String {
            party = aud
        } else if let list = object["aud"] as? [String] {
            party = list.joined(separator: " ")
        } else {
            return nil
        }
        return (issuer, party)
    }

    static func base64URLDecode(_ s: String) -> Data? {
        var b = s.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while b.count % 4 != 0 { b += "=" }
        return Data(base64Encoded: b)
    }
}
