// b2c-bench: the measuring half of two benchmarks that a shell script cannot do well (bench/README.md).
//
//   b2c-bench sign-bound [--seconds S] [--threads N] [--signer libcrypto|batches|swift-crypto]
//       RS256 signatures per second, one signing loop per thread, on a signing input the size of an access token's, with
//       the emulator's own signing code (RS256Signer: the system's libcrypto one at a time, the default; `batches`: four
//       at a time, as the tenant's event loops sign what waits at once, through AVX-512 IFMA where the processor has it)
//       or with swift-crypto's _RSA over BoringSSL (B2CProtocol's JWT.signature, which the emulator signed with before
//       issue 43).
//       Prints: sign-bound threads N signatures C seconds T per_second R signer S [pass_cost P smallest_batch B]
//
//   b2c-bench load --base URL --ca FILE [--clients 32] [--seconds 300] [--policy B2C_1_susi]
//       A pipeline's worth of clients against a running emulator with the default seed, each repeating one job:
//       discovery, the authorize pages walked by the scripted browser with fresh cookies (sign-in page, credentials,
//       redirect with a code), the code redeemed with PKCE, two refresh grants with the rotated refresh token, and a
//       client-credentials grant of the daemon app. Prints one `kind` line per request kind and one `total` line:
//       kind NAME count C errors E p50_ms X p99_ms Y
//       total seconds T requests R grants G grants_per_second GS errors E
//       and, when a request fails, up to five `error` lines (never a token).
//
//   b2c-bench bare-server [--port 0] [--dir DIR]
//       A bare HTTPS server on SwiftNIO answering every request with one freshly signed access token (BareServer.swift):
//       the floor the tenant's token endpoint is compared with. Prints `bare-server https://127.0.0.1:PORT ca FILE`
//       (its CA, made in DIR), then serves until it is killed.
//
// Exit status: 0 when it measured (errors are reported, not fatal), 64 for a usage error, 1 when it could not start.
import AsyncHTTPClient
import B2CEmulator
import B2CKit
import B2CProtocol
import Dispatch
import Foundation
import NIOCore
import NIOSSL
import _CryptoExtras

func fail(_ message: String, status: Int32 = 64) -> Never {
    FileHandle.standardError.write(Data("b2c-bench: \(message)\n".utf8))
    exit(status)
}

/// `--name value` options after the subcommand.
func options(_ args: ArraySlice<String>, allowed: Set<String>) -> [String: String] {
    var result: [String: String] = [:]
    var rest = args
    while let name = rest.popFirst() {
        guard name.hasPrefix("--"), allowed.contains(String(name.dropFirst(2))) else {
            fail("unknown option '\(name)'; options: \(allowed.sorted().map { "--" + $0 }.joined(separator: ", "))")
        }
        guard let value = rest.popFirst() else { fail("\(name) needs a value") }
        result[String(name.dropFirst(2))] = value
    }
    return result
}

func number(_ opts: [String: String], _ name: String, default value: Int) -> Int {
    guard let text = opts[name] else { return value }
    guard let n = Int(text), n > 0 else { fail("--\(name) must be a positive whole number, not '\(text)'") }
    return n
}

struct Problem: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// Signatures counted per thread (each thread writes only its own slot, read after they have all finished).
final class Counts: @unchecked Sendable {
    let slots: UnsafeMutableBufferPointer<Int>
    init(_ n: Int) {
        slots = .allocate(capacity: n)
        slots.initialize(repeating: 0)
    }
    deinit { slots.deallocate() }
}

func percentile(_ sorted: [Double], _ p: Double) -> Double {
    guard !sorted.isEmpty else { return 0 }
    let rank = Int((p / 100 * Double(sorted.count)).rounded(.up)) - 1
    return sorted[min(max(rank, 0), sorted.count - 1)]
}

// MARK: sign-bound

