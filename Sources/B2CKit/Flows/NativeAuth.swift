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

public enum NativeMode: String, Sendable {
    /// Whatever the configuration allows; the tenant picks (password when it can take one).
    case auto
    case password
    case otp
}

extension B2CClient {
    static let maxCodeAttempts = 3

    /// Email + password or email + one-time code through the External ID native-auth API
    /// (initiate → challenge → token; resend = a new challenge; a wrong code is asked again up to a limit).
    public func signInNative(username: String, mode: NativeMode, scopes: [String], prompter: NativePrompter) async throws -> Account {
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
        let challengeType = types.joined(separator: " ")
        let retry = signInRemedy(policy: native.name, loginHint: username)

        var reply = try await nativePost(
            authority.endpoint("oauth2/v2.0/initiate"),
            [("client_id", config.clientID), ("challenge_type", challengeType), ("username", username)],
            username: username, retry: retry)
        try nativeRedirectCheck(reply, username: username)
        reply = try await nativePost(
            authority.endpoint("oauth2/v2.0/challenge"),
            [
                ("client_id", config.clientID), ("challenge_type", challengeType),
                ("continuation_token", try continuation(reply)),
            ], username: username, retry: retry)
        try nativeRedirectCheck(reply, username: username)
        let scope = ScopeSet.userRequest(scopes)
        let tokenReply: JSONValue
        switch reply["challenge_type"]?.stringValue {
        case "password":
            let password = try await prompter.password(for: username)
            tokenReply = try await nativePost(
                meta.tokenEndpoint,
                [
                    ("client_id", config.clientID), ("grant_type", "password"), ("continuation_token", try continuation(reply)),
                    ("password", password), ("scope", scope), ("username", username), ("client_info", "1"),
                ], username: username, retry: retry)
        case "oob":
            tokenReply = try await codeDialogue(
                reply,
                NativeDialogue(
                    username: username, challengeType: challengeType, scope: scope, authority: authority, meta: meta,
                    retry: retry), prompter: prompter)
        case let other:
            throw B2CError(.failed, "the native-auth challenge answered an unknown challenge_type '\(other ?? "none")'; nothing was stored")
        }
        let response: TokenResponse
        do { response = try TokenResponse.parse(Data(tokenReply.serialized().utf8)) } catch let e as ProtocolError {
            throw B2CError(.network, "\(meta.tokenEndpoint.host ?? "the token endpoint"): \(e)")
        }
        let set = try await tokenSet(response, authority: authority, metadata: meta, nonce: nil, requestedResource: scopes, now: clock())
        try checkOwnership(set, authority: authority)
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
        var retry: Remedy
    }

