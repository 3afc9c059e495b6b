import Crypto
import Foundation

/// What an interactive flow needs from its surroundings (the CLI prints and launches; tests script).
public protocol InteractionUI: Sendable {
    /// Show the URL and open it in a browser (or not, with --no-browser). `purpose` completes "to …", e.g. "sign in to B2C_1_susi".
    func present(url: URL, purpose: String) async
    /// A progress line (stderr in the CLI).
    func progress(_ text: String)
}

public struct InteractiveOptions: Sendable {
    public var prompt: String?
    public var loginHint: String?
    public var port: Int = 0
    public var timeoutSeconds: Int = 300
    public var scopes: [String]?
    public init(prompt: String? = nil, loginHint: String? = nil, port: Int = 0, timeoutSeconds: Int = 300, scopes: [String]? = nil) {
        self.prompt = prompt; self.loginHint = loginHint; self.port = port; self.timeoutSeconds = timeoutSeconds; self.scopes = scopes
    }
}

public struct SilentResult: Sendable {
    public var account: Account
    public var accessToken: AccessToken
    public var fromCache: Bool
    public var notice: String?
}

/// The façade: configuration + store + network, and the flows on top of them.
public final class B2CClient: Sendable {
    public let config: ClientConfiguration
    public let store: TokenStore
    public let transport: HTTPTransport
    public let metadata: MetadataProvider
    let clock: @Sendable () -> Int

    public init(config: ClientConfiguration, store: TokenStore, timeoutSeconds: Int = 30, trace: (@Sendable (String) -> Void)? = nil,
                clock: @escaping @Sendable () -> Int = { Int(Date().timeIntervalSince1970) }) throws {
        self.config = config
        self.store = store
        do { transport = try HTTPTransport(caFile: config.caFile, timeoutSeconds: timeoutSeconds, trace: trace) } catch let e as NetworkError {
            throw B2CError(.configuration, e.description)
        }
        metadata = MetadataProvider(store: store, transport: transport, config: config)
        self.clock = clock
    }

    public func shutdown() async { await transport.shutdown() }

    /// The client's clock (epoch seconds).
    public func now() -> Int { clock() }

    public func policy(_ name: String) throws -> ClientConfiguration.Policy {
        guard let p = config.policy(named: name) else {
            let known = config.policies.map(\.name) + (config.nativeAuth.map { [$0.name] } ?? [])
            throw B2CError(.configuration, "the policy '\(name)' is not in \(config.source) (known: \(known.joined(separator: ", ")))")
        }
        return p
    }

    /// The default sign-in policy: the first of role signUpSignIn, else signIn.
    public func defaultPolicy() throws -> ClientConfiguration.Policy {
        guard let p = config.policies(role: .signUpSignIn).first ?? config.policies(role: .signIn).first else {
            throw B2CError(.configuration, "\(config.source) has no policy of role signUpSignIn or signIn; name one with --policy")
        }
        return p
    }

    /// Resource scopes for a request: explicit scopes, or an API's, or the first API's.
    public func resourceScopes(api: String?, scopes: [String]) throws -> [String] {
        if !scopes.isEmpty { return scopes }
        if let api {
            guard let a = config.api(named: api) else {
                throw B2CError(.configuration, "no API named '\(api)' in \(config.source) (known: \(config.apis.map(\.name).joined(separator: ", ")))")
            }
            return a.scopes
        }
        return config.apis.first?.scopes ?? []
    }

    static let reserved: Set<String> = ["openid", "offline_access", "profile", "email"]

    // MARK: interactive sign-in

    public func signInCommand(policy: String, loginHint: String? = nil) -> String {
        if let n = config.nativeAuth, n.name.caseInsensitiveCompare(policy) == .orderedSame {
            return "b2c signin --native --username \(loginHint ?? "<email>")"
        }
        if config.policy(named: policy)?.role == .ropc {
            return "b2c signin --policy \(policy) --username \(loginHint ?? "<user>") --password-stdin"
        }
        return "b2c signin --policy \(policy)" + (loginHint.map { " --login-hint \($0)" } ?? "")
    }

    /// A name under which accounts are held: a policy of the configuration, or the native-auth configuration's name.
    public struct Target: Sendable {
        public var name: String
        public var authority: Authority
        public var policy: ClientConfiguration.Policy?
    }

    /// The policy (or native-auth name) a command acts on; nil means the default sign-in policy.
    public func target(_ name: String?) throws -> Target {
        if let name, let n = config.nativeAuthority, n.policy.caseInsensitiveCompare(name) == .orderedSame, config.policy(named: name) == nil {
            return Target(name: n.policy, authority: n, policy: nil)
        }
        let p = try name.map { try policy($0) } ?? defaultPolicy()
        return Target(name: p.name, authority: config.authority(for: p), policy: p)
    }

