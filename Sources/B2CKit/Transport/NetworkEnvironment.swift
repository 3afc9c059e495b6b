import B2CFastPath
import Foundation
import NIOCore
import NIOPosix
import NIOSSL

/// What the environment says about the network, read as curl, Go and Python read it: trust roots (`SSL_CERT_FILE`,
/// `SSL_CERT_DIR`) and proxies (`HTTPS_PROXY`, `HTTP_PROXY`, `NO_PROXY`, either case). Loopback hosts are never proxied
/// (as in Go): the emulator and the redirect listener are on this machine. Which variables count as set is
/// `NetworkVariables`' rule, which the fast path applies too.
struct NetworkEnvironment: Sendable {
    struct Trust: Sendable, Equatable {
        var file: String?
        var directory: String?
    }

    struct Proxy: Sendable, Equatable {
        var host: String
        var port: Int
        var username: String?
        var password: String?
        /// The proxy as shown in messages: never its password.
        var display: String { "\(host):\(port)" }
        /// `Proxy-Authorization` for the user and password of the proxy's URL (Basic, RFC 7617), nil without a user.
        var authorization: String? {
            username.map { "Basic " + Data("\($0):\(password ?? "")".utf8).base64EncodedString() }
        }
    }

    static let systemBundle = "/etc/ssl/certs/ca-certificates.crt"
    static let systemDirectory = "/etc/ssl/certs"

    /// nil: the system store (read the fast way, see `HTTPTransport.hashedSystemCADirectory`).
    var trust: Trust?
    var httpsProxy: Proxy?
    var httpProxy: Proxy?
    var noProxy: [String] = []

    init(_ env: [String: String]) throws {
        func value(_ names: [String]) -> String? { NetworkVariables.value({ env[$0] }, names) }
        let file = value([NetworkVariables.trustFile])
        let directory = value([NetworkVariables.trustDirectory]).map(NetworkVariables.firstDirectory)
        if (file ?? Self.systemBundle) != Self.systemBundle || (directory ?? Self.systemDirectory) != Self.systemDirectory {
            for (name, path) in [("SSL_CERT_FILE", file), ("SSL_CERT_DIR", directory)] {
                if let path, !FileManager.default.isReadableFile(atPath: path) {
                    throw NetworkError("\(name) names '\(path)', which cannot be read; fix or unset it", isConfiguration: true)
                }
            }
            trust = Trust(file: file, directory: directory)
        }
        httpsProxy = try value(NetworkVariables.httpsProxy).map { try Self.proxy($0, variable: "HTTPS_PROXY") }
        httpProxy = try value(NetworkVariables.httpProxy).map { try Self.proxy($0, variable: "HTTP_PROXY") }
        noProxy = (value(NetworkVariables.noProxy) ?? "").split(separator: ",").map {
            var entry = $0.trimmingCharacters(in: .whitespaces).lowercased()
            if entry.hasPrefix("*.") { entry.removeFirst(2) } else if entry.hasPrefix(".") { entry.removeFirst() }
            return entry
        }.filter { !$0.isEmpty }
    }

    static func proxy(_ text: String, variable: String) throws -> Proxy {
        let withScheme = text.contains("://") ? text : "http://" + text
        guard let c = URLComponents(string: withScheme), let host = c.host, !host.isEmpty else {
            throw NetworkError("\(variable) is not a proxy URL such as http://proxy.example.com:3128", isConfiguration: true)
        }
        guard c.scheme?.lowercased() == "http" else {
            throw NetworkError(
                "\(variable) uses '\(c.scheme ?? "")'; only http:// proxies are supported (HTTPS goes through them with CONNECT)",
                isConfiguration: true)
        }
        return Proxy(
            host: host, port: c.port ?? 80, username: c.user?.removingPercentEncoding, password: c.password?.removingPercentEncoding)
    }

    /// The proxy for a URL, or nil to go direct: by scheme, unless the host is loopback or NO_PROXY names it
    /// (`*`, a host, a domain suffix, optionally with `:port`).
    func proxy(for url: URL) -> Proxy? {
        let scheme = url.scheme?.lowercased()
        guard let proxy = scheme == "https" ? httpsProxy : scheme == "http" ? httpProxy : nil else { return nil }
        let host = Loopback.bareHost(url.host ?? "")
        if Loopback.isHost(host) { return nil }
        let port = url.port ?? (scheme == "https" ? 443 : 80)
        for entry in noProxy {
            if entry == "*" { return nil }
            var name = entry
            var entryPort: Int?
            if let colon = entry.lastIndex(of: ":"), let p = Int(entry[entry.index(after: colon)...]),
                !entry.hasPrefix("[") || entry.contains("]:")
            {
                name = Loopback.bareHost(entry[..<colon])
                entryPort = p
            }
            if entryPort.map({ $0 == port }) ?? true, host == name || host.hasSuffix("." + name) { return nil }
        }
        return proxy
    }
}

/// A failed request in words: what failed and what to do (never NIO's or BoringSSL's text alone).
struct NetworkFailure {
    let message: String
    let short: String

