import Crypto
import Foundation

/// What an interactive flow needs from its surroundings (the CLI prints and launches; tests script).
public protocol InteractionUI: Sendable {
    /// Show the URL and open it in a browser (or not, with --no-browser). `purpose` completes "to …", e.g. "sign in to B2C_1_susi".
    func present(url: URL, purpose: String) async
    /// A progress line (stderr in the CLI).
    func progress(_ text: String)
    /// URLs the person pastes while the flow waits (the address the browser ended on, when it runs on another machine);
    /// nil when there is no one to paste. Each is checked like a redirect to the loopback listener.
    func pastedAnswers() -> AsyncStream<String>?
    /// What became of a pasted URL that was not taken (another sign-in's answer, not an answer at all).
    func pastedAnswerRefused(_ reason: String)
}

extension InteractionUI {
    public func pastedAnswers() -> AsyncStream<String>? { nil }
    public func pastedAnswerRefused(_ reason: String) { progress(reason) }
}

public struct InteractiveOptions: Sendable {
    public var prompt: String?
    public var loginHint: String?
    public var port: Int = 0
    /// Bounds the whole wait for the person, the forgot-password detour included.
    public var timeoutSeconds: Int = 300
    public var scopes: [String]?
    /// The person who must come back from the browser (edit profile names one); anyone else is refused.
    public var expectedPerson: Account?
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
            throw B2CError(.configuration, "\(config.source) has no policy of role signUpSignIn or signIn",
                           remedy: .namePolicy(candidates: config.policies.map(\.name)))
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

    // MARK: interactive sign-in

    /// How to sign in to a policy (or the native-auth name) again, as a remedy.
    public func signInRemedy(policy: String, loginHint: String? = nil) -> Remedy {
        if let n = config.nativeAuth, n.name.caseInsensitiveCompare(policy) == .orderedSame, config.policy(named: policy) == nil {
            return .signIn(policy: n.name, method: .native, loginHint: loginHint)
        }
        let method: Remedy.SignInMethod
        switch config.policy(named: policy)?.role {
        case .ropc?: method = .password
        case .editProfile?: method = .editProfile
        case .resetPassword?: method = .resetPassword
        default: method = .browser
        }
        return .signIn(policy: config.policy(named: policy)?.name ?? policy, method: method, loginHint: loginHint)
    }

    /// A name under which accounts are held: a policy of the configuration, or the native-auth configuration's name.
    public struct Target: Sendable {
        public var name: String
        public var authority: Authority
        public var policy: ClientConfiguration.Policy?
        /// The part of the store this target's accounts live in.
        public var scope: AccountScope
    }

    /// The policy (or native-auth name) a command acts on; nil means the default sign-in policy. Every command resolves
    /// its `--policy` here, so a policy and the native-auth name mean the same thing everywhere.
    public func target(_ name: String?) throws -> Target {
        if let name, let n = config.nativeAuthority, n.policy.caseInsensitiveCompare(name) == .orderedSame, config.policy(named: name) == nil {
            return Target(name: n.policy, authority: n, policy: nil, scope: scope(of: n))
        }
        let p = try name.map { try policy($0) } ?? defaultPolicy()
        let authority = config.authority(for: p)
        return Target(name: p.name, authority: authority, policy: p, scope: scope(of: authority))
    }

    /// The store scope of an authority of this configuration: its host, the client id, and the tenant GUID when known.
    public func scope(of authority: Authority) -> AccountScope {
        AccountScope(environment: authority.hostAndPort, clientID: config.clientID, tenantID: config.tenantID)
    }

    /// Every scope this configuration's accounts can live in (the authority host, and the native-auth host).
    public var scopes: [AccountScope] {
        var out = [AccountScope(environment: Authority.hostAndPort(of: config.authorityHost), clientID: config.clientID, tenantID: config.tenantID)]
        if let n = config.nativeAuthority, !out.contains(scope(of: n)) { out.append(scope(of: n)) }
        return out
    }

    /// Authorization code + PKCE through the system browser and a loopback redirect (DESIGN §7).
    /// AADB2C90118 (forgot password) runs the reset policy in the same browser session and resumes the sign-in.
    public func signInInteractively(policyName: String, options: InteractiveOptions, ui: InteractionUI) async throws -> Account {
        let policy = try self.policy(policyName)
        let deadline = ContinuousClock.now + .seconds(options.timeoutSeconds)
        do {
            return try await authorizeAndRedeem(policy: policy, options: options, deadline: deadline, ui: ui)
        } catch let e as AuthorizeRedirectError where e.code == "AADB2C90118" {
            guard let reset = config.policies(role: .resetPassword).first else {
                throw B2CError(.failed, "the user chose \"Forgot your password?\" (AADB2C90118) but \(config.source) has no policy of role resetPassword")
            }
            ui.progress("Password reset requested: running \(reset.name), then resuming the sign-in to \(policy.name).")
            let resetAccount = try await authorizeAndRedeem(policy: reset, options: options, deadline: deadline, ui: ui)
            try forgetRevokedGrants(of: resetAccount)
            var resumed = options
            resumed.prompt = nil
            return try await authorizeAndRedeem(policy: policy, options: resumed, deadline: deadline, ui: ui)
        }
    }

