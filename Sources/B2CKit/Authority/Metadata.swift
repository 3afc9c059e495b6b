import Foundation

/// The parts of a policy's OpenID configuration that a client uses.
package struct OpenIDMetadata: Sendable, Equatable {
    /// `issuer`: what the policy's tokens carry in `iss`.
    public var issuer: String
    /// Where browser sign-ins start (`authorization_endpoint`).
    public var authorizationEndpoint: URL
    /// Where codes and refresh tokens are redeemed (`token_endpoint`).
    public var tokenEndpoint: URL
    /// Where a browser session is ended (`end_session_endpoint`); nil when the tenant names none.
    public var endSessionEndpoint: URL?
    /// The policy's signing keys (`jwks_uri`).
    public var jwksURI: URL

    /// Reads a discovery document fetched from `source`; one that is not a JSON object, or lacks `issuer` or a required
    /// endpoint, is a `network` error.
    public static func parse(_ data: Data, from source: URL) throws -> OpenIDMetadata {
        let r: JSONObjectReader
        do { r = try JSONObjectReader(JSONValue.parse(data)) } catch {
            throw B2CError(.network, "the discovery document at \(HTTPTransport.redacted(source)) is not a JSON object")
        }
        func endpoint(_ key: String, required: Bool = true) throws -> URL? {
            let value: String?
            do { value = try r.optionalString(key) } catch {
                throw B2CError(.network, "the discovery document at \(HTTPTransport.redacted(source)) has a non-string '\(key)'")
            }
            guard let s = value else {
                if required { throw B2CError(.network, "the discovery document at \(HTTPTransport.redacted(source)) lacks '\(key)'") }
                return nil
            }
            guard let u = URL(string: s), u.scheme != nil, u.host != nil else {
                throw B2CError(.network, "the discovery document's '\(key)' is not a URL: '\(s)'")
            }
            return u
        }
        guard let issuer = try? r.string("issuer") else {
            throw B2CError(.network, "the discovery document at \(HTTPTransport.redacted(source)) lacks 'issuer'")
        }
        return OpenIDMetadata(
            issuer: issuer, authorizationEndpoint: try endpoint("authorization_endpoint")!,
            tokenEndpoint: try endpoint("token_endpoint")!, endSessionEndpoint: try endpoint("end_session_endpoint", required: false),
            jwksURI: try endpoint("jwks_uri")!)
    }
}

