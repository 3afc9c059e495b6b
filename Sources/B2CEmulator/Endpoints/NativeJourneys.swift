import B2CProtocol
import Foundation
import Hummingbird

/// Native authentication beyond sign-in (reference: b2c-journeys.md §9): sign-up with a verified email, a password and
/// the user flow's attributes (`/signup/v1.0/*`), self-service password reset (`/resetpassword/v1.0/*`), and the second
/// factor of a sign-in with its just-in-time registration (`/oauth2/v2.0/introspect`, `/register/v1.0/*`, the `mfa_oob`
/// and `continuation_token` grants). Each step answers a new continuation token and spends the one it was given.
extension NativeAuthEndpoint {
    // MARK: shared steps

    /// The flow behind the request's continuation token, refused unless it is at one of `stages`.
    func flow(
        _ form: [String: String], app: EmulatorSeed.App, at stages: Set<NativeStage>
    ) throws -> (String, EmulatorStore.NativeFlow) {
        let (token, flow) = try self.flow(form, app: app)
        guard stages.contains(flow.stage) else {
            throw AADFailure(
                error: "invalid_request",
                description: "AADSTS55114: The continuation_token was issued for another step of the flow ('\(flow.stage.rawValue)').",
                codes: [55114])
        }
        return (token, flow)
    }

    /// Checks the one-time code of a flow waiting for one: a wrong code is counted and the flow ends at the cap, an old one
    /// ends it too.
    func checkCode(_ form: [String: String], token: String, flow: EmulatorStore.NativeFlow) throws {
        guard let expected = flow.otpHash, let issuedAt = flow.otpIssuedAt else {
            throw AADFailure(
                error: "invalid_request", description: "AADSTS55114: The continuation_token was not issued for a code challenge.",
                codes: [55114])
        }
        guard let code = form["oob"], !code.isEmpty else { throw aadMissing("oob") }
        guard clock.now() < issuedAt + Self.continuationLifetime else {
            try store.nativeFlows.end(token)
            throw AADFailure(error: "expired_token", description: "AADSTS55112: The one-time code has expired.", codes: [552003])
        }
        let tooMany = AADFailure(
            error: "invalid_grant", description: "AADSTS50196: Too many incorrect codes. Start again.", codes: [50196],
            suberror: "invalid_oob_value")
        // Every try counts, taken atomically before the code is compared: parallel guesses cannot pass the cap.
        guard let attempt = try store.nativeFlows.takeAttempt(token, cap: Self.maxOTPAttempts) else {
            try store.nativeFlows.end(token)
            throw tooMany
        }
        guard EmulatorStore.hash(code) == expected else {
            if attempt >= Self.maxOTPAttempts {
                try store.nativeFlows.end(token)
                throw tooMany
            }
            throw AADFailure(
                error: "invalid_grant", description: "AADSTS50181: Unable to validate the otp.", codes: [50181],
                suberror: "invalid_oob_value")
        }
    }

    /// A flow moved on under a new continuation token; a token already spent (two requests racing with one) is refused.
    func advanceFlow(_ flow: EmulatorStore.NativeFlow, replacing old: String?) throws -> String {
        var flow = flow
        // The state machine: a flow starts at a start, and moves only along its stage's `next`.
        let from = try old.flatMap { try store.nativeFlows.flow($0)?.stage }
        guard from.map({ $0.next.contains(flow.stage) }) ?? (old != nil || NativeStage.starts.contains(flow.stage)) else {
            throw AADFailure(
                error: "invalid_request",
                description: "AADSTS55114: The continuation_token was issued for another step of the flow ('\(from?.rawValue ?? "none")', "
                    + "not one that leads to '\(flow.stage.rawValue)').", codes: [55114])
        }
        if flow.journey.id == nil {
            let id = UUID().uuidString.lowercased()
            flow.journey.id = id
            store.journeys.begin(
                id, channel: "native", policy: seed.externalIdFlow?.id ?? "", clientId: flow.clientId, at: clock.now(),
                detail: ["challengeTypes": .string(flow.challengeTypes), "capabilities": JSONValue(flow.journey.capabilities)])
        }
        let user = try? store.user(oid: flow.oid)
        store.journeys.note(flow.journey.id, .step, flow.stage.rawValue, [:], user: user?.email ?? flow.journey.email)
        do { return try store.nativeFlows.advance(flow, replacing: old) } catch is EmulatorStore.NativeFlowSpent {
            throw AADFailure(error: "invalid_grant", description: "AADSTS55113: The continuation_token is not valid.", codes: [55113])
        }
    }

