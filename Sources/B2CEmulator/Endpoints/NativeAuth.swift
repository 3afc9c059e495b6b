import B2CProtocol
import Foundation
import Hummingbird

/// Entra External ID native authentication: `/oauth2/v2.0/initiate`, `/challenge`, `/token` with
/// continuation tokens, email one-time codes and passwords, and AAD-style errors.
struct NativeAuthEndpoint: JourneyCallouts {
    let seed: EmulatorSeed
    let store: EmulatorStore
    let clock: EmulatorClock
    let issuer: TokenIssuer

    /// Continuation tokens and one-time codes live 10 minutes.
    static let continuationLifetime = 600
    static let otpLength = 8
    static let maxOTPAttempts = 5

    func aadMissing(_ name: String) -> AADFailure {
        AADFailure(
            error: "invalid_request", description: "AADSTS900144: The request body must contain the following parameter: '\(name)'.",
            codes: [900144])
    }

    func nativeClient(_ req: Request) async throws -> ([String: String], EmulatorSeed.App) {
        guard req.method == .post else {
            throw AADFailure(
                error: "invalid_request", description: "AADSTS900561: The endpoint only accepts POST requests.", codes: [900561],
                status: 405)
        }
        let form: [String: String]
        var request = req
        do { form = try await request.formParameters() } catch let f as OAuthFailure {
            throw AADFailure(error: "invalid_request", description: "AADSTS900144: \(f.message)", codes: [900144])
        }
        guard let clientId = form["client_id"], !clientId.isEmpty else { throw aadMissing("client_id") }
        guard let app = seed.app(clientId: clientId) else {
            // Native authentication speaks Entra's words on either kind of tenant.
            var unknown = seed
            unknown.tenant.externalId = true
            let (code, message) = unknown.unregisteredApp(clientId)
            throw AADFailure(error: "unauthorized_client", description: "\(code): \(message)", codes: [700016])
        }
        guard app.nativeAuth else {
            throw AADFailure(
                error: "unauthorized_client",
                description: "AADSTS500207: Native authentication is not enabled for the application '\(clientId)'.", codes: [500207])
        }
        return (form, app)
    }

    func challengeTypes(_ raw: String?) throws -> [String] {
        guard let raw, !raw.isEmpty else { throw aadMissing("challenge_type") }
        let types = SpaceList.items(raw).map(String.init)
        for t in types where !["oob", "password", "redirect"].contains(t) {
            throw AADFailure(
                error: "unsupported_challenge_type",
                description: "AADSTS55102: The challenge type '\(t)' is not supported. Supported types are oob, password and redirect.",
                codes: [55102])
        }
        guard types.contains("redirect") else {
            throw AADFailure(
                error: "invalid_request",
                description: "AADSTS901007: The challenge_type list parameter does not include the 'redirect' type.", codes: [901007])
        }
        return types
    }

    func flow(_ form: [String: String], app: EmulatorSeed.App) throws -> (String, EmulatorStore.NativeFlow) {
        guard let token = form["continuation_token"], !token.isEmpty else { throw aadMissing("continuation_token") }
        guard let flow = try store.nativeFlows.flow(token), flow.clientId == app.clientId else {
            throw AADFailure(error: "invalid_grant", description: "AADSTS55113: The continuation_token is not valid.", codes: [55113])
        }
        guard clock.now() < flow.expiresAt else {
            try store.nativeFlows.end(token)
            throw AADFailure(error: "expired_token", description: "AADSTS55112: The continuation_token is expired.", codes: [552003])
        }
        return (token, flow)
    }

    static func obfuscate(_ email: String) -> String {
        let parts = email.split(separator: "@", maxSplits: 1).map(String.init)
        guard parts.count == 2 else { return "***" }
        let local = parts[0].count <= 2 ? String(parts[0].prefix(1)) + "***" : "\(parts[0].first!)***\(parts[0].last!)"
        let labels = parts[1].split(separator: ".").map(String.init)
        let masked = labels.enumerated().map { i, label in
            i == labels.count - 1 ? label : String(label.prefix(2)) + String(repeating: "*", count: max(0, label.count - 2))
        }
        return local + "@" + masked.joined(separator: ".")
    }

