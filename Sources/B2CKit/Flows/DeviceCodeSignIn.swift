import Foundation

/// What a person must do to finish a device-code sign-in: open the page and type the code.
public struct DeviceCodePrompt: Sendable {
    public var userCode: String
    public var verificationURI: String
    public var expiresIn: Int
    /// The tenant's own words for it.
    public var message: String
}

/// Entra External ID's device authorization grant (RFC 8628): a code for the person to type at the tenant's page (on any
/// device), while this one polls the token endpoint at the interval given (longer after `slow_down`) until the tokens
/// come, the code expires, or the person declines. Azure AD B2C has no such grant: a B2C configuration is refused before
/// anything is sent. Cancelling (Ctrl-C) stores nothing.
struct DeviceCodeSignIn: Flow {
    let context: FlowContext
    var sleep: @Sendable (Int) async throws -> Void = { try await Task.sleep(nanoseconds: UInt64($0) * 1_000_000_000) }

    func run(scopes: [String], show: @Sendable (DeviceCodePrompt) -> Void) async throws -> Account {
        guard let authority = config.externalIdAuthority else {
            throw B2CError(
                .usage,
                "device-code sign-in is Entra External ID's; Azure AD B2C has none (its policies refuse the grant, AADB2C90086). Sign "
                    + "in without a local browser with --no-browser (the address to open elsewhere, and the one to paste back)")
        }
        try store.prepareForTokens()
        let meta = try await metadata.metadata(for: authority, now: clock())
        let deviceEndpoint = authority.endpoint("oauth2/v2.0/devicecode")
        let scope = ScopeSet.userRequest(scopes)
        let r: HTTPResult
        do { r = try await transport.postForm(deviceEndpoint, [("client_id", config.clientID), ("scope", scope)]) } catch let e
            as NetworkError
        {
            throw B2CError(e)
        }
        guard r.status == 200, let json = try? JSONValue.parse(r.body), let deviceCode = json["device_code"]?.stringValue,
            let userCode = json["user_code"]?.stringValue, let uri = json["verification_uri"]?.stringValue
        else {
            let said = OAuthError.parse(status: r.status, r.body).map { "\($0.error): \($0.errorDescription ?? "")" } ?? "HTTP \(r.status)"
            throw B2CError(r.status >= 500 ? .network : .failed, "the tenant refused to start a device-code sign-in: \(said)")
        }
        let expiresIn = json["expires_in"]?.lenientInt ?? 900
        var interval = max(1, json["interval"]?.lenientInt ?? 5)
        show(
            DeviceCodePrompt(
                userCode: userCode, verificationURI: uri, expiresIn: expiresIn,
                message: json["message"]?.stringValue ?? "Open \(uri) and enter the code \(userCode)."))
        let deadline = clock() + expiresIn
        while true {
            do { try await sleep(interval) } catch {
                throw B2CError(.cancelled, "cancelled: the device-code sign-in was stopped; nothing was stored")
            }
            guard clock() < deadline + interval else {
                throw B2CError(.failed, "the code \(userCode) expired before anyone signed in with it; run the sign-in again")
            }
            let response: TokenResponse
            do {
                response = try await endpoint.redeem(
                    .deviceCode(clientID: config.clientID, deviceCode: deviceCode, scope: scope), at: meta.tokenEndpoint)
            } catch TokenEndpointError.refused(let oauth, _) where ["authorization_pending", "slow_down"].contains(oauth.error) {
                if oauth.error == "slow_down" { interval += 5 }
                continue
            } catch TokenEndpointError.refused(let oauth, _) where oauth.error == "expired_token" {
                throw B2CError(.failed, "the code \(userCode) expired before anyone signed in with it; run the sign-in again")
            } catch TokenEndpointError.refused(let oauth, _) where oauth.error == "authorization_declined" {
                throw B2CError(.cancelled, "the sign-in was declined at \(uri); nothing was stored")
            } catch let failure as TokenEndpointError {
                let context = TenantCodes.Refusal(
                    config: config, policy: authority.policy, loginHint: nil, code: "", answer: "", tenantMessage: "",
                    grant: .deviceCode(clientID: config.clientID, deviceCode: deviceCode, scope: scope))
                throw TenantCodes.error(failure, context)
            }
            let set = try await tokenSets.tokenSet(
                response, authority: authority, metadata: meta, nonce: nil, requestedResource: scopes, now: clock())
            try store.save(set, makeCurrent: true, now: clock())
            return set.account
        }
    }
}

extension B2CClient {
    /// Signs a person in with the device authorization grant (External ID): `show` is told the code and the page to type it
    /// at; the account is stored like any sign-in's.
    public func signInWithDeviceCode(scopes: [String], show: @escaping @Sendable (DeviceCodePrompt) -> Void) async throws -> Account {
        try await DeviceCodeSignIn(context: context).run(scopes: scopes, show: show)
    }
}