    init(_ error: Error, url: URL, proxy: String?, timeout: TimeAmount) {
        let host = url.host ?? "the server"
        let endpoint = Authority.hostAndPort(of: url).isEmpty ? host : Authority.hostAndPort(of: url)
        let port = url.port.map { "\($0)" } ?? (url.scheme?.lowercased() == "https" ? "443" : "80")
        let via = proxy.map { " (through the proxy \($0))" } ?? ""
        switch Self.kind(error) {
        case .timeout:
            short = "timed out"
            message = "\(host) did not answer within \(timeout.nanoseconds / 1_000_000_000) s\(via) (\(HTTPTransport.redacted(url)))"
        case .refused:
            short = "connection refused"
            let hint = Loopback.isHost(host) ? " — is the emulator running?" : ""
            message =
                proxy.map { "nothing listens at the proxy \($0) (connection refused); check HTTPS_PROXY / HTTP_PROXY" }
                ?? "nothing listens on \(host.contains(":") ? "[\(host)]" : host):\(port) (connection refused)\(hint)"
        case .unknownHost:
            short = "unknown host"
            message =
                proxy.map { "the proxy \($0) is an unknown host; check HTTPS_PROXY / HTTP_PROXY" }
                ?? "unknown host '\(host)': the name does not resolve; check the configuration's authority host and your DNS"
        case .unreachable:
            short = "unreachable"
            message = "\(endpoint) is unreachable from this machine (no route)\(via)"
        case .unknownAuthority:
            short = "TLS: unknown authority"
            message =
                "the certificate of \(host) is signed by an unknown authority; if it uses a private CA (the emulator's, or a "
                + "TLS-inspecting proxy's), set caFile in the configuration or SSL_CERT_FILE"
        case .wrongHost:
            short = "TLS: certificate for another host"
            message = "the certificate of \(host) is not valid for the name \(host); check the authority host"
        case .tls(let detail):
            short = "TLS failed"
            message = "TLS with \(host) failed (\(detail))\(via)"
        case .proxyRefused(let detail):
            short = "proxy refused"
            message =
                "the proxy \(proxy ?? "") refused the connection to \(endpoint): \(detail); check HTTPS_PROXY / HTTP_PROXY and NO_PROXY"
        case .closed:
            short = "connection closed"
            message =
                "\(endpoint) closed the connection before it answered\(via) (\(HTTPTransport.redacted(url))): the server may have "
                + "restarted or failed, or a proxy or firewall cut the connection; try again, and if it persists check the server"
        case .other(let detail):
            short = detail
            message = "cannot reach \(endpoint)\(via): \(detail)"
        }
    }

    enum Kind {
        case timeout, refused, unknownHost, unreachable, closed, unknownAuthority, wrongHost, tls(String), proxyRefused(String)
        case other(String)
    }

    static func kind(_ error: Error) -> Kind {
        if let e = error as? DirectRoutes.Failure {
            switch e {
            case .deadline: return .timeout
            case .proxyAnswered(407, withCredentials: false):
                return .proxyRefused("it requires authentication (put user:password in the proxy URL)")
            case .proxyAnswered(407, withCredentials: true): return .proxyRefused("it did not accept the proxy URL's user and password")
            case .proxyAnswered(let status, _): return .proxyRefused("it answered the CONNECT with HTTP \(status)")
            case .proxyGarbled: return .proxyRefused("its answer to the CONNECT was not HTTP")
            case .proxySilent: return .proxyRefused("it did not answer the CONNECT in time")
            case .proxyClosed: return .proxyRefused("it closed the connection without answering the CONNECT")
            case .tooLarge, .stale: return .other(Self.words(String(describing: e)))
            }
        }
        if error is CancellationError { return .other("cancelled") }
        if let e = error as? ChannelError, case .connectTimeout = e { return .timeout }
        if let e = error as? ChannelError, e == .eof || e == .ioOnClosedChannel || e == .outputClosed { return .closed }
        if let e = error as? NIOSSLError, e == .uncleanShutdown { return .closed }
        if let e = error as? NIOConnectionError {
            if e.dnsAError != nil || e.dnsAAAAError != nil, e.connectionErrors.isEmpty { return .unknownHost }
            if let first = e.connectionErrors.first?.error { return kind(first) }
        }
        if error is SocketAddressError.UnknownHost { return .unknownHost }
        if let io = error as? IOError {
            switch io.errnoCode {
            case ECONNREFUSED: return .refused
            case ENETUNREACH, EHOSTUNREACH: return .unreachable
            case ETIMEDOUT: return .timeout
            case ECONNRESET, EPIPE: return .closed
            default: return .other(String(cString: strerror(io.errnoCode)))
            }
        }
        if let e = error as? NIOSSLExtraError, e == .failedToValidateHostname { return .wrongHost }
        let text = String(describing: error)
        if text.contains("CERTIFICATE_VERIFY_FAILED") || text.contains("certificate verify failed") { return .unknownAuthority }
        if error is NIOSSLError || text.contains("handshake") || text.contains("SSL") { return .tls(Self.tlsSummary(text)) }
        if text.contains("Connection refused") { return .refused }
        return .other(Self.words(text))
    }

    /// An error's case name in words ("HTTPClientError.bodyLengthMismatch" → "body length mismatch"), not a type name.
    static func words(_ text: String) -> String {
        guard let name = text.split(separator: ".").last, name.allSatisfy({ $0.isLetter || $0.isNumber }) else { return text }
        var out = ""
        for c in name {
            if c.isUppercase && !out.isEmpty { out += " " }
            out += c.lowercased()
        }
        return out
    }

    /// The reason BoringSSL gives (e.g. "WRONG_VERSION_NUMBER"), without its file names and line numbers.
    static func tlsSummary(_ text: String) -> String {
        let reasons = text.components(separatedBy: ":").filter { part in
            part.count > 3 && part.allSatisfy { $0.isUppercase || $0 == "_" || $0.isNumber }
        }
        return reasons.last.map { "\($0.lowercased().replacingOccurrences(of: "_", with: " "))" } ?? "handshake failed"
    }
}