    func initiate(_ req: Request) async throws -> Response {
        let (form, app) = try await nativeClient(req)
        let types = try challengeTypes(form["challenge_type"])
        guard let username = form["username"], !username.isEmpty else { throw aadMissing("username") }
        if !types.contains("oob") && !types.contains("password") {
            return .json(["challenge_type": "redirect", "redirect_reason": "The client supports only the web-based flow."])
        }
        let user = try knownUser(username)
        let token = try advanceFlow(
            .init(
                clientId: app.clientId, oid: user.oid, stage: .initiated,
                challengeTypes: types.joined(separator: " "), otpHash: nil, otpIssuedAt: nil,
                attempts: 0, expiresAt: clock.now() + Self.continuationLifetime,
                journey: NativeJourney(capabilities: Self.capabilities(form))), replacing: nil)
        return .json(["continuation_token": .string(token)])
    }

    /// Picks the challenge the user flow's sign-in method asks: a password, or an emailed code. Calling it again
    /// in the code stage sends a new code and invalidates the previous one (resend). After `mfa_required` it challenges
    /// the chosen second factor instead.
    func challenge(_ req: Request, origin: String) async throws -> Response {
        let (form, app) = try await nativeClient(req)
        let (token, flow) = try self.flow(form, app: app)
        if flow.stage == .mfa || flow.stage == .mfaOOB { return try await mfaChallenge(form, token: token, flow: flow, origin: origin) }
        guard [.initiated, .password, .oob].contains(flow.stage) else {
            throw AADFailure(
                error: "invalid_request",
                description: "AADSTS55114: The continuation_token was issued for another step ('\(flow.stage.rawValue)').",
                codes: [55114])
        }
        let types = try form["challenge_type"].map { try challengeTypes($0) } ?? SpaceList.items(flow.challengeTypes).map(String.init)
        guard let user = try store.user(oid: flow.oid) else {
            throw AADFailure(
                error: "user_not_found", description: "AADSTS50034: The user account does not exist in the \(tenantName) directory.",
                codes: [50034])
        }
        // The user flow's sign-in method decides the first factor: a password, or a code by email — never a code to a
        // password account of an "Email with password" flow (the code alone would be a weaker first factor).
        let byCode = seed.nativeAuthFlow?.signInMethod == .emailOtp
        if !byCode && types.contains("password") {
            // A second factor or its registration the client did not say it can handle: the browser has to do it.
            if try lacksCapability(flow, user: user) {
                try store.nativeFlows.end(token)
                return Self.redirect(
                    "This sign-in needs a second factor; the client did not announce mfa_required or registration_required.")
            }
            var next = flow
            next.stage = .password
            let t = try advanceFlow(next, replacing: token)
            return .json(["challenge_type": "password", "continuation_token": .string(t)])
        }
        if byCode && types.contains("oob") {
            var next = flow
            next.journey.firstFactorByEmail = true
            if try lacksCapability(next, user: user) {
                try store.nativeFlows.end(token)
                return Self.redirect(
                    "This sign-in needs a second factor; the client did not announce mfa_required or registration_required.")
            }
            return try await sendCode(
                next, token: token, to: user.email, channel: .email, purpose: "native_signin", stage: .oob, origin: origin)
        }
        return .json(["challenge_type": "redirect", "redirect_reason": "No challenge type the client supports can be used for this user."])
    }

    /// In an External ID tenant the one token endpoint serves native authentication too: its grants carry a
    /// continuation token (the grant type alone does not tell: `password` is also ROPC's). The body stays readable.
    static func isNativeGrant(_ req: inout Request) async -> Bool {
        guard req.method == .post, let form = try? await req.formParameters() else { return false }
        return form["continuation_token"] != nil
    }

    /// `/oauth2/v2.0/token` without a policy: native-auth grants and native refresh tokens.
    func token(_ req: Request, _ context: EmulatorRequestContext, authority: AuthorityRef) async throws -> Response {
        let (form, app) = try await nativeClient(req)
        let grantType = form["grant_type"] ?? ""
        var entry = EmulatorStore.LogEntry(
            at: clock.now(), endpoint: "native-token", grantType: grantType, policy: "",
            clientId: app.clientId, oid: nil, outcome: "ok")
        do {
            let out = try await nativeGrant(grantType, form: form, app: app, origin: authority.origin, log: &entry)
            store.requests.log(entry)
            return out
        } catch let f as AADFailure {
            entry.outcome = f.suberror ?? f.error
            store.requests.log(entry)
            throw f
        }
    }

