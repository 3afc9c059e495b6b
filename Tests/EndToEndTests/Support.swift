import AsyncHTTPClient
import B2CEmulator
import B2CKit
import ChildProcess
import Foundation
import NIOCore
import NIOSSL
import TestSupport
import Testing

let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
let buildDir =
    ProcessInfo.processInfo.environment["B2C_BUILD_DIR"].map { URL(fileURLWithPath: $0) }
    ?? packageRoot.appendingPathComponent(".build/debug")
let b2cBinary = buildDir.appendingPathComponent("b2c")
let emulatorBinary = buildDir.appendingPathComponent("b2c-emulator")
let agent = buildDir.appendingPathComponent("b2c-test-agent")

let alice = (email: "alice@contoso.com", password: "Alice-dev-2026!", oid: "0a11ce00-5eed-4a11-8000-00000000a11c")
let bob = (email: "bob@contoso.com", password: "Bob-dev-2026!", oid: "0b0b0000-5eed-4b0b-8000-000000000b0b")

extension EmulatorSeed {
    /// The default tenant whose sign-up-or-sign-in user flow is "Email one-time passcode": native sign-in by emailed
    /// codes (the default, "Email with password", asks for the password and offers no code).
    static var codeSignIn: EmulatorSeed {
        var seed = EmulatorSeed.default
        seed.policies[seed.policies.firstIndex { $0.id == "B2C_1_susi" }!].signInMethod = .emailOtp
        return seed
    }
}
let tenantID = EmulatorSeed.defaultTenantID

struct Run {
    var status: Int32
    var stdout: String
    var stderr: String
    var json: JSONValue { (try? JSONValue.parse(stdout)) ?? .null }
}

/// A TLS emulator in-process, a client configuration for it, a private store, and the built `b2c` driven
/// with the scripted user agent as $BROWSER.
final class World: @unchecked Sendable {
    let tenant: LocalTenantServer
    var server: EmulatorServer { tenant.server }
    let dir: URL
    let http: HTTPClient
    var clockOffset = 0
    /// The key the b2c processes of this world encrypt the store with (`B2C_STORE_KEY`): a CI's way, and no key store here.
    let storeKey = Data((0..<32).map { _ in UInt8.random(in: 0...255) }).base64EncodedString()

    var home: URL { dir.appendingPathComponent("home") }
    var configPath: String { dir.appendingPathComponent("policies.json").path }
    var caPath: String { dir.appendingPathComponent("state/ca.pem").path }

