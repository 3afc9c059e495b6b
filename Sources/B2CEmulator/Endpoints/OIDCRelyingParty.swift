import AsyncHTTPClient
import B2CProtocol
import Foundation
import NIOCore
import NIOSSL

/// An OpenID Connect sign-in the tenant started at a provider: which provider, its discovery document as read when the
/// sign-in began (the redemption uses it, not a second fetch), and the PKCE verifier and nonce it must see again.
struct OIDCPending: Codable, Sendable, Equatable {
    var providerID: String
    var discovery: OIDCRelyingParty.Discovery
    var verifier: String
    var nonce: String
}

/// The tenant as an OpenID Connect relying party (reference: b2c-journeys.md §2): the code flow with PKCE against a
/// provider's discovery document — another `b2c-emulator`, Keycloak, a corporate IdP — and its id token checked (signature
/// against its JWKS, issuer, audience, expiry, nonce) before the person is taken as the provider says.
enum OIDCRelyingParty {
    typealias Failure = FederationFailure

    struct Discovery: Codable, Sendable, Equatable {
        var issuer: String
        var authorizationEndpoint: String
        var tokenEndpoint: String
        var jwksURI: String
    }

    static func discovery(_ p: EmulatorSeed.OIDCProvider) async throws -> Discovery {
        let d = try await fetchJSON(p.discovery, what: "its discovery document", p)
        guard let issuer = d["issuer"]?.stringValue, let authorize = d["authorization_endpoint"]?.stringValue,
            let token = d["token_endpoint"]?.stringValue, let jwks = d["jwks_uri"]?.stringValue
        else {
            throw Failure(reason: "the discovery document of \(p.name) lacks issuer, authorization_endpoint, token_endpoint or jwks_uri")
        }
        return Discovery(issuer: issuer, authorizationEndpoint: authorize, tokenEndpoint: token, jwksURI: jwks)
    }

    /// Where the browser goes: the provider's authorize endpoint, answering by form_post to the tenant's `authresp`.
    static func authorizeURL(
        _ p: EmulatorSeed.OIDCProvider, redirectURI: String, state: String, pending: OIDCPending, loginHint: String?
    ) -> String {
        let d = pending.discovery
        let params: [(String, String)] =
            [
                ("client_id", p.clientId), ("response_type", "code"), ("response_mode", "form_post"), ("redirect_uri", redirectURI),
                ("scope", p.scope), ("state", state), ("nonce", pending.nonce),
                ("code_challenge", PKCE.s256Challenge(for: pending.verifier)), ("code_challenge_method", "S256"),
            ] + (loginHint.map { [("login_hint", $0)] } ?? [])
        return d.authorizationEndpoint + (d.authorizationEndpoint.contains("?") ? "&" : "?") + FormEncoding.encode(params)
    }

    /// The provider's code redeemed and its id token checked: the person as the provider names them.
    static func redeem(
        code: String, _ p: EmulatorSeed.OIDCProvider, pending: OIDCPending, redirectURI: String
    ) async throws -> FederatedIdentity {
        let d = pending.discovery
        var form = [
            ("grant_type", "authorization_code"), ("code", code), ("redirect_uri", redirectURI), ("client_id", p.clientId),
            ("code_verifier", pending.verifier),
        ]
        if let secret = p.clientSecret { form.append(("client_secret", secret)) }
        var request = HTTPClientRequest(url: d.tokenEndpoint)
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/x-www-form-urlencoded")
        request.body = .bytes(ByteBuffer(string: FormEncoding.encode(form)))
        let answer = try await ProviderHTTP.send(request, what: "its token endpoint", name: p.name, caFile: p.caFile)
        guard answer.status == 200, let idToken = answer.json?["id_token"]?.stringValue else {
            let error = answer.json?["error_description"]?.stringValue ?? answer.json?["error"]?.stringValue ?? "HTTP \(answer.status)"
            throw Failure(reason: "\(p.name) refused the code: \(error.prefix(200))")
        }
        let keys: JWKSet
        do { keys = try JWKSet.parse(Data(try await fetchJSON(d.jwksURI, what: "its keys", p).serialized().utf8)) } catch let e as Failure {
            throw e
        } catch { throw Failure(reason: "the keys of \(p.name) (\(d.jwksURI)) are not a JWK set") }
        let jwt: JWT
        do {
            jwt = try JWT.decode(idToken)
            try jwt.verifySignature(with: keys)
            try jwt.validateClaims(issuers: [d.issuer], audience: p.clientId, now: Int(Date().timeIntervalSince1970), skew: 300)
        } catch {
            throw Failure(reason: "the id token of \(p.name) is not valid: \(error)")
        }
        guard jwt.string("nonce") == pending.nonce else { throw Failure(reason: "the id token of \(p.name) has another nonce") }
        guard let subject = jwt.string("sub") else { throw Failure(reason: "the id token of \(p.name) has no sub") }
        let email = jwt.string("email") ?? jwt.claims["emails"]?.arrayValue?.first?.stringValue
        guard let email, EmulatorSeed.isPlausibleEmail(email) else {
            throw Failure(reason: "the id token of \(p.name) has no email address (ask for the email scope or claim)")
        }
        return FederatedIdentity(
            provider: nil, issuer: d.issuer, providerName: p.name, subject: subject, email: email, name: jwt.string("name"),
            givenName: jwt.string("given_name"), surname: jwt.string("family_name"),
            accessToken: answer.json?["access_token"]?.stringValue)
    }

    private static func fetchJSON(_ url: String, what: String, _ p: EmulatorSeed.OIDCProvider) async throws -> JSONValue {
        let r = try await ProviderHTTP.send(HTTPClientRequest(url: url), what: what, name: p.name, caFile: p.caFile)
        guard r.status == 200, let json = r.json else { throw Failure(reason: "\(url) (\(what)) answered HTTP \(r.status), not JSON") }
        return json
    }
}

/// What went wrong with an identity provider (OpenID Connect or SAML), in words for the page (`AADB2C90273`).
struct FederationFailure: Error { var reason: String }

/// One request from the tenant to an identity provider: trusting the system's roots, and the provider's `caFile` beside
/// them when it has one; a body of at most 1 MiB.
enum ProviderHTTP {
    static func send(
        _ request: HTTPClientRequest, what: String, name: String, caFile: String?
    ) async throws -> (status: Int, body: Data, json: JSONValue?) {
        let tls: TLSConfiguration?
        do { tls = try CalloutHTTP.tls(certificateFile: nil, keyFile: nil, caFile: caFile) } catch {
            throw FederationFailure(reason: "the CA file of \(name), '\(caFile ?? "")', cannot be read")
        }
        let owned = tls.map { HTTPClient(eventLoopGroupProvider: .singleton, configuration: .init(tlsConfiguration: $0)) }
        let outcome: Result<(status: Int, body: Data, json: JSONValue?), Error>
        do {
            // The deadline covers the whole answer: a provider that sends headers and then waits is unreachable too.
            let deadline = NIODeadline.now() + .seconds(10)
            let response = try await (owned ?? HTTPClient.shared).execute(request, deadline: deadline)
            let body = Data(buffer: try await CalloutHTTP.collect(response.body, before: deadline))
            outcome = .success((Int(response.status.code), body, try? JSONValue.parse(body)))
        } catch {
            outcome = .failure(FederationFailure(reason: "the identity provider could not be reached at \(request.url) (\(what))"))
        }
        try? await owned?.shutdown()
        return try outcome.get()
    }
}