    /// Authorization code + PKCE through the system browser and a loopback redirect (DESIGN §7).
    /// AADB2C90118 (forgot password) runs the reset policy in the same browser session and resumes the sign-in.
    public func signInInteractively(policyName: String, options: InteractiveOptions, ui: InteractionUI) async throws -> Account {
        let policy = try self.policy(policyName)
        do {
            return try await authorizeAndRedeem(policy: policy, options: options, ui: ui)
        } catch let e as AuthorizeRedirectError where e.code == "AADB2C90118" {
            guard let reset = config.policies(role: .resetPassword).first else {
                throw B2CError(.failed, "the user chose \"Forgot your password?\" (AADB2C90118) but \(config.source) has no policy of role resetPassword")
            }
            ui.progress("Password reset requested: running \(reset.name), then resuming the sign-in to \(policy.name).")
            let resetAccount = try await authorizeAndRedeem(policy: reset, options: options, ui: ui)
            try forgetRevokedGrants(of: resetAccount)
            var resumed = options
            resumed.prompt = nil
            return try await authorizeAndRedeem(policy: policy, options: resumed, ui: ui)
        }
    }

    struct AuthorizeRedirectError: Error {
        var error: String
        var description: String
        var code: String?
    }

    func authorizeAndRedeem(policy: ClientConfiguration.Policy, options: InteractiveOptions, ui: InteractionUI) async throws -> Account {
        let authority = config.authority(for: policy)
        let now = clock()
        let meta = try await metadata.metadata(for: authority, now: now)
        let pkce = PKCE()
        let state = Random.token(bytes: 16)
        let nonce = Random.token(bytes: 16)
        let listener = try await LoopbackListener.start(port: options.port, path: config.redirectURI.path)
        defer { Task { await listener.stop() } }
        var redirect = URLComponents(url: config.redirectURI, resolvingAgainstBaseURL: false)!
        redirect.port = listener.port
        let redirectURI = redirect.string!
        let resource = try options.scopes ?? resourceScopes(api: nil, scopes: [])
        let scope = (["openid", "offline_access"] + resource).joined(separator: " ")
        var params: [(String, String)] = [
            ("client_id", config.clientID), ("response_type", "code"), ("redirect_uri", redirectURI), ("response_mode", "query"),
            ("scope", scope), ("state", state), ("nonce", nonce), ("code_challenge", pkce.challenge),
            ("code_challenge_method", "S256"), ("client_info", "1"),
        ]
        if let prompt = options.prompt { params.append(("prompt", prompt)) }
        if let hint = options.loginHint { params.append(("login_hint", hint)) }
        var url = URLComponents(url: meta.authorizationEndpoint, resolvingAgainstBaseURL: false)!
        let existing = url.percentEncodedQuery.map { $0 + "&" } ?? ""
        url.percentEncodedQuery = existing + FormEncoding.encode(params)
        let purpose: String
        switch policy.role {
        case .editProfile: purpose = "edit the profile (\(policy.name))"
        case .resetPassword: purpose = "reset the password (\(policy.name))"
        default: purpose = "sign in to \(policy.name)"
        }
        await ui.present(url: url.url!, purpose: purpose)
        ui.progress("Waiting for the browser to \(purpose) (timeout \(options.timeoutSeconds) s; Ctrl-C cancels)…")
        guard let reply = await listener.waitForRedirect(timeoutSeconds: options.timeoutSeconds) else {
            throw B2CError(.failed, "no answer from the browser within \(options.timeoutSeconds) s; nothing was stored. Run the command again, or raise --timeout.")
        }
        guard reply["state"] == state else {
            throw B2CError(.failed, "the redirect's state does not match this sign-in (a stale or forged redirect); nothing was stored")
        }
        if let error = reply["error"] {
            let d = B2CErrorDescription.parse(reply["error_description"] ?? "")
            switch d.code {
            case "AADB2C90118": throw AuthorizeRedirectError(error: error, description: d.message, code: d.code)
            case "AADB2C90091": throw B2CError(.cancelled, "cancelled: the sign-in to \(policy.name) was cancelled on the page (AADB2C90091)")
            case "AADB2C90077":
                throw B2CError(.interactionRequired, "\(policy.name) has no browser session for prompt=none (AADB2C90077)",
                               fix: signInCommand(policy: policy.name, loginHint: options.loginHint))
            default:
                throw B2CError(.failed, "the sign-in to \(policy.name) failed: \(error)\(d.code.map { " \($0)" } ?? ""): \(d.message)")
            }
        }
        guard let code = reply["code"], !code.isEmpty else {
            throw B2CError(.failed, "the redirect carried neither a code nor an error; nothing was stored")
        }
        let form: [(String, String)] = [
            ("grant_type", "authorization_code"), ("client_id", config.clientID), ("code", code), ("redirect_uri", redirectURI),
            ("code_verifier", pkce.verifier), ("scope", scope), ("client_info", "1"),
        ]
        let response = try await tokenRequest(meta.tokenEndpoint, form, policy: policy.name, loginHint: options.loginHint)
        let set = try await tokenSet(response, authority: authority, metadata: meta, nonce: nonce, requestedResource: resource, now: clock())
        try store.save(set, makeCurrent: true, now: clock())
        return set.account
    }

