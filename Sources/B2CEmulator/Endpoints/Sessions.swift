import B2CProtocol
import Foundation
import Hummingbird

/// The SSO session of a browser: a cookie per tenant naming a session in the store.
struct Sessions: Sendable {
    let store: EmulatorStore
    let tenantID: String

    var cookieName: String { "x-ms-cpim-sso_\(tenantID)" }

    /// The session cookie (Hummingbird's cookie type renders it), as a `Set-Cookie` header.
    func cookie(_ id: String, secure: Bool) -> (String, String) {
        ("Set-Cookie", Cookie(name: cookieName, value: id, path: "/", secure: secure, httpOnly: true, sameSite: .lax).description)
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
    /// `mfa`: the session did multifactor authentication.
    func current(_ request: Request) throws -> (user: EmulatorStore.UserRecord, authTime: Int, mfa: Bool)? {
        guard let id = id(in: request), let s = try store.session(id: id), let user = try store.user(oid: s.oid) else { return nil }
        return (user, s.authTime, s.mfa)
    }
}
