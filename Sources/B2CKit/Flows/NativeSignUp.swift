import Foundation

/// Native sign-up (External ID): start with the address (and the attributes already known) → a code to prove the address →
/// the password when the tenant asks for one (`credential_required`) → every attribute it still requires
/// (`attributes_required`) → tokens by the `continuation_token` grant. A refused password or attribute is asked again.
struct NativeSignUp: Sendable {
    static let maxRefusals = 3
    static let passwordRefusals: Set<String> = [
        "password_too_weak", "password_too_short", "password_too_long", "password_recently_used", "password_banned",
        "password_is_invalid",
    ]

    let signIn: NativeSignIn
    var prompter: NativePrompter { signIn.prompter }

    func run(username: String, mode: NativeMode, attributes: [String: String], scopes: [String]) async throws -> Account {
        let c = try await signIn.conversation(username: username, mode: mode, scopes: scopes)
        var start: [(String, String)] = [("challenge_type", c.challengeType), ("username", username)]
        start.append(("capabilities", NativeSignIn.capabilities))
        if !attributes.isEmpty { start.append(("attributes", Self.attributesJSON(attributes))) }
        let started = try c.ok(try await c.step("signup/v1.0/start", start), at: "signup/start")
        let challenge: (String) async throws -> JSONValue = { ct in
            try c.ok(
                try await c.step("signup/v1.0/challenge", [("challenge_type", c.challengeType), ("continuation_token", ct)]),
                at: "signup/challenge")
        }
        let first = try await challenge(try c.continuation(started))
        guard first["challenge_type"]?.stringValue == "oob" else {
            throw B2CError(.failed, "the tenant did not send a code to verify \(username); nothing was stored")
        }
        var reply = try await c.codeLoop(
            first, resend: challenge,
            submit: { code, ct in
                try await c.step("signup/v1.0/continue", [("grant_type", "oob"), ("oob", code), ("continuation_token", ct)])
            }
        )
        var given = attributes
        for _ in 0..<8 {
            switch reply {
            case .ok(let json):
                var tokens = try await c.token("continuation_token", [("continuation_token", try c.continuation(json))])
                // The tenant may ask the new account's second factor (or its registration) before the tokens.
                if case .next(let step, let asked) = tokens { tokens = try await signIn.secondFactor(step, asked, c) }
                return try await c.finish(
                    try c.ok(tokens, at: "token"), store: signIn.store, tokenSets: signIn.tokenSets, requested: scopes, now: signIn.clock())
            case .next("credential_required", let json):
                let asked = try c.ok(
                    try await c.step(
                        "signup/v1.0/challenge", [("challenge_type", c.challengeType), ("continuation_token", try c.continuation(json))]),
                    at: "signup/challenge")
                reply = try await password(c, ct: try c.continuation(asked))
            case .next("attributes_required", let json):
                let required = json["required_attributes"]?.arrayValue?.map(NativeAttribute.init) ?? []
                reply = try await submitAttributes(c, ct: try c.continuation(json), required: required, given: &given)
            case .next(let step, _):
                throw B2CError(
                    .failed, "the tenant asked for '\(step)' during the sign-up, which this client cannot give; nothing was stored")
            }
        }
        throw B2CError(.failed, "the sign-up of \(username) did not finish after eight steps; nothing was stored")
    }

    /// The password, asked again (with the tenant's reason) while the tenant refuses it.
    private func password(_ c: NativeConversation, ct: String) async throws -> NativeConversation.Reply {
        var problem: String?
        for _ in 0..<Self.maxRefusals {
            let password = try await prompter.newPassword(for: c.username, problem: problem)
            do {
                return try await c.step(
                    "signup/v1.0/continue", [("grant_type", "password"), ("password", password), ("continuation_token", ct)])
            } catch let e as B2CError where Self.passwordRefusals.contains(e.tenantCode ?? "") {
                problem = e.message
            }
        }
        throw B2CError(.failed, "the tenant refused \(Self.maxRefusals) passwords: \(problem ?? ""); nothing was stored")
    }

    /// The required attributes not given yet, asked one by one (again when the tenant refuses a value), then sent.
    private func submitAttributes(
        _ c: NativeConversation, ct: String, required: [NativeAttribute], given: inout [String: String]
    ) async throws -> NativeConversation.Reply {
        var problems: [String: String] = [:]
        for _ in 0..<Self.maxRefusals {
            for a in required where given[a.name] == nil || problems[a.name] != nil {
                given[a.name] = try await prompter.attribute(a, problem: problems[a.name])
            }
            do {
                return try await c.step(
                    "signup/v1.0/continue",
                    [("grant_type", "attributes"), ("attributes", Self.attributesJSON(given, types: required)), ("continuation_token", ct)])
            } catch let e as B2CError where e.tenantCode == "attribute_validation_failed" {
                let names = e.invalidAttributes.isEmpty ? required.map(\.name) : e.invalidAttributes
                problems = Dictionary(names.map { ($0, "the tenant refused this value") }) { a, _ in a }
            }
        }
        throw B2CError(.failed, "the tenant refused the attributes \(problems.keys.sorted().joined(separator: ", ")); nothing was stored")
    }

