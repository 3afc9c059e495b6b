import Foundation

/// What the native-auth flow asks the person (the CLI reads the terminal or stdin; tests script it).
public protocol NativePrompter: Sendable {
    func password(for username: String) async throws -> String
    /// A one-time code sent to `label`; nil means "send a new code". `attempt` counts the prompts (1 = the first).
    func code(sentTo label: String, length: Int?, attempt: Int, attemptsLeft: Int) async throws -> String?
    /// A new code was sent (after "resend"); the previous one no longer works.
    func codeResent(to label: String, length: Int?)
    func notice(_ text: String)
    /// A new password (sign-up, reset); `problem` says why the tenant refused the last one (nil the first time).
    func newPassword(for username: String, problem: String?) async throws -> String
    /// A value for an attribute the tenant requires at sign-up; `problem` says why it refused the last one.
    func attribute(_ attribute: NativeAttribute, problem: String?) async throws -> String
    /// Which method to use for the second factor (`registering`: which kind of method to register).
    func chooseMethod(_ methods: [NativeMethod], registering: Bool) async throws -> NativeMethod
    /// The email address or phone number (E.164) to register as `method`.
    func registrationTarget(for method: NativeMethod) async throws -> String
}

/// What a prompter that cannot ask (a script's) answers for the questions it does not implement: an error that says what
/// was asked.
extension NativePrompter {
    /// By default a `usage` error: a new password is needed (or the tenant refused the last one).
    public func newPassword(for username: String, problem: String?) async throws -> String {
        throw B2CError(.usage, problem.map { "the tenant refused the new password: \($0)" } ?? "a new password is needed for \(username)")
    }

    /// By default a `usage` error naming the attribute the tenant requires.
    public func attribute(_ attribute: NativeAttribute, problem: String?) async throws -> String {
        throw B2CError(.usage, "the tenant requires the attribute \(attribute.name)" + (problem.map { ": \($0)" } ?? ""))
    }

    /// By default the first method offered; none offered is a `failed` error.
    public func chooseMethod(_ methods: [NativeMethod], registering: Bool) async throws -> NativeMethod {
        guard let first = methods.first else { throw B2CError(.failed, "the tenant offered no strong-authentication method") }
        return first
    }

    /// By default a `usage` error: nothing was given to register.
    public func registrationTarget(for method: NativeMethod) async throws -> String {
        throw B2CError(.usage, "the tenant asks to register a strong-authentication method (\(method.channel)); none was given")
    }
}

/// Which credential a native-auth sign-in uses.
public enum NativeMode: String, Sendable {
    /// Whatever the configuration allows; the tenant picks (password when it can take one).
    case auto
    case password
    case otp
}

/// Email + password or email + one-time code through the External ID native-auth API (initiate → challenge → token;
/// resend = a new challenge; a wrong code is asked again up to a limit), then the second factor the tenant asks
/// (`mfa_required`: introspect → challenge the chosen method → `mfa_oob`) or the method it wants registered first
/// (`registration_required`: register introspect → challenge → continue, or `preverified` → `continuation_token`).
struct NativeSignIn: Flow {
    let context: FlowContext
    let prompter: NativePrompter

    /// What the client announces it can handle (`capabilities`): a second factor and registering one.
    static let capabilities = "mfa_required registration_required"

    func run(username: String, mode: NativeMode, scopes: [String]) async throws -> Account {
        let c = try await conversation(username: username, mode: mode, scopes: scopes)
        var reply = try await c.step(
            "oauth2/v2.0/initiate", [("challenge_type", c.challengeType), ("username", username), ("capabilities", Self.capabilities)])
        reply = try await c.step(
            "oauth2/v2.0/challenge", [("challenge_type", c.challengeType), ("continuation_token", try c.continuation(reply.json))])
        var tokens: NativeConversation.Reply
        switch reply.json["challenge_type"]?.stringValue {
        case "password":
            let password = try await prompter.password(for: username)
            tokens = try await c.token("password", [("continuation_token", try c.continuation(reply.json)), ("password", password)])
        case "oob":
            tokens = try await c.codeLoop(
                reply.json,
                resend: { ct in
                    try c.ok(
                        try await c.step("oauth2/v2.0/challenge", [("challenge_type", c.challengeType), ("continuation_token", ct)]),
                        at: "challenge")
                },
                submit: { code, ct in try await c.token("oob", [("continuation_token", ct), ("oob", code)]) })
        case let other:
            throw B2CError(.failed, "the native-auth challenge answered an unknown challenge_type '\(other ?? "none")'; nothing was stored")
        }
        if case .next(let step, let json) = tokens {
            tokens = try await secondFactor(step, json, c)
        }
        return try await c.finish(
            try c.ok(tokens, at: "token"), store: store, tokenSets: tokenSets, requested: scopes, now: clock())
    }

