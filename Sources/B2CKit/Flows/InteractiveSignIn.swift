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
    /// Why the wait cannot end with an answer (no browser could start and no one can paste the address), when that
    /// happens; nil when it never does. The flow stops with that reason instead of waiting for its timeout.
    func unanswerable() -> AsyncStream<String>?
}

extension InteractionUI {
    /// By default no one pastes answers.
    public func pastedAnswers() -> AsyncStream<String>? { nil }
    /// By default said as a progress line.
    public func pastedAnswerRefused(_ reason: String) { progress(reason) }
    /// By default a wait is always answerable (until its timeout).
    public func unanswerable() -> AsyncStream<String>? { nil }
}

/// How a browser sign-in runs: `prompt` and `loginHint` for the authorize request, the loopback port (0: any), the
/// whole wait, and the scopes (nil: the configuration's first API, or the app itself).
public struct InteractiveOptions: Sendable {
    /// The authorize request's `prompt` (such as `login`); nil: not sent.
    public var prompt: String?
    /// `login_hint`: the person's address, filled in on the tenant's page; nil: not sent.
    public var loginHint: String?
    /// The loopback listener's port; 0: any free port.
    public var port: Int = 0
    /// Bounds the whole wait for the person, the forgot-password detour included.
    public var timeoutSeconds: Int = 300
    /// The scopes to ask for; nil: the configuration's first API's, or the app itself.
    public var scopes: [String]?
    /// The person who must come back from the browser (edit profile names one); anyone else is refused.
    public var expectedPerson: Account?
    /// `domain_hint`: straight to one identity provider.
    public var domainHint: String?
    /// `ui_locales`: the language of the tenant's pages.
    public var uiLocales: String?
    /// Options for one browser sign-in; `expectedPerson`, `domainHint` and `uiLocales` are set afterwards.
    public init(prompt: String? = nil, loginHint: String? = nil, port: Int = 0, timeoutSeconds: Int = 300, scopes: [String]? = nil) {
        self.prompt = prompt; self.loginHint = loginHint; self.port = port; self.timeoutSeconds = timeoutSeconds; self.scopes = scopes
    }
}

/// Authorization code + PKCE through the system browser and a loopback redirect (DESIGN §7). AADB2C90118 (forgot
/// password) runs the reset policy in the same browser session and resumes the sign-in.
struct InteractiveSignIn: Flow {
    let context: FlowContext
    let ui: InteractionUI

    /// Signs in to a policy; an External ID tenant has no policy: its one authority signs people in (`policyName` is then
    /// its name or nil). A B2C configuration's native-auth name has no browser flow.
    func run(policyName: String?, options: InteractiveOptions) async throws -> Account {
        let resolved = try config.resolve(policy: policyName)
        guard resolved.policy != nil || config.externalIdAuthority != nil else {
            throw B2CError(
                .usage, "\(resolved.name) is the native-auth configuration: it signs people in without a browser",
                remedy: .signIn(policy: resolved.name, method: .native, loginHint: options.loginHint))
        }
        try store.prepareForTokens()  // a store that cannot keep tokens says so before the browser opens
        let deadline = ContinuousClock.now + .seconds(options.timeoutSeconds)
        do {
            return try await authorizeAndRedeem(resolved, options: options, deadline: deadline)
        } catch let e as B2CError where e.tenantCode == "AADB2C90118" {
            guard let reset = config.resetPolicy(after: resolved.name) else { throw e }
            ui.progress("Password reset requested: running \(reset.name), then resuming the sign-in to \(resolved.name).")
            let resetAccount = try await authorizeAndRedeem(try config.resolve(policy: reset.name), options: options, deadline: deadline)
            try store.forgetRevokedGrants(of: resetAccount)
            var resumed = options
            resumed.prompt = nil
            do {
                return try await authorizeAndRedeem(resolved, options: resumed, deadline: deadline)
            } catch var again as B2CError where again.tenantCode == "AADB2C90118" {
                // Chosen again on the resumed sign-in: the reset is done; another one would go round in a circle.
                again.message =
                    "\"Forgot your password?\" was chosen again when the sign-in to \(resolved.name) resumed after \(reset.name) had "
                    + "reset the password (AADB2C90118); sign in with the new password"
                again.remedy = config.signInRemedy(policy: resolved.name, loginHint: options.loginHint)
                throw again
            }
        }
    }

