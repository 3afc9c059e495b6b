import B2CProtocol
import Foundation
import Hummingbird

/// Entra External ID's device authorization grant (RFC 8628), as `az login --use-device-code` and MSAL's device flow use
/// it: `POST /{tenant}/oauth2/v2.0/devicecode` gives a device code and a code for the person; at the verification page
/// (`/{tenant}/devicelogin`) the person types it and then signs in through the tenant's usual journey; the device polls
/// the token endpoint (`authorization_pending`, `slow_down`, `expired_token`, `authorization_declined`) until the tokens
/// come. B2C has no such grant: a policy's endpoints refuse it with B2C's `AADB2C90086`.
struct DeviceAuthorization: TenantPart {
    let seed: EmulatorSeed
    let store: EmulatorStore
    let clock: EmulatorClock
    let pages: PageRenderer

    /// Entra's: 15 minutes to sign in, a poll every 5 seconds.
    static let lifetime = 900
    static let interval = 5
    static let grantType = "urn:ietf:params:oauth:grant-type:device_code"

    static func refusedOnB2C() -> OAuthFailure {
        OAuthFailure(
            error: "unsupported_grant_type", code: "AADB2C90086",
            message: "The supplied grant_type [\(grantType)] is not supported. (Azure AD B2C has no device authorization grant.)")
    }

    /// The verification page's address, and where its journey comes back.
    static func verificationURI(_ origin: String, tenant: String) -> String { "\(origin)/\(tenant)/devicelogin" }
    static func completionURI(_ origin: String, tenant: String) -> String { "\(origin)/\(tenant)/devicelogin/complete" }

    /// `POST …/oauth2/v2.0/devicecode`: `client_id` and `scope`.
    func start(_ req: Request, _ context: EmulatorRequestContext, authority: AuthorityRef) async throws -> Response {
        guard seed.tenant.externalId, authority.implicitFlow else { throw Self.refusedOnB2C() }
        var request = req
        let form = try await request.formParameters()
        guard let clientId = form["client_id"], !clientId.isEmpty else {
            throw AADFailure(
                error: "invalid_request", description: "AADSTS900144: The request body must contain the parameter: 'client_id'.",
                codes: [900144])
        }
        guard let app = seed.app(clientId: clientId) else {
            let (code, message) = seed.unregisteredApp(clientId)
            throw AADFailure(error: "unauthorized_client", description: "\(code): \(message)", codes: [700016])
        }
        guard app.redirects.contains(where: { $0.type == .publicClient }) || app.nativeAuth else {
            throw AADFailure(
                error: "invalid_client",
                description: "AADSTS7000218: The request body must contain the parameter: 'client_assertion' or 'client_secret'. "
                    + "(The device code flow is for public clients: allow public client flows for '\(app.name)'.)",
                codes: [7000218])
        }
        let scope = form["scope"] ?? "openid"
        let deviceCode = Random.token(bytes: 32)
        let letters = Array("BCDFGHJKLMNPQRSTVWXZ")
        let userCode = String((0..<9).map { _ in letters.randomElement()! })
        let now = clock.now()
        let verifier = PKCE().verifier
        let flow = EmulatorStore.DeviceFlow(
            clientId: app.clientId, scope: scope, userCode: userCode, createdAt: now, expiresAt: now + Self.lifetime,
            interval: Self.interval,
            verifier: verifier, redirectUri: Self.completionURI(context.origin, tenant: authority.tenantSegment))
        try store.saveDeviceFlow(deviceCode: deviceCode, flow)
        let uri = Self.verificationURI(context.origin, tenant: authority.tenantSegment)
        return .json(
            [
                "device_code": .string(deviceCode), "user_code": .string(userCode), "verification_uri": .string(uri),
                "expires_in": JSONValue(Self.lifetime), "interval": JSONValue(Self.interval),
                "message": .string("To sign in, use a web browser to open the page \(uri) and enter the code \(userCode) to authenticate."),
            ], headers: [("Cache-Control", "no-store")])
    }