    private func nativeScopes(_ form: [String: String], app: EmulatorSeed.App) throws -> TokenIssuer.Scopes {
        do {
            var s = try issuer.resolveScopes(form["scope"] ?? "openid offline_access", app: app)
            s.openid = true
            if s.resourceAppId == nil { s.resourceAppId = app.clientId; s.fullScopes = [app.clientId] }
            return s
        } catch {
            throw AADFailure(error: "invalid_scope", description: "AADSTS70011: \(error.message)", codes: [70011])
        }
    }

    /// The native-auth grants: those that spend a continuation token (password, oob, mfa_oob, continuation_token), and the
    /// refresh token's.
    private func nativeGrant(
        _ grantType: String, form: [String: String], app: EmulatorSeed.App, origin: String,
        log: inout EmulatorStore.LogEntry
    ) async throws -> Response {
        switch grantType {
        case "password", "oob", "mfa_oob", "continuation_token":
            let (token, flow) = try self.flow(form, app: app)
            log.oid = flow.oid
            guard flow.stage.grants.contains(grantType) else {
                throw AADFailure(
                    error: "invalid_request",
                    description:
                        "AADSTS55114: The continuation_token was not issued for the '\(grantType)' grant ('\(flow.stage.rawValue)').",
                    codes: [55114])
            }
            guard let user = try store.user(oid: flow.oid) else { throw Self.userGone }
            let callout = CalloutContext(
                clientId: app.clientId, language: "en", origin: origin, journeyID: flow.journey.id ?? token,
                policy: seed.externalIdFlow?.id ?? "")
            try await prove(grantType, form: form, flow: flow, token: token, user: user, callout: callout)
            guard try store.nativeFlows.spend(token) else {
                throw AADFailure(error: "invalid_grant", description: "AADSTS55113: The continuation_token is not valid.", codes: [55113])
            }
            return try await issueTokens(flow, user: user, app: app, form: form, callout: callout, grantType: grantType)
        case "refresh_token":
            return try await refresh(form: form, app: app, origin: origin, log: &log)
        case "": throw aadMissing("grant_type")
        default:
            throw AADFailure(
                error: "unsupported_grant_type",
                description: "AADSTS70003: The app requested an unsupported grant type '\(grantType)'.", codes: [70003])
        }
    }

    /// What the grant proves: the password or the emailed code as the first factor, the second factor's code, or (with the
    /// continuation token alone) the sign-up or reset just finished.
    private func prove(
        _ grantType: String, form: [String: String], flow: EmulatorStore.NativeFlow, token: String, user: EmulatorStore.UserRecord,
        callout: CalloutContext
    ) async throws {
        switch grantType {
        case "password":
            guard let password = form["password"], !password.isEmpty else { throw aadMissing("password") }
            try await checkPassword(password, flow: flow, user: user, callout: callout)
            try afterFirstFactor(flow, token: token, user: user)
        case "oob":
            try checkCode(form, token: token, flow: flow)
            try afterFirstFactor(flow, token: token, user: user)
        case "mfa_oob": try checkCode(form, token: token, flow: flow)
        // A sign-up or a reset proved the mailbox (and set a password), not a second factor: the same rule as after every
        // other first factor.
        case _ where flow.stage == .signedUp || flow.stage == .resetDone:
            var proven = flow
            if flow.stage == .signedUp && flow.journey.credential == nil { proven.journey.firstFactorByEmail = true }
            try afterFirstFactor(proven, token: token, user: user)
        default: break
        }
    }

    /// The password, checked where every typed password is (`submitPassword`, with just-in-time migration), its refusals
    /// in Entra's codes.
    private func checkPassword(
        _ password: String, flow: EmulatorStore.NativeFlow, user: EmulatorStore.UserRecord, callout: CalloutContext
    ) async throws {
        switch try await submitPassword(user.email, password, tx: callout) {
        case .user(let known) where AccountRule.passwordChangeDue(known, policy: nil, externalId: true):
            // Graph's forceChangePasswordNextSignIn: native authentication has no page to choose one, as for UpdatePassword.
            throw AADFailure(
                error: "invalid_grant",
                description: "AADSTS50055: The password is expired (an administrator asked for a new one at the next sign-in); reset it.",
                codes: [50055], suberror: "password_expired")
        case .user: return
        case .disabled: throw AccountRule.nativeRefusal
        case .noUser, .wrongPassword:
            store.journeys.note(flow.journey.id, .decision, "password refused", ["why": "it does not match"], user: user.email)
            throw AADFailure(
                error: "invalid_grant",
                description: "AADSTS901007: Error validating credentials due to invalid username or password.", codes: [50126])
        case .mustChangePassword:
            // Microsoft's known issue: native authentication answers an error here, not the reset flow.
            throw AADFailure(
                error: "invalid_grant",
                description: "AADSTS50055: The password is expired (the migration function asked for a new one); reset it.",
                codes: [50055], suberror: "password_expired")
        case .blocked(let title, let message):
            throw AADFailure(error: "access_denied", description: "AADSTS50053: \(title). \(message)", codes: [50053])
        case .failed(let failure):
            throw AADFailure(
                error: "server_error", description: "AADSTS\(failure.code): \(failure.name). \(failure.detail)", codes: [failure.code])
        }
    }

