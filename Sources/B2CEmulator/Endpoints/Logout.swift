import B2CProtocol
import Foundation
import Hummingbird

/// End-session: the SSO session ends, and the browser goes back to a registered URI with its state.
struct LogoutEndpoint: TenantPart {
    let seed: EmulatorSeed
    let store: EmulatorStore
    let sessions: Sessions
    let pages: PageRenderer

    // MARK: /logout

    func logout(_ req: Request, _ context: EmulatorRequestContext, policy: EmulatorSeed.Policy) async throws -> Response {
        var request = req
        let q = try await request.queryAndForm()
        if let id = sessions.id(in: req) { try store.ssoSessions.end(id: id) }
        let cleared = sessions.clearedCookie(secure: context.isHTTPS)
        guard let target = q["post_logout_redirect_uri"], !target.isEmpty else {
            return pages.signedOutPage(headers: [cleared])
        }
        let registered = seed.apps.flatMap(\.redirectUris)
        guard AuthorizeEndpoint.redirectAllowed(target, registered: registered) else {
            return pages.errorPage(
                PageError(
                    code: "AADB2C90006",
                    message:
                        "The post logout redirect URI '\(target)' is not registered for any application of this tenant. Your session has "
                        + "ended."
                ),
                headers: [cleared])
        }
        var location = target
        if let state = q["state"] { location += (target.contains("?") ? "&" : "?") + FormEncoding.encode([("state", state)]) }
        return .redirect(location, headers: [cleared])
    }
}