    /// The conversation of one flow under the configuration's `nativeAuth`: its authority, the tenant's metadata, the
    /// challenge types for `mode`.
    func conversation(username: String, mode: NativeMode, scopes: [String]) async throws -> NativeConversation {
        try store.prepareForTokens()
        guard let native = config.nativeAuth, let authority = config.nativeAuthority else {
            throw B2CError(
                .configuration,
                "\(config.source) has no \"nativeAuth\" section; add one (docs/configuration.md, \"nativeAuth\") or sign in in the browser")
        }
        let meta = try await metadata.metadata(for: authority, now: clock())
        var types: [String]
        switch mode {
        case .auto: types = native.challengeTypes
        case .password: types = ["password"]
        case .otp: types = ["oob"]
        }
        if !native.challengeTypes.contains(types[0]) && mode != .auto {
            throw B2CError(
                .configuration, "\(config.source) allows the challenge types \(native.challengeTypes) for native auth, not \(types[0])")
        }
        types.append("redirect")
        return NativeConversation(
            config: config, transport: transport, metadata: metadata, prompter: prompter, authority: authority, meta: meta,
            username: username, challengeType: types.joined(separator: " "), scope: ScopeSet.userRequest(scopes), policy: native.name)
    }

    /// After a right password (or a sign-up, or a reset): the second factor by one of the person's methods, or registering
    /// one first.
    func secondFactor(_ step: String, _ json: JSONValue, _ c: NativeConversation) async throws -> NativeConversation.Reply {
        let ct = try c.continuation(json)
        switch step {
        case "mfa_required":
            let listed = try c.ok(try await c.step("oauth2/v2.0/introspect", [("continuation_token", ct)]), at: "introspect")
            let methods = listed["methods"]?.arrayValue?.map(NativeMethod.init) ?? []
            guard !methods.isEmpty else { throw B2CError(.failed, "the tenant asks for a second factor but lists no method") }
            let method = try await prompter.chooseMethod(methods, registering: false)
            let challenge: (String) async throws -> JSONValue = { ct in
                try c.ok(
                    try await c.step(
                        "oauth2/v2.0/challenge", [("challenge_type", c.challengeType), ("continuation_token", ct), ("id", method.id)]),
                    at: "challenge")
            }
            return try await c.codeLoop(
                try await challenge(try c.continuation(listed)), resend: challenge,
                submit: { code, ct in try await c.token("mfa_oob", [("continuation_token", ct), ("oob", code)]) })
        case "registration_required":
            let listed = try c.ok(try await c.step("register/v1.0/introspect", [("continuation_token", ct)]), at: "register/introspect")
            let methods = listed["methods"]?.arrayValue?.map(NativeMethod.init) ?? []
            guard !methods.isEmpty else { throw B2CError(.failed, "the tenant asks to register a method but lists none") }
            let method = try await prompter.chooseMethod(methods, registering: true)
            let target = try await prompter.registrationTarget(for: method)
            let challenge: (String) async throws -> JSONValue = { ct in
                try c.ok(
                    try await c.step(
                        "register/v1.0/challenge",
                        [
                            ("challenge_type", "oob"), ("challenge_channel", method.channel), ("challenge_target", target),
                            ("continuation_token", ct),
                        ]), at: "register/challenge")
            }
            let first = try await challenge(try c.continuation(listed))
            var done = first
            if first["challenge_type"]?.stringValue != "preverified" {
                done = try c.ok(
                    try await c.codeLoop(
                        first, resend: challenge,
                        submit: { code, ct in
                            try await c.step("register/v1.0/continue", [("grant_type", "oob"), ("oob", code), ("continuation_token", ct)])
                        }), at: "register/continue")
            } else {
                prompter.notice("\(target) is already verified; registered as your \(method.channel) method")
            }
            return try await c.token("continuation_token", [("continuation_token", try c.continuation(done))])
        default:
            throw B2CError(
                .failed, "the tenant asked for '\(step)' after the password, which a sign-in does not expect; nothing was stored")
        }
    }
}
