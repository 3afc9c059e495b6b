import B2CFastPath
import Foundation
import NIOConcurrencyHelpers

/// Where an app's client secret comes from, in this order: standard input (when the command was asked to read it),
/// `$B2C_CLIENT_SECRET` (a CI's secret store), the configuration's `clientSecretFile` (which must be 0600). Never an
/// argument, never the configuration itself, never stored, never printed. Resolved once, when first needed: a cache
/// hit needs no secret.
public final class ClientSecretSource: Sendable {
    /// Reads the secret from standard input (the whole input, one trailing newline dropped); nil when not asked to.
    let standardInput: (@Sendable () -> String?)?
    let environment: [String: String]
    private let resolved = NIOLockedValueBox<(secret: String, origin: String)?>(nil)

    /// A source that reads the secret with `standardInput` (nil: not asked to) and looks for `B2C_CLIENT_SECRET` in
    /// `environment`.
    public init(
        standardInput: (@Sendable () -> String?)? = nil, environment: [String: String] = ProcessEnvironment.current()
    ) {
        self.standardInput = standardInput
        self.environment = environment
    }

    /// What gives the secret: standard input, the environment, or the file the configuration names.
    public static let remedy = Remedy.provideClientSecret(configurationKey: "clientSecretFile")

    /// The secret and where it came from (`standard input`, `B2C_CLIENT_SECRET`, the file's path).
    public func secret(for config: ClientConfiguration) throws -> (secret: String, origin: String) {
        if let done = resolved.withLockedValue({ $0 }) { return done }
        let found = try find(config)
        resolved.withLockedValue { $0 = found }
        return found
    }

    private func find(_ config: ClientConfiguration) throws -> (secret: String, origin: String) {
        if let standardInput {
            return (try nonEmpty(standardInput() ?? "", origin: "standard input"), "standard input")
        }
        if let value = environment["B2C_CLIENT_SECRET"] {
            return (try nonEmpty(value, origin: "B2C_CLIENT_SECRET"), "B2C_CLIENT_SECRET")
        }
        if let file = config.clientSecretFile { return (try read(file), file) }
        throw B2CError(.configuration, "this needs the client secret of the app \(config.clientID)", remedy: Self.remedy)
    }

    private func nonEmpty(_ value: String, origin: String) throws -> String {
        var v = value
        if v.hasSuffix("\n") { v.removeLast() }
        if v.hasSuffix("\r") { v.removeLast() }
        guard !v.isEmpty else {
            throw B2CError(.configuration, "the client secret from \(origin) is empty", remedy: Self.remedy)
        }
        guard !v.contains("\n") else {
            throw B2CError(.configuration, "the client secret from \(origin) has more than one line; give the secret alone")
        }
        return v
    }

    /// The file's content, if only its owner can read it.
    private func read(_ path: String) throws -> String {
        var st = stat()
        guard stat(path, &st) == 0 else {
            throw B2CError(.configuration, "cannot read clientSecretFile '\(path)': \(String(cString: strerror(errno)))")
        }
        guard st.st_mode & 0o077 == 0 else {
            let mode = String(st.st_mode & 0o777, radix: 8)
            throw B2CError(
                .configuration,
                "clientSecretFile '\(path)' can be read by others (mode 0\(mode)); nothing was sent. Run: chmod 600 '\(path)'")
        }
        guard let data = FileManager.default.contents(atPath: path), let text = String(data: data, encoding: .utf8) else {
            throw B2CError(.configuration, "cannot read clientSecretFile '\(path)' as text")
        }
        return try nonEmpty(text, origin: "'\(path)'")
    }
}