    /// The `attributes` parameter: a JSON object, numbers and booleans typed when the tenant's list says so.
    static func attributesJSON(_ values: [String: String], types: [NativeAttribute] = []) -> String {
        var o: [String: JSONValue] = [:]
        for (name, value) in values {
            switch types.first(where: { $0.name == name })?.type.lowercased() {
            case "int", "integer": o[name] = Int(value).map { JSONValue($0) } ?? .string(value)
            case "boolean", "bool":
                o[name] = ["true", "false"].contains(value.lowercased()) ? .bool(value.lowercased() == "true") : .string(value)
            default: o[name] = .string(value)
            }
        }
        return JSONValue.object(o).serialized()
    }
}

/// Native self-service password reset (External ID): start → a code to the person's address → continue with it → submit
/// the new password (asked again while refused) → poll until the tenant has set it → signed in with the
/// `continuation_token` grant, as MSAL's reset does.
struct NativeReset: Sendable {
    let signIn: NativeSignIn
    /// How long to wait for the tenant to finish the reset.
    var pollLimitSeconds = 60

    func run(username: String, scopes: [String]) async throws -> Account {
        let c = try await signIn.conversation(username: username, mode: .otp, scopes: scopes)
        let started = try c.ok(
            try await c.step(
                "resetpassword/v1.0/start",
                [("challenge_type", c.challengeType), ("username", username), ("capabilities", NativeSignIn.capabilities)]),
            at: "reset/start")
        let challenge: (String) async throws -> JSONValue = { ct in
            try c.ok(
                try await c.step("resetpassword/v1.0/challenge", [("challenge_type", c.challengeType), ("continuation_token", ct)]),
                at: "reset/challenge")
        }
        let verified = try c.ok(
            try await c.codeLoop(
                try await challenge(try c.continuation(started)), resend: challenge,
                submit: { code, ct in
                    try await c.step("resetpassword/v1.0/continue", [("grant_type", "oob"), ("oob", code), ("continuation_token", ct)])
                }), at: "reset/continue")
        var submitted: JSONValue?
        var problem: String?
        for _ in 0..<NativeSignUp.maxRefusals where submitted == nil {
            let password = try await signIn.prompter.newPassword(for: username, problem: problem)
            do {
                submitted = try c.ok(
                    try await c.step(
                        "resetpassword/v1.0/submit", [("continuation_token", try c.continuation(verified)), ("new_password", password)]),
                    at: "reset/submit")
            } catch let e as B2CError where NativeSignUp.passwordRefusals.contains(e.tenantCode ?? "") {
                problem = e.message
            }
        }
        guard var polled = submitted else {
            throw B2CError(
                .failed, "the tenant refused \(NativeSignUp.maxRefusals) new passwords: \(problem ?? ""); the password is unchanged")
        }
        let interval = max(1, min(polled["poll_interval"]?.lenientInt ?? 1, 10))
        var waited = 0
        while true {
            polled = try c.ok(
                try await c.step("resetpassword/v1.0/poll_completion", [("continuation_token", try c.continuation(polled))]),
                at: "reset/poll_completion")
            switch polled["status"]?.stringValue {
            case "succeeded":
                var tokens = try await c.token("continuation_token", [("continuation_token", try c.continuation(polled))])
                if case .next(let step, let asked) = tokens { tokens = try await signIn.secondFactor(step, asked, c) }
                let account = try await c.finish(
                    try c.ok(tokens, at: "token"), store: signIn.store, tokenSets: signIn.tokenSets, requested: scopes,
                    now: signIn.clock())
                // The reset revoked the person's refresh tokens: their other accounts here keep none (as the browser reset).
                _ = try? signIn.store.dropTokens(
                    scope: account.scope, tenantID: account.tenantID, oid: account.oid, except: account.id)
                return account
            case "failed":
                throw B2CError(.failed, "the tenant could not set the new password of \(username) (poll_completion: failed)")
            default:
                guard waited < pollLimitSeconds else {
                    throw B2CError(
                        .network, "the tenant did not finish the reset of \(username) within \(pollLimitSeconds) s; try again later")
                }
                try await Task.sleep(for: .seconds(interval))
                waited += interval
            }
        }
    }
}
