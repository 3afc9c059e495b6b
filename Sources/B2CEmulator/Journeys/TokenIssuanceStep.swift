import B2CProtocol
import Foundation
import Hummingbird

/// The last step of every browser journey, the one place where tokens and the SSO session are made: the code and the
/// implicit tokens with the claims the callouts before it added, the session (keep me signed in), and the answer to the
/// app.
struct TokenIssuanceStep: OrchestrationStep {
    let parts: JourneyParts

    /// The user is known: issue a code (and/or implicit tokens), keep the SSO session, go back to the app.
    func enter(_ tx: AuthorizeTransaction, _ visit: Visit, policy: EmulatorSeed.Policy) async throws -> StepOutcome {
        guard let app = seed.app(clientId: tx.clientId) else {
            throw PageError(code: nil, message: "The tenant configuration changed during sign-in; start again from your app.")
        }
        let user = try DirectoryReadStep(parts: parts).user(tx, visit)
        let c = tx.claims
        let (authTime, newUser, newSession, mfa) = (c.authTime ?? clock.now(), c.newUser, c.newSession, c.mfaDone)
        let (extraClaims, secure) = (c.extraClaims, visit.secure)
        store.journeys.note(
            tx.id, .claims, "token issuance",
            [
                "oid": .string(user.oid), "email": .string(user.email), "name": .string(user.displayName), "newUser": .bool(newUser),
                "idp": .string(user.idp ?? "local"), "mfa": .bool(mfa), "extraClaims": .object(extraClaims),
            ], user: user.email)
        let now = clock.now()
        var headers: [(String, String)] = []
        if newSession {
            // "Keep me signed in" (local accounts): a persistent session of the policy's days; else the browser's own, for the
            // policy's lifetime on the tenant clock.
            let keep = tx.rememberMe && user.idp == nil ? policy.session.kmsiDays.map { $0 * 86_400 } : nil
            let sessionID = try store.ssoSessions.create(
                oid: user.oid, now: now, mfa: mfa, expiresAt: now + (keep ?? policy.session.lifetimeMinutes * 60), persistent: keep != nil,
                clientID: app.clientId, policy: policy.id,
                claims: c.sessionClaims.flatMap { try? String(decoding: JSONEncoder().encode($0), as: UTF8.self) })
            headers.append(sessions.cookie(sessionID, secure: secure, keepSeconds: keep))
        }
        try store.deleteTransaction(id: tx.id)
        let scopes: TokenIssuer.Scopes
        do { scopes = try issuer.resolveScopes(tx.scope, app: app) } catch {
            return .respond(redirectError(tx.reply, error, headers: headers))
        }
        var params: [(String, String)] = []
        var code: String?
        if tx.responseType.contains("code") {
            let newCode = Random.token(bytes: 32)
            code = newCode
            try store.codes.save(
                newCode,
                .init(
                    clientId: app.clientId, redirectUri: tx.redirectUri, policy: policy.lowercasedID,
                    scopes: tx.scope, nonce: tx.nonce, challenge: tx.codeChallenge,
                    challengeMethod: tx.codeChallengeMethod, oid: user.oid, authTime: authTime,
                    newUser: newUser, createdAt: now, redeemedAt: nil, grantId: UUID().uuidString.lowercased(),
                    redirectType: tx.redirectType, idpAccessToken: tx.idpAccessToken, extraClaims: extraClaims))
            params.append(("code", newCode))
        }
        if tx.responseType.contains("token") || tx.responseType.contains("id_token") {
            params += try await frontChannelTokens(
                tx, user: user, authTime: authTime, newUser: newUser, policy: policy, app: app, scopes: scopes,
                code: code, extraClaims: extraClaims)
        }
        if let state = tx.state { params.append(("state", state)) }
        if tx.clientInfo { params.append(("client_info", ClientInfo(uid: "\(user.oid)-\(policy.lowercasedID)", utid: tenantID).encoded)) }
        return .respond(sendReply(tx.reply, params, headers: headers))
    }

    /// The tokens of an implicit or hybrid answer, as B2C sends them (reference §3.2): `code id_token` carries the id token
    /// (with `c_hash`) and no `token_type` or `scope`; an access token comes with `token_type`, `expires_in` and `scope`, and
    /// the id token beside it carries `at_hash`.
    private func frontChannelTokens(
        _ tx: AuthorizeTransaction, user: EmulatorStore.UserRecord, authTime: Int, newUser: Bool, policy: EmulatorSeed.Policy,
        app: EmulatorSeed.App, scopes: TokenIssuer.Scopes, code: String?, extraClaims: [String: JSONValue]
    ) async throws -> [(String, String)] {
        var implicitScopes = scopes
        implicitScopes.offlineAccess = false
        if !tx.responseType.contains("token") { implicitScopes.resourceAppId = nil }
        if !tx.responseType.contains("id_token") { implicitScopes.openid = false }
        let issued = try await issuer.issue(
            Issuance(
                user: user, policy: policy, app: app, scopes: implicitScopes, nonce: tx.nonce, authTime: authTime, newUser: newUser,
                origin: tx.origin, code: code, idpAccessToken: tx.idpAccessToken, extraClaims: extraClaims))
        let keys = issued.accessToken == nil ? ["id_token"] : ["access_token", "token_type", "expires_in", "scope", "id_token"]
        return keys.compactMap { key in issued.body[key].map { (key, $0.stringValue ?? $0.serialized()) } }
    }
}
