import Foundation

/// The scopes a user-token request carries: `openid offline_access` (so that every answer has an id token and a refresh
/// token, and a refresh answer an access token too) plus the resource's.
public enum ScopeSet {
    public static let reserved: Set<String> = ["openid", "offline_access", "profile", "email"]

    public static func userRequest(_ resource: [String]) -> String {
        (["openid", "offline_access"] + resource).joined(separator: " ")
    }
}

/// One authorization request of the code flow with PKCE (S256), its state and nonce, rendered as the authorize URL and,
/// once the code is back, as its redemption.
public struct AuthorizeRequest: Sendable {
    public let clientID: String
    /// The configured redirect URI; the listener's port replaces its port.
    public let redirectTemplate: URL
    public let resource: [String]
    public let prompt: String?
    public let loginHint: String?
    /// Skips the tenant's sign-in page straight to one identity provider (`facebook.com`, `google.com`, …).
    public var domainHint: String?
    /// The page language the app asks for (`fr`, `en-GB fr`).
    public var uiLocales: String?
    public let state: String
    public let nonce: String
    let pkce: PKCE

    public init(clientID: String, redirectURI: URL, scopes: [String], prompt: String?, loginHint: String?) {
        self.clientID = clientID; self.redirectTemplate = redirectURI; self.resource = scopes; self.prompt = prompt
        self.loginHint = loginHint
        state = Random.token(bytes: 16)
        nonce = Random.token(bytes: 16)
        pkce = PKCE()
    }

    /// The redirect URI on the listener's port.
    public func redirectURI(port: Int) -> String { Self.loopbackURI(redirectTemplate, port: port) }

    public static func loopbackURI(_ template: URL, port: Int) -> String {
        var c = URLComponents(url: template, resolvingAgainstBaseURL: false)!
        c.port = port
        return c.string!
    }

    public func url(endpoint: URL, redirectURI: String) -> URL {
        var params: [(String, String)] = [
            ("client_id", clientID), ("response_type", "code"), ("redirect_uri", redirectURI), ("response_mode", "query"),
            ("scope", ScopeSet.userRequest(resource)), ("state", state), ("nonce", nonce), ("code_challenge", pkce.challenge),
            ("code_challenge_method", "S256"), ("client_info", "1"),
        ]
        if let prompt { params.append(("prompt", prompt)) }
        if let loginHint { params.append(("login_hint", loginHint)) }
        if let domainHint { params.append(("domain_hint", domainHint)) }
        if let uiLocales { params.append(("ui_locales", uiLocales)) }
        return endpoint.appendingQuery(params)
    }

    public func redemption(code: String, redirectURI: String) -> TokenGrant {
        .authorizationCode(
            clientID: clientID, code: code, redirectURI: redirectURI, verifier: pkce.verifier, scope: ScopeSet.userRequest(resource))
    }
}

/// The end-session request: back to the loopback listener with a state.
public struct EndSessionRequest: Sendable {
    public let state = Random.token(bytes: 16)
    public init() {}

    public func url(endpoint: URL, redirectURI: String) -> URL {
        endpoint.appendingQuery([("post_logout_redirect_uri", redirectURI), ("state", state)])
    }
}

/// A token-endpoint request, by grant.
public enum TokenGrant: Sendable {
    case authorizationCode(clientID: String, code: String, redirectURI: String, verifier: String, scope: String)
    case refreshToken(clientID: String, refreshToken: String, scope: String)
    /// ROPC (B2C's resource owner password credentials policy).
    case password(clientID: String, username: String, password: String, scope: String)
    /// App-only: `<App ID URI>/.default` for a confidential client (its credentials added by `ClientAuthentication`).
    case clientCredentials(clientID: String, scope: String)
    /// The device authorization grant's poll (RFC 8628 §3.4).
    case deviceCode(clientID: String, deviceCode: String, scope: String)

    /// An app-only grant (no person).
    public var isAppOnly: Bool {
        if case .clientCredentials = self { return true }
        return false
    }

    /// The scope the grant asks for.
    public var scope: String {
        switch self {
        case .authorizationCode(_, _, _, _, let scope), .refreshToken(_, _, let scope), .password(_, _, _, let scope),
            .clientCredentials(_, let scope), .deviceCode(_, _, let scope):
            scope
        }
    }

    /// The form body, every grant with `client_info=1` so that the answer names the home account.
    public var form: [(String, String)] {
        switch self {
        case let .authorizationCode(clientID, code, redirectURI, verifier, scope):
            [
                ("grant_type", "authorization_code"), ("client_id", clientID), ("code", code), ("redirect_uri", redirectURI),
                ("code_verifier", verifier), ("scope", scope), ("client_info", "1"),
            ]
        case let .refreshToken(clientID, refreshToken, scope):
            [
                ("grant_type", "refresh_token"), ("client_id", clientID), ("refresh_token", refreshToken), ("scope", scope),
                ("client_info", "1"),
            ]
        case let .password(clientID, username, password, scope):
            [
                ("grant_type", "password"), ("client_id", clientID), ("username", username), ("password", password), ("scope", scope),
                ("response_type", "token id_token"), ("client_info", "1"),
            ]
        case let .clientCredentials(clientID, scope):
            [("grant_type", "client_credentials"), ("client_id", clientID), ("scope", scope)]
        case let .deviceCode(clientID, deviceCode, scope):
            [
                ("grant_type", "urn:ietf:params:oauth:grant-type:device_code"), ("client_id", clientID), ("device_code", deviceCode),
                ("scope", scope), ("client_info", "1"),
            ]
        }
    }
}

/// How a confidential client proves itself at the token endpoint (RFC 6749 §2.3.1).
public struct ClientAuthentication: Sendable {
    public enum Method: String, Sendable, CaseIterable {
        /// `client_secret` in the form body.
        case post = "client_secret_post"
        /// `Authorization: Basic` with the form-encoded client id and secret.
        case basic = "client_secret_basic"
    }

    public var method: Method
    public var secret: String

    public init(method: Method, secret: String) { self.method = method; self.secret = secret }

    /// The form and headers of a token request carrying this client's credentials.
    public func apply(clientID: String, to form: [(String, String)]) -> (form: [(String, String)], headers: [(String, String)]) {
        switch method {
        case .post: return (form + [("client_secret", secret)], [])
        case .basic:
            let pair = FormEncoding.escape(clientID) + ":" + FormEncoding.escape(secret)
            return (form, [("Authorization", "Basic " + Data(pair.utf8).base64EncodedString())])
        }
    }
}

extension URL {
    /// The URL with form-encoded parameters added to its query (after any it already has, such as `?p=policy`).
    public func appendingQuery(_ params: [(String, String)]) -> URL {
        var c = URLComponents(url: self, resolvingAgainstBaseURL: false)!
        let existing = c.percentEncodedQuery.map { $0 + "&" } ?? ""
        c.percentEncodedQuery = existing + FormEncoding.encode(params)
        return c.url!
    }
}
