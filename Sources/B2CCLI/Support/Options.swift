import ArgumentParser
import B2CFastPath
import B2CKit
import Foundation

/// Options every client command takes.
struct ClientOptions: ParsableArguments {
    @Option(
        help: ArgumentHelp(
            "The policies.json to use (default: --profile, $B2C_CONFIG, $B2C_PROFILE, ./policies.json, "
                + "$XDG_CONFIG_HOME/b2c/policies.json).", valueName: "file"))
    var config: String?
    @Option(help: ArgumentHelp("A named configuration: $XDG_CONFIG_HOME/b2c/profiles/NAME.json (see `b2c profiles`).", valueName: "name"))
    var profile: String?
    @Flag(help: "Read the app's client secret from standard input (for --app and confidential apps).") var clientSecretStdin = false
    @Option(help: .hidden) var clientSecret: String?
    /// Accepted only to be refused with the reason (as --client-secret is), not as an unknown option.
    @Option(help: .hidden) var password: String?
    @Flag(name: .shortAndLong, help: "Trace HTTP requests to stderr (URLs without query values; never tokens, codes or passwords).")
    var verbose = false
    @Option(help: ArgumentHelp("Seconds to wait for the identity provider on each request.", valueName: "seconds"))
    var httpTimeout = 30

    func validate() throws {
        guard (1...600).contains(httpTimeout) else { throw ValidationError("--http-timeout must be between 1 and 600 seconds.") }
        if clientSecret != nil {
            throw Self.refusal(
                "a secret",
                "Pipe it to --client-secret-stdin, set B2C_CLIENT_SECRET, or name a 0600 file in the configuration's clientSecretFile.")
        }
        if password != nil {
            throw Self.refusal(
                "a password",
                "Pipe it to --password-stdin (b2c signin --username EMAIL --password-stdin), or leave it out and type it at the "
                    + "prompt, where it is not echoed.")
        }
        if config != nil && profile != nil { throw ValidationError("--config and --profile both name a configuration; give one.") }
    }

    /// A secret given on the command line: refused before anything is sent, with the reason and the ways that are safe.
    static func refusal(_ what: String, _ instead: String) -> ValidationError {
        ValidationError(
            "b2c never takes \(what) as an argument (other users see it in `ps`, and it stays in the shell history); nothing was "
                + "sent. \(instead)")
    }

    var settings: ClientSettings {
        ClientSettings(config: config, profile: profile, verbose: verbose, httpTimeout: httpTimeout, clientSecretStdin: clientSecretStdin)
    }
    func loadConfiguration() throws -> ClientConfiguration { try settings.loadConfiguration() }
    func makeClient() throws -> B2CClient { try settings.makeClient() }
}

/// The client options as plain values (what `ClientOptions` parses, and what the `token` fast path parses).
struct ClientSettings: Equatable {
    var config: String?
    var profile: String?
    var verbose = false
    var httpTimeout = 30
    var clientSecretStdin = false

    /// Where the configuration is (or the places looked at), with a missing profile as a configuration error.
    func locate() throws -> (path: String?, searched: [String], implicit: Bool) {
        do { return try ClientConfiguration.locate(explicit: config, profile: profile) } catch let e as B2CError { throw CLIError(e) }
    }

    func loadConfiguration() throws -> ClientConfiguration {
        guard let config = try loadConfigurationIfPresent() else {
            let located = try locate()
            throw CLIError(
                "no configuration found (looked for \(located.searched.joined(separator: ", "))). Write one for your tenant with "
                    + "`b2c init` (it asks for the tenant, the app and the policies)"
                    + (Self.installedExample().map { ", or start from the example \($0)" } ?? "")
                    + "; a local tenant writes its own: `b2c-emulator serve --config-out policies.json`. An existing file: --config FILE "
                    + "or B2C_CONFIG.",
                exitCode: ExitStatus.configuration)
        }
        return config
    }

    /// The example configuration the package installs (`/usr/share/doc/b2c/` for the .deb, `doc/` in the archive, the
    /// clone's root from a build), if it is there.
    static func installedExample() -> String? {
        guard let me = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") else { return nil }
        let bin = URL(fileURLWithPath: me).deletingLastPathComponent()
        let candidates = [
            "../share/doc/b2c/policies.example.json", "../doc/policies.example.json", "../../policies.example.json",
            "../../../policies.example.json",
        ]
        return candidates.map { bin.appendingPathComponent($0).standardizedFileURL.path }.first {
            FileManager.default.fileExists(atPath: $0)
        }
    }

