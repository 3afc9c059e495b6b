import B2CProtocol
import Foundation
import Hummingbird

/// The built-in social providers, served by the tenant on its own address as mock identity providers: an authorize page
/// where a test picks or types the person (or the answer queued over the admin surface, given at once), answering with a
/// code — or an error — to the tenant's `authresp`.
struct MockIdentityProviders: Sendable {
    let store: EmulatorStore
    let clock: EmulatorClock
    let tenantName: String
    let pages: PageRenderer

    func authorize(_ req: Request, _ context: EmulatorRequestContext, name: String) async throws -> Response {
        var request = req
        let q = try await request.queryAndForm()
        guard let provider = EmulatorSeed.IdentityProvider(rawValue: name), provider != .local else {
            throw PageError(code: nil, message: "There is no identity provider '\(name)' here.", status: 404)
        }
        // Only this tenant's authresp takes the answer: the mock provider answers nobody else.
        guard let redirect = q["redirect_uri"], let state = q["state"], let u = URL(string: redirect),
            u.path.hasSuffix("/oauth2/authresp"), Self.origin(u) == context.origin
        else {
            throw PageError(code: nil, message: "The request to the identity provider names no redirect_uri of this tenant, or no state.")
        }
        var answer = try store.takeNextIdPAnswer(provider)
        if req.method == .post, q["answer"] != nil {
            answer =
                q["answer"] == "cancel"
                ? IdPAnswer(error: "access_denied", errorDescription: "The user cancelled at \(provider.label).")
                : IdPAnswer(
                    subject: q["sub"]?.nilIfEmpty, email: q["email"], name: q["name"]?.nilIfEmpty, givenName: q["givenName"]?.nilIfEmpty,
                    surname: q["surname"]?.nilIfEmpty)
        }
        guard let answer else {
            return pages.mockProviderPage(provider, redirectURI: redirect, state: state, loginHint: q["login_hint"])
        }
        return try respond(answer, provider: provider, redirectURI: redirect, state: state)
    }

    private func respond(_ a: IdPAnswer, provider: EmulatorSeed.IdentityProvider, redirectURI: String, state: String) throws -> Response {
        var params = [("state", state)]
        let now = clock.now()
        if let error = a.error {
            params += [("error", error), ("error_description", a.errorDescription ?? error)]
            store.requests.log(
                .init(at: now, endpoint: "idp", grantType: provider.rawValue, policy: "", clientId: "", oid: nil, outcome: error))
        } else {
            guard let email = a.email, EmulatorSeed.isPlausibleEmail(email) else {
                throw PageError(code: nil, message: "The identity provider needs the person's email address.")
            }
            let identity = FederatedIdentity(
                provider: provider, subject: a.subject ?? EmulatorStore.derivedGUID("\(provider.rawValue):\(email.lowercased())"),
                email: email, name: a.name, givenName: a.givenName, surname: a.surname)
            let code = Random.token(bytes: 24)
            try store.saveIdPCode(code, identity, now: now)
            params.append(("code", code))
            store.requests.log(
                .init(at: now, endpoint: "idp", grantType: provider.rawValue, policy: "", clientId: "", oid: nil, outcome: "ok"))
        }
        return HTML.autoPostPage(to: redirectURI, params, goingBackTo: "back to the tenant")
    }
}

extension MockIdentityProviders {
    /// `scheme://host[:port]` of a URL, as a request's origin names it.
    static func origin(_ u: URL) -> String {
        let host = (u.host ?? "").contains(":") ? "[\(u.host ?? "")]" : (u.host ?? "")
        return "\(u.scheme ?? "")://\(host)" + (u.port.map { ":\($0)" } ?? "")
    }
}
