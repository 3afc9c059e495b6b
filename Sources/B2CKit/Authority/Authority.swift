import Foundation

/// One B2C authority: a policy of a tenant at a host. Every policy is its own authority.
public struct Authority: Sendable, Equatable, Hashable {
    /// `https`, or `http` on a loopback host.
    public var scheme: String
    /// The host name, lower-cased (an IPv6 address without brackets).
    public var host: String
    /// The port, when the URL names one.
    public var port: Int?
    /// The tenant segment: its name (`contoso.onmicrosoft.com`) or GUID.
    public var tenant: String
    /// The policy id, as the URLs carry it.
    public var policy: String
    /// How the policy appears in the URLs.
    public var form: ClientConfiguration.AuthorityForm
    /// An Entra External ID (native auth) authority: `https://host/<tenant>`, no policy in its URLs;
    /// `policy` then holds the native-auth configuration's name, under which its accounts are stored.
    public var native: Bool

    /// An authority from its parts; the host is lower-cased.
    public init(
        scheme: String, host: String, port: Int?, tenant: String, policy: String, form: ClientConfiguration.AuthorityForm,
        native: Bool = false
    ) {
        self.scheme = scheme; self.host = host.lowercased(); self.port = port; self.tenant = tenant; self.policy = policy; self.form = form
        self.native = native
    }

    /// `scheme://host[:port]`, an IPv6 host in brackets.
    public var origin: String {
        let h = host.contains(":") ? "[\(host)]" : host
        return "\(scheme)://\(h)" + (port.map { ":\($0)" } ?? "")
    }

    /// `host[:port]`, an IPv6 host in brackets: how `knownAuthorities` and the store name a host.
    public var hostAndPort: String { (host.contains(":") ? "[\(host)]" : host) + (port.map { ":\($0)" } ?? "") }

    /// A URL's `host[:port]`, lower-cased, written as `hostAndPort` writes it.
    public static func hostAndPort(of url: URL) -> String {
        let h = (url.host ?? "").lowercased()
        return (h.contains(":") ? "[\(h)]" : h) + (url.port.map { ":\($0)" } ?? "")
    }

    /// The authority URL itself (what MSAL calls the authority).
    public var url: URL {
        if native { return URL(string: "\(origin)/\(tenant)")! }
        switch form {
        case .path: return URL(string: "\(origin)/\(tenant)/\(policy)")!
        case .tfp: return URL(string: "\(origin)/tfp/\(tenant)/\(policy)")!
        case .query: return URL(string: "\(origin)/\(tenant)?p=\(policy)")!
        }
    }

    /// An endpoint below the authority, e.g. `v2.0/.well-known/openid-configuration`.
    public func endpoint(_ path: String) -> URL {
        if native { return URL(string: "\(origin)/\(tenant)/\(path)")! }
        switch form {
        case .path: return URL(string: "\(origin)/\(tenant)/\(policy)/\(path)")!
        case .tfp: return URL(string: "\(origin)/tfp/\(tenant)/\(policy)/\(path)")!
        case .query: return URL(string: "\(origin)/\(tenant)/\(path)?p=\(policy.lowercased())")!
        }
    }

    /// The policy's OpenID configuration document (`v2.0/.well-known/openid-configuration`).
    public var discoveryURL: URL { endpoint("v2.0/.well-known/openid-configuration") }

    /// Parses any B2C authority URL: path form, `tfp`, tenant GUID, custom domain, or `?p=`.
    public static func parse(_ text: String) throws -> Authority {
        guard let url = URLComponents(string: text), let scheme = url.scheme?.lowercased(), let host = url.host, !host.isEmpty else {
            throw AuthorityError("'\(text)' is not an absolute URL")
        }
        guard Loopback.isSecure(scheme: scheme, host: host) else {
            throw AuthorityError("'\(text)' must use https (plain http only for loopback hosts)")
        }
        var segments = url.path.split(separator: "/").map(String.init)
        var form = ClientConfiguration.AuthorityForm.path
        if segments.first?.lowercased() == "tfp" { form = .tfp; segments.removeFirst() }
        guard let tenant = segments.first else {
            throw AuthorityError("'\(text)' names no tenant (expected https://host/<tenant>/<policy>)")
        }
        var policy: String
        if segments.count >= 2, !["oauth2", "v2.0", "discovery", ".well-known"].contains(segments[1].lowercased()) {
            policy = segments[1]
        } else if let p = url.queryItems?.first(where: { $0.name.lowercased() == "p" })?.value, !p.isEmpty {
            policy = p
            form = .query
        } else {
            throw AuthorityError("'\(text)' names no policy (expected https://host/<tenant>/<policy> or ?p=<policy>)")
        }
        policy = policy.trimmingCharacters(in: .whitespaces)
        return Authority(scheme: scheme, host: host, port: url.port, tenant: tenant, policy: policy, form: form)
    }
}

/// An authority URL that is not one of B2C's forms, said with what is wrong.
public struct AuthorityError: Error, CustomStringConvertible, Equatable {
    /// What is wrong, with the URL.
    public let description: String
    /// An error with its whole message.
    public init(_ d: String) { description = d }
}