    /// The tokens of a finished native journey: OnTokenIssuanceStart first, as for a browser sign-in of the same app (a
    /// failure mints no token), then the recorder's last entries.
    private func issueTokens(
        _ flow: EmulatorStore.NativeFlow, user: EmulatorStore.UserRecord, app: EmulatorSeed.App, form: [String: String],
        callout: CalloutContext, grantType: String
    ) async throws -> Response {
        let extraClaims: [String: JSONValue]
        switch await tokenIssuanceClaims(callout, user: user) {
        case .success(let claims): extraClaims = claims
        case .failure(let f):
            throw AADFailure(error: "server_error", description: "AADSTS\(f.code): \(f.pageError.message)", codes: [f.code], status: 500)
        }
        let issued = try await issuer.issue(
            Issuance(
                user: user, policy: nil, app: app, scopes: try nativeScopes(form, app: app), authTime: clock.now(), origin: callout.origin,
                clientInfo: TokenIssuer.wantsClientInfo(form), extraClaims: extraClaims))
        store.journeys.note(
            flow.journey.id, .claims, "token issuance",
            [
                "oid": .string(user.oid), "email": .string(user.email), "name": .string(user.displayName),
                "extraClaims": .object(extraClaims),
            ],
            user: user.email)
        store.journeys.end(flow.journey.id, outcome: "tokens", ["grant": .string(grantType)])
        return issuer.tokenResponse(issued)
    }

    /// The refresh grant, its refusals in Entra's codes.
    private func refresh(
        form: [String: String], app: EmulatorSeed.App, origin: String, log: inout EmulatorStore.LogEntry
    ) async throws -> Response {
        guard let rt = form["refresh_token"], !rt.isEmpty else { throw aadMissing("refresh_token") }
        let record: EmulatorStore.RefreshRecord, user: EmulatorStore.UserRecord
        do { (record, user) = try issuer.checkRefreshToken(rt, app: app, policy: nil) } catch let f as OAuthFailure {
            let codes = ["AADB2C90080": 700082, "AADB2C90129": 50173, "AADB2C90128": 50034][f.code] ?? 9002313
            throw AADFailure(
                error: f.code == "AADB2C90080" ? "expired_refresh_token" : "invalid_grant",
                description: "AADSTS\(codes): \(f.message)", codes: [codes])
        }
        log.oid = user.oid
        return try await issuer.refreshed(
            record, user: user, policy: nil, app: app, scopes: try nativeScopes(form, app: app), form: form, origin: origin)
    }
}

extension NativeAuthEndpoint {
    // MARK: helpers

    /// The user of a native flow's `username`, or `user_not_found` (AAD's 50034).
    func knownUser(_ username: String) throws -> EmulatorStore.UserRecord {
        guard let user = try store.user(email: username) else {
            throw AADFailure(
                error: "user_not_found",
                description: "AADSTS50034: The user account \(Self.obfuscate(username)) does not exist in the \(tenantName) directory.",
                codes: [50034])
        }
        return user
    }

    /// A `/continue` that takes the code alone: `grant_type=oob`.
    func requireOOBGrant(_ form: [String: String], flow name: String) throws {
        guard form["grant_type"] == "oob" else {
            throw form["grant_type"] == nil
                ? aadMissing("grant_type")
                : AADFailure(error: "unsupported_grant_type", description: "AADSTS70003: \(name) continues with 'oob'.", codes: [70003])
        }
    }

    static func capabilities(_ form: [String: String]) -> [String] {
        SpaceList.items(form["capabilities"] ?? "").map(String.init).filter {
            ["mfa_required", "registration_required"].contains($0)
        }
    }

    static func redirect(_ reason: String) -> Response { .json(["challenge_type": "redirect", "redirect_reason": .string(reason)]) }

    static let userGone = AADFailure(
        error: "user_not_found", description: "AADSTS50034: The user account does not exist in the directory.", codes: [50034])
}
