import AsyncHTTPClient
import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOSSL

/// A response read fully (bounded) from the network.
public struct HTTPResult: Sendable {
    public var status: Int
    public var headers: [(String, String)]
    public var body: Data

    public func header(_ name: String) -> String? {
        headers.first { $0.0.caseInsensitiveCompare(name) == .orderedSame }?.1
    }
}

/// Network failures, each with a message that says what to do.
public struct NetworkError: Error, Sendable, CustomStringConvertible {
    public let description: String
    /// The fault is in the configuration (an unusable CA file), not in the network: exit 3, not 5.
    public let isConfiguration: Bool
    public init(_ d: String, isConfiguration: Bool = false) { description = d; self.isConfiguration = isConfiguration }
}

/// How often an ASCII marker occurs in a file's bytes (a plain byte loop: the generic collection searches are slow
/// on a 200 KB bundle).
func countOccurrences(of marker: String, in data: Data) -> Int {
    let m = Array(marker.utf8)
    guard let first = m.first else { return 0 }
    return data.withUnsafeBytes { (raw: UnsafeRawBufferPointer) -> Int in
        let b = raw.bindMemory(to: UInt8.self)
        var count = 0, i = 0
        while i + m.count <= b.count {
            if b[i] == first {
                var j = 1
                while j < m.count && b[i + j] == m[j] { j += 1 }
                if j == m.count { count += 1; i += m.count; continue }
            }
            i += 1
        }
        return count
    }
}

extension B2CError {
    /// A transport failure as the client reports it: a network or server problem, or a configuration one.
    public init(_ e: NetworkError) { self.init(e.isConfiguration ? .configuration : .network, e.description) }
}

/// HTTP for the protocol: extra trust roots (the emulator's CA), timeouts, bounded bodies, no redirects,
/// and a trace (`--verbose`) that never shows secrets (no query strings, form values or bodies).
/// The HTTP client (and its event-loop threads) is made on first use: a cache hit never starts it.
public final class HTTPTransport: Sendable {
    private let configuration: HTTPClient.Configuration
    private let caFile: String?
    private let lazyClient = NIOLockedValueBox<HTTPClient?>(nil)
    public let timeout: TimeAmount
    public let maxBody: Int
    let trace: (@Sendable (String) -> Void)?

    /// A CA file that cannot be read or holds no PEM certificate is refused here; its certificates are parsed with the
    /// client, on first use (a token cache hit never pays for TLS).
    public init(caFile: String?, timeoutSeconds: Int = 30, maxBody: Int = 4 * 1024 * 1024, trace: (@Sendable (String) -> Void)? = nil) throws {
        if let caFile {
            guard let pem = FileManager.default.contents(atPath: caFile) else {
                throw NetworkError("cannot read the CA file '\(caFile)' named by caFile: no such readable file")
            }
            guard countOccurrences(of: "-----BEGIN CERTIFICATE-----", in: pem) > 0 else {
                throw NetworkError("the CA file '\(caFile)' named by caFile holds no PEM certificate (-----BEGIN CERTIFICATE-----)")
            }
        }
        self.caFile = caFile
        var config = HTTPClient.Configuration(tlsConfiguration: nil, redirectConfiguration: .disallow)
        config.timeout = .init(connect: .seconds(Int64(min(timeoutSeconds, 10))), read: .seconds(Int64(timeoutSeconds)))
        config.httpVersion = .http1Only
        configuration = config
        timeout = .seconds(Int64(timeoutSeconds))
        self.maxBody = maxBody
        self.trace = trace
    }