    /// How many codes one flow may send (the first and its resends).
    static let maxCodesSent = 6

    /// Sends a code by email (through an OnOtpSend extension too) or SMS and moves the flow to `stage` waiting for it;
    /// answers the `oob` challenge every native step uses.
    func sendCode(
        _ flow: EmulatorStore.NativeFlow, token: String, to target: String, channel: EmulatorStore.Channel, purpose: String,
        stage: NativeStage, origin: String, showTarget: Bool = false
    ) async throws -> Response {
        let now = clock.now()
        let sent = (flow.journey.codesSent ?? 0) + 1
        guard sent <= Self.maxCodesSent else {
            try store.nativeFlows.end(token)
            throw AADFailure(
                error: "invalid_grant", description: "AADSTS50196: Too many codes were requested. Start again.", codes: [50196])
        }
        let knobs = try store.mfaKnobs
        let code = knobs.fixedCode ?? Random.digits(Self.otpLength)
        if channel != .email {
            if knobs.throttled {
                throw AADFailure(
                    error: "access_denied", description: "AADSTS500222: The authentication method is blocked for now. Try later.",
                    codes: [500222], suberror: "provider_blocked_by_rep")
            }
            guard !knobs.unreachable.contains(target) else {
                throw AADFailure(
                    error: "invalid_request", description: "AADSTS901001: The verification contact \(target) cannot be reached.",
                    codes: [901001])
            }
        }
        // The token is spent and the count kept before anything is sent: racing requests with one token send one code.
        var next = flow
        next.journey.codesSent = sent
        next.stage = stage
        next.otpHash = EmulatorStore.hash(code)
        next.otpIssuedAt = now
        next.attempts = 0
        next.expiresAt = now + Self.continuationLifetime
        let t = try advanceFlow(next, replacing: token)
        if channel == .email {
            let context = CalloutContext(
                clientId: flow.clientId, language: "en", origin: origin, journeyID: next.journey.id ?? t,
                policy: seed.externalIdFlow?.id ?? "")
            do { try await sendEmailCode(to: target, purpose: purpose, code: code, now: now, tx: context) } catch let e as PageError {
                throw AADFailure(error: "server_error", description: "\(e.code ?? ""): \(e.message)", codes: [], status: 500)
            }
        } else {
            try store.outbox.send(to: target, purpose: purpose, code: code, now: now, channel: channel, journey: next.journey.id ?? t)
        }
        var body: [String: JSONValue] = [
            "challenge_type": "oob", "binding_method": "prompt", "challenge_channel": .string(channel == .email ? "email" : "sms"),
            "challenge_target_label": .string(channel == .email ? Self.obfuscate(target) : Self.obfuscatePhone(target)),
            "code_length": JSONValue(code.count), "interval": 300, "continuation_token": .string(t),
        ]
        if showTarget { body["challenge_target"] = .string(target) }
        return .json(.object(body))
    }

    static func obfuscatePhone(_ phone: String) -> String { String(repeating: "*", count: max(0, phone.count - 4)) + phone.suffix(4) }

    /// Moves the flow on to `stage` and answers its new continuation token (with `extra` beside it).
    func advance(
        _ flow: EmulatorStore.NativeFlow, token: String, to stage: NativeStage, extra: [String: JSONValue] = [:]
    ) throws -> (String, Response) {
        var next = flow
        next.stage = stage
        next.otpHash = nil
        next.expiresAt = clock.now() + Self.continuationLifetime
        let t = try advanceFlow(next, replacing: token)
        return (t, .json(.object(extra.merging(["continuation_token": .string(t)]) { _, new in new })))
    }