    /// POSTs to a token endpoint and maps every failure to its kind.
    func tokenRequest(_ endpoint: URL, _ form: [(String, String)], policy: String, loginHint: String?) async throws -> TokenResponse {
        let r: HTTPResult
        do { r = try await transport.postForm(endpoint, form) } catch let e as NetworkError { throw B2CError(e) }
        if r.status == 200 {
            do { return try TokenResponse.parse(r.body) } catch let e as ProtocolError {
                throw B2CError(.network, "\(endpoint.host ?? "the token endpoint"): \(e)")
            }
        }
        if let oauth = OAuthError.parse(status: r.status, r.body) {
            if oauth.needsInteraction {
                throw B2CError(.interactionRequired, "\(policy) needs a new sign-in: \(oauth)", fix: signInCommand(policy: policy, loginHint: loginHint))
            }
            if r.status >= 500 { throw B2CError(.network, "the token endpoint failed (HTTP \(r.status)): \(oauth)") }
            throw B2CError(.failed, "the token endpoint refused the request: \(oauth)")
        }
        throw B2CError(.network, "the token endpoint answered HTTP \(r.status) without an OAuth error body; try again later")
    }

    /// Turns a token response into the set we store, after validating the id token.
    func tokenSet(_ r: TokenResponse, authority: Authority, metadata m: OpenIDMetadata, nonce: String?, requestedResource: [String],
                  now: Int, previous: Account? = nil) async throws -> TokenSet {
        var account: Account
        var claims: [String: JSONValue]
        if let idToken = r.idToken {
            let jwt = try await metadata.validateIDToken(idToken, authority: authority, metadata: m, nonce: nonce, now: now)
            claims = jwt.claims
            let oid = (jwt.string("oid") ?? jwt.string("sub") ?? "").lowercased()
            let tenant: String
            let id: String
            if let ci = r.clientInfo {
                tenant = ci.utid.lowercased()
                id = ci.homeAccountID
            } else {
                // Fallback without client_info: oid + policy + tenant GUID from the issuer.
                tenant = (URL(string: m.issuer)?.pathComponents.first { UUID(uuidString: $0) != nil } ?? config.tenantID ?? "").lowercased()
                id = "\(oid)-\(authority.policy.lowercased()).\(tenant)"
            }
            guard !oid.isEmpty, !tenant.isEmpty else { throw B2CError(.failed, "the id token names no user (oid/sub) or tenant; nothing was stored") }
            account = Account(id: id, tenantID: tenant, oid: oid, policy: authority.policy, authority: authority.url.absoluteString,
                              clientID: config.clientID, idToken: idToken, claims: .object(claims), updatedAt: now)
        } else if let previous {
            account = previous
            claims = previous.claims.objectValue ?? [:]
        } else {
            throw B2CError(.failed, "the token response has no id token; ask for the openid scope")
        }
        account.updatedAt = now
        let identity = Identity(tenantID: account.tenantID, oid: account.oid, name: claims["name"]?.stringValue,
                                givenName: claims["given_name"]?.stringValue, familyName: claims["family_name"]?.stringValue,
                                email: AccountSelection.email(account))
        var at: AccessToken?
        if let token = r.accessToken, let expiry = r.accessTokenExpiry(now: now) {
            let granted = (r.scope ?? "").split(separator: " ").map(String.init).filter { !Self.reserved.contains($0.lowercased()) }
            let target = AccessToken.target(granted.isEmpty ? requestedResource : granted)
            at = AccessToken(accountID: account.id, target: target, secret: token, expiresOn: expiry, cachedAt: now)
        }
        return TokenSet(identity: identity, account: account, accessToken: at, refreshToken: r.refreshToken)
    }

    // MARK: silent

