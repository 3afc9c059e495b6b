import Foundation

/// The client library's façade: one app registration's configuration, the token store, the network, and one method per
/// flow. Each method builds the flow's small type (`Flows/`) from what that flow uses and runs it.
///
/// ```swift
/// let client = try B2CClient(config: try ClientConfiguration.load(path: "policies.json"),
///                            store: try TokenStore(directory: StoreLocation.directory()))
/// let token = try await client.acquireTokenSilently(policyName: nil, selector: nil, scopes: ["https://…/hello.read"])
/// await client.shutdown()
/// ```
public final class B2CClient: Sendable {
    /// The configuration this client acts for.
    public let config: ClientConfiguration
    let store: TokenStore
    let transport: HTTPTransport
    let metadata: MetadataProvider
    /// The app's client secret, for app-only tokens and confidential apps; asked for only when a request needs it.
    let secrets: ClientSecretSource
    let clock: @Sendable () -> Int
    /// The silent token's answers of this process, while the store has not changed.
    let silentMemo = SilentMemo()
    /// What every flow works with.
    let context: FlowContext

    /// - Parameters:
    ///   - timeoutSeconds: bounds every HTTP request, and the wait for another process's refresh of the same token.
    ///   - trace: receives one line per HTTP request and answer, secrets redacted (`--verbose`).
    ///   - secrets: where the client secret comes from, when a request needs it.
    ///   - clock: epoch seconds; tests move it.
    public init(
        config: ClientConfiguration, store: TokenStore, timeoutSeconds: Int = 30, trace: (@Sendable (String) -> Void)? = nil,
        secrets: ClientSecretSource = ClientSecretSource(), clock: @escaping @Sendable () -> Int = { Int(Date().timeIntervalSince1970) }
    ) throws {
        self.config = config
        self.store = store
        self.secrets = secrets
        do {
            transport = try HTTPTransport(
                caFile: config.caFile, caHosts: config.hostNames, timeoutSeconds: timeoutSeconds, trace: trace)
        } catch let e as NetworkError {
            throw B2CError(.configuration, e.description)
        }
        metadata = MetadataProvider(store: store, transport: transport, config: config)
        self.clock = clock
        context = FlowContext(
            config: config, store: store, transport: transport, endpoint: Self.tokenEndpoint(config, secrets, transport),
            metadata: metadata, clock: clock)
    }

    /// Stops the HTTP clients; call once when done.
    public func shutdown() async { await transport.shutdown() }

    /// The client's clock (epoch seconds).
    public func now() -> Int { clock() }

    // MARK: the flows

    /// A cached access token with at least `minValid` seconds left, else one refreshed with the account's own refresh
    /// token (one refresh per account across processes), else `B2CError.Kind.interactionRequired` with the remedy.
    /// - Parameters:
    ///   - policyName: the policy (or native-auth name); nil: the default sign-in policy.
    ///   - selector: the account: email, oid, account id or a unique prefix; nil: the policy's current or only account.
    ///   - scopes: the resource scopes the token is for.
    public func acquireTokenSilently(
        policyName: String?, selector: String?, scopes: [String], minValid: Int = 300, forceRefresh: Bool = false
    ) async throws -> SilentResult {
        let key = SilentMemo.key(policy: policyName, selector: selector, scopes: scopes)
        if !forceRefresh, let kept = silentMemo.answer(key, store: store, now: clock(), minValid: minValid) { return kept }
        let generation = try? store.generation()
        let result = try await silentToken().run(
            policyName: policyName, selector: selector, scopes: scopes, minValid: minValid, forceRefresh: forceRefresh)
        if let generation { silentMemo.remember(key, result, generation: generation) }
        return result
    }

    /// Signs a person in through the browser (authorization code + PKCE, loopback redirect), with the forgot-password
    /// detour, and stores the account as the policy's current one.
    public func signInInteractively(policyName: String?, options: InteractiveOptions, ui: InteractionUI) async throws -> Account {
        try await interactiveSignIn(ui).run(policyName: policyName, options: options)
    }

    /// Signs a person in with a password at a policy of role `ropc` (the named one, else the configuration's first).
    public func signInWithPassword(policyName: String?, username: String, password: String, scopes: [String]) async throws -> Account {
        try await PasswordSignIn(context: context).run(policyName: policyName, username: username, password: password, scopes: scopes)
    }

    /// Signs a person in through External ID's native-auth API (password or one-time code, asked of `prompter`).
    public func signInNative(username: String, mode: NativeMode, scopes: [String], prompter: NativePrompter) async throws -> Account {
        try await nativeSignIn(prompter).run(username: username, mode: mode, scopes: scopes)
    }

