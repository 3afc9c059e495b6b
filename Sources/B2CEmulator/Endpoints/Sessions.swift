import B2CProtocol
import Foundation
import Hummingbird

/// The SSO session of a browser: a cookie per tenant naming a session in the store.
struct Sessions: Sendable {
    let store: EmulatorStore
    let tenantID: String

    var cookieName: String { "x-ms-cpim-sso_\(tenantID)" }

    /// The session cookie (Hummingbird's cookie type renders it), as a `Set-Cookie` header: a browser-session cookie, or
    /// with "Keep me signed in" a persistent one that outlives the browser for `keepSeconds`.
    func cookie(_ id: String, secure: Bool, keepSeconds: Int? = nil) -> (String, String) {
        (
            "Set-Cookie",
            Cookie(name: cookieName, value: id, maxAge: keepSeconds, path: "/", secure: secure, httpOnly: true, sameSite: .lax).description
        )
    }

    func clearedCookie(secure: Bool) -> (String, String) {
        (
            "Set-Cookie",
            Cookie(
                name: cookieName, value: "", expires: Date(timeIntervalSince1970: 0), maxAge: 0, path: "/", secure: secure,
                httpOnly: true, sameSite: .lax
            ).description
        )
    }

    /// The session id the browser sent, if any.
    func id(in request: Request) -> String? { request.cookies[cookieName]?.value }

    /// The signed-in user of this browser, if its cookie names a live session.
    /// `mfa`: the session did multifactor authentication. A session past its end (on the tenant clock) is none; `for` a
    /// sign-in, one outside the policy's SSO scope (another app, another user flow, or `suppressed`) is none either, and a
    /// rolling session that answers lives on.
    func current(
        _ request: Request, for sign: (policy: EmulatorSeed.Policy, clientID: String)? = nil, now: Int
    ) throws -> (user: EmulatorStore.UserRecord, authTime: Int, mfa: Bool, claims: String?)? {
        guard let id = id(in: request), let s = try store.ssoSessions.session(id: id), let user = try store.user(oid: s.oid) else {
            return nil
        }
        if let end = s.expiresAt, end <= now { return nil }
        if let sign {
            switch sign.policy.session.scope {
            case .tenant: break
            case .application:
                guard s.clientID.map({ $0.caseInsensitiveCompare(sign.clientID) == .orderedSame }) ?? true else { return nil }
            case .policy: guard s.policy.map({ $0 == sign.policy.lowercasedID }) ?? true else { return nil }
            case .suppressed: return nil
            }
            if sign.policy.session.rolling, !s.persistent, s.expiresAt != nil {
                try store.ssoSessions.extend(id: id, until: now + sign.policy.session.lifetimeMinutes * 60)
            }
        }
        return (user, s.authTime, s.mfa, s.claims)
    }
}
