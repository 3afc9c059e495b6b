import B2CFastPath
import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL

/// A response read fully (bounded) from the network.
package struct HTTPResult: Sendable {
    /// The HTTP status code.
    public var status: Int
    /// The response headers, in order.
    public var headers: [(String, String)]
    /// The whole body (at most the transport's `maxBody` bytes).
    public var body: Data

    /// The first value of the header `name`, compared case-insensitively; nil when there is none.
    public func header(_ name: String) -> String? {
        headers.first { $0.0.caseInsensitiveCompare(name) == .orderedSame }?.1
    }
}

/// Network failures, each with a message that says what to do.
public struct NetworkError: Error, Sendable, CustomStringConvertible {
    /// What failed, and what to do, in plain words.
    public let description: String
    /// The fault is in the configuration (an unusable CA file), not in the network: exit 3, not 5.
    public let isConfiguration: Bool
    /// A failure with its message; `isConfiguration` when the configuration, not the network, is at fault.
    public init(_ d: String, isConfiguration: Bool = false) { description = d; self.isConfiguration = isConfiguration }
}

/// How often a marker occurs in a file's bytes, occurrences not overlapping: the C library's `memchr` finds each
/// candidate first byte and `memcmp` the rest (the system's CA bundle is read on every run that makes a TLS connection;
/// bench/README.md, "The client's refresh (item 3)", has what a byte loop in Swift cost).
func countOccurrences(of marker: String, in data: Data) -> Int {
    let m = Array(marker.utf8)
    guard let first = m.first else { return 0 }
    return data.withUnsafeBytes { (raw: UnsafeRawBufferPointer) -> Int in
        guard let base = raw.baseAddress else { return 0 }
        var count = 0, offset = 0
        while offset + m.count <= raw.count, let hit = memchr(base + offset, Int32(first), raw.count - offset - m.count + 1) {
            let at = base.distance(to: UnsafeRawPointer(hit))
            if memcmp(hit, m, m.count) == 0 {
                count += 1
                offset = at + m.count
            } else {
                offset = at + 1
            }
        }
        return count
    }
}

extension B2CError {
    /// A transport failure as the client reports it: a network or server problem, or a configuration one.
    public init(_ e: NetworkError) { self.init(e.isConfiguration ? .configuration : .network, e.description) }
}