    /// Cache hit with at least `minValid` seconds left, else a refresh with the account's own refresh token
    /// (single-flight across processes), else "interaction required".
    public func acquireTokenSilently(policyName: String?, selector: String?, scopes: [String], minValid: Int,
                                     forceRefresh: Bool) async throws -> SilentResult {
        let policy = try target(policyName)
        let selection = try AccountSelection.select(policy: policy.name, selector: selector, store: store,
                                                    signInCommand: signInCommand(policy: policy.name))
        let account = selection.account
        let resource = scopes
        let target = AccessToken.target(resource)
        let signIn = signInCommand(policy: policy.name, loginHint: AccountSelection.email(account))
        if !forceRefresh, let at = try store.accessToken(accountID: account.id, target: target), at.expiresOn - clock() >= minValid {
            return SilentResult(account: account, accessToken: at, fromCache: true, notice: selection.notice)
        }
        // One refresh per account at a time, across processes: lock, re-read, refresh only if still needed.
        let started = clock()
        let lockDir = store.directory.appendingPathComponent("locks")
        try? FileManager.default.createDirectory(at: lockDir, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let lockName = Base64URL.encode(Data(SHA256.hash(data: Data(account.id.utf8)))).prefix(32)
        let lock = try FileLock(path: lockDir.appendingPathComponent("\(lockName).lock").path)
        defer { withExtendedLifetime(lock) {} }
        let cachedNow = try store.accessToken(accountID: account.id, target: target)
        if let at = cachedNow, at.expiresOn - clock() >= minValid, !forceRefresh || at.cachedAt > started {
            return SilentResult(account: account, accessToken: at, fromCache: true, notice: selection.notice)
        }
        guard let rt = try store.refreshToken(accountID: account.id) else {
            throw B2CError(.interactionRequired, "the account \(account.id) has no refresh token for \(policy.name)", fix: signIn)
        }
        let authority = policy.authority
        do {
            let now = clock()
            let meta = try await metadata.metadata(for: authority, now: now)
            let form: [(String, String)] = [
                ("grant_type", "refresh_token"), ("client_id", config.clientID), ("refresh_token", rt),
                ("scope", (["openid", "offline_access"] + resource).joined(separator: " ")), ("client_info", "1"),
            ]
            let response = try await tokenRequest(meta.tokenEndpoint, form, policy: policy.name, loginHint: AccountSelection.email(account))
            var set = try await tokenSet(response, authority: authority, metadata: meta, nonce: nil, requestedResource: resource, now: clock(),
                                         previous: account)
            guard set.account.id == account.id else {
                throw B2CError(.failed, "the refresh for \(account.id) returned tokens for another account (\(set.account.id)); nothing was stored")
            }
            if set.refreshToken == nil { set.refreshToken = rt }
            // Only if the account is still there: a sign-out by another process during the refresh wins.
            guard try store.save(set, makeCurrent: false, now: clock(), onlyIfPresent: true) else {
                throw B2CError(.interactionRequired, "the account \(account.id) was signed out while its token was being refreshed; nothing was stored",
                               fix: signIn)
            }
            guard let at = set.accessToken else {
                throw B2CError(.failed, "the refresh returned no access token for \(resource.isEmpty ? "(no scopes)" : resource.joined(separator: " "))")
            }
            return SilentResult(account: set.account, accessToken: at, fromCache: false, notice: selection.notice)
        } catch let e as B2CError where e.kind == .network && !forceRefresh {
            // The network failed but a token that is still valid is better than nothing (not when a refresh was demanded).
            if let at = cachedNow, at.expiresOn > clock() {
                return SilentResult(account: account, accessToken: at, fromCache: true,
                                    notice: [selection.notice, "refresh failed (\(e.message)); serving the cached token, valid for \(at.expiresOn - clock()) s"]
                                        .compactMap { $0 }.joined(separator: "; "))
            }
            throw e
        }
    }

    // MARK: sign-out

    /// Forgets accounts locally. Returns the removed account ids.
    /// With `dryRun`, only checks that the selection names something (and throws as the real sign-out would).
    public func signOut(policyName: String?, selector: String?, all: Bool, dryRun: Bool = false) throws -> [String] {
        if all { return dryRun ? [] : try store.removeAll() }
        if let policyName {
            let p = try target(policyName)
            let sel = try AccountSelection.select(policy: p.name, selector: selector, store: store, signInCommand: signInCommand(policy: p.name))
            return dryRun ? [sel.account.id] : try store.remove(accountIDs: [sel.account.id])
        }
        guard let selector else {
            throw B2CError(.usage, "say which account to sign out: --account <email|oid|account id>, --policy <policy>, or --all")
        }
        let matches = AccountSelection.filter(try store.accounts(), selector: selector)
        if matches.isEmpty { throw B2CError(.failed, "no signed-in account matches '\(selector)'; nothing was signed out (see `b2c accounts`)") }
        // A person selector (email or oid) signs the person out of every policy.
        return dryRun ? matches.map(\.id) : try store.remove(accountIDs: matches.map(\.id))
    }
}