/// Discovery and JWKS per policy, cached in the store with their fetch time; JWKS refetched when a token
/// names a key we do not have. Endpoints must stay on known hosts.
package final class MetadataProvider: Sendable {
    let store: TokenStore
    let transport: HTTPTransport
    let config: ClientConfiguration
    static let maxAge = 24 * 3600

    /// Metadata for `config`'s authorities, cached in `store` and fetched over `transport`.
    public init(store: TokenStore, transport: HTTPTransport, config: ClientConfiguration) {
        self.store = store; self.transport = transport; self.config = config
    }

    func checkKnown(_ url: URL, what: String) throws {
        guard config.isKnown(Authority.hostAndPort(of: url)) else {
            throw B2CError(
                .configuration,
                "the \(what) \(HTTPTransport.redacted(url)) is on host '\(Authority.hostAndPort(of: url))', which is not in "
                    + "knownAuthorities \(config.knownAuthorities) of \(config.source)"
            )
        }
        let scheme = url.scheme?.lowercased()
        guard Loopback.isSecure(scheme: scheme, host: url.host) else {
            throw B2CError(.configuration, "the \(what) \(HTTPTransport.redacted(url)) is not https")
        }
    }

    /// A document as read: from the store's cache or the network, with the time it was fetched (its age counts from
    /// there; reading it from the cache never changes that time).
    struct Fetched: Sendable {
        var body: Data
        var fetchedAt: Int
        var fromCache: Bool
        /// Why the tenant was not asked after all: it could not be reached, and a cached copy (of any age) was used.
        var unreachable: String?
    }

    /// The cached copy while it is younger than `maxAge` (a fetch time in the future — a clock that went back — is no age
    /// at all: fetched again), else a fetch. With `offline`, a tenant that cannot be reached (or answers 5xx) gives the
    /// cached copy of any age instead of an error, marked as such (`b2c jwt verify` checks a token with the tenant down).
    private func fetch(_ url: URL, what: String, now: Int, refresh: Bool, offline: Bool = false) async throws -> Fetched {
        let cached = try store.metadata(url: url.absoluteString)
        if !refresh, let cached, cached.fetchedAt <= now, now - cached.fetchedAt < Self.maxAge {
            return Fetched(body: cached.body, fetchedAt: cached.fetchedAt, fromCache: true)
        }
        try checkKnown(url, what: what)
        let stale = { (why: String) in
            offline ? cached.map { Fetched(body: $0.body, fetchedAt: $0.fetchedAt, fromCache: true, unreachable: why) } : nil
        }
        let r: HTTPResult
        do { r = try await transport.get(url) } catch let e as NetworkError {
            if !e.isConfiguration, let copy = stale(e.description) { return copy }
            throw B2CError(e)
        }
        if r.status >= 500, let copy = stale("the \(what) \(HTTPTransport.redacted(url)) answered HTTP \(r.status)") { return copy }
        switch r.status {
        case 200: return Fetched(body: r.body, fetchedAt: now, fromCache: false)
        case 404:
            let said = OAuthError.parse(status: 404, r.body).map { " (\($0))" } ?? ""
            throw B2CError(
                .configuration,
                "the \(what) \(HTTPTransport.redacted(url)) does not exist (HTTP 404\(said)): check the tenant and policy names in "
                    + "\(config.source)"
            )
        default: throw B2CError(.network, "the \(what) \(HTTPTransport.redacted(url)) answered HTTP \(r.status); try again later")
        }
    }

    /// Stores a document just fetched; a copy read from the cache is never written back (its fetch time would slide).
    private func remember(_ url: URL, _ f: Fetched) throws {
        guard !f.fromCache else { return }
        try store.saveMetadata(url: url.absoluteString, body: f.body, now: f.fetchedAt)
    }

    /// The policy's discovery document: the cached copy while younger than a day, else (and always with `refresh`)
    /// fetched. Endpoints off the known hosts and a 404 are `configuration` errors; an unreachable tenant or a bad answer is `network`.
    public func metadata(for authority: Authority, now: Int, refresh: Bool = false) async throws -> OpenIDMetadata {
        try await discovery(for: authority, now: now, refresh: refresh).metadata
    }

    /// The policy's discovery document, parsed, and how it was read.
    func discovery(
        for authority: Authority, now: Int, refresh: Bool = false, offline: Bool = false
    ) async throws -> (metadata: OpenIDMetadata, source: Fetched) {
        try checkKnown(authority.discoveryURL, what: "authority")
        let url = authority.discoveryURL
        let f = try await fetch(url, what: "discovery document", now: now, refresh: refresh, offline: offline)
        let m = try OpenIDMetadata.parse(f.body, from: url)
        try checkKnown(m.tokenEndpoint, what: "token endpoint")
        try checkKnown(m.authorizationEndpoint, what: "authorization endpoint")
        try checkKnown(m.jwksURI, what: "JWKS endpoint")
        try remember(url, f)
        return (m, f)
    }

    /// The policy's key set (JWKS), cached like the discovery document; a malformed one is a `network` error.
    public func keys(_ m: OpenIDMetadata, now: Int, refresh: Bool) async throws -> JWKSet {
        try await keySet(m, now: now, refresh: refresh).set
    }

    /// The policy's key set, parsed (to know its kids) and as the document jwt-kit verifies with, and how it was read.
    func keySet(
        _ m: OpenIDMetadata, now: Int, refresh: Bool, offline: Bool = false
    ) async throws -> (set: JWKSet, document: Data, source: Fetched) {
        let f = try await fetch(m.jwksURI, what: "key set", now: now, refresh: refresh, offline: offline)
        let set: JWKSet
        do { set = try JWKSet.parse(f.body) } catch {
            throw B2CError(.network, "the key set at \(HTTPTransport.redacted(m.jwksURI)) is malformed: \(error)")
        }
        try remember(m.jwksURI, f)
        return (set, f.body, f)
    }

    /// The token's RS256 signature against the policy's key set (jwt-kit), the key set refetched once for an unknown kid.
    func verifySignature(_ token: String, decoded jwt: JWT, metadata m: OpenIDMetadata, now: Int) async throws {
        do {
            let keys = try await keySet(m, now: now, refresh: false)
            try await SignatureCheck.verify(token, decoded: jwt, keys: keys.set, document: keys.document)
        } catch JWTError.unknownKey {
            let keys = try await keySet(m, now: now, refresh: true)
            try await SignatureCheck.verify(token, decoded: jwt, keys: keys.set, document: keys.document)
        }
    }

    /// Validates an id token: RS256 signature via the JWKS with jwt-kit (refetched once for an unknown kid), `iss` = the
    /// discovery issuer, `aud` = client id, nonce, exp/nbf with 5 minutes of skew, and `tfp`/`acr` = the policy (External ID:
    /// `tid` = the tenant, `ver` 2.0 and a `preferred_username`).
    public func validateIDToken(
        _ token: String, authority: Authority, metadata m: OpenIDMetadata, nonce: String?, now: Int
    ) async throws -> JWT {
        let jwt: JWT
        do { jwt = try JWT.decode(token) } catch { throw B2CError(.failed, "the id token is unusable: \(error)") }
        do {
            try await verifySignature(token, decoded: jwt, metadata: m, now: now)
            try jwt.validateClaims(issuers: [m.issuer], audience: config.clientID, now: now, skew: 300)
        } catch let e as JWTError {
            let skew =
                e.isClockRelated ? ". This is clock skew beyond 5 minutes: check that this machine's clock (and the tenant's) is right" : ""
            throw B2CError(.failed, "the id token from \(authority.hostAndPort) failed validation: \(e)\(skew); nothing was stored")
        }
        if let nonce, jwt.string("nonce") != nonce {
            throw B2CError(.failed, "the id token's nonce does not match this sign-in (replayed or mixed-up response); nothing was stored")
        }
        if authority.native {
            // External ID (v2.0 tokens): the tenant in `tid`, matching the issuer's tenant GUID; a sign-in name.
            let issuerTenant = URL(string: m.issuer)?.pathComponents.first { UUID(uuidString: $0) != nil }?.lowercased()
            guard let tid = jwt.string("tid")?.lowercased(), issuerTenant == nil || tid == issuerTenant,
                config.tenantID.map({ $0 == tid }) ?? true
            else {
                throw B2CError(
                    .failed,
                    "the id token's tenant (tid \(jwt.string("tid") ?? "missing")) is not the issuer's or the configured tenant's; "
                        + "nothing was stored")
            }
            guard jwt.string("ver") == "2.0", jwt.string("preferred_username") != nil else {
                throw B2CError(
                    .failed,
                    "the id token from \(authority.hostAndPort) is not an External ID token (ver \(jwt.string("ver") ?? "missing"), "
                        + "preferred_username \(jwt.string("preferred_username") == nil ? "missing" : "present")); nothing was stored")
            }
            return jwt
        }
        // A custom policy whose issuer names no policy (`AuthenticationContextReferenceClaimPattern` `None`) sends neither
        // claim: the token is then this policy's by the code it answered, which this authority's own request asked for.
        if let policyClaim = jwt.string("tfp") ?? jwt.string("acr"), policyClaim.caseInsensitiveCompare(authority.policy) != .orderedSame {
            throw B2CError(.failed, "the id token was issued for policy '\(policyClaim)', not '\(authority.policy)'; nothing was stored")
        }
        return jwt
    }
}