/// HTTP for the protocol: extra trust roots (the emulator's CA), trust and proxies from the environment as curl, Go
/// and Python read them (`SSL_CERT_FILE`, `SSL_CERT_DIR`, `HTTPS_PROXY`, `HTTP_PROXY`, `NO_PROXY`), timeouts, bounded
/// bodies, no redirects, failures in plain words, and a trace (`--verbose`) that never shows secrets (no query
/// strings, form values or bodies). Connections (and the event loop's thread) are made on first use: a cache hit never
/// starts one.
package final class HTTPTransport: Sendable {
    private let caFile: String?
    /// The hosts the CA file is trusted for (the configuration's own); nil: every host.
    private let caHosts: Set<String>?
    private let environment: NetworkEnvironment
    /// The connections, direct or through a proxy.
    private let direct: DirectRoutes
    /// The timeout of a request that names none, as NIO counts time.
    public let timeout: TimeAmount
    /// The same timeout, in seconds.
    public let timeoutSeconds: Int
    /// The largest response body read, in bytes; a larger one is a `NetworkError`.
    public let maxBody: Int
    let trace: (@Sendable (String) -> Void)?

    /// A CA file that cannot be read or holds no PEM certificate is refused here; its certificates are parsed with the
    /// client, on first use (a token cache hit never pays for TLS).
    public init(
        caFile: String?, caHosts: Set<String>? = nil, timeoutSeconds: Int = 30, maxBody: Int = 4 * 1024 * 1024,
        trace: (@Sendable (String) -> Void)? = nil,
        environment: [String: String] = ProcessEnvironment.current()
    ) throws {
        if let caFile {
            guard let pem = FileManager.default.contents(atPath: caFile) else {
                throw NetworkError("cannot read the CA file '\(caFile)' named by caFile: no such readable file")
            }
            guard countOccurrences(of: "-----BEGIN CERTIFICATE-----", in: pem) > 0 else {
                throw NetworkError("the CA file '\(caFile)' named by caFile holds no PEM certificate (-----BEGIN CERTIFICATE-----)")
            }
        }
        self.caFile = caFile
        self.caHosts = caHosts.map { Set($0.map { $0.lowercased() }) }
        self.environment = try NetworkEnvironment(environment)
        timeout = .seconds(Int64(timeoutSeconds))
        self.timeoutSeconds = timeoutSeconds
        self.maxBody = maxBody
        self.trace = trace
        direct = DirectRoutes(maxBody: maxBody)
    }

    /// The system's trust store as a hashed directory (`c_rehash` links such as `02265526.0`), which BoringSSL reads
    /// lazily, one CA when a chain needs it; the platform default also parses the whole bundle file on every run
    /// (bench/README.md, "refresh"). Used only where it is the same store: Debian's layout, with at least as
    /// many hashed entries as the bundle has certificates (a CA appended to the bundle by hand, without
    /// `update-ca-certificates`, is in the bundle only: then the default, which reads both). Elsewhere the default.
    static let hashedSystemCADirectory: String? = {
        #if os(Linux)
        let directory = "/etc/ssl/certs", bundle = "/etc/ssl/certs/ca-certificates.crt"
        guard let hashed = hashedEntries(directory), let pem = FileManager.default.contents(atPath: bundle) else { return nil }
        let inBundle = countOccurrences(of: "-----BEGIN CERTIFICATE-----", in: pem)
        return hashed > 0 && hashed >= inBundle ? directory : nil
        #else
        return nil
        #endif
    }()

    /// How many names in a directory have the form `c_rehash` gives a CA (eight hex digits, a dot, a number); nil when it
    /// cannot be read. The directory's entries read by the C library: Foundation's listing made every name a `String`
    /// and cost a millisecond of each refresh.
    static func hashedEntries(_ directory: String) -> Int? {
        guard let stream = opendir(directory) else { return nil }
        defer { closedir(stream) }
        // Byte ranges, not sets of bytes: the first `Set<UInt8>` of a process costs the runtime a metadata look-up.
        let digits = UInt8(ascii: "0")...UInt8(ascii: "9")
        let hex = { (b: UInt8) in digits.contains(b) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(b | 0x20) }
        var count = 0
        while let entry = readdir(stream) {
            let matches = withUnsafeBytes(of: entry.pointee.d_name) { raw -> Bool in
                let name = raw.prefix { $0 != 0 }
                guard name.count > 9, name[8] == UInt8(ascii: ".") else { return false }
                return name.prefix(8).allSatisfy(hex) && name.dropFirst(9).allSatisfy(digits.contains)
            }
            if matches { count += 1 }
        }
        return count
    }

    /// The trust roots: `SSL_CERT_DIR` / `SSL_CERT_FILE` when set (they replace the system's, as in OpenSSL and Go),
    /// else the system store; plus the configuration's CA file.
    private func tlsConfiguration(withCAFile: Bool) throws -> TLSConfiguration {
        var tls = TLSConfiguration.makeClientConfiguration()
        var additional: [NIOSSLAdditionalTrustRoots] = []
        if let trust = environment.trust {
            tls.trustRoots = .file(trust.directory ?? trust.file!)
            if let file = trust.file, trust.directory != nil { additional.append(try certificateFile(file, source: "SSL_CERT_FILE")) }
        } else if let directory = Self.hashedSystemCADirectory {
            tls.trustRoots = .file(directory)
        }
        if let caFile, withCAFile { additional.append(try certificateFile(caFile, source: "caFile")) }
        tls.additionalTrustRoots = additional
        return tls
    }

    /// A CA file as TLS trusts it: read here once, so that a file that is not PEM certificates is refused with its name,
    /// then named by its path.
    private func certificateFile(_ path: String, source: String) throws -> NIOSSLAdditionalTrustRoots {
        do { _ = try NIOSSLCertificate.fromPEMFile(path) } catch {
            throw NetworkError("cannot read the CA file '\(path)' named by \(source): \(error)", isConfiguration: true)
        }
        return .file(path)
    }

    /// Whether the configuration's CA is trusted for a URL's host: it vouches for its own hosts only (docs/security.md);
    /// elsewhere the system's roots alone.
    private func trustsCA(for url: URL) -> Bool {
        caFile != nil && (caHosts?.contains(Loopback.bareHost(url.host ?? "")) ?? true)
    }

    /// Closes the connections kept; call it once done with the transport.
    public func shutdown() async {
        direct.shutdown()
    }

    static func redacted(_ url: URL) -> String {
        var c = URLComponents(url: url, resolvingAgainstBaseURL: false)
        if let items = c?.queryItems, !items.isEmpty {
            c?.queryItems = items.map { URLQueryItem(name: $0.name, value: $0.name == "p" ? $0.value : "…") }
        }
        return c?.string ?? url.absoluteString
    }

    /// Sends one request and reads the whole answer; redirects are not followed. `timeoutSeconds` replaces the
    /// transport's timeout for this request. Failures throw `NetworkError`, said in plain words. The request goes on the
    /// transport's own connections (`DirectRoutes`), through the environment's proxy for the URL if it names one.
    public func send(
        _ method: HTTPMethod, _ url: URL, headers: [(String, String)] = [], body: Data? = nil,
        timeoutSeconds: Int? = nil
    ) async throws -> HTTPResult {
        let started = Date()
        let deadline = timeoutSeconds.map { TimeAmount.seconds(Int64($0)) } ?? timeout
        let proxy = environment.proxy(for: url)
        do {
            let result = try await sendDirect(method, url, proxy: proxy, headers: headers, body: body, deadline: deadline)
            let ms = Int(Date().timeIntervalSince(started) * 1000)
            trace?("\(method.rawValue) \(Self.redacted(url)) → \(result.status) (\(result.body.count) bytes, \(ms) ms)")
            return result
        } catch let e as NetworkError {
            throw e
        } catch DirectRoutes.Failure.tooLarge {
            throw NetworkError("\(url.host ?? "the server") sent a response larger than \(maxBody / 1024) KiB; refusing it")
        } catch {
            let failure = NetworkFailure(error, url: url, proxy: proxy?.display, timeout: deadline)
            trace?("\(method.rawValue) \(Self.redacted(url)) → \(failure.short)")
            throw NetworkError(failure.message)
        }
    }

    private func sendDirect(
        _ method: HTTPMethod, _ url: URL, proxy: NetworkEnvironment.Proxy?, headers: [(String, String)], body: Data?,
        deadline: TimeAmount
    ) async throws -> HTTPResult {
        let scheme = url.scheme?.lowercased() ?? ""
        guard scheme == "https" || scheme == "http", let name = url.host, !name.isEmpty else {
            throw NetworkError("'\(Self.redacted(url))' is not an http:// or https:// URL with a host")
        }
        let host = Loopback.bareHost(name)
        // (A URL's host comes percent-decoded: one that decodes to a space or a control character would break the
        // request's lines, a CONNECT's above all.)
        guard host.utf8.allSatisfy({ $0 > 0x20 && $0 != 0x7f }) else {
            throw NetworkError("'\(Self.redacted(url))' has a host name with a space or a control character in it")
        }
        let defaultPort = scheme == "https" ? 443 : 80
        let port = url.port ?? defaultPort
        var target = url.path(percentEncoded: true)
        if target.isEmpty { target = "/" }
        if let query = url.query(percentEncoded: true) { target += "?" + query }
        let authority = Loopback.authority(host, port: port == defaultPort ? nil : port)
        // Plain HTTP through a proxy: the whole URL as the target, and the proxy's credentials for the proxy (an https
        // route's go in its CONNECT only, so the server never sees them).
        let viaProxy = scheme == "http" ? proxy : nil
        var head = HTTPRequestHead(version: .http1_1, method: method, uri: viaProxy == nil ? target : "http://\(authority)\(target)")
        // The caller's Host kept, the body's length ours (a caller's framing fields, such as call-api's -H, never describe a
        // body they did not write).
        if !headers.contains(where: { $0.0.caseInsensitiveCompare("Host") == .orderedSame }) {
            head.headers.add(name: "Host", value: authority)
        }
        if let authorization = viaProxy?.authorization { head.headers.add(name: "Proxy-Authorization", value: authorization) }
        for (k, v) in headers where !["content-length", "transfer-encoding"].contains(k.lowercased()) {
            head.headers.add(name: k, value: v)
        }
        if let body {
            head.headers.add(name: "Content-Length", value: String(body.count))
        } else if [.POST, .PUT, .PATCH].contains(method) {
            head.headers.add(name: "Content-Length", value: "0")
        }
        let withCA = trustsCA(for: url)
        let tls =
            scheme == "https"
            ? try direct.tlsContext(withCA: withCA) { try NIOSSLContext(configuration: tlsConfiguration(withCAFile: withCA)) } : nil
        let answer = try await direct.exchange(
            DirectRoutes.Route(tls: scheme == "https", host: host, port: port, withCA: withCA, proxy: proxy), tls: tls,
            connectTimeout: min(deadline, .seconds(10)), head: head, body: body.map { ByteBuffer(bytes: $0) },
            deadline: .now() + deadline)
        return HTTPResult(
            status: Int(answer.head.status.code), headers: answer.head.headers.map { ($0.name, $0.value) },
            body: Data(answer.body.readableBytesView))
    }

    /// A GET that asks for JSON.
    public func get(_ url: URL) async throws -> HTTPResult {
        try await send(.GET, url, headers: [("Accept", "application/json")])
    }

    /// A form POST (`application/x-www-form-urlencoded`) that asks for JSON, with the extra `headers`.
    public func postForm(
        _ url: URL, _ form: [(String, String)], headers: [(String, String)] = [], timeoutSeconds: Int? = nil
    ) async throws -> HTTPResult {
        try await send(
            .POST, url, headers: [("Content-Type", "application/x-www-form-urlencoded"), ("Accept", "application/json")] + headers,
            body: Data(FormEncoding.encode(form).utf8), timeoutSeconds: timeoutSeconds)
    }
}
