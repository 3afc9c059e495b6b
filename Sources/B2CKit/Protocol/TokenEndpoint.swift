import Foundation

extension B2CClient {
    /// POSTs one grant to a token endpoint and maps every failure to its kind: the only token-endpoint call of the client.
    func tokenRequest(_ endpoint: URL, _ grant: TokenGrant, policy: String, loginHint: String?) async throws -> TokenResponse {
        let r: HTTPResult
        do { r = try await transport.postForm(endpoint, grant.form) } catch let e as NetworkError { throw B2CError(e) }
        if r.status == 200 {
            do { return try TokenResponse.parse(r.body) } catch let e as ProtocolError {
                throw B2CError(.network, "\(endpoint.host ?? "the token endpoint"): \(e)")
            }
        }
        guard let oauth = OAuthError.parse(status: r.status, r.body) else {
            throw B2CError(.network, "the token endpoint answered HTTP \(r.status) without an OAuth error body; try again later")
        }
        switch oauth.code {
        case "AADB2C90225":
            throw B2CError(
                .interactionRequired, "\(policy) refused the username or password (AADB2C90225: \(oauth.b2c.message)); nothing was stored",
                remedy: .retryPasswordOrBrowser(policy: (try? defaultPolicy().name) ?? policy))
        case "AADB2C99003", "AADB2C90057":
            throw B2CError(.configuration, "\(policy) does not accept passwords from this app: \(oauth)")
        default: break
        }
        if oauth.needsInteraction {
            throw B2CError(
                .interactionRequired, "\(policy) needs a new sign-in: \(oauth)", remedy: signInRemedy(policy: policy, loginHint: loginHint))
        }
        if r.status >= 500 { throw B2CError(.network, "the token endpoint failed (HTTP \(r.status)): \(oauth)") }
        throw B2CError(.failed, "the token endpoint refused the request: \(oauth)")
    }
}