    /// One authorize round trip and its code redemption. Nothing is stored unless every check passes.
    func authorizeAndRedeem(
        _ resolved: ResolvedPolicy, options: InteractiveOptions, deadline: ContinuousClock.Instant
    ) async throws -> Account {
        let authority = resolved.authority
        // Fetched afresh: a tenant that does not answer is said now, not after a wait for a browser that cannot get there.
        let meta = try await metadata.metadata(for: authority, now: clock(), refresh: true)
        var request = AuthorizeRequest(
            clientID: config.clientID, redirectURI: config.redirectURI,
            scopes: try options.scopes ?? config.resourceScopes(api: nil, scopes: []), prompt: options.prompt,
            loginHint: options.loginHint)
        request.domainHint = options.domainHint
        request.uiLocales = options.uiLocales
        let listener = try await LoopbackListener.start(
            port: options.port, path: config.redirectURI.path, expectedState: request.state, redirectHost: config.redirectURI.host)
        defer { Task { await listener.stop() } }
        let redirectURI = request.redirectURI(port: listener.port)
        let purpose: String
        switch resolved.policy?.role {
        case .editProfile?: purpose = "edit the profile (\(resolved.name))"
        case .resetPassword?: purpose = "reset the password (\(resolved.name))"
        default: purpose = "sign in to \(resolved.name)"
        }
        let remaining = max(0, Int(((deadline - ContinuousClock.now) / .seconds(1)).rounded(.up)))
        await ui.present(url: request.url(endpoint: meta.authorizationEndpoint, redirectURI: redirectURI), purpose: purpose)
        ui.progress("Waiting for the browser to \(purpose) (timeout \(remaining) s; Ctrl-C cancels)…")
        let reply = try await waitForAnswer(listener, deadline: deadline, timeoutSeconds: options.timeoutSeconds)
        let code = try authorizationCode(from: reply, policy: resolved.name, loginHint: options.loginHint)
        let response = try await endpoint.redeem(
            request.redemption(code: code, redirectURI: redirectURI), at: meta.tokenEndpoint, config: config, policy: resolved.name,
            loginHint: options.loginHint)
        let set = try await tokenSets.tokenSet(
            response, authority: authority, metadata: meta, nonce: request.nonce, requestedResource: request.resource, now: clock())
        if let expected = options.expectedPerson, expected.tenantID != set.account.tenantID || expected.oid != set.account.oid {
            let who = set.account.email ?? set.account.oid
            throw B2CError(
                .failed,
                "\(expected.email ?? expected.oid) was named, but \(who) signed in to \(resolved.name); "
                    + "nothing was stored. Sign in as \(expected.email ?? expected.oid) in the browser, or name \(who).")
        }
        try store.save(set, makeCurrent: true, now: clock())
        return set.account
    }

    /// The browser's answer (or one the person pasted), until the deadline.
    private func waitForAnswer(
        _ listener: LoopbackListener, deadline: ContinuousClock.Instant, timeoutSeconds: Int
    ) async throws -> [String: String] {
        let pasting = ui.pastedAnswers().map { pasted in
            Task { [ui] in
                for await line in pasted {
                    switch listener.deliver(pastedURL: line) {
                    case .accepted, .alreadyAnswered: return
                    case .wrongState: ui.pastedAnswerRefused("that URL is the answer to another sign-in (its state differs); still waiting")
                    case .notAnAnswer:
                        ui.pastedAnswerRefused(
                            "that is not the URL the browser ended on (it has no code or error); paste the whole address")
                    }
                }
            }
        }
        defer { pasting?.cancel() }
        enum Waited: Sendable { case answer([String: String]?), unanswerable(String) }
        let outcome = await withTaskGroup(of: Waited.self) { group in
            group.addTask { .answer(await listener.waitForRedirect(until: deadline)) }
            if let stop = ui.unanswerable() {
                group.addTask {
                    for await reason in stop { return .unanswerable(reason) }
                    try? await Task.sleep(until: deadline, clock: .continuous)
                    return .answer(nil)
                }
            }
            let first = await group.next() ?? .answer(nil)
            group.cancelAll()
            return first
        }
        switch outcome {
        case .unanswerable(let reason): throw B2CError(.failed, "\(reason); nothing was stored")
        case .answer(nil):
            throw B2CError(.failed, "no answer from the browser within \(timeoutSeconds) s; nothing was stored", remedy: .allowMoreTime)
        case .answer(let reply?): return reply
        }
    }

    /// The code of an answer, or its error redirect as what it means (`TenantCodes`).
    private func authorizationCode(from reply: [String: String], policy: String, loginHint: String?) throws -> String {
        if let error = reply["error"] {
            throw TenantCodes.redirectError(
                error: error, description: reply["error_description"] ?? "",
                context: .init(config: config, policy: policy, loginHint: loginHint, code: error, answer: error, tenantMessage: ""))
        }
        guard let code = reply["code"], !code.isEmpty else {
            throw B2CError(.failed, "the redirect carried neither a code nor an error; nothing was stored")
        }
        return code
    }
}
