import Foundation

/// A sign-up attribute the tenant requires (`required_attributes`): its wire name, type (`string`, `boolean`, `int`…),
/// the tenant's label when it gives one, and a pattern the value must match.
public struct NativeAttribute: Sendable, Equatable {
    /// The wire name the tenant knows it by.
    public var name: String
    /// `string`, `boolean`, `int`, …, as the tenant says.
    public var type: String
    /// The tenant's label for it, when it gives one.
    public var label: String?
    /// A pattern the value must match, when the tenant gives one.
    public var regex: String?
    /// Values to choose from, when the tenant lists them.
    public var options: [String]

    /// An attribute; its type is `string` unless said otherwise.
    public init(name: String, type: String = "string", label: String? = nil, regex: String? = nil, options: [String] = []) {
        self.name = name; self.type = type; self.label = label; self.regex = regex; self.options = options
    }

    init(_ json: JSONValue) {
        let opts = json["options"]
        self.init(
            name: json["name"]?.stringValue ?? "", type: json["type"]?.stringValue ?? "string", label: json["label"]?.stringValue,
            regex: opts?["regex"]?.stringValue, options: opts?["values"]?.arrayValue?.compactMap(\.stringValue) ?? [])
    }
}

/// A strong-authentication method: one the person has (after `mfa_required`) or may register (`registration_required`).
public struct NativeMethod: Sendable, Equatable {
    /// The tenant's id for it (what `/challenge` takes).
    public var id: String
    /// `email` or `sms`.
    public var channel: String
    /// Where the code goes, masked (`a***e@co*****.com`), when the tenant says.
    public var loginHint: String?

    /// A method by its tenant id and channel.
    public init(id: String, channel: String, loginHint: String? = nil) { self.id = id; self.channel = channel; self.loginHint = loginHint }

    init(_ json: JSONValue) {
        self.init(
            id: json["id"]?.stringValue ?? "", channel: json["challenge_channel"]?.stringValue ?? "email",
            loginHint: json["login_hint"]?.stringValue)
    }
}

/// One native-auth conversation with the tenant: where its steps go, what each sends along, and how an answer is read.
/// Sign-in, sign-up and password reset each hold one.
struct NativeConversation: Sendable {
    static let maxCodeAttempts = 3

    let config: ClientConfiguration
    let transport: HTTPTransport
    let metadata: MetadataProvider
    let prompter: NativePrompter
    let authority: Authority
    let meta: OpenIDMetadata
    let username: String
    /// `oob password redirect` and the like, as the configuration allows.
    let challengeType: String
    let scope: String
    /// The configuration's native-auth name: where a new sign-in goes.
    let policy: String

    /// An answer that moves the flow on: 200, or a refusal that names the next step (`mfa_required`,
    /// `registration_required`, `credential_required`, `attributes_required`, `verification_required`) with a
    /// continuation token.
    enum Reply {
        case ok(JSONValue)
        case next(String, JSONValue)

        var json: JSONValue {
            switch self {
            case .ok(let j), .next(_, let j): j
            }
        }
    }

    struct WrongCode: Error { var final: Bool }

    func step(_ path: String, _ form: [(String, String)]) async throws -> Reply {
        try await post(authority.endpoint(path), [("client_id", config.clientID)] + form)
    }

    /// A token request that ends the flow with tokens (or names the next step).
    func token(_ grant: String, _ form: [(String, String)]) async throws -> Reply {
        try await post(
            meta.tokenEndpoint,
            [("client_id", config.clientID), ("grant_type", grant)] + form + [
                ("scope", scope), ("username", username), ("client_info", "1"),
            ])
    }

    /// The answer's JSON when it is a plain 200; a refusal naming a step this flow does not take is an error.
    func ok(_ reply: Reply, at path: String) throws -> JSONValue {
        switch reply {
        case .ok(let json): return json
        case .next(let name, _):
            throw B2CError(.failed, "the tenant asked for '\(name)' at \(path), which this step does not expect; nothing was stored")
        }
    }

    func continuation(_ reply: JSONValue) throws -> String {
        guard let ct = reply["continuation_token"]?.stringValue, !ct.isEmpty else {
            throw B2CError(.network, "the native-auth answer has no continuation_token; nothing was stored")
        }
        return ct
    }

    /// The one-time-code dialogue of every flow: the code typed (or "resend", which calls `resend` for a new one), a wrong
    /// code asked again up to a limit, then what `submit` answered.
    func codeLoop(
        _ challenge: JSONValue, resend: (String) async throws -> JSONValue, submit: (String, String) async throws -> Reply
    ) async throws -> Reply {
        var ct = try continuation(challenge)
        var label = challenge["challenge_target_label"]?.stringValue ?? username
        var length = challenge["code_length"]?.lenientInt
        var wrong = 0
        var attempt = 1
        while true {
            guard
                let code = try await prompter.code(
                    sentTo: label, length: length, attempt: attempt, attemptsLeft: Self.maxCodeAttempts - wrong)
            else {
                // Resend: a new challenge sends a new code and invalidates the previous one.
                let again = try await resend(ct)
                ct = try continuation(again)
                label = again["challenge_target_label"]?.stringValue ?? label
                length = again["code_length"]?.lenientInt ?? length
                prompter.codeResent(to: label, length: length)
                attempt += 1
                continue
            }
            attempt += 1
            do { return try await submit(code, ct) } catch let e as WrongCode {
                wrong += 1
                if e.final || wrong >= Self.maxCodeAttempts {
                    throw B2CError(
                        .interactionRequired,
                        "the code was wrong \(wrong) time\(wrong == 1 ? "" : "s"); the flow was stopped and nothing was stored",
                        remedy: config.signInRemedy(policy: policy, loginHint: username))
                }
                let left = Self.maxCodeAttempts - wrong
                prompter.notice(
                    "that code is not right (\(left) attempt\(left == 1 ? "" : "s") left); type it again, or 'resend' for a new one")
            }
        }
    }