    private func nativeSignIn(_ prompter: NativePrompter) -> NativeSignIn {
        NativeSignIn(context: context, prompter: prompter)
    }

    /// Signs a new person up through External ID's native authentication: the address proven with a code, a password
    /// (unless `mode` is `.otp`: an account without one), `attributes` (wire names) and every other attribute the tenant
    /// requires, asked through `prompter`. The new account is signed in and current, as after `signInNative`.
    public func signUpNative(
        username: String, mode: NativeMode, attributes: [String: String], scopes: [String], prompter: NativePrompter
    ) async throws -> Account {
        try await NativeSignUp(signIn: nativeSignIn(prompter)).run(username: username, mode: mode, attributes: attributes, scopes: scopes)
    }

    /// Resets a person's password through External ID's native authentication (a code to their address, then the new
    /// password from `prompter`); they are then signed in with it, as MSAL's native reset does. The tenant revokes their
    /// earlier refresh tokens.
    public func resetPasswordNative(username: String, scopes: [String], prompter: NativePrompter) async throws -> Account {
        try await NativeReset(signIn: nativeSignIn(prompter)).run(username: username, scopes: scopes)
    }

    /// Runs the edit-profile policy for the selected person and refreshes their profile everywhere it is shown.
    public func editProfile(
        selector: String?, policyName: String?, options: InteractiveOptions, ui: InteractionUI
    ) async throws
        -> ProfileResult
    {
        try await profileFlows(ui).editProfile(selector: selector, policyName: policyName, options: options)
    }

    /// Runs the password-reset policy for the selected person; returns the account and the person's other accounts, whose
    /// tokens the reset revoked.
    public func resetPassword(
        selector: String?, policyName: String?, options: InteractiveOptions, ui: InteractionUI
    ) async throws -> (Account, [Account]) {
        try await profileFlows(ui).resetPassword(selector: selector, policyName: policyName, options: options)
    }

    /// Forgets accounts locally (`apps`: the app's own tokens; `all`: every account and app token of this configuration;
    /// shared-device mode: the whole store).
    public func signOut(policyName: String?, selector: String?, all: Bool, apps: Bool = false) throws -> SignOutOutcome {
        try SignOut(config: config, store: store).run(policyName: policyName, selector: selector, all: all, apps: apps)
    }

    /// Ends the B2C browser session through a policy's end_session endpoint; false when the browser did not come back.
    public func endBrowserSession(policyName: String?, ui: InteractionUI, timeoutSeconds: Int = 120) async throws -> Bool {
        try await BrowserSignOut(context: context, ui: ui)
            .run(policyName: policyName, timeoutSeconds: timeoutSeconds)
    }

    /// The app's own token (client credentials with its secret) for `resource` (`<App ID URI>/.default`).
    public func acquireAppToken(
        resource: String, policyName: String?, minValid: Int = 300, forceRefresh: Bool = false
    ) async throws
        -> AppTokenResult
    {
        try await appOnlyToken().run(resource: resource, policyName: policyName, minValid: minValid, forceRefresh: forceRefresh)
    }

    /// Calls a protected web API with a token acquired silently for its scopes (or the app's own). With `ui`, a call that
    /// needs a sign-in signs the person in through the browser and is sent again.
    public func callAPI(_ request: APICallRequest, ui: InteractionUI? = nil) async throws -> APICallResult {
        try await APICall(
            config: config, silent: silentToken(), appToken: appOnlyToken(), signIn: ui.map(interactiveSignIn), trace: transport.trace
        ).run(request)
    }

    // MARK: building the flows

    /// The token endpoint with the app's credentials (its secret asked for only when a request needs it).
    static func tokenEndpoint(_ config: ClientConfiguration, _ secrets: ClientSecretSource, _ transport: HTTPTransport) -> TokenEndpoint {
        TokenEndpoint(
            transport: transport, clientID: config.clientID,
            credentials: ClientCredentials(method: config.clientAuthMethod, confidential: config.confidential) {
                try secrets.secret(for: config)
            })
    }

    func silentToken() -> SilentToken { SilentToken(context: context) }

    func interactiveSignIn(_ ui: InteractionUI) -> InteractiveSignIn { InteractiveSignIn(context: context, ui: ui) }

    func profileFlows(_ ui: InteractionUI) -> ProfileFlows { ProfileFlows(config: config, store: store, signIn: interactiveSignIn(ui)) }

    func appOnlyToken() -> AppOnlyToken { AppOnlyToken(context: context) }
}