    /// The new password's problem as native auth names it (`password_too_short`, `password_too_long`, `password_too_weak`,
    /// `password_recently_used` for the one in place), or nil. The rules are the tenant's (those of its pages).
    func passwordRefusal(_ password: String, currentOf email: String?) throws -> AADFailure? {
        let suberror: String, text: String
        if password.count < 8 {
            (suberror, text) = ("password_too_short", "The password is too short: it needs at least 8 characters.")
        } else if password.count > 256 {
            (suberror, text) = ("password_too_long", "The password is too long: it may have at most 256 characters.")
        } else if SignUpStep.passwordProblem(password) != nil {
            (suberror, text) = (
                "password_too_weak", "The password is too weak: use three of lower case, upper case, digits and symbols."
            )
        } else if let email, try store.checkPassword(email: email, password: password) != nil {
            (suberror, text) = ("password_recently_used", "The password was used recently: choose another one.")
        } else {
            return nil
        }
        return AADFailure(error: "invalid_grant", description: "AADSTS399246: \(text)", codes: [399246], suberror: suberror)
    }

    // MARK: sign-up

    /// `/signup/v1.0/start`: the new address, the challenge types, and optionally the password and attributes at once.
    func signUpStart(_ req: Request) async throws -> Response {
        let (form, app) = try await nativeClient(req)
        let types = try challengeTypes(form["challenge_type"])
        guard let username = form["username"], !username.isEmpty else { throw aadMissing("username") }
        guard EmulatorSeed.isPlausibleEmail(username) else {
            throw AADFailure(
                error: "invalid_request", description: "AADSTS90100: The username parameter is empty or not valid.", codes: [90100])
        }
        // Sign-up proves the address with a code: a client that cannot take one goes to the browser.
        guard types.contains("oob") else { return Self.redirect("Sign-up verifies the email address with a one-time code.") }
        if try store.user(email: username) != nil {
            throw AADFailure(
                error: "user_already_exists",
                description: "AADSTS1003037: It looks like you may already have an account. Sign in instead.", codes: [1003037])
        }
        var journey = NativeJourney()
        journey.capabilities = Self.capabilities(form)
        journey.email = username
        journey.wantsPassword = types.contains("password")
        if let password = form["password"], !password.isEmpty {
            if let refusal = try passwordRefusal(password, currentOf: nil) { throw refusal }
            journey.credential = EmulatorStore.passwordCredential(password)
            journey.wantsPassword = true
        }
        if let raw = form["attributes"] { journey.attributes = try typedAttributes(raw) }
        let token = try advanceFlow(
            .init(
                clientId: app.clientId, oid: UUID().uuidString.lowercased(), stage: .signUpStarted,
                challengeTypes: types.joined(separator: " "), otpHash: nil, otpIssuedAt: nil, attempts: 0,
                expiresAt: clock.now() + Self.continuationLifetime, journey: journey), replacing: nil)
        return .json(["continuation_token": .string(token)])
    }

    /// `/signup/v1.0/challenge`: a code to the new address until it is proven, then `password` when one is still owed.
    func signUpChallenge(_ req: Request, origin: String) async throws -> Response {
        let (form, app) = try await nativeClient(req)
        let (token, flow) = try self.flow(
            form, app: app, at: [.signUpStarted, .signUpOOB, .signUpVerified, .signUpAttributes])
        let types = try form["challenge_type"].map { try challengeTypes($0) } ?? SpaceList.items(flow.challengeTypes).map(String.init)
        guard let email = flow.journey.email else { throw AADFailure(error: "invalid_request", description: "AADSTS55114", codes: [55114]) }
        if !flow.journey.verified {
            guard types.contains("oob") else { return Self.redirect("Sign-up verifies the email address with a one-time code.") }
            return try await sendCode(
                flow, token: token, to: email, channel: .email, purpose: "signup", stage: .signUpOOB, origin: origin)
        }
        guard flow.journey.wantsPassword, flow.journey.credential == nil, types.contains("password") else {
            return Self.redirect("Nothing is left to challenge in this sign-up; continue with its attributes.")
        }
        let (_, response) = try advance(flow, token: token, to: .signUpVerified, extra: ["challenge_type": "password"])
        return response
    }

