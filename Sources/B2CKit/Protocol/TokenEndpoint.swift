import Foundation

extension B2CClient {
    /// POSTs one grant to a token endpoint and maps every failure to its kind: the only token-endpoint call of the client.
    /// An app-only grant, and every grant of a confidential app, carries the client's credentials.
    func tokenRequest(_ endpoint: URL, _ grant: TokenGrant, policy: String, loginHint: String?) async throws -> TokenResponse {
        var form = grant.form
        var headers: [(String, String)] = []
        var secretOrigin: String?
        if grant.isAppOnly || config.confidential {
            let (secret, origin) = try secrets.secret(for: config)
            (form, headers) = ClientAuthentication(method: config.clientAuthMethod, secret: secret).apply(
                clientID: config.clientID, to: form)
            secretOrigin = origin
        }
        let r: HTTPResult
        do { r = try await transport.postForm(endpoint, form, headers: headers) } catch let e as NetworkError { throw B2CError(e) }
        if r.status == 200 {
            do { return try TokenResponse.parse(r.body) } catch let e as ProtocolError {
                throw B2CError(.network, "\(endpoint.host ?? "the token endpoint"): \(e)")
            }
        }
        guard let oauth = OAuthError.parse(status: r.status, r.body) else {
            throw B2CError(.network, "the token endpoint answered HTTP \(r.status) without an OAuth error body; try again later")
        }
        if let e = clientProblem(oauth, grant: grant, secretOrigin: secretOrigin) { throw e }
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
            var e = B2CError(
                .interactionRequired, "\(policy) needs a new sign-in: \(oauth)", remedy: signInRemedy(policy: policy, loginHint: loginHint))
            e.tenantCode = oauth.code ?? oauth.error
            throw e
        }
        if r.status >= 500 { throw B2CError(.network, "the token endpoint failed (HTTP \(r.status)): \(oauth)") }
        throw B2CError(.failed, "the token endpoint refused the request: \(oauth)")
    }

    /// A refusal of the app itself (its secret, its type, its permissions) in words that say what to change.
    func clientProblem(_ oauth: OAuthError, grant: TokenGrant, secretOrigin: String?) -> B2CError? {
        let app = config.clientID
        switch oauth.code {
        case "AADB2C90081":
            return B2CError(
                .configuration,
                "the tenant refused the client secret of \(app) from \(secretOrigin ?? "nowhere") (AADB2C90081): it is wrong or expired. "
                    + "Check it against the app registration's Certificates & secrets; nothing was stored")
        case "AADB2C90084" where grant.isAppOnly, "AADB2C90079" where grant.isAppOnly && secretOrigin != nil:
            return B2CError(
                .configuration,
                "\(config.source) is a public client's configuration (\(app), an app that signs people in): the tenant gives it no "
                    + "token of its own (\(oauth.code ?? "")). --app needs the daemon app's configuration, its client id with a secret: "
                    + "write one with `b2c init --out daemon.json --client-id <the daemon's id> --policy <any policy>=clientCredentials`, "
                    + "or, from the local tenant, `b2c-emulator serve --config-out daemon.json --client daemon`")
        case "AADB2C90079" where secretOrigin == nil:
            return B2CError(
                .configuration,
                "the app \(app) is confidential (its redirect URI is of type Web): the tenant wants its secret (AADB2C90079). Set "
                    + "\"confidential\": true in \(config.source) and give the secret", remedy: ClientSecretSource.remedy)
        case "AADB2C90079":
            return B2CError(
                .configuration,
                "the tenant treats \(app) as a public client and refused the secret (AADB2C90079: \(oauth.b2c.message)); client "
                    + "credentials need a confidential app with a secret")
        case "AADB2C90084":
            return B2CError(
                .configuration,
                "the app \(app) is a public client: the tenant refuses a client secret (AADB2C90084)"
                    + (config.confidential ? ". Remove \"confidential\" from \(config.source)" : "; give none"))
        case "AADB2C90205":
            return B2CError(
                .configuration,
                "the app \(app) holds no application permission of \(grant.scope) (AADB2C90205). In the app registration: API "
                    + "permissions › Add a permission › My APIs › the API › Application permissions, then Grant admin consent")
        case "AADB2C90012" where grant.isAppOnly, "AADB2C90117" where grant.isAppOnly:
            return B2CError(
                .configuration,
                "the tenant refused the scope \(grant.scope) (\(oauth.code ?? "")): app-only tokens take one '<App ID URI>/.default'")
        case "AADB2C90085":
            return B2CError(
                .configuration,
                "the app \(app) cannot use client credentials in this tenant (AADB2C90085: \(oauth.b2c.message)): its sign-in audience "
                    + "must be accounts in any identity provider or organizational directory")
        default:
            return nil
        }
    }
}