    struct AuthorizeRedirectError: Error {
        var error: String
        var description: String
        var code: String?
    }

    /// One authorize round trip and its code redemption. Nothing is stored unless every check passes.
    func authorizeAndRedeem(policy: ClientConfiguration.Policy, options: InteractiveOptions, deadline: ContinuousClock.Instant,
                            ui: InteractionUI) async throws -> Account {
        let authority = config.authority(for: policy)
        let meta = try await metadata.metadata(for: authority, now: clock())
        let request = AuthorizeRequest(clientID: config.clientID, redirectURI: config.redirectURI, scopes: try options.scopes ?? resourceScopes(api: nil, scopes: []),
                                       prompt: options.prompt, loginHint: options.loginHint)
        let listener = try await LoopbackListener.start(port: options.port, path: config.redirectURI.path, expectedState: request.state)
        defer { Task { await listener.stop() } }
        let redirectURI = request.redirectURI(port: listener.port)
        let purpose: String
        switch policy.role {
        case .editProfile: purpose = "edit the profile (\(policy.name))"
        case .resetPassword: purpose = "reset the password (\(policy.name))"
        default: purpose = "sign in to \(policy.name)"
        }
        let remaining = max(0, Int(((deadline - ContinuousClock.now) / .milliseconds(1)).rounded(.up) / 1000))
        await ui.present(url: request.url(endpoint: meta.authorizationEndpoint, redirectURI: redirectURI), purpose: purpose)
        ui.progress("Waiting for the browser to \(purpose) (timeout \(remaining) s; Ctrl-C cancels)…")
        let reply = try await waitForAnswer(listener, deadline: deadline, ui: ui, timeoutSeconds: options.timeoutSeconds)
        let code = try authorizationCode(from: reply, policy: policy, loginHint: options.loginHint)
        let response = try await tokenRequest(meta.tokenEndpoint, request.redemption(code: code, redirectURI: redirectURI),
                                              policy: policy.name, loginHint: options.loginHint)
        let set = try await tokenSet(response, authority: authority, metadata: meta, nonce: request.nonce, requestedResource: request.resource,
                                     now: clock())
        if let expected = options.expectedPerson, expected.tenantID != set.account.tenantID || expected.oid != set.account.oid {
            let who = AccountSelection.email(set.account) ?? set.account.oid
            throw B2CError(.failed, "\(AccountSelection.email(expected) ?? expected.oid) was named, but \(who) signed in to \(policy.name); "
                + "nothing was stored. Sign in as \(AccountSelection.email(expected) ?? expected.oid) in the browser, or name \(who).")
        }
        try checkOwnership(set, authority: authority)
        try store.save(set, makeCurrent: true, now: clock())
        return set.account
    }

    /// The browser's answer (or one the person pasted), until the deadline.
    private func waitForAnswer(_ listener: LoopbackListener, deadline: ContinuousClock.Instant, ui: InteractionUI,
                               timeoutSeconds: Int) async throws -> [String: String] {
        let pasting = ui.pastedAnswers().map { pasted in
            Task {
                for await line in pasted {
                    switch listener.deliver(pastedURL: line) {
                    case .accepted, .alreadyAnswered: return
                    case .wrongState: ui.pastedAnswerRefused("that URL is the answer to another sign-in (its state differs); still waiting")
                    case .notAnAnswer:
                        ui.pastedAnswerRefused("that is not the URL the browser ended on (it has no code or error); paste the whole address")
                    }
                }
            }
        }
        defer { pasting?.cancel() }
        guard let reply = await listener.waitForRedirect(until: deadline) else {
            throw B2CError(.failed, "no answer from the browser within \(timeoutSeconds) s; nothing was stored", remedy: .allowMoreTime)
        }
        return reply
    }