    /// `/signup/v1.0/continue`: the code (`oob`), the password, or the attributes; then what is still owed, or the account.
    func signUpContinue(_ req: Request) async throws -> Response {
        let (form, app) = try await nativeClient(req)
        let (token, found) = try self.flow(
            form, app: app, at: [.signUpStarted, .signUpOOB, .signUpVerified, .signUpAttributes])
        var flow = found
        switch form["grant_type"] ?? "" {
        case "oob":
            guard flow.stage == .signUpOOB else {
                throw AADFailure(
                    error: "invalid_request", description: "AADSTS55114: No code was sent in this sign-up yet; call /challenge.",
                    codes: [55114])
            }
            try checkCode(form, token: token, flow: flow)
            flow.journey.verified = true
        case "password":
            try requireVerified(flow, token: token)
            guard let password = form["password"], !password.isEmpty else { throw aadMissing("password") }
            if let refusal = try passwordRefusal(password, currentOf: nil) { throw refusal }
            flow.journey.credential = EmulatorStore.passwordCredential(password)
        case "attributes":
            try requireVerified(flow, token: token)
            guard let raw = form["attributes"] else { throw aadMissing("attributes") }
            flow.journey.attributes.merge(try typedAttributes(raw)) { _, new in new }
        case "": throw aadMissing("grant_type")
        case let other:
            throw AADFailure(
                error: "unsupported_grant_type", description: "AADSTS70003: The grant type '\(other)' is not one of sign-up's.",
                codes: [70003])
        }
        return try signUpNext(flow, token: token)
    }

    private func requireVerified(_ flow: EmulatorStore.NativeFlow, token: String) throws {
        // The flow is left as it is (its code and tries included): the same token goes on.
        guard flow.journey.verified else {
            throw AADFailure(
                error: "verification_required", description: "AADSTS55104: The email address must be verified first.", codes: [55104],
                extra: ["continuation_token": .string(token), "unverified_attributes": [["name": "email"]]])
        }
    }

    /// After each sign-up step: the password still owed (`credential_required`), required attributes still missing
    /// (`attributes_required`, with their list), or the account made and a continuation token for `/token`.
    private func signUpNext(_ flow: EmulatorStore.NativeFlow, token: String) throws -> Response {
        if flow.journey.wantsPassword && flow.journey.credential == nil {
            let t = try advanceFlow(with(flow, stage: .signUpVerified), replacing: token)
            throw AADFailure(
                error: "credential_required", description: "AADSTS55103: A password is required to sign up.", codes: [55103],
                extra: ["continuation_token": .string(t)])
        }
        let policy = seed.externalIdFlow
        let missing = (policy?.attributes ?? []).filter { $0.required && flow.journey.attributes[$0.name] == nil }
        if !missing.isEmpty {
            let t = try advanceFlow(with(flow, stage: .signUpAttributes), replacing: token)
            throw AADFailure(
                error: "attributes_required", description: "AADSTS55106: User attributes required.", codes: [55106],
                extra: ["continuation_token": .string(t), "required_attributes": .array(missing.map(requiredAttribute))])
        }
        try createSignedUpUser(flow)
        let (_, response) = try advance(flow, token: token, to: .signedUp)
        return response
    }

    func with(_ flow: EmulatorStore.NativeFlow, stage: NativeStage) -> EmulatorStore.NativeFlow {
        var next = flow
        next.stage = stage
        next.otpHash = nil
        next.expiresAt = clock.now() + Self.continuationLifetime
        return next
    }