    /// Why the configuration in use is the one: the flag or variable that named it, or where it was found.
    func origin(implicit: Bool, environment: [String: String] = ProcessEnvironment.current()) -> String {
        if config != nil { return "--config" }
        if let profile { return "--profile \(profile)" }
        if let c = environment["B2C_CONFIG"], !c.isEmpty { return "B2C_CONFIG" }
        if let p = environment["B2C_PROFILE"], !p.isEmpty { return "B2C_PROFILE=\(p)" }
        return implicit ? "found in the current directory" : "the user configuration"
    }

    /// `B2C_CONFIG` and `B2C_PROFILE` both set, naming different files (B2C_CONFIG wins, as the order says): said on stderr.
    static func environmentConflict(_ environment: [String: String] = ProcessEnvironment.current()) -> String? {
        guard let c = environment["B2C_CONFIG"], !c.isEmpty, let p = environment["B2C_PROFILE"], !p.isEmpty else { return nil }
        let profilePath = Profiles.path(of: p)
        func canonical(_ path: String) -> String { URL(fileURLWithPath: path).resolvingSymlinksInPath().standardizedFileURL.path }
        guard canonical(c) != canonical(profilePath) else { return nil }
        return "B2C_CONFIG (\(c)) and B2C_PROFILE (\(p)) name different configurations; using B2C_CONFIG, which comes first. "
            + "Unset B2C_CONFIG to use the profile \(p)."
    }

    /// The configuration, or nil when none is named and none is found (commands about the whole store then act on it all).
    func loadConfigurationIfPresent() throws -> ClientConfiguration? {
        let located = try locate()
        if config == nil && profile == nil, let conflict = Self.environmentConflict() { writeErr(conflict) }
        guard let path = located.path else { return nil }
        if located.implicit { return try ImplicitConfiguration.load(path) }
        return try Self.parsed { try ClientConfiguration.load(path: path) }
    }

    /// A configuration load, its errors said as the CLI says them.
    static func parsed(_ load: () throws -> ClientConfiguration) throws -> ClientConfiguration {
        do { return try load() } catch let e as B2CError { throw CLIError(e) }
    }

    func openStore() throws -> TokenStore {
        do { return try TokenStore(directory: StoreLocation.directory(), keys: .system()) } catch let e as B2CError { throw CLIError(e) }
    }

    func makeClient() throws -> B2CClient {
        try makeClient(config: try loadConfiguration())
    }

    func makeClient(config: ClientConfiguration) throws -> B2CClient {
        let store = try openStore()
        var trace: (@Sendable (String) -> Void)?
        if verbose {
            trace = { line in Terminal.err("b2c: http \(line)\n") }
        }
        let offset = try Self.clockOffset()
        do {
            return try B2CClient(
                config: config, store: store, timeoutSeconds: httpTimeout, trace: trace, secrets: secretSource(),
                clock: { Int(Date().timeIntervalSince1970) + offset })
        } catch let e as B2CError {
            throw CLIError(e)
        }
    }
}

extension ClientSettings {
    /// `B2C_CLOCK_OFFSET`, the seconds that shift our clock to follow a local tenant whose clock a test moved; a value
    /// that is no whole number within ten years either way is refused before anything is done.
    static func clockOffset(_ environment: [String: String] = ProcessEnvironment.current()) throws -> Int {
        let value = environment[ClockOffset.variable]
        guard let offset = ClockOffset.parse(value) else {
            throw CLIError(
                "\(ClockOffset.variable) is '\(value ?? "")', not a whole number of seconds from -\(ClockOffset.limit) to "
                    + "\(ClockOffset.limit) (ten years either way, as far as the local tenant's clock moves). Unset it, or set it "
                    + "to the seconds the tenant's clock was moved; nothing was done.", exitCode: ExitStatus.usage)
        }
        return offset
    }

    /// The client secret's sources: standard input only when asked (`--client-secret-stdin`), read once when first needed.
    func secretSource() -> ClientSecretSource {
        guard clientSecretStdin else { return ClientSecretSource() }
        return ClientSecretSource(standardInput: {
            String(decoding: FileHandle.standardInput.readDataToEndOfFile(), as: UTF8.self)
        })
    }
}

/// The browser's options, on every command that opens one (signin, edit-profile, reset-password).
struct BrowserOptions: ParsableArguments {
    @Flag(help: "Print the URL only; do not start a browser.") var noBrowser = false
    @Option(help: "Port of the loopback redirect listener (0 = any free port).") var port = 0
    @Option(help: "Seconds to wait for the browser, in all (a forgot-password detour included).") var timeout = 300

    func validate() throws {
        guard (0...65535).contains(port) else { throw ValidationError("--port must be between 0 and 65535.") }
        guard timeout > 0 else { throw ValidationError("--timeout must be a positive number of seconds.") }
    }

    var interactive: InteractiveOptions { InteractiveOptions(port: port, timeoutSeconds: timeout) }
}

