import B2CProtocol
import Foundation
import Hummingbird

/// Native authentication's second factor (reference: b2c-journeys.md §9): after every first factor the same rule as the
/// browser's (`afterFirstFactor`), then the registered method's code (`/oauth2/v2.0/introspect`, `challenge`, the
/// `mfa_oob` grant) or the just-in-time registration of one (`/register/v1.0/*`).
extension NativeAuthEndpoint {
    // MARK: MFA and registration

    /// A strong-authentication method of a user: its stable id, channel and address or number.
    struct StrongMethod {
        var id: String
        var channel: String
        var target: String

        var json: JSONValue {
            [
                "id": .string(id), "challenge_type": "oob", "challenge_channel": .string(channel),
                "login_hint": .string(
                    channel == "email" ? NativeAuthEndpoint.obfuscate(target) : NativeAuthEndpoint.obfuscatePhone(target)),
            ]
        }
    }

    enum MFANeed { case none, methods([StrongMethod]), registration }

    /// The channels the External ID user flow allows as a second factor (email, sms; email when it names none) — without
    /// email when a code by email was the first factor, which External ID does not take twice.
    func mfaChannels(_ journey: NativeJourney) -> [String] {
        let methods = seed.externalIdFlow?.mfa?.methods ?? [.email]
        return methods.compactMap { $0 == .email ? "email" : $0 == .phone ? "sms" : nil }.filter {
            !($0 == "email" && journey.firstFactorByEmail == true)
        }
    }

    /// Whether this sign-in needs a second factor after its first — the browser's rule (`SecondFactorRule`) — and with which
    /// of the user's registered methods.
    func mfaNeed(_ user: EmulatorStore.UserRecord, _ journey: NativeJourney) throws -> MFANeed {
        let mfaChannels = mfaChannels(journey)
        let state = try store.mfaState(oid: user.oid)
        guard SecondFactorRule.required(seed.externalIdFlow?.mfa?.enforcement, state) != nil else { return .none }
        var methods: [StrongMethod] = []
        if mfaChannels.contains("email"), let email = state.mfaEmail {
            methods.append(
                .init(id: EmulatorStore.derivedGUID("mfa:email:\(user.oid):\(email.lowercased())"), channel: "email", target: email))
        }
        if mfaChannels.contains("sms"), state.phoneEnrolled, let phone = state.phone {
            methods.append(.init(id: EmulatorStore.derivedGUID("mfa:sms:\(user.oid):\(phone)"), channel: "sms", target: phone))
        }
        return methods.isEmpty ? .registration : .methods(methods)
    }

    /// After every first factor — a right password, a code sign-in, a sign-up or a reset: tokens, or `mfa_required` /
    /// `registration_required` with the continuation token the next steps take (a client that did not announce it can
    /// take them: refused, to the browser). The one place the second-factor rule of native sign-in lives.
    func afterFirstFactor(_ flow: EmulatorStore.NativeFlow, token: String, user: EmulatorStore.UserRecord) throws {
        if try lacksCapability(flow, user: user) {
            try store.nativeFlows.end(token)
            throw AADFailure(
                error: "invalid_grant",
                description: "AADSTS50076: A second factor is required and the client did not announce it can take one; sign in in "
                    + "the browser.", codes: [50076])
        }
        let need = try mfaNeed(user, flow.journey)
        let (decision, why): (String, JSONValue) =
            switch need {
            case .none: ("MFA not asked", "neither the user flow nor the user asks for a second factor")
            case .methods: ("MFA asked", "a second factor is required, by a method the user registered")
            case .registration: ("MFA asked", "a second factor is required, and the user has no method registered")
            }
        store.journeys.note(flow.journey.id, .decision, decision, ["why": why], user: user.email)
        switch need {
        case .none: return
        case .methods:
            let t = try advanceFlow(with(flow, stage: .mfa), replacing: token)
            throw AADFailure(
                error: "invalid_grant",
                description: "AADSTS50076: Due to a configuration change made by your administrator, or because you moved to a new "
                    + "location, you must use multi-factor authentication to access this application.", codes: [50076],
                suberror: "mfa_required", extra: ["continuation_token": .string(t)])
        case .registration:
            let t = try advanceFlow(with(flow, stage: .register), replacing: token)
            throw AADFailure(
                error: "invalid_grant",
                description: "AADSTS50079: You must register a strong authentication method (email or phone) to sign in.",
                codes: [50079], suberror: "registration_required", extra: ["continuation_token": .string(t)])
        }
    }

    /// Whether a client that did not announce what the user's sign-in will need must go to the browser instead.
    func lacksCapability(_ flow: EmulatorStore.NativeFlow, user: EmulatorStore.UserRecord) throws -> Bool {
        switch try mfaNeed(user, flow.journey) {
        case .none: false
        case .methods: !flow.journey.capabilities.contains("mfa_required")
        case .registration: !flow.journey.capabilities.contains("registration_required")
        }
    }