    private func createSignedUpUser(_ flow: EmulatorStore.NativeFlow) throws {
        guard let email = flow.journey.email else { return }
        let a = flow.journey.attributes
        // A sign-up without a password (email one-time code) gets one nobody knows: its way in is a code.
        let credential = flow.journey.credential ?? EmulatorStore.passwordCredential(Random.token(bytes: 32))
        do {
            try store.createUser(
                oid: flow.oid, email: email, credential: credential, displayName: a["displayName"]?.text ?? "",
                givenName: a["givenName"]?.text ?? "", surname: a["surname"]?.text ?? "", now: clock.now())
        } catch EmulatorStore.UserError.emailTaken {
            throw AADFailure(
                error: "user_already_exists",
                description: "AADSTS1003037: It looks like you may already have an account. Sign in instead.", codes: [1003037])
        }
        let extras = a.filter { !EmulatorSeed.Attribute.names.contains($0.key) }.mapValues(\.json)
        if !extras.isEmpty { try store.setAttributes(oid: flow.oid, extras) }
    }

    /// One entry of `required_attributes`: the wire name, its type, and for numbers the pattern a value must match.
    private func requiredAttribute(_ a: EmulatorSeed.Attribute) -> JSONValue {
        var o: [String: JSONValue] = [
            "name": .string(wireAttributeName(a.name)), "type": .string(a.kind.rawValue.lowercased()), "required": true,
            "label": .string(a.label),
        ]
        if a.kind == .int { o["options"] = ["regex": "^-?[0-9]+$"] }
        return .object(o)
    }

    /// `extension_Name` as External ID's wire spells it: `extension_<extensions app id without dashes>_Name`.
    func wireAttributeName(_ stored: String) -> String {
        guard stored.hasPrefix("extension_") else { return stored }
        let appID = seed.tenant.extensionsAppIdOrDefault.replacingOccurrences(of: "-", with: "")
        return "extension_\(appID)_" + stored.dropFirst("extension_".count)
    }

    /// The `attributes` parameter (a JSON object in a string) typed by the user flow: unknown names are ignored (as
    /// Entra does), a value of the wrong type is `attribute_validation_failed` naming it.
    func typedAttributes(_ raw: String) throws -> [String: NativeJourney.AttributeValue] {
        guard let object = (try? JSONValue.parse(Data(raw.utf8)))?.objectValue else {
            throw AADFailure(
                error: "invalid_request", description: "AADSTS90100: The attributes parameter is not a JSON object.", codes: [90100])
        }
        // The user flow's attributes, and the built-in ones it does not collect (a directory user always has them).
        let collected = seed.externalIdFlow?.attributes ?? EmulatorSeed.Attribute.defaults
        let declared =
            collected
            + EmulatorSeed.Attribute.builtIn.filter { name, _ in !collected.contains { $0.name == name } }.map {
                EmulatorSeed.Attribute(name: $0.key, label: $0.value)
            }
        var out: [String: NativeJourney.AttributeValue] = [:]
        var invalid: [String] = []
        for (wire, value) in object.sorted(by: { $0.key < $1.key }) {
            let name = storedAttributeName(wire)
            guard let a = declared.first(where: { $0.name == name }) else { continue }
            switch (a.kind, value) {
            case (.string, .string(let s)) where !s.trimmingCharacters(in: .whitespaces).isEmpty: out[name] = .string(s)
            case (.boolean, .bool(let b)): out[name] = .bool(b)
            case (.boolean, .string(let s)) where s == "true" || s == "false": out[name] = .bool(s == "true")
            case (.int, .number(let n)) where Int(exactly: n) != nil: out[name] = .int(Int(exactly: n)!)
            case (.int, .string(let s)) where Int(s) != nil: out[name] = .int(Int(s)!)
            default: invalid.append(wire)
            }
        }
        guard invalid.isEmpty else {
            throw AADFailure(
                error: "invalid_grant",
                description: "AADSTS55108: Attribute validation failed for \(invalid.joined(separator: ", ")).", codes: [55108],
                suberror: "attribute_validation_failed", extra: ["invalid_attributes": .array(invalid.map { ["name": .string($0)] })])
        }
        return out
    }

