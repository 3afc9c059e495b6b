import AsyncHTTPClient
import B2CEmulator
import B2CKit
import Foundation
import NIOCore
import NIOSSL
import Testing

let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
let buildDir = ProcessInfo.processInfo.environment["B2C_BUILD_DIR"].map { URL(fileURLWithPath: $0) }
    ?? packageRoot.appendingPathComponent(".build/debug")
let b2cBinary = buildDir.appendingPathComponent("b2c")
let agent = buildDir.appendingPathComponent("b2c-test-agent")

let alice = (email: "alice@contoso.com", password: "Alice-dev-2026!", oid: "0a11ce00-5eed-4a11-8000-00000000a11c")
let bob = (email: "bob@contoso.com", password: "Bob-dev-2026!", oid: "0b0b0000-5eed-4b0b-8000-000000000b0b")
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
    let server: EmulatorServer
    let dir: URL
    let http: HTTPClient
    var clockOffset = 0

    var home: URL { dir.appendingPathComponent("home") }
    var configPath: String { dir.appendingPathComponent("policies.json").path }
    var caPath: String { dir.appendingPathComponent("state/ca.pem").path }

    static func start(seed: EmulatorSeed = .default) async throws -> World {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("b2c-e2e-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let state = dir.appendingPathComponent("state")
        let emulator = try B2CEmulator(seed: seed, store: try EmulatorStore.file(directory: state))
        let tls = try EmulatorTLS.loadOrCreate(in: state)
        let server = try await EmulatorServer.start(emulator, tls: tls)
        let config = emulator.clientConfiguration(baseURL: server.baseURL, caFile: tls.caPath.path)
        try Data(config.serialized(pretty: true).utf8).write(to: dir.appendingPathComponent("policies.json"))
        var t = TLSConfiguration.makeClientConfiguration()
        t.trustRoots = .certificates([try NIOSSLCertificate(bytes: Array(tls.caCertificatePEM.utf8), format: .pem)])
        let http = HTTPClient(eventLoopGroupProvider: .singleton, configuration: .init(tlsConfiguration: t, redirectConfiguration: .disallow))
        return World(server: server, dir: dir, http: http)
    }

    private init(server: EmulatorServer, dir: URL, http: HTTPClient) { self.server = server; self.dir = dir; self.http = http }

    /// Stops the emulator and the admin client; the store directory stays until the test ends.
    func stop() async {
        try? await http.shutdown()
        await server.stop()
    }

    deinit { try? FileManager.default.removeItem(at: dir) }

    func environment(as user: (email: String, password: String, oid: String)?, jar: String = "jar", extra: [String: String] = [:]) -> [String: String] {
        var env = ProcessInfo.processInfo.environment
        for k in env.keys where k.hasPrefix("B2C_") { env[k] = nil }
        env["B2C_HOME"] = home.path
        env["B2C_CONFIG"] = configPath
        env["BROWSER"] = agent.path
        env["B2C_AGENT_CA"] = caPath
        env["B2C_AGENT_JAR"] = dir.appendingPathComponent("\(jar).json").path
        env["B2C_CLOCK_OFFSET"] = String(clockOffset)
        if let user {
            env["B2C_AGENT_EMAIL"] = user.email
            env["B2C_AGENT_PASSWORD"] = user.password
        }
        for (k, v) in extra { env[k] = v }
        return env
    }

    @discardableResult
    func b2c(_ args: [String], as user: (email: String, password: String, oid: String)? = nil, jar: String = "jar",
             extra: [String: String] = [:]) async throws -> Run {
        try await run(b2cBinary, args, environment: environment(as: user, jar: jar, extra: extra))
    }

    func admin(_ method: String, _ path: String, _ json: JSONValue? = nil) async throws -> JSONValue {
        var req = HTTPClientRequest(url: server.baseURL + "/_admin" + path)
        req.method = .init(rawValue: method)
        if let json {
            req.headers.add(name: "Content-Type", value: "application/json")
            req.body = .bytes(ByteBuffer(string: json.serialized()))
        }
        let res = try await http.execute(req, timeout: .seconds(10))
        let body = try await res.body.collect(upTo: 1 << 22)
        return (try? JSONValue.parse(Data(buffer: body))) ?? .null
    }

    func advanceClock(_ seconds: Int) async throws {
        _ = try await admin("POST", "/clock", ["advanceSeconds": JSONValue(seconds)])
        clockOffset += seconds
    }

    /// The library façade on this world's configuration and store (for checks below the CLI).
    func libraryClient() throws -> B2CClient {
        try B2CClient(config: try ClientConfiguration.load(path: configPath), store: try TokenStore(directory: home))
    }

    /// Token requests the emulator saw (no secrets).
    func tokenLog() async throws -> [JSONValue] {
        try await admin("GET", "/log")["requests"]?.arrayValue ?? []
    }
}

/// Runs a process on a thread of its own: the in-process emulator needs the cooperative pool while we wait.
func run(_ executable: URL, _ args: [String], environment: [String: String]) async throws -> Run {
    try await withCheckedThrowingContinuation { continuation in
        Thread {
            do { continuation.resume(returning: try runBlocking(executable, args, environment: environment)) } catch {
                continuation.resume(throwing: error)
            }
        }.start()
    }
}

func runBlocking(_ executable: URL, _ args: [String], environment: [String: String]) throws -> Run {
    let p = Process()
    p.executableURL = executable
    p.arguments = args
    p.environment = environment
    let out = Pipe(), err = Pipe()
    p.standardOutput = out
    p.standardError = err
    p.standardInput = FileHandle.nullDevice
    try p.run()
    // Read stderr on another thread so that neither pipe can fill up and block the child.
    let errBox = ErrBox()
    let reader = Thread { errBox.data = err.fileHandleForReading.readDataToEndOfFile(); errBox.done.signal() }
    reader.start()
    let o = out.fileHandleForReading.readDataToEndOfFile()
    errBox.done.wait()
    let e = errBox.data
    p.waitUntilExit()
    return Run(status: p.terminationStatus, stdout: String(decoding: o, as: UTF8.self), stderr: String(decoding: e, as: UTF8.self))
}

extension Data {
    init(buffer: ByteBuffer) { self.init(buffer.readableBytesView) }
}

final class ErrBox: @unchecked Sendable {
    var data = Data()
    let done = DispatchSemaphore(value: 0)
}

/// Starts a process, waits until its stderr contains `marker`, sends `signal`, and returns how it ended.
func runAndSignal(_ executable: URL, _ args: [String], environment: [String: String], marker: String, signal sig: Int32) async throws -> Run {
    try await withCheckedThrowingContinuation { continuation in
        Thread {
            do {
                let p = Process()
                p.executableURL = executable
                p.arguments = args
                p.environment = environment
                let err = Pipe()
                p.standardError = err
                p.standardOutput = FileHandle.nullDevice
                try p.run()
                var text = ""
                while !text.contains(marker) {
                    let chunk = err.fileHandleForReading.availableData
                    if chunk.isEmpty { break }
                    text += String(decoding: chunk, as: UTF8.self)
                }
                kill(p.processIdentifier, sig)
                text += String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
                p.waitUntilExit()
                continuation.resume(returning: Run(status: p.terminationStatus, stdout: "", stderr: text))
            } catch {
                continuation.resume(throwing: error)
            }
        }.start()
    }
}
