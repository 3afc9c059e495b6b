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

extension B2CClient {
    /// Authorization code + PKCE through the system browser and a loopback redirect (DESIGN §7).
    /// AADB2C90118 (forgot password) runs the reset policy in the same browser session and resumes the sign-in.
    /// An External ID tenant has no policy: its one authority signs people in (`policyName` is then its name or nil).
    public func signInInteractively(policyName: String?, options: InteractiveOptions, ui: InteractionUI) async throws -> Account {
        let target = try self.target(policyName)
        try store.prepareForTokens()  // a store that cannot keep tokens says so before the browser opens
        let deadline = ContinuousClock.now + .seconds(options.timeoutSeconds)
        do {
            return try await authorizeAndRedeem(target, options: options, deadline: deadline, ui: ui)
        } catch let e as AuthorizeRedirectError where e.code == "AADB2C90118" {
            guard let reset = config.policies(role: .resetPassword).first else {
                throw B2CError(
                    .failed,
                    "the user chose \"Forgot your password?\" (AADB2C90118) but \(config.source) has no policy of role resetPassword")
            }
            ui.progress("Password reset requested: running \(reset.name), then resuming the sign-in to \(target.name).")
            let resetAccount = try await authorizeAndRedeem(try self.target(reset.name), options: options, deadline: deadline, ui: ui)
            try forgetRevokedGrants(of: resetAccount)
            var resumed = options
            resumed.prompt = nil
            return try await authorizeAndRedeem(target, options: resumed, deadline: deadline, ui: ui)
        }
    }

    struct AuthorizeRedirectError: Error {
        var error: String
        var description: String
        var code: String?
    }

    /// One authorize round trip and its code redemption. Nothing is stored unless every check passes.
    func authorizeAndRedeem(
        _ target: Target, options: InteractiveOptions, deadline: ContinuousClock.Instant, ui: InteractionUI
    ) async throws -> Account {
        let authority = target.authority
        // Fetched afresh: a tenant that does not answer is said now, not after a wait for a browser that cannot get there.
        let meta = try await metadata.metadata(for: authority, now: clock(), refresh: true)
        let request = AuthorizeRequest(
            clientID: config.clientID, redirectURI: config.redirectURI, scopes: try options.scopes ?? resourceScopes(api: nil, scopes: []),
            prompt: options.prompt, loginHint: options.loginHint)
        let listener = try await LoopbackListener.start(
            port: options.port, path: config.redirectURI.path, expectedState: request.state, redirectHost: config.redirectURI.host)
        defer { Task { await listener.stop() } }
        let redirectURI = request.redirectURI(port: listener.port)
        let purpose: String
        switch target.policy?.role {
        case .editProfile?: purpose = "edit the profile (\(target.name))"
        case .resetPassword?: purpose = "reset the password (\(target.name))"
        default: purpose = "sign in to \(target.name)"
        }
        let remaining = max(0, Int(((deadline - ContinuousClock.now) / .seconds(1)).rounded(.up)))
        await ui.present(url: request.url(endpoint: meta.authorizationEndpoint, redirectURI: redirectURI), purpose: purpose)
        ui.progress("Waiting for the browser to \(purpose) (timeout \(remaining) s; Ctrl-C cancels)…")
        let reply = try await waitForAnswer(listener, deadline: deadline, ui: ui, timeoutSeconds: options.timeoutSeconds)
        let code = try authorizationCode(from: reply, policy: target.name, loginHint: options.loginHint)
        let response = try await tokenRequest(
            meta.tokenEndpoint, request.redemption(code: code, redirectURI: redirectURI),
            policy: target.name, loginHint: options.loginHint)
        let set = try await tokenSet(
            response, authority: authority, metadata: meta, nonce: request.nonce, requestedResource: request.resource,
            now: clock())
        if let expected = options.expectedPerson, expected.tenantID != set.account.tenantID || expected.oid != set.account.oid {
            let who = AccountSelection.email(set.account) ?? set.account.oid
            throw B2CError(
                .failed,
                "\(AccountSelection.email(expected) ?? expected.oid) was named, but \(who) signed in to \(target.name); "
                    + "nothing was stored. Sign in as \(AccountSelection.email(expected) ?? expected.oid) in the browser, or name \(who).")
        }
        try checkOwnership(set, authority: authority)
        try store.save(set, makeCurrent: true, now: clock())
        return set.account
    }

    /// The browser's answer (or one the person pasted), until the deadline.
    private func waitForAnswer(
        _ listener: LoopbackListener, deadline: ContinuousClock.Instant, ui: InteractionUI,
        timeoutSeconds: Int
    ) async throws -> [String: String] {
        let pasting = ui.pastedAnswers().map { pasted in
            Task {
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
        guard let reply = await listener.waitForRedirect(until: deadline) else {
            throw B2CError(.failed, "no answer from the browser within \(timeoutSeconds) s; nothing was stored", remedy: .allowMoreTime)
        }
        return reply
    }

    /// The code of an answer, or its B2C error as what it means.
    private func authorizationCode(from reply: [String: String], policy: String, loginHint: String?) throws -> String {
        if let error = reply["error"] {
            let d = B2CErrorDescription.parse(reply["error_description"] ?? "")
            switch d.code {
            case "AADB2C90118": throw AuthorizeRedirectError(error: error, description: d.message, code: d.code)
            case "AADB2C90091":
                throw B2CError(.cancelled, "cancelled: the sign-in to \(policy) was cancelled on the page (AADB2C90091)")
            case "AADB2C90077":
                throw B2CError(
                    .interactionRequired, "\(policy) has no browser session for prompt=none (AADB2C90077)",
                    remedy: signInRemedy(policy: policy, loginHint: loginHint))
            default:
                throw B2CError(.failed, "the sign-in to \(policy) failed: \(error)\(d.code.map { " \($0)" } ?? ""): \(d.message)")
            }
        }
        guard let code = reply["code"], !code.isEmpty else {
            throw B2CError(.failed, "the redirect carried neither a code nor an error; nothing was stored")
        }
        return code
    }
}