    /// The one-time-code part: the code typed (or "resend" for a new one), a wrong code asked again up to a limit.
    private func codeDialogue(_ reply: JSONValue, _ d: NativeDialogue, prompter: NativePrompter) async throws -> JSONValue {
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
                let again = try await nativePost(
                    d.authority.endpoint("oauth2/v2.0/challenge"),
                    [("client_id", config.clientID), ("challenge_type", d.challengeType), ("continuation_token", ct)],
                    username: d.username, retry: d.retry)
                try nativeRedirectCheck(again, username: d.username)
                ct = try continuation(again)
                label = again["challenge_target_label"]?.stringValue ?? label
                length = again["code_length"]?.lenientInt ?? length
                prompter.codeResent(to: label, length: length)
                attempt += 1
                continue
            }
            attempt += 1
            do {
                return try await nativePost(
                    d.meta.tokenEndpoint,
                    [
                        ("client_id", config.clientID), ("grant_type", "oob"), ("continuation_token", ct), ("oob", code),
                        ("scope", d.scope), ("username", d.username), ("client_info", "1"),
                    ], username: d.username, retry: d.retry)
            } catch let e as NativeWrongCode {
                wrong += 1
                if e.final || wrong >= Self.maxCodeAttempts {
                    throw B2CError(
                        .interactionRequired,
                        "the code was wrong \(wrong) time\(wrong == 1 ? "" : "s"); the sign-in was stopped and nothing was stored",
                        remedy: d.retry)
                }
                prompter.notice(
                    "that code is not right (\(Self.maxCodeAttempts - wrong) attempt\(Self.maxCodeAttempts - wrong == 1 ? "" : "s") "
                        + "left); type it again, or 'resend' for a new one"
                )
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

    private func nativeRedirectCheck(_ reply: JSONValue, username: String) throws {
        if reply["challenge_type"]?.stringValue == "redirect" {
            let why = reply["redirect_reason"]?.stringValue.map { " (\($0))" } ?? ""
            throw B2CError(
                .interactionRequired, "the tenant needs the browser to sign in \(username)\(why)",
                remedy: signInRemedy(policy: try defaultPolicy().name, loginHint: username))
        }
    }

    /// What one native-auth answer means (reference §8.4), decided from the status and body alone.
    public enum NativeAnswer: Sendable, Equatable {
        case ok(JSONValue)
        case wrongCode(final: Bool)
        case userNotFound
        case wrongPassword
        case expired(String)
        case refusedClient(error: String, description: String)
        case other(error: String, suberror: String?, description: String, serverFault: Bool)
        case notJSON
        case notAnObject
    }

    public static func classifyNative(status: Int, body: Data) -> NativeAnswer {
        guard let json = try? JSONValue.parse(body) else { return .notJSON }
        guard json.objectValue != nil else { return .notAnObject }
        if status == 200 { return .ok(json) }
        let error = json["error"]?.stringValue ?? ""
        let description = (json["error_description"]?.stringValue ?? "").components(separatedBy: "\r\n")[0]
        let codes = json["error_codes"]?.arrayValue?.compactMap(\.lenientInt) ?? []
        let suberror = json["suberror"]?.stringValue
        if error == "invalid_grant" && suberror == "invalid_oob_value" { return .wrongCode(final: codes.contains(50196)) }
        if error == "user_not_found" || (error == "invalid_grant" && codes.first == 50034) { return .userNotFound }
        if error == "invalid_grant" && codes.first == 50126 { return .wrongPassword }
        if error == "expired_token" { return .expired(description) }
        if ["unsupported_challenge_type", "invalid_client", "unauthorized_client"].contains(error) {
            return .refusedClient(error: error, description: description)
        }
        return .other(error: error, suberror: suberror, description: description, serverFault: status >= 500)
    }

    /// POSTs one native-auth step and maps its AAD-style errors (reference §8.4) to messages and exit kinds.
    private func nativePost(_ url: URL, _ form: [(String, String)], username: String, retry: Remedy) async throws -> JSONValue {
        try metadata.checkKnown(url, what: "native-auth endpoint")
        let r: HTTPResult
        do { r = try await transport.postForm(url, form) } catch let e as NetworkError { throw B2CError(e) }
        switch Self.classifyNative(status: r.status, body: r.body) {
        case .ok(let json): return json
        case .notJSON:
            throw B2CError(
                .network,
                "\(url.host ?? "the server") answered HTTP \(r.status) with a body that is not JSON (\(url.path)); try again later")
        case .notAnObject:
            throw B2CError(.network, "\(url.host ?? "the server") answered HTTP \(r.status) with JSON that is not an object (\(url.path))")
        case .wrongCode(let final): throw NativeWrongCode(final: final)
        case .userNotFound:
            throw B2CError(
                .interactionRequired, "there is no account \(username) in this tenant; nothing was stored",
                remedy: .signUp(policy: config.externalIdAuthority != nil ? nil : try? defaultPolicy().name))
        case .wrongPassword:
            throw B2CError(.interactionRequired, "wrong password for \(username); nothing was stored", remedy: retry)
        case .expired(let description):
            throw B2CError(
                .interactionRequired, "the sign-in took too long and its continuation token expired (\(description)); nothing was stored",
                remedy: retry)
        case .refusedClient(let error, let description):
            throw B2CError(
                .configuration,
                "the tenant refused this app's native-auth request: \(error): \(description). Check clientId and nativeAuth in "
                    + "\(config.source)"
            )
        case .other(let error, let suberror, let description, let serverFault):
            throw B2CError(
                serverFault ? .network : .failed,
                "native auth failed at \(url.path) (HTTP \(r.status)): "
                    + "\(error.isEmpty ? "no error code" : error)\(suberror.map { "/\($0)" } ?? ""): \(description)"
            )
        }
    }
}