    /// `/oauth2/v2.0/introspect`: the user's registered second factors after `mfa_required`.
    func introspect(_ req: Request) async throws -> Response {
        let (form, app) = try await nativeClient(req)
        let (token, flow) = try self.flow(form, app: app, at: [.mfa, .mfaOOB])
        guard let user = try store.user(oid: flow.oid) else { throw Self.userGone }
        guard case .methods(let methods) = try mfaNeed(user, flow.journey) else {
            throw AADFailure(
                error: "invalid_request", description: "AADSTS55114: No second factor is asked of this sign-in.", codes: [55114])
        }
        let (_, response) = try advance(flow, token: token, to: .mfa, extra: ["methods": .array(methods.map(\.json))])
        return response
    }

    /// `/oauth2/v2.0/challenge` after `mfa_required`: a code by the chosen method (`id` from introspect).
    func mfaChallenge(
        _ form: [String: String], token: String, flow: EmulatorStore.NativeFlow, origin: String
    ) async throws -> Response {
        guard let id = form["id"], !id.isEmpty else { throw aadMissing("id") }
        guard let user = try store.user(oid: flow.oid) else { throw Self.userGone }
        guard case .methods(let methods) = try mfaNeed(user, flow.journey), let method = methods.first(where: { $0.id == id }) else {
            throw AADFailure(
                error: "invalid_request", description: "AADSTS55110: The method id '\(id)' is not one of this user's (see /introspect).",
                codes: [55110])
        }
        var next = flow
        next.journey.methodID = method.id
        return try await sendCode(
            next, token: token, to: method.target, channel: method.channel == "sms" ? .sms : .email, purpose: "mfa", stage: .mfaOOB,
            origin: origin)
    }

    /// `/register/v1.0/introspect`: the methods the user may register (the user flow's channels).
    func registerIntrospect(_ req: Request) async throws -> Response {
        let (form, app) = try await nativeClient(req)
        let (token, flow) = try self.flow(form, app: app, at: [.register, .registerOOB])
        guard let user = try store.user(oid: flow.oid) else { throw Self.userGone }
        let mfaChannels = mfaChannels(flow.journey)
        let methods: [JSONValue] = mfaChannels.map { channel in
            var m: [String: JSONValue] = ["id": .string(channel), "challenge_type": "oob", "challenge_channel": .string(channel)]
            if channel == "email" { m["login_hint"] = .string(Self.obfuscate(user.email)) }
            return .object(m)
        }
        let (_, response) = try advance(flow, token: token, to: .register, extra: ["methods": .array(methods)])
        return response
    }

    /// `/register/v1.0/challenge`: the address or number to register. The person's own sign-in address is already proven
    /// (`preverified`, no code); another gets a code.
    func registerChallenge(_ req: Request, origin: String) async throws -> Response {
        let (form, app) = try await nativeClient(req)
        let (token, found) = try self.flow(form, app: app, at: [.register, .registerOOB])
        var flow = found
        guard let user = try store.user(oid: flow.oid) else { throw Self.userGone }
        let channel = form["challenge_channel"] ?? "email"
        guard let target = form["challenge_target"]?.trimmingCharacters(in: .whitespaces), !target.isEmpty else {
            throw aadMissing("challenge_target")
        }
        let mfaChannels = mfaChannels(flow.journey)
        guard mfaChannels.contains(channel) else {
            throw AADFailure(
                error: "invalid_request",
                description:
                    "AADSTS901001: The channel '\(channel)' cannot be registered here; use \(mfaChannels.joined(separator: " or ")).",
                codes: [901001])
        }
        guard channel == "email" ? EmulatorSeed.isPlausibleEmail(target) : EmulatorSeed.isE164(target) else {
            let kind = channel == "email" ? "an email address" : "a phone number in E.164 form"
            throw AADFailure(
                error: "invalid_request", description: "AADSTS901001: The verification contact '\(target)' is not \(kind).",
                codes: [901001])
        }
        flow.journey.channel = channel
        flow.journey.target = target
        if channel == "email" && target.caseInsensitiveCompare(user.email) == .orderedSame {
            try store.setMFAEmail(oid: user.oid, target)
            let (_, response) = try advance(flow, token: token, to: .registered, extra: ["challenge_type": "preverified"])
            return response
        }
        return try await sendCode(
            flow, token: token, to: target, channel: channel == "sms" ? .sms : .email, purpose: "mfa", stage: .registerOOB,
            origin: origin, showTarget: true)
    }

    /// `/register/v1.0/continue`: the code sent to the new method; the method is registered and the sign-in may finish.
    func registerContinue(_ req: Request) async throws -> Response {
        let (form, app) = try await nativeClient(req)
        let (token, flow) = try self.flow(form, app: app, at: [.registerOOB])
        try requireOOBGrant(form, flow: "Registration")
        try checkCode(form, token: token, flow: flow)
        guard let target = flow.journey.target else { throw Self.userGone }
        if flow.journey.channel == "sms" {
            try store.setPhone(oid: flow.oid, target, enrolled: true)
        } else {
            try store.setMFAEmail(oid: flow.oid, target)
        }
        let (_, response) = try advance(flow, token: token, to: .registered)
        return response
    }
}
