import Foundation

/// What the native-auth flow asks the person (the CLI reads the terminal or stdin; tests script it).
public protocol NativePrompter: Sendable {
    func password(for username: String) async throws -> String
    /// A one-time code sent to `label`; nil means "send a new code". `attempt` counts the prompts (1 = the first).
    func code(sentTo label: String, length: Int?, attempt: Int, attemptsLeft: Int) async throws -> String?
    /// A new code was sent (after "resend"); the previous one no longer works.
    func codeResent(to label: String, length: Int?)
    func notice(_ text: String)
}

/// Which credential a native-auth sign-in uses.
public enum NativeMode: String, Sendable {
    /// Whatever the configuration allows; the tenant picks (password when it can take one).
    case auto
    case password
    case otp
}

/// Email + password or email + one-time code through the External ID native-auth API (initiate → challenge → token;
/// resend = a new challenge; a wrong code is asked again up to a limit).
struct NativeSignIn: Sendable {
    static let maxCodeAttempts = 3

    let config: ClientConfiguration
    let store: TokenStore
    /// Native auth's own endpoints (initiate, challenge) are not the token endpoint's grants: they go over the transport.
    let transport: HTTPTransport
    let metadata: MetadataProvider
    let tokenSets: TokenSetBuilder
    let clock: @Sendable () -> Int
    let prompter: NativePrompter

    func run(username: String, mode: NativeMode, scopes: [String]) async throws -> Account {
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
        let d = NativeDialogue(
            username: username, challengeType: types.joined(separator: " "), scope: ScopeSet.userRequest(scopes), authority: authority,
            meta: meta, policy: native.name)
        var reply = try await post(
            authority.endpoint("oauth2/v2.0/initiate"),
            [("client_id", config.clientID), ("challenge_type", d.challengeType), ("username", username)], d)
        reply = try await post(
            authority.endpoint("oauth2/v2.0/challenge"),
            [("client_id", config.clientID), ("challenge_type", d.challengeType), ("continuation_token", try continuation(reply))], d)
        let tokenReply: JSONValue
        switch reply["challenge_type"]?.stringValue {
        case "password":
            let password = try await prompter.password(for: username)
            tokenReply = try await post(
                meta.tokenEndpoint,
                [
                    ("client_id", config.clientID), ("grant_type", "password"), ("continuation_token", try continuation(reply)),
                    ("password", password), ("scope", d.scope), ("username", username), ("client_info", "1"),
                ], d)
        case "oob":
            tokenReply = try await codeDialogue(reply, d)
        case let other:
            throw B2CError(.failed, "the native-auth challenge answered an unknown challenge_type '\(other ?? "none")'; nothing was stored")
        }
        let response: TokenResponse
        do { response = try TokenResponse.parse(Data(tokenReply.serialized().utf8)) } catch let e as ProtocolError {
            throw B2CError(.network, "\(meta.tokenEndpoint.host ?? "the token endpoint"): \(e)")
        }
        let set = try await tokenSets.tokenSet(
            response, authority: authority, metadata: meta, nonce: nil, requestedResource: scopes, now: clock())
        try store.save(set, makeCurrent: true, now: clock())
        return set.account
    }

    /// What every step of one native-auth sign-in sends along.
    struct NativeDialogue {
        var username: String
        var challengeType: String
        var scope: String
        var authority: Authority
        var meta: OpenIDMetadata
        /// The configuration's native-auth name: where a new sign-in goes.
        var policy: String
    }

    /// The one-time-code part: the code typed (or "resend" for a new one), a wrong code asked again up to a limit.
    private func codeDialogue(_ reply: JSONValue, _ d: NativeDialogue) async throws -> JSONValue {
        var ct = try continuation(reply)
        var label = reply["challenge_target_label"]?.stringValue ?? d.username
        var length = reply["code_length"]?.lenientInt
        var wrong = 0
        var attempt = 1
        while true {
            guard
                let code = try await prompter.code(
                    sentTo: label, length: length, attempt: attempt, attemptsLeft: Self.maxCodeAttempts - wrong)
            else {
                // Resend: a new challenge sends a new code and invalidates the previous one.
                let again = try await post(
                    d.authority.endpoint("oauth2/v2.0/challenge"),
                    [("client_id", config.clientID), ("challenge_type", d.challengeType), ("continuation_token", ct)], d)
                ct = try continuation(again)
                label = again["challenge_target_label"]?.stringValue ?? label
                length = again["code_length"]?.lenientInt ?? length
                prompter.codeResent(to: label, length: length)
                attempt += 1
                continue
            }
            attempt += 1
            do {
                return try await post(
                    d.meta.tokenEndpoint,
                    [
                        ("client_id", config.clientID), ("grant_type", "oob"), ("continuation_token", ct), ("oob", code),
                        ("scope", d.scope), ("username", d.username), ("client_info", "1"),
                    ], d)
            } catch let e as NativeWrongCode {
                wrong += 1
                if e.final || wrong >= Self.maxCodeAttempts {
                    throw B2CError(
                        .interactionRequired,
                        "the code was wrong \(wrong) time\(wrong == 1 ? "" : "s"); the sign-in was stopped and nothing was stored",
                        remedy: config.signInRemedy(policy: d.policy, loginHint: d.username))
                }
                let left = Self.maxCodeAttempts - wrong
                prompter.notice(
                    "that code is not right (\(left) attempt\(left == 1 ? "" : "s") left); type it again, or 'resend' for a new one")
            }
        }
    }