    /// The code of an answer, or its B2C error as what it means.
    private func authorizationCode(from reply: [String: String], policy: ClientConfiguration.Policy, loginHint: String?) throws -> String {
        if let error = reply["error"] {
            let d = B2CErrorDescription.parse(reply["error_description"] ?? "")
            switch d.code {
            case "AADB2C90118": throw AuthorizeRedirectError(error: error, description: d.message, code: d.code)
            case "AADB2C90091": throw B2CError(.cancelled, "cancelled: the sign-in to \(policy.name) was cancelled on the page (AADB2C90091)")
            case "AADB2C90077":
                throw B2CError(.interactionRequired, "\(policy.name) has no browser session for prompt=none (AADB2C90077)",
                               remedy: signInRemedy(policy: policy.name, loginHint: loginHint))
            default:
                throw B2CError(.failed, "the sign-in to \(policy.name) failed: \(error)\(d.code.map { " \($0)" } ?? ""): \(d.message)")
            }
        }
        guard let code = reply["code"], !code.isEmpty else {
            throw B2CError(.failed, "the redirect carried neither a code nor an error; nothing was stored")
        }
        return code
    }

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
            throw B2CError(.interactionRequired, "\(policy) refused the username or password (AADB2C90225: \(oauth.b2c.message)); nothing was stored",
                           remedy: .retryPasswordOrBrowser(policy: (try? defaultPolicy().name) ?? policy))
        case "AADB2C99003", "AADB2C90057":
            throw B2CError(.configuration, "\(policy) does not accept passwords from this app: \(oauth)")
        default: break
        }
        if oauth.needsInteraction {
            throw B2CError(.interactionRequired, "\(policy) needs a new sign-in: \(oauth)", remedy: signInRemedy(policy: policy, loginHint: loginHint))
        }
        if r.status >= 500 { throw B2CError(.network, "the token endpoint failed (HTTP \(r.status)): \(oauth)") }
        throw B2CError(.failed, "the token endpoint refused the request: \(oauth)")
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
            account = Account(id: id, environment: authority.hostAndPort, tenantID: tenant, oid: oid, policy: authority.policy,
                              authority: authority.url.absoluteString, clientID: config.clientID, idToken: idToken, claims: .object(claims),
                              updatedAt: now)
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
            let granted = (r.scope ?? "").split(separator: " ").map(String.init).filter { !ScopeSet.reserved.contains($0.lowercased()) }
            let target = AccessToken.target(granted.isEmpty ? requestedResource : granted)
            at = AccessToken(accountID: account.id, target: target, secret: token, expiresOn: expiry, cachedAt: now)
        }
        return TokenSet(identity: identity, account: account, accessToken: at, refreshToken: r.refreshToken)
    }

    /// Refuses a token set that does not belong to this configuration: an id token or access token whose issuer is not
    /// on a known host or names another tenant, or that was issued to another app (`azp`, else `aud`). Tokens that are
    /// not JWTs cannot be read and are left to the tenant.
    func checkOwnership(_ set: TokenSet, authority: Authority) throws {
        if let token = set.accessToken?.secret, let problem = TokenOwnership.problem(accessToken: token, config: config, tenantID: set.account.tenantID) {
            throw B2CError(.failed, "the tenant answered \(authority.hostAndPort) with an access token that is not this configuration's: \(problem); nothing was stored")
        }
    }

    // MARK: silent

    /// Cache hit with at least `minValid` seconds left, else a refresh with the account's own refresh token
    /// (single-flight across processes), else "interaction required". Only accounts and tokens of this configuration's
    /// scope are considered, and a cached token that does not belong to it is never served.
    public func acquireTokenSilently(policyName: String?, selector: String?, scopes: [String], minValid: Int,
                                     forceRefresh: Bool) async throws -> SilentResult {
        let policy = try target(policyName)
        let selection = try AccountSelection.select(policy: policy.name, selector: selector, scope: policy.scope, store: store) {
            signInRemedy(policy: policy.name, loginHint: $0)
        }
        let account = selection.account
        let resource = scopes
        let target = AccessToken.target(resource)
        if !forceRefresh, let at = try servable(store.accessToken(of: account, target: target), of: account), at.expiresOn - clock() >= minValid {
            return SilentResult(account: account, accessToken: at, fromCache: true, notice: selection.notice)
        }
        // One refresh per account at a time, across processes: lock, re-read, refresh only if still needed.
        let started = clock()
        let lock = try refreshLock(for: account)
        defer { withExtendedLifetime(lock) {} }
        let cachedNow = try servable(store.accessToken(of: account, target: target), of: account)
        if let at = cachedNow, at.expiresOn - clock() >= minValid, !forceRefresh || at.cachedAt > started {
            return SilentResult(account: account, accessToken: at, fromCache: true, notice: selection.notice)
        }
        let signIn = signInRemedy(policy: policy.name, loginHint: AccountSelection.email(account))
        guard let rt = try store.refreshToken(of: account) else {
            throw B2CError(.interactionRequired, "the account \(account.id) has no refresh token for \(policy.name)", remedy: signIn)
        }
        do {
            return try await refresh(account, with: rt, target: policy, resource: resource, notice: selection.notice)
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

    /// The cross-process lock that makes an account's refresh single-flight.
    private func refreshLock(for account: Account) throws -> FileLock {
        let lockDir = store.directory.appendingPathComponent("locks")
        try? FileManager.default.createDirectory(at: lockDir, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let key = "\(account.environment) \(account.clientID) \(account.id)"
        let lockName = Base64URL.encode(Data(SHA256.hash(data: Data(key.utf8)))).prefix(32)
        return try FileLock(path: lockDir.appendingPathComponent("\(lockName).lock").path)
    }

    /// A cached token, unless it does not belong to this configuration (then it is dropped and never served).
    private func servable(_ token: AccessToken?, of account: Account) throws -> AccessToken? {
        guard let token else { return nil }
        guard TokenOwnership.problem(accessToken: token.secret, config: config, tenantID: account.tenantID) == nil else {
            try store.removeAccessToken(of: account, target: token.target)
            return nil
        }
        return token
    }

    /// One refresh with the account's own refresh token at its own policy; the rotated set is stored only if the account
    /// is still there.
    private func refresh(_ account: Account, with refreshToken: String, target policy: Target, resource: [String],
                         notice: String?) async throws -> SilentResult {
        let signIn = signInRemedy(policy: policy.name, loginHint: AccountSelection.email(account))
        let meta = try await metadata.metadata(for: policy.authority, now: clock())
        let grant = TokenGrant.refreshToken(clientID: config.clientID, refreshToken: refreshToken, scope: ScopeSet.userRequest(resource))
        let response = try await tokenRequest(meta.tokenEndpoint, grant, policy: policy.name, loginHint: AccountSelection.email(account))
        var set = try await tokenSet(response, authority: policy.authority, metadata: meta, nonce: nil, requestedResource: resource, now: clock(),
                                     previous: account)
        guard set.account.id == account.id else {
            throw B2CError(.failed, "the refresh for \(account.id) returned tokens for another account (\(set.account.id)); nothing was stored")
        }
        try checkOwnership(set, authority: policy.authority)
        if set.refreshToken == nil { set.refreshToken = refreshToken }
        // Only if the account is still there: a sign-out by another process during the refresh wins.
        guard try store.save(set, makeCurrent: false, now: clock(), onlyIfPresent: true) else {
            throw B2CError(.interactionRequired, "the account \(account.id) was signed out while its token was being refreshed; nothing was stored",
                           remedy: signIn)
        }
        guard let at = set.accessToken else {
            throw B2CError(.failed, "the refresh returned no access token for \(resource.isEmpty ? "(no scopes)" : resource.joined(separator: " "))")
        }
        return SilentResult(account: set.account, accessToken: at, fromCache: false, notice: notice)
    }

    // MARK: sign-out

    /// Forgets accounts locally. In shared-device mode every account on this device goes (the whole store) and the
    /// browser session must end too; a named account must still exist. Returns what was removed and what else to do.
    public func signOut(policyName: String?, selector: String?, all: Bool) throws -> SignOutOutcome {
        if config.sharedDevice {
            if !all && (policyName != nil || selector != nil) { _ = try accountsToSignOut(policyName: policyName, selector: selector, all: false) }
            return SignOutOutcome(removed: try store.removeAll(scope: nil), sharedDevice: true)
        }
        return SignOutOutcome(removed: try store.remove(try accountsToSignOut(policyName: policyName, selector: selector, all: all)),
                              sharedDevice: false)
    }

    /// The accounts a sign-out names, within this configuration's scopes.
    private func accountsToSignOut(policyName: String?, selector: String?, all: Bool) throws -> [Account] {
        if all { return try scopes.flatMap { try store.accounts(scope: $0) } }
        if let policyName {
            let p = try target(policyName)
            return [try AccountSelection.select(policy: p.name, selector: selector, scope: p.scope, store: store) {
                signInRemedy(policy: p.name, loginHint: $0)
            }.account]
        }
        guard let selector else {
            throw B2CError(.usage, "say which account to sign out", remedy: .nameAccount)
        }
        let matches = AccountSelection.filter(try scopes.flatMap { try store.accounts(scope: $0) }, selector: selector)
        if matches.isEmpty { throw B2CError(.failed, "no signed-in account matches '\(selector)'; nothing was signed out", remedy: .listAccounts) }
        // A person selector (email or oid) signs the person out of every policy.
        return matches
    }
}

/// What a sign-out did.
public struct SignOutOutcome: Sendable {
    public var removed: [Account]
    /// Shared-device mode: everything went, and the browser session must end too.
    public var sharedDevice: Bool
    public var endBrowserSession: Bool { sharedDevice }
}
