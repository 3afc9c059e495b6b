import B2CProtocol
import Foundation
import Hummingbird

extension B2CEmulator {
    // MARK: /logout

    func logout(_ req: Request, _ context: EmulatorRequestContext, policy: EmulatorSeed.Policy) async throws -> Response {
        var request = req
        let q = try await request.queryAndForm()
        if let id = req.cookies[sessionCookieName()]?.value { try store.endSession(id: id) }
        let cleared = clearedSessionCookie(secure: context.isHTTPS)
        guard let target = q["post_logout_redirect_uri"], !target.isEmpty else {
            return .html(
                page(title: "Signed out", body: "<h1>You have signed out.</h1><p>You can close this window.</p>"), headers: [cleared])
        }
        let registered = seed.apps.flatMap(\.redirectUris)
        guard Self.redirectAllowed(target, registered: registered) else {
            return errorPage(
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