    /// Redeems the tokens of a finished flow and keeps them as the current account.
    func finish(_ reply: JSONValue, store: TokenStore, tokenSets: TokenSetBuilder, requested: [String], now: Int) async throws -> Account {
        let response: TokenResponse
        do { response = try TokenResponse.parse(Data(reply.serialized().utf8)) } catch let e as ProtocolError {
            throw B2CError(.network, "\(meta.tokenEndpoint.host ?? "the token endpoint"): \(e)")
        }
        let set = try await tokenSets.tokenSet(
            response, authority: authority, metadata: meta, nonce: nil, requestedResource: requested, now: now)
        try store.save(set, makeCurrent: true, now: now)
        return set.account
    }

    /// POSTs one step. A refusal becomes the client's error by `TenantCodes` (its suberror, AAD code or error, in that
    /// order), a wrong code `WrongCode`, and a `redirect` challenge (the tenant wants the browser) an error too.
    private func post(_ url: URL, _ form: [(String, String)]) async throws -> Reply {
        try metadata.checkKnown(url, what: "native-auth endpoint")
        let r: HTTPResult
        do { r = try await transport.postForm(url, form) } catch let e as NetworkError { throw B2CError(e) }
        var refusal = TenantCodes.Refusal(config: config, policy: policy, loginHint: username, code: "", answer: "", tenantMessage: "")
        switch NativeAnswer.classify(status: r.status, body: r.body) {
        case .ok(let json):
            guard json["challenge_type"]?.stringValue == "redirect" else { return .ok(json) }
            refusal.code = "redirect"
            refusal.tenantMessage = json["redirect_reason"]?.stringValue ?? ""
            throw TenantCodes.error(TenantCodes.rule("redirect", at: .nativeAuth)!, refusal)
        case .nextStep(let name, let json): return .next(name, json)
        case .notJSON:
            throw B2CError(
                .network,
                "\(url.host ?? "the server") answered HTTP \(r.status) with a body that is not JSON (\(url.path)); try again later")
        case .notAnObject:
            throw B2CError(.network, "\(url.host ?? "the server") answered HTTP \(r.status) with JSON that is not an object (\(url.path))")
        case .wrongCode(let final): throw WrongCode(final: final)
        case .refused(let error, let suberror, let code, let description, let serverFault):
            refusal.code = suberror ?? code ?? error
            refusal.answer = "\(error): \(description)"
            refusal.tenantMessage = description
            for key in [suberror, code, error] {
                if let rule = TenantCodes.rule(key, at: .nativeAuth) {
                    refusal.code = key ?? error
                    var e = TenantCodes.error(rule, refusal)
                    e.invalidAttributes =
                        (try? JSONValue.parse(r.body))?["invalid_attributes"]?.arrayValue?.compactMap { $0["name"]?.stringValue } ?? []
                    throw e
                }
            }
            throw B2CError(
                serverFault ? .network : .failed,
                "native auth failed at \(url.path) (HTTP \(r.status)): "
                    + "\(error.isEmpty ? "no error code" : error)\(suberror.map { "/\($0)" } ?? ""): \(description)")
        }
    }
}

/// What one native-auth answer means (reference §8.4, b2c-journeys.md §9), decided from the status and body alone.
public enum NativeAnswer: Sendable, Equatable {
    case ok(JSONValue)
    case wrongCode(final: Bool)
    /// A refusal that names the next step of the flow and carries its continuation token (`mfa_required`,
    /// `registration_required`, `credential_required`, `attributes_required`, `verification_required`).
    case nextStep(String, JSONValue)
    /// A refusal: the OAuth error, its suberror, the first AAD code (`50126`) and the description's first line.
    case refused(error: String, suberror: String?, code: String?, description: String, serverFault: Bool)
    case notJSON
    case notAnObject

    static let steps: Set<String> = [
        "mfa_required", "registration_required", "credential_required", "attributes_required", "verification_required",
    ]

    /// Reads one answer by its status and body: `ok` for 200, else a wrong code, a next step that carries a
    /// continuation token, or a refusal; a body that is not a JSON object is `notJSON` or `notAnObject`.
    public static func classify(status: Int, body: Data) -> NativeAnswer {
        guard let json = try? JSONValue.parse(body) else { return .notJSON }
        guard json.objectValue != nil else { return .notAnObject }
        if status == 200 { return .ok(json) }
        let error = json["error"]?.stringValue ?? ""
        let description = (json["error_description"]?.stringValue ?? "").components(separatedBy: "\r\n")[0]
        let codes = json["error_codes"]?.arrayValue?.compactMap(\.lenientInt) ?? []
        let suberror = json["suberror"]?.stringValue
        if error == "invalid_grant" && suberror == "invalid_oob_value" { return .wrongCode(final: codes.contains(50196)) }
        if let step = [suberror, error].compactMap({ $0 }).first(where: steps.contains), json["continuation_token"]?.stringValue != nil {
            return .nextStep(step, json)
        }
        // AAD codes have rows of their own only for invalid_grant (unknown user, wrong password) and a contact that cannot
        // be registered; other errors go by name.
        let code = error == "invalid_grant" || codes.contains(901001) ? codes.first.map(String.init) : nil
        return .refused(error: error, suberror: suberror, code: code, description: description, serverFault: status >= 500)
    }
}