    /// `GET`/`POST …/devicelogin`: the page; a typed code starts the journey (or declines the sign-in).
    func page(_ req: Request, _ context: EmulatorRequestContext, authority: AuthorityRef) async throws -> Response {
        guard seed.tenant.externalId else { throw Self.refusedOnB2C() }
        let action = "/\(authority.tenantSegment)/devicelogin"
        guard req.method == .post else { return pages.deviceLoginPage(formAction: action) }
        var request = req
        let form = try await request.formParameters()
        let typed = (form["otc"] ?? "").uppercased().filter { $0.isLetter || $0.isNumber }
        guard let (hash, found) = try store.deviceFlow(userCode: typed), found.status == .pending else {
            return pages.deviceLoginPage(formAction: action, error: "That code wasn't found. Check the code on your device and try again.")
        }
        var flow = found
        guard clock.now() < flow.expiresAt else {
            return pages.deviceLoginPage(formAction: action, error: "That code has expired. Start again on your device.")
        }
        if form["answer"] == "decline" {
            flow.status = .declined
            try store.updateDeviceFlow(hash: hash, flow)
            return pages.deviceDonePage(heading: "Sign-in cancelled", text: "The device will not be signed in. You can close this window.")
        }
        // The tenant's usual journey, for the device's app and scopes, coming back to the page's completion.
        let params = [
            "client_id": flow.clientId, "response_type": "code", "redirect_uri": flow.redirectUri, "scope": flow.scope, "state": typed,
            "code_challenge": PKCE.s256Challenge(for: flow.verifier), "code_challenge_method": "S256", "prompt": "login",
        ]
        return Response(
            status: .found,
            headers: [.location: "/\(authority.tenantSegment)/oauth2/v2.0/authorize?" + FormEncoding.encode(params)])
    }

    /// `GET …/devicelogin/complete?code=…&state=<user code>`: the journey's answer; the device's next poll gets tokens.
    func complete(_ req: Request) throws -> Response {
        let q = (try? req.queryParameters()) ?? [:]
        guard let state = q["state"], let (hash, found) = try store.deviceFlow(userCode: state), found.status == .pending else {
            return pages.deviceDonePage(heading: "Sign-in not found", text: "Start again on your device.", status: 400)
        }
        var flow = found
        guard let code = q["code"], clock.now() < flow.expiresAt else {
            flow.status = .declined
            try store.updateDeviceFlow(hash: hash, flow)
            return pages.deviceDonePage(heading: "Sign-in cancelled", text: "The device will not be signed in. You can close this window.")
        }
        flow.code = code
        flow.status = .approved
        try store.updateDeviceFlow(hash: hash, flow)
        return pages.deviceDonePage(
            heading: "You're signed in", text: "You have signed in on your device. You can close this window.", signedIn: true)
    }
}

extension TokenEndpoint {
    /// The device's poll: pending, too fast, expired, declined — or the code its journey ended with, redeemed as any code.
    func redeemDeviceCode(
        _ caller: Caller, policy: EmulatorSeed.Policy, authority: AuthorityRef, origin: String, log: inout EmulatorStore.LogEntry
    ) async throws -> Response {
        guard seed.tenant.externalId, authority.implicitFlow else { throw DeviceAuthorization.refusedOnB2C() }
        guard let deviceCode = caller.form["device_code"], !deviceCode.isEmpty else { throw missing("device_code") }
        guard let (hash, found) = try store.deviceFlow(deviceCode: deviceCode), found.clientId == caller.app.clientId else {
            throw AADFailure(
                error: "invalid_grant", description: "AADSTS70000: The provided value for the 'device_code' is not valid.", codes: [70000])
        }
        var flow = found
        let now = clock.now()
        if flow.status == .redeemed {
            throw AADFailure(error: "invalid_grant", description: "AADSTS70000: The device code was already used.", codes: [70000])
        }
        if flow.status == .declined {
            throw AADFailure(
                error: "authorization_declined", description: "AADSTS70000: The user declined to sign in on the device.", codes: [70000])
        }
        guard now < flow.expiresAt else {
            throw AADFailure(error: "expired_token", description: "AADSTS70019: Verification code expired.", codes: [70019])
        }
        if flow.status == .pending {
            let tooSoon = flow.lastPoll.map { now - $0 < flow.interval } ?? false
            flow.lastPoll = now
            try store.updateDeviceFlow(hash: hash, flow)
            if tooSoon {
                throw AADFailure(
                    error: "slow_down", description: "AADSTS70016: Polling faster than the interval; wait longer.", codes: [70016])
            }
            throw AADFailure(
                error: "authorization_pending",
                description: "AADSTS70016: OAuth 2.0 device flow error. Authorization is pending. Continue polling.", codes: [70016])
        }
        flow.status = .redeemed
        try store.updateDeviceFlow(hash: hash, flow)
        var redemption = caller
        redemption.form = [
            "grant_type": "authorization_code", "client_id": flow.clientId, "code": flow.code ?? "", "redirect_uri": flow.redirectUri,
            "code_verifier": flow.verifier, "scope": caller.form["scope"] ?? flow.scope,
        ]
        if let info = caller.form["client_info"] { redemption.form["client_info"] = info }
        return try await redeemCode(redemption, policy: policy, origin: origin, log: &log)
    }
}