    /// The system's trust store as a hashed directory (`c_rehash` links such as `02265526.0`), which BoringSSL reads
    /// lazily, one CA when a chain needs it; the platform default also parses the whole bundle file (about 140
    /// certificates, 3 ms) on every run. Used only where it is the same store: Debian's layout, with at least as
    /// many hashed entries as the bundle has certificates (a CA appended to the bundle by hand, without
    /// `update-ca-certificates`, is in the bundle only: then the default, which reads both). Elsewhere the default.
    static let hashedSystemCADirectory: String? = {
        #if os(Linux)
        let directory = "/etc/ssl/certs", bundle = "/etc/ssl/certs/ca-certificates.crt"
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory),
              let pem = FileManager.default.contents(atPath: bundle) else { return nil }
        let hashed = names.filter { name in
            let parts = name.split(separator: ".")
            return parts.count == 2 && parts[0].count == 8 && parts[0].allSatisfy(\.isHexDigit) && parts[1].allSatisfy(\.isNumber)
        }.count
        let inBundle = countOccurrences(of: "-----BEGIN CERTIFICATE-----", in: pem)
        return hashed > 0 && hashed >= inBundle ? directory : nil
        #else
        return nil
        #endif
    }()

    private func client() throws -> HTTPClient {
        try lazyClient.withLockedValue { existing in
            if let existing { return existing }
            var tls = TLSConfiguration.makeClientConfiguration()
            if let directory = Self.hashedSystemCADirectory { tls.trustRoots = .file(directory) }
            if let caFile {
                do {
                    tls.additionalTrustRoots = [.certificates(try NIOSSLCertificate.fromPEMFile(caFile))]
                } catch {
                    throw NetworkError("cannot read the CA file '\(caFile)' named by caFile: \(error)", isConfiguration: true)
                }
            }
            var config = configuration
            config.tlsConfiguration = tls
            let made = HTTPClient(eventLoopGroupProvider: .singleton, configuration: config)
            existing = made
            return made
        }
    }

    public func shutdown() async {
        let made = lazyClient.withLockedValue { c -> HTTPClient? in
            defer { c = nil }
            return c
        }
        try? await made?.shutdown()
    }

    static func redacted(_ url: URL) -> String {
        var c = URLComponents(url: url, resolvingAgainstBaseURL: false)
        if let items = c?.queryItems, !items.isEmpty {
            c?.queryItems = items.map { URLQueryItem(name: $0.name, value: $0.name == "p" ? $0.value : "…") }
        }
        return c?.string ?? url.absoluteString
    }

    public func send(_ method: HTTPMethod, _ url: URL, headers: [(String, String)] = [], body: Data? = nil,
                     timeoutSeconds: Int? = nil) async throws -> HTTPResult {
        var req = HTTPClientRequest(url: url.absoluteString)
        req.method = method
        for (k, v) in headers { req.headers.add(name: k, value: v) }
        if let body { req.body = .bytes(ByteBuffer(bytes: body)) }
        let started = Date()
        let deadline = timeoutSeconds.map { TimeAmount.seconds(Int64($0)) } ?? timeout
        do {
            let res = try await client().execute(req, timeout: deadline)
            let buffer: ByteBuffer
            do { buffer = try await res.body.collect(upTo: maxBody) } catch is NIOTooManyBytesError {
                throw NetworkError("\(url.host ?? "the server") sent a response larger than \(maxBody / 1024) KiB; refusing it")
            }
            let ms = Int(Date().timeIntervalSince(started) * 1000)
            trace?("\(method.rawValue) \(Self.redacted(url)) → \(res.status.code) (\(buffer.readableBytes) bytes, \(ms) ms)")
            return HTTPResult(status: Int(res.status.code), headers: res.headers.map { ($0.name, $0.value) }, body: Data(buffer.readableBytesView))
        } catch let e as NetworkError {
            throw e
        } catch let e as HTTPClientError where e == .deadlineExceeded || e == .readTimeout || e == .connectTimeout {
            trace?("\(method.rawValue) \(Self.redacted(url)) → timed out")
            throw NetworkError("\(url.host ?? "the server") did not answer within \(deadline.nanoseconds / 1_000_000_000) s (\(Self.redacted(url)))")
        } catch let e as NIOSSLError {
            throw NetworkError("TLS with \(url.host ?? "the server") failed (\(e)); if it uses a private CA, set caFile in the configuration")
        } catch {
            trace?("\(method.rawValue) \(Self.redacted(url)) → \(error)")
            let text = "\(error)"
            if text.contains("certificate") || text.contains("handshake") || text.contains("TLS") || text.contains("SSL") {
                throw NetworkError("TLS with \(url.host ?? "the server") failed (\(text)); if it uses a private CA, set caFile in the configuration")
            }
            throw NetworkError("cannot reach \(url.host ?? "the server")\(url.port.map { ":\($0)" } ?? ""): \(text)")
        }
    }

    public func get(_ url: URL) async throws -> HTTPResult {
        try await send(.GET, url, headers: [("Accept", "application/json")])
    }

    public func postForm(_ url: URL, _ form: [(String, String)], timeoutSeconds: Int? = nil) async throws -> HTTPResult {
        try await send(.POST, url, headers: [("Content-Type", "application/x-www-form-urlencoded"), ("Accept", "application/json")],
                       body: Data(FormEncoding.encode(form).utf8), timeoutSeconds: timeoutSeconds)
    }
}