    // MARK: password reset

    /// `/resetpassword/v1.0/start`: the person's address; a code is sent on `/challenge`.
    func resetStart(_ req: Request) async throws -> Response {
        let (form, app) = try await nativeClient(req)
        let types = try challengeTypes(form["challenge_type"])
        guard let username = form["username"], !username.isEmpty else { throw aadMissing("username") }
        guard types.contains("oob") else { return Self.redirect("Password reset verifies the email address with a one-time code.") }
        let user = try knownUser(username)
        let token = try advanceFlow(
            .init(
                clientId: app.clientId, oid: user.oid, stage: .resetStarted, challengeTypes: types.joined(separator: " "),
                otpHash: nil, otpIssuedAt: nil, attempts: 0, expiresAt: clock.now() + Self.continuationLifetime,
                journey: NativeJourney(capabilities: Self.capabilities(form))), replacing: nil)
        return .json(["continuation_token": .string(token)])
    }

    /// `/resetpassword/v1.0/challenge`: a code to the person's address (again: a new code, the old one no longer works).
    func resetChallenge(_ req: Request, origin: String) async throws -> Response {
        let (form, app) = try await nativeClient(req)
        let (token, flow) = try self.flow(form, app: app, at: [.resetStarted, .resetOOB])
        guard let user = try store.user(oid: flow.oid) else { throw Self.userGone }
        return try await sendCode(
            flow, token: token, to: user.email, channel: .email, purpose: "password_reset", stage: .resetOOB, origin: origin)
    }

    /// `/resetpassword/v1.0/continue`: the code; then the new password may be submitted.
    func resetContinue(_ req: Request) async throws -> Response {
        let (form, app) = try await nativeClient(req)
        let (token, flow) = try self.flow(form, app: app, at: [.resetOOB])
        try requireOOBGrant(form, flow: "Password reset")
        try checkCode(form, token: token, flow: flow)
        let (_, response) = try advance(
            flow, token: token, to: .resetVerified, extra: ["expires_in": JSONValue(Self.continuationLifetime)])
        return response
    }

    /// `/resetpassword/v1.0/submit` (and `/complete`, the older name): the new password; the reset then completes
    /// (`poll_completion`). Setting it revokes the person's refresh tokens, as a reset on the pages does.
    func resetSubmit(_ req: Request) async throws -> Response {
        let (form, app) = try await nativeClient(req)
        let (token, flow) = try self.flow(form, app: app, at: [.resetVerified])
        guard let user = try store.user(oid: flow.oid) else { throw Self.userGone }
        guard let password = form["new_password"], !password.isEmpty else { throw aadMissing("new_password") }
        if let refusal = try passwordRefusal(password, currentOf: user.email) { throw refusal }
        // The token is spent first: of two racing submits, only the one that goes on sets its password.
        let (_, response) = try advance(flow, token: token, to: .resetPolling, extra: ["poll_interval": 1])
        try store.setPassword(oid: user.oid, password: password, now: clock.now())
        return response
    }

    /// `/resetpassword/v1.0/poll_completion`: `in_progress` the first time (so a client's polling is exercised), then
    /// `succeeded` with the continuation token that signs the person in.
    func resetPoll(_ req: Request) async throws -> Response {
        let (form, app) = try await nativeClient(req)
        let (token, found) = try self.flow(form, app: app, at: [.resetPolling])
        var flow = found
        flow.journey.polls += 1
        let done = flow.journey.polls > 1
        let (_, response) = try advance(
            flow, token: token, to: done ? .resetDone : .resetPolling, extra: ["status": done ? "succeeded" : "in_progress"])
        return response
    }
}