    /// `hostNames`: more names the TLS certificate is valid for (a test reaching the emulator under another name).
    static func start(seed: EmulatorSeed = .default, hostNames: [String] = []) async throws -> World {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("b2c-e2e-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let state = dir.appendingPathComponent("state")
        // The tenant's database in memory (its TLS material in `state`): the suite runs dozens of worlds at once, and a
        // file store's connections are open files of this one process.
        try FileManager.default.createDirectory(at: state, withIntermediateDirectories: true)
        let tenant = try await LocalTenantServer.start(seed: seed, tls: true, tlsDirectory: state, hostNames: hostNames)
        let config = tenant.emulator.clientConfiguration(baseURL: tenant.baseURL, caFile: tenant.tls?.caPath.path)
        try Data(config.serialized(pretty: true).utf8).write(to: dir.appendingPathComponent("policies.json"))
        let http = HTTPClient(
            eventLoopGroupProvider: .singleton,
            configuration: .init(tlsConfiguration: try tenant.clientTLS(), redirectConfiguration: .disallow))
        return World(tenant: tenant, dir: dir, http: http)
    }

    private init(tenant: LocalTenantServer, dir: URL, http: HTTPClient) { self.tenant = tenant; self.dir = dir; self.http = http }

    /// A world for the length of `body`, stopped (and awaited) however `body` ends.
    static func with(seed: EmulatorSeed = .default, hostNames: [String] = [], _ body: (World) async throws -> Void) async throws {
        let w = try await start(seed: seed, hostNames: hostNames)
        do { try await body(w) } catch {
            await w.stop()
            throw error
        }
        await w.stop()
    }

    /// Stops the emulator and the admin client; the store directory stays until the test ends.
    func stop() async {
        try? await http.shutdown()
        await tenant.stop()
    }

    deinit { try? FileManager.default.removeItem(at: dir) }

    func environment(
        as user: (email: String, password: String, oid: String)?, jar: String = "jar", extra: [String: String] = [:]
    ) -> [String: String] {
        var env = ProcessInfo.processInfo.environment
        for k in env.keys where k.hasPrefix("B2C_") { env[k] = nil }
        env["B2C_HOME"] = home.path
        env["B2C_CONFIG"] = configPath
        env["BROWSER"] = agent.path
        env["B2C_AGENT_CA"] = caPath
        env["B2C_AGENT_JAR"] = dir.appendingPathComponent("\(jar).json").path
        env["B2C_CLOCK_OFFSET"] = String(clockOffset)
        env["B2C_STORE_KEY"] = storeKey
        if let user {
            env["B2C_AGENT_EMAIL"] = user.email
            env["B2C_AGENT_PASSWORD"] = user.password
        }
        for (k, v) in extra { env[k] = v }
        return env
    }

    @discardableResult
    func b2c(
        _ args: [String], as user: (email: String, password: String, oid: String)? = nil, jar: String = "jar",
        extra: [String: String] = [:], stdin: String? = nil, directory: URL? = nil
    ) async throws -> Run {
        try await run(b2cBinary, args, environment: environment(as: user, jar: jar, extra: extra), stdin: stdin, directory: directory)
    }

    /// The environment of a machine with no configuration anywhere: no B2C_CONFIG, an empty XDG_CONFIG_HOME, and (run
    /// with `directory: emptyDirectory`) no ./policies.json.
    func withoutConfiguration() throws -> (extra: [String: String], directory: URL) {
        let empty = dir.appendingPathComponent("empty-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: empty, withIntermediateDirectories: true)
        return (["B2C_CONFIG": "", "XDG_CONFIG_HOME": empty.path, "HOME": empty.path], empty)
    }

    func admin(_ method: String, _ path: String, _ json: JSONValue? = nil) async throws -> JSONValue {
        var req = HTTPClientRequest(url: server.baseURL + "/_admin" + path)
        req.method = .init(rawValue: method)
        // Admin writes carry JSON (the admin guard refuses any other POST); `{}` when there is nothing to say.
        let sent: JSONValue? = json ?? (method == "POST" ? JSONValue.object([:]) : nil)
        if let json = sent {
            req.headers.add(name: "Content-Type", value: "application/json")
            req.body = .bytes(ByteBuffer(string: json.serialized()))
        }
        let res = try await http.execute(req, timeout: .seconds(10))
        let body = try await res.body.collect(upTo: 1 << 22)
        return (try? JSONValue.parse(Data(buffer: body))) ?? .null
    }

    /// Polls `condition` until it holds (at most `seconds`): for states another process reaches, reported by the emulator.
    func eventually(_ what: String, seconds: Double = 20, _ condition: () async throws -> Bool) async throws {
        let deadline = Date().addingTimeInterval(seconds)
        while try await !condition() {
            guard Date() < deadline else { throw LiveProcessError(message: "timed out waiting until \(what)") }
            try await Task.sleep(nanoseconds: 20_000_000)
        }
    }

    func advanceClock(_ seconds: Int) async throws {
        _ = try await admin("POST", "/clock", ["advanceSeconds": JSONValue(seconds)])
        clockOffset += seconds
    }

    /// Rewrites this world's client configuration (e.g. shared-device mode, another API).
    func editConfig(_ change: (inout [String: JSONValue]) -> Void) throws {
        var o = try JSONValue.parse(Data(contentsOf: URL(fileURLWithPath: configPath))).objectValue ?? [:]
        change(&o)
        try Data(JSONValue.object(o).serialized(pretty: true).utf8).write(to: URL(fileURLWithPath: configPath))
    }

    /// A snapshot of the client store's rows (to prove a failure changed nothing).
    /// A missing store is its own snapshot; a query that fails is an error, never an empty (and so always equal) snapshot.
    func storeSnapshot() throws -> String {
        let path = home.appendingPathComponent("store.sqlite").path
        guard FileManager.default.fileExists(atPath: path) else { return "(no store)" }
        let r = try runBlocking(
            URL(fileURLWithPath: "/usr/bin/sqlite3"),
            [
                "-readonly", "-bail", "-cmd", ".timeout 5000", path,
                "SELECT account_id, updated_at, hex(id_token) FROM accounts ORDER BY 1; SELECT account_id, target, hex(secret), "
                    + "expires_on FROM access_tokens ORDER BY 1, 2; SELECT account_id, hex(secret) FROM refresh_tokens ORDER BY 1; "
                    + "SELECT * FROM identities ORDER BY 1, 2; SELECT * FROM current_accounts ORDER BY 1; SELECT environment, "
                    + "client_id, resource, hex(secret), expires_on FROM app_tokens ORDER BY 1, 2, 3;",
            ],
            environment: [:])
        guard r.status == 0 else { throw SnapshotError(message: "sqlite3 could not read \(path): \(r.stderr)") }
        return r.stdout
    }

    /// Every token in this world's store, decrypted (for checks that none of them leaks anywhere).
    func storeSecrets() throws -> [String] {
        try allSecrets(in: try TokenStore(directory: home, keys: .system(environment: ["B2C_STORE_KEY": storeKey])))
    }

    /// The library façade on this world's configuration and store (for checks below the CLI).
    func libraryClient() throws -> B2CClient {
        try B2CClient(
            config: try ClientConfiguration.load(path: configPath),
            store: try TokenStore(directory: home, keys: .system(environment: ["B2C_STORE_KEY": storeKey])))
    }

    /// The library façade for the length of `body`, shut down (and awaited) however `body` ends.
    func withLibraryClient(_ body: (B2CClient) async throws -> Void) async throws {
        let client = try libraryClient()
        do { try await body(client) } catch {
            await client.shutdown()
            throw error
        }
        await client.shutdown()
    }

    /// Token requests the emulator saw (no secrets).
    func tokenLog() async throws -> [JSONValue] {
        try await admin("GET", "/log")["requests"]?.arrayValue ?? []
    }
}

/// Runs a process to its end (the one runner, `LiveProcess`, underneath), with `stdin` as its whole input, in one of
/// `ChildSlots`' places.
func run(
    _ executable: URL, _ args: [String], environment: [String: String], stdin: String? = nil, directory: URL? = nil
) async throws -> Run {
    try await ChildSlots.shared.withPlace {
        let p = try LiveProcess(executable, args, environment: environment, directory: directory)
        if let stdin { p.send(stdin) }
        return await p.finish()
    }
}

/// The same, blocking the calling thread (for quick tools such as sqlite3, outside the cooperative pool's way).
func runBlocking(
    _ executable: URL, _ args: [String], environment: [String: String], stdin: String? = nil, directory: URL? = nil
) throws -> Run {
    let p = try LiveProcess(executable, args, environment: environment, directory: directory)
    if let stdin { p.send(stdin) }
    return p.finishBlocking()
}

struct SnapshotError: Error, CustomStringConvertible { let message: String; var description: String { message } }

extension Data {
    init(buffer: ByteBuffer) { self.init(buffer.readableBytesView) }
}

/// Starts a process, waits until its stderr contains `marker`, sends `signal`, and returns how it ended.
func runAndSignal(_ executable: URL, _ args: [String], environment: [String: String], marker: String, signal sig: Int32) async throws -> Run
{
    let p = try LiveProcess(executable, args, environment: environment)
    try await p.waitFor(marker)
    p.signal(sig)
    return await p.finish()
}

/// A process we talk to while it runs: its stdin is ours to write, its stderr is collected as it arrives.
final class LiveProcess: @unchecked Sendable {
    let process: ChildProcess
    private let input: Descriptor
    private let lock = NSLock()
    private var errText = ""
    private var outText = ""
    private let finished = DispatchSemaphore(value: 0)
    private var echoText = ""
    private let isTerminal: Bool

    /// With `terminal`, stdin is a pseudo-terminal (so b2c prompts, and turns echo off for passwords); what the
    /// terminal echoes back is collected in `echoed`.
    init(_ executable: URL, _ args: [String], environment: [String: String], terminal: Bool = false, directory: URL? = nil) throws {
        isTerminal = terminal
        let out = try ChildPipe(), err = try ChildPipe()
        let childInput: Descriptor
        if terminal {
            let pty = try PseudoTerminal.functions()
            let master = pty.open(O_RDWR | O_NOCTTY | O_CLOEXEC)
            guard master >= 0 else { throw LiveProcessError(message: "cannot open a pseudo-terminal") }
            input = Descriptor(master)
            guard pty.grant(master) == 0, pty.unlock(master) == 0, let name = pty.name(master) else {
                throw LiveProcessError(message: "cannot open a pseudo-terminal")
            }
            let slave = open(String(cString: name), O_RDWR | O_NOCTTY | O_CLOEXEC)
            guard slave >= 0 else { throw LiveProcessError(message: "cannot open \(String(cString: name))") }
            childInput = Descriptor(slave)
        } else {
            let pipe = try ChildPipe()
            input = pipe.writeEnd
            childInput = pipe.readEnd
        }
        process = try ChildProcess(
            executable, args, environment: environment, directory: directory,
            stdin: childInput.fd, stdout: out.writeEnd.fd, stderr: err.writeEnd.fd)
        childInput.close()
        out.writeEnd.close()
        err.writeEnd.close()
        if terminal {
            // The terminal's echo ends (EIO) once the child, its only user, has gone.
            let master = input
            Thread { [self] in
                var buffer = [UInt8](repeating: 0, count: 4096)
                while true {
                    let n = buffer.withUnsafeMutableBytes { read(master.fd, $0.baseAddress, $0.count) }
                    if n < 0 && errno == EINTR { continue }
                    if n <= 0 { break }
                    let text = String(decoding: buffer[0..<n], as: UTF8.self)
                    lock.withLock { echoText += text }
                }
            }.start()
        }
        let done = DispatchGroup()
        done.enter()
        drain(err.readEnd, then: { done.leave() }) { [self] data in lock.withLock { errText += String(decoding: data, as: UTF8.self) } }
        done.enter()
        drain(out.readEnd, then: { done.leave() }) { [self] data in lock.withLock { outText += String(decoding: data, as: UTF8.self) } }
        Thread { [self] in
            done.wait()
            process.waitUntilExit()
            finished.signal()
        }.start()
    }

    var stderr: String { lock.withLock { errText } }
    var stdout: String { lock.withLock { outText } }

    /// Waits until stdout contains `text`.
    func waitForOutput(_ text: String, seconds: Double = 30) async throws {
        let deadline = Date().addingTimeInterval(seconds)
        while !stdout.contains(text) {
            if !process.isRunning && !stdout.contains(text) {
                throw LiveProcessError(message: "the process ended before printing '\(text)': \(stdout) \(stderr)")
            }
            if Date() > deadline { throw LiveProcessError(message: "timed out waiting for '\(text)' on stdout: \(stdout)") }
            try await Task.sleep(nanoseconds: 50_000_000)
        }
    }

    func signal(_ sig: Int32) { kill(process.processIdentifier, sig) }
    var echoed: String { lock.withLock { echoText } }

    func write(_ line: String) { input.write(Data((line + "\n").utf8)) }

    /// Waits (polling, without blocking the cooperative pool) until stderr contains `text` `times` times.
    func waitFor(_ text: String, times: Int = 1, seconds: Double = 30) async throws {
        let deadline = Date().addingTimeInterval(seconds)
        while stderr.components(separatedBy: text).count - 1 < times {
            if !process.isRunning && stderr.components(separatedBy: text).count - 1 < times {
                throw LiveProcessError(message: "the process ended before printing '\(text)': \(stderr)")
            }
            if Date() > deadline { throw LiveProcessError(message: "timed out waiting for '\(text)': \(stderr)") }
            try await Task.sleep(nanoseconds: 50_000_000)
        }
    }

    /// Writes text to stdin as it is (no line ending added).
    func send(_ text: String) { input.write(Data(text.utf8)) }

    /// Closes stdin and waits for the end; stdout and stderr are then complete.
    func finish() async -> Run {
        await withCheckedContinuation { (c: CheckedContinuation<Run, Never>) in
            Thread { [self] in c.resume(returning: finishBlocking()) }.start()
        }
    }

    func finishBlocking() -> Run {
        if !isTerminal { input.close() }
        finished.wait()
        finished.signal()  // finishing twice is allowed
        return lock.withLock { Run(status: process.terminationStatus, stdout: outText, stderr: errText) }
    }

    var isRunning: Bool { process.isRunning }
    /// The process ended on a signal (SIGKILL from a test).
    var killedBySignal: Bool { process.terminationReason == .uncaughtSignal }
}

struct LiveProcessError: Error, CustomStringConvertible { var message: String; var description: String { message } }

/// posix_openpt, grantpt, unlockpt and ptsname from the C library (Swift's Glibc module does not export them).
enum PseudoTerminal {
    typealias IntFunction = @convention(c) (Int32) -> Int32
    typealias NameFunction = @convention(c) (Int32) -> UnsafeMutablePointer<CChar>?

    static func functions() throws -> (open: IntFunction, grant: IntFunction, unlock: IntFunction, name: NameFunction) {
        func symbol(_ name: String) throws -> UnsafeMutableRawPointer {
            guard let s = dlsym(UnsafeMutableRawPointer(bitPattern: 0), name) else {
                throw LiveProcessError(message: "no \(name) in the C library")
            }
            return s
        }
        return (
            unsafeBitCast(try symbol("posix_openpt"), to: IntFunction.self), unsafeBitCast(try symbol("grantpt"), to: IntFunction.self),
            unsafeBitCast(try symbol("unlockpt"), to: IntFunction.self), unsafeBitCast(try symbol("ptsname"), to: NameFunction.self)
        )
    }
}

/// Every token a store holds (id, access and refresh tokens, app tokens), decrypted with the store's key.
func allSecrets(in store: TokenStore) throws -> [String] {
    var out: [String] = []
    for a in try store.accounts(scope: nil) {
        out.append(a.idToken)
        out += try store.accessTokens(of: a).map(\.secret)
        if let rt = try store.refreshToken(of: a) { out.append(rt) }
    }
    for t in try store.appTokens(scope: nil) {
        if let full = try store.appToken(scope: AccountScope(environment: t.environment, clientID: t.clientID), resource: t.resource) {
            out.append(full.secret)
        }
    }
    return out.filter { !$0.isEmpty }
}