/// Options of the browser flows other than sign-in: whose profile, which policy, and the browser's options.
struct BrowserFlowOptions: ParsableArguments {
    @Option(help: "Email, oid, account id or a unique prefix of the person (default: the current account of the sign-in policy).")
    var account: String?
    @Option(help: "The policy to run (default: the first of its role in the configuration).") var policy: String?
    @OptionGroup var browser: BrowserOptions

    var noBrowser: Bool { browser.noBrowser }
    var interactive: InteractiveOptions { browser.interactive }
}

/// `-o/--output table|json` on every command that lists or reports.
struct OutputOptions: ParsableArguments {
    @Option(name: [.customShort("o"), .long], help: "table or json (default: table on a terminal, json otherwise).") var output:
        OutputFormat?
    var format: OutputFormat { output ?? .auto }
}

/// Runs a client operation, shutting the client down and mapping errors to messages and exit codes.
/// An interactive command's client: Ctrl-C and SIGTERM cancel it (exit 2, nothing stored) while `body` runs.
func withInteractiveClient<T>(_ client: B2CClient, _ body: (B2CClient) async throws -> T) async throws -> T {
    let interrupt = cancelOnInterrupt()
    defer { interrupt.forEach { $0.cancel() } }
    return try await withClient(client, body)
}

func withClient<T>(_ client: B2CClient, _ body: (B2CClient) async throws -> T) async throws -> T {
    do {
        let result = try await body(client)
        await client.shutdown()
        return result
    } catch let e as B2CError {
        await client.shutdown()
        throw CLIError(e)
    } catch {
        await client.shutdown()
        throw error
    }
}

/// Every sign-in into a plaintext store says so: the choice was explicit, and it must stay visible.
func warnIfPlaintext(_ client: B2CClient) {
    guard (try? client.storageStatus())?.mode == .plaintext else { return }
    writeErr(
        "warning: tokens are stored unencrypted in \(client.storePath) (`b2c config set storage plaintext` was chosen; "
            + "`b2c config set storage encrypted` encrypts them)")
}

/// A configuration found in the working directory rather than named (`--config`, `--profile`, `B2C_CONFIG`,
/// `B2C_PROFILE`): it decides where tokens go, so it is used only once allowed — at a terminal by answering the prompt
/// that shows where it points, otherwise with `b2c config allow` — and each use says which file it was.
enum ImplicitConfiguration {
    /// The file, read once: the ownership rule, then the allow of exactly these bytes (asked for at a terminal).
    static func load(_ path: String) throws -> ClientConfiguration {
        let trust = ConfigurationTrust(storeDirectory: StoreLocation.directory())
        let file: ConfigurationTrust.Candidate
        do { file = try ConfigurationTrust.read(path) } catch let e as ConfigurationRefused {
            throw CLIError("\(e). Name a configuration of your own with --config FILE.", exitCode: ExitStatus.configuration)
        }
        let config = try ClientSettings.parsed { try file.configuration() }
        let shown = displayPath(path)
        guard case .unknown(let changed) = trust.verdict(for: file) else {
            if shown == "./policies.json" {
                writeFoundConfigurationNotice()
            } else {
                writeErr("using \(shown) (found in the current directory)")
            }
            return config
        }
        let what = changed ? "\(shown) changed since you allowed it" : "\(shown) (found in the current directory) has not been allowed yet"
        guard Prompt.stdinIsTerminal else {
            throw CLIError(
                "\(what). A configuration decides where your tokens go; look at it, then allow it with `b2c config allow \(shown)` "
                    + "(or name it with --config). Nothing was done.", exitCode: ExitStatus.configuration)
        }
        writeErr("\(what). It decides where your tokens go:")
        writeErr(summary(config))
        writePrompt("Use it? (it is remembered until the file changes) [y/N] ")
        guard let answer = Prompt.line()?.trimmingCharacters(in: .whitespaces).lowercased(), ["y", "yes"].contains(answer) else {
            throw CLIError("\(shown) not allowed; nothing was done.", exitCode: ExitStatus.configuration)
        }
        do { try trust.allow(file) } catch { throw CLIError("\(error)", exitCode: ExitStatus.configuration) }
        return config
    }

    static func summary(_ config: ClientConfiguration) -> String {
        let rows = config.trustSummary
        let width = rows.map(\.0.count).max() ?? 0
        return rows.map { "  " + $0.0.padding(toLength: width, withPad: " ", startingAt: 0) + "  " + $0.1 }.joined(separator: "\n")
    }

    /// `./policies.json` for the working directory's file, else the path as given.
    static func displayPath(_ path: String) -> String {
        let cwd = FileManager.default.currentDirectoryPath
        return path == cwd + "/policies.json" ? "./policies.json" : path
    }
}
