import Foundation

/// How the client proves who it is at the token endpoint: the method, and where its secret comes from. The secret is
/// read when the first grant that needs it is sent (a cache hit needs none).
struct ClientCredentials: Sendable {
    var method: ClientAuthentication.Method
    /// Every grant carries the credentials (a confidential app), not only app-only ones.
    var confidential: Bool
    /// The secret and where it came from (for messages); throws when there is none to be had.
    var secret: @Sendable () throws -> (secret: String, origin: String)
}

/// What went wrong at the token endpoint, in the protocol's terms: remedies are `TenantCodes`' business.
enum TokenEndpointError: Error, Sendable {
    /// The tenant answered an OAuth error body; `secretOrigin` says where the secret sent came from (nil: none was sent).
    case refused(OAuthError, secretOrigin: String?)
    /// An HTTP status without an OAuth error body.
    case unexpectedStatus(Int)
    /// A success whose body is not a token response.
    case malformedResponse(host: String, ProtocolError)
    /// The request did not get through.
    case unreachable(NetworkError)
}

/// The token endpoint of one client: a grant in, a token response or a typed refusal out. The only place the client
/// POSTs a grant; every flow reaches the tenant's tokens through it.
struct TokenEndpoint: Sendable {
    let transport: HTTPTransport
    let clientID: String
    /// The client's credentials: sent with app-only grants, and with every grant of a confidential app.
    let credentials: ClientCredentials

    /// POSTs `grant` to `endpoint`. App-only grants, and every grant of a confidential app, carry the credentials.
    /// Throws `TokenEndpointError`, or the credentials' own error when the secret is needed and missing.
    func redeem(_ grant: TokenGrant, at endpoint: URL) async throws -> TokenResponse {
        var form = grant.form
        var headers: [(String, String)] = []
        var secretOrigin: String?
        if grant.isAppOnly || credentials.confidential {
            let (secret, origin) = try credentials.secret()
            (form, headers) = ClientAuthentication(method: credentials.method, secret: secret).apply(clientID: clientID, to: form)
            secretOrigin = origin
        }
        let r: HTTPResult
        do { r = try await transport.postForm(endpoint, form, headers: headers) } catch let e as NetworkError {
            throw TokenEndpointError.unreachable(e)
        }
        if r.status == 200 {
            do { return try TokenResponse.parse(r.body) } catch let e as ProtocolError {
                throw TokenEndpointError.malformedResponse(host: endpoint.host ?? "the token endpoint", e)
            }
        }
        guard let oauth = OAuthError.parse(status: r.status, r.body) else { throw TokenEndpointError.unexpectedStatus(r.status) }
        throw TokenEndpointError.refused(oauth, secretOrigin: secretOrigin)
    }
}