func signBound(_ opts: [String: String]) throws {
    let seconds = number(opts, "seconds", default: 3)
    let threads = number(opts, "threads", default: ProcessInfo.processInfo.activeProcessorCount)
    let key = try _RSA.Signing.PrivateKey(keySize: .bits2048)
    // Each turn of a thread's loop makes `perTurn` signatures: four for `batches`, which the tenant's event loops sign
    // together when they wait at once (RS256Signer: one pass with IFMA, two with AVX2; where it makes no batches it signs
    // them one at a time, and says so).
    let sign: @Sendable (String) throws -> Void
    var perTurn = 1
    var probed = ""  // for `batches`: what the probe measured and chose
    switch opts["signer"] ?? "libcrypto" {
    case "libcrypto":
        let signer = RS256Signer(key, batches: false)
        guard signer.usesLibcrypto else { fail("libcrypto did not take the key (its signature differed from swift-crypto's)", status: 1) }
        sign = { _ = try signer.signature(signingInput: $0) }
    case "batches":
        let signer = RS256Signer(key)  // B2C_EMULATOR_RSA_BATCHES=0 turns the lanes off here as in the tenant
        signer.probeBatches()  // what the tenant's event loops do when two signatures first wait together
        guard signer.usesLibcrypto else { fail("libcrypto did not take the key (its signature differed from swift-crypto's)", status: 1) }
        if !signer.signsInBatches {
            let why = "no lanes (AVX-512 IFMA or AVX2), B2C_EMULATOR_RSA_BATCHES=0, or a pass costs as much as its signatures made alone"
            FileHandle.standardError.write(Data("sign-bound: no batches here (\(why)): they are signed one at a time\n".utf8))
        }
        probed = String(format: " pass_cost %.3f smallest_batch %d", signer.passCost ?? 0, signer.smallestBatch)
        perTurn = 4
        sign = { input in _ = try signer.signatures(signingInputs: [input, input + "1", input + "2", input + "3"]) }
    case "swift-crypto": sign = { _ = try JWT.signature(signingInput: $0, key: key) }
    case let other: fail("--signer must be libcrypto, batches or swift-crypto, not '\(other)'")
    }
    // A header and payload of an access token's size (about 900 bytes of signing input).
    let input =
        Base64URL.encode(Array(#"{"alg":"RS256","kid":"bench","typ":"JWT"}"#.utf8)) + "."
        + Base64URL.encode(Array(repeating: UInt8(ascii: "x"), count: 640))
    try sign(input)
    let turn = perTurn
    let counts = Counts(threads)
    let start = DispatchTime.now().uptimeNanoseconds
    let deadline = start + UInt64(seconds) * 1_000_000_000
    DispatchQueue.concurrentPerform(iterations: threads) { t in
        var n = 0
        while DispatchTime.now().uptimeNanoseconds < deadline {
            _ = try? sign(input)
            n += turn
        }
        counts.slots[t] = n
    }
    let elapsed = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
    let total = counts.slots.reduce(0, +)
    let figures = String(
        format: "sign-bound threads %d signatures %d seconds %.2f per_second %.1f", threads, total, elapsed, Double(total) / elapsed)
    print(figures + " signer " + (opts["signer"] ?? "libcrypto") + probed)
}

// MARK: load

enum Kind: String, CaseIterable {
    case discovery, authorizePages = "authorize-pages", code, refresh, clientCredentials = "client-credentials"
    var isGrant: Bool { self == .code || self == .refresh || self == .clientCredentials }
}

struct Tally: Sendable {
    var latencies: [String: [Double]] = [:]
    var errors: [String: Int] = [:]
    var messages: [String] = []

    mutating func add(_ kind: Kind, _ ms: Double) { latencies[kind.rawValue, default: []].append(ms) }
    mutating func failed(_ kind: Kind, _ message: String) {
        errors[kind.rawValue, default: 0] += 1
        if messages.count < 5 { messages.append("\(kind.rawValue): \(message)") }
    }
    mutating func merge(_ other: Tally) {
        for (k, v) in other.latencies { latencies[k, default: []] += v }
        for (k, v) in other.errors { errors[k, default: 0] += v }
        messages += other.messages.prefix(max(0, 5 - messages.count))
    }
}

struct LoadSettings: Sendable {
    let base: URL
    let caFile: String
    let policy: String
    let deadline: UInt64
}

/// One client's job, repeated until the deadline. Each client has its own HTTP client (its own connections, as separate
/// CI jobs would) and its own scripted browser.
func runClient(_ index: Int, _ s: LoadSettings) async throws -> Tally {
    var tls = TLSConfiguration.makeClientConfiguration()
    tls.trustRoots = .certificates(try NIOSSLCertificate.fromPEMFile(s.caFile))
    let http = HTTPClient(eventLoopGroupProvider: .singleton, configuration: .init(tlsConfiguration: tls, redirectConfiguration: .disallow))
    let browser = try ScriptedBrowser(caFile: s.caFile)
    let seed = EmulatorSeed.default
    let person = seed.users[index % seed.users.count]
    let tenant = seed.tenant.name
    let api = seed.apis[0]
    let authority = s.base.appendingPathComponent(tenant).appendingPathComponent(s.policy)
    let discovery = authority.appendingPathComponent("v2.0/.well-known/openid-configuration")
    let tokenURL = authority.appendingPathComponent("oauth2/v2.0/token")
    let authorizeURL = authority.appendingPathComponent("oauth2/v2.0/authorize")
    let resource = api.scopes.map { "\(api.identifierUri)/\($0)" }
    let daemon = ClientAuthentication(method: .post, secret: EmulatorSeed.defaultDaemonSecret)
    var tally = Tally()

    func timed(_ kind: Kind, _ body: () async throws -> Void) async -> Bool {
        let t0 = DispatchTime.now().uptimeNanoseconds
        do {
            try await body()
            tally.add(kind, Double(DispatchTime.now().uptimeNanoseconds - t0) / 1e6)
            return true
        } catch {
            tally.failed(kind, "\(error)")
            return false
        }
    }
    func post(_ form: [(String, String)], headers: [(String, String)] = []) async throws -> JSONValue {
        var req = HTTPClientRequest(url: tokenURL.absoluteString)
        req.method = .POST
        req.headers.add(name: "Content-Type", value: "application/x-www-form-urlencoded")
        for (n, v) in headers { req.headers.add(name: n, value: v) }
        req.body = .bytes(ByteBuffer(string: FormEncoding.encode(form)))
        let res = try await http.execute(req, timeout: .seconds(30))
        let body = try await res.body.collect(upTo: 1 << 20)
        let json = try JSONValue.parse(Data(buffer: body))
        guard res.status == .ok else {
            throw Problem(
                "HTTP \(res.status.code) \(json["error"]?.stringValue ?? "") "
                    + String((json["error_description"]?.stringValue ?? "").prefix(120)))
        }
        return json
    }

    while DispatchTime.now().uptimeNanoseconds < s.deadline {
        _ = await timed(.discovery) {
            let res = try await http.execute(HTTPClientRequest(url: discovery.absoluteString), timeout: .seconds(30))
            _ = try await res.body.collect(upTo: 1 << 20)
            guard res.status == .ok else { throw Problem("HTTP \(res.status.code)") }
        }
        browser.forgetCookies()
        let request = AuthorizeRequest(
            clientID: EmulatorSeed.defaultClientID, redirectURI: URL(string: "http://localhost")!, scopes: resource, prompt: nil,
            loginHint: nil)
        let redirect = request.redirectURI(port: 40_000 + index)
        var code: String?
        _ = await timed(.authorizePages) {
            let answer = try await browser.run(
                request.url(endpoint: authorizeURL, redirectURI: redirect),
                as: .init(email: person.email, password: person.password), deliver: false)
            let items = URLComponents(url: answer, resolvingAgainstBaseURL: false)?.queryItems ?? []
            guard let c = items.first(where: { $0.name == "code" })?.value else {
                throw Problem("no code in the redirect (\(items.map(\.name)))")
            }
            code = c
        }
        var refreshToken: String?
        if let code {
            _ = await timed(.code) {
                refreshToken = try await post(request.redemption(code: code, redirectURI: redirect).form)["refresh_token"]?.stringValue
            }
        }
        for _ in 0..<2 {
            guard let rt = refreshToken else { break }
            _ = await timed(.refresh) {
                let grant = TokenGrant.refreshToken(
                    clientID: EmulatorSeed.defaultClientID, refreshToken: rt, scope: ScopeSet.userRequest(resource))
                refreshToken = try await post(grant.form)["refresh_token"]?.stringValue
            }
        }
        _ = await timed(.clientCredentials) {
            let grant = TokenGrant.clientCredentials(clientID: EmulatorSeed.defaultDaemonID, scope: api.identifierUri + "/.default")
            let (form, headers) = daemon.apply(clientID: EmulatorSeed.defaultDaemonID, to: grant.form)
            guard try await post(form, headers: headers)["access_token"]?.stringValue != nil else {
                throw Problem("no access token")
            }
        }
    }
    await browser.shutdown()
    try await http.shutdown()
    return tally
}

func load(_ opts: [String: String]) async throws {
    guard let baseText = opts["base"], let base = URL(string: baseText), base.scheme == "https" || base.scheme == "http" else {
        fail("--base must be the emulator's origin, e.g. https://127.0.0.1:8443")
    }
    guard let ca = opts["ca"] else { fail("--ca must name the emulator's CA file (PEM)") }
    let clients = number(opts, "clients", default: 32)
    let seconds = number(opts, "seconds", default: 300)
    let start = DispatchTime.now().uptimeNanoseconds
    let settings = LoadSettings(
        base: base, caFile: ca, policy: opts["policy"] ?? "B2C_1_susi", deadline: start + UInt64(seconds) * 1_000_000_000)
    let tally = try await withThrowingTaskGroup(of: Tally.self) { group in
        for i in 0..<clients { group.addTask { try await runClient(i, settings) } }
        var all = Tally()
        for try await t in group { all.merge(t) }
        return all
    }
    let elapsed = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
    var requests = 0, grants = 0, errors = 0
    var everything: [Double] = []
    for kind in Kind.allCases {
        let sorted = (tally.latencies[kind.rawValue] ?? []).sorted()
        let e = tally.errors[kind.rawValue] ?? 0
        requests += sorted.count
        errors += e
        if kind.isGrant { grants += sorted.count; everything += sorted }
        print(
            String(
                format: "kind %@ count %d errors %d p50_ms %.2f p99_ms %.2f", kind.rawValue, sorted.count, e,
                percentile(sorted, 50), percentile(sorted, 99)))
    }
    everything.sort()
    print(
        String(format: "grants count %d p50_ms %.2f p99_ms %.2f", everything.count, percentile(everything, 50), percentile(everything, 99)))
    print(
        String(
            format: "total seconds %.1f requests %d grants %d grants_per_second %.1f errors %d", elapsed, requests, grants,
            Double(grants) / elapsed, errors))
    for m in tally.messages { print("error \(m.prefix(300))") }
}

// MARK: B2CKit as a library

/// `library-silent`: B2CKit's silent token in this process, the way an app that embeds it calls it. One client made
/// from B2C_CONFIG and the store under B2C_HOME (its key from B2C_STORE_KEY or the keyring), one call to warm up, then
/// `calls` timed calls of `acquireTokenSilently` for the default policy's current account and the first API's scopes —
/// each a cache hit (checked). Prints p50 and p99 per call.
func librarySilent(_ o: [String: String]) async throws {
    let calls = Int(o["calls"] ?? "") ?? 1000
    let environment = ProcessInfo.processInfo.environment
    guard let configPath = environment["B2C_CONFIG"] else { fail("library-silent needs B2C_CONFIG and B2C_HOME") }
    let client = try B2CClient(
        config: try ClientConfiguration.load(path: configPath), store: try TokenStore(directory: StoreLocation.directory()))
    let scopes = try client.config.resourceScopes(api: nil, scopes: [])
    var times: [Double] = []
    times.reserveCapacity(calls)
    for i in 0...calls {
        let t0 = DispatchTime.now().uptimeNanoseconds
        let r = try await client.acquireTokenSilently(policyName: nil, selector: nil, scopes: scopes)
        let ms = Double(DispatchTime.now().uptimeNanoseconds - t0) / 1e6
        guard r.fromCache else { fail("call \(i) was not a cache hit", status: 1) }
        if i > 0 { times.append(ms) }
    }
    await client.shutdown()
    times.sort()
    print(String(format: "library_silent calls %d p50_ms %.4f p99_ms %.4f", times.count, percentile(times, 50), percentile(times, 99)))
}

// MARK: main

let args = CommandLine.arguments.dropFirst()
let usage =
    "usage: b2c-bench sign-bound [--seconds S] [--threads N] [--signer libcrypto|batches|swift-crypto] | load --base URL --ca FILE [--clients N] [--seconds S] [--policy P]"
    + " | library-silent [--calls N] | bare-server [--port P] [--dir D]"
guard let command = args.first else { fail(usage) }
do {
    switch command {
    case "sign-bound": try signBound(options(args.dropFirst(), allowed: ["seconds", "threads", "signer"]))
    case "load": try await load(options(args.dropFirst(), allowed: ["base", "ca", "clients", "seconds", "policy"]))
    case "library-silent": try await librarySilent(options(args.dropFirst(), allowed: ["calls"]))
    case "bare-server": try bareServer(options(args.dropFirst(), allowed: ["port", "dir"]))
    default: fail(usage)
    }
} catch {
    fail("\(error)", status: 1)
}