    struct NativeWrongCode: Error { var final: Bool }

    private func continuation(_ reply: JSONValue) throws -> String {
        guard let ct = reply["continuation_token"]?.stringValue, !ct.isEmpty else {
            throw B2CError(.network, "the native-auth answer has no continuation_token; nothing was stored")
        }
        return ct
    }

    /// POSTs one native-auth step; a refusal becomes the client's error by `TenantCodes`, a wrong code `NativeWrongCode`,
    /// and a `redirect` challenge (the tenant wants the browser) an error too.
    private func post(_ url: URL, _ form: [(String, String)], _ d: NativeDialogue) async throws -> JSONValue {
        try metadata.checkKnown(url, what: "native-auth endpoint")
        let r: HTTPResult
        do { r = try await transport.postForm(url, form) } catch let e as NetworkError { throw B2CError(e) }
        var refusal = TenantCodes.Refusal(
            config: config, policy: d.policy, loginHint: d.username, code: "", answer: "", tenantMessage: "")
        switch NativeAnswer.classify(status: r.status, body: r.body) {
        case .ok(let json):
            guard json["challenge_type"]?.stringValue == "redirect" else { return json }
            refusal.code = "redirect"
            refusal.tenantMessage = json["redirect_reason"]?.stringValue ?? ""
            throw TenantCodes.error(TenantCodes.rule("redirect", at: .nativeAuth)!, refusal)
        case .notJSON:
            throw B2CError(
                .network,
                "\(url.host ?? "the server") answered HTTP \(r.status) with a body that is not JSON (\(url.path)); try again later")
        case .notAnObject:
            throw B2CError(.network, "\(url.host ?? "the server") answered HTTP \(r.status) with JSON that is not an object (\(url.path))")
        case .wrongCode(let final): throw NativeWrongCode(final: final)
        case .refused(let error, let suberror, let code, let description, let serverFault):
            refusal.code = code ?? error
            refusal.answer = "\(error): \(description)"
            refusal.tenantMessage = description
            if let rule = TenantCodes.rule(code, at: .nativeAuth) ?? TenantCodes.rule(error, at: .nativeAuth) {
                throw TenantCodes.error(rule, refusal)
            }
            throw B2CError(
                serverFault ? .network : .failed,
                "native auth failed at \(url.path) (HTTP \(r.status)): "
                    + "\(error.isEmpty ? "no error code" : error)\(suberror.map { "/\($0)" } ?? ""): \(description)")
        }
    }
}

/// What one native-auth answer means (reference §8.4), decided from the status and body alone.
public enum NativeAnswer: Sendable, Equatable {
    case ok(JSONValue)
    case wrongCode(final: Bool)
    /// A refusal: the OAuth error, its suberror, the first AAD code (`50126`) and the description's first line.
    case refused(error: String, suberror: String?, code: String?, description: String, serverFault: Bool)
    case notJSON
    case notAnObject

    public static func classify(status: Int, body: Data) -> NativeAnswer {
        guard let json = try? JSONValue.parse(body) else { return .notJSON }
        guard json.objectValue != nil else { return .notAnObject }
        if status == 200 { return .ok(json) }
        let error = json["error"]?.stringValue ?? ""
        let description = (json["error_description"]?.stringValue ?? "").components(separatedBy: "\r\n")[0]
        let codes = json["error_codes"]?.arrayValue?.compactMap(\.lenientInt) ?? []
        let suberror = json["suberror"]?.stringValue
        if error == "invalid_grant" && suberror == "invalid_oob_value" { return .wrongCode(final: codes.contains(50196)) }
        // Only invalid_grant's AAD codes have rows of their own (unknown user, wrong password); other errors go by name.
        let code = error == "invalid_grant" ? codes.first.map(String.init) : nil
        return .refused(error: error, suberror: suberror, code: code, description: description, serverFault: status >= 500)
    }
}
