import B2CProtocol
import Foundation
import Hummingbird

/// The pages of federated sign-in: the providers' buttons on the unified page (B2C's `.social .options` with one
/// `button.accountButton` per provider, ids such as `#GoogleExchange`), the mock provider's own page, and the social
/// sign-up page (`api.socialccountsignup`) of a first-time federated person.
extension PageRenderer {
    /// The unified page's social part: a form per provider (plain HTML: the button posts without JavaScript).
    func socialButtons(_ tx: AuthorizeTransaction, policy: EmulatorSeed.Policy) -> String {
        let providers =
            policy.identityProviders.filter { $0 != .local }.map { (id: $0.rawValue, exchange: $0.exchangeID, label: $0.label) }
            + policy.oidcProviders.map { (id: $0.id, exchange: $0.exchangeID, label: $0.name) }
            + policy.samlProviders.map { (id: $0.id, exchange: $0.exchangeID, label: $0.name) }
        guard !providers.isEmpty else { return "" }
        let t = strings(tx)
        let buttons = providers.enumerated().map { i, p in
            """
            <div><form id="idp_\(HTML.escape(p.id))" method="post" action="\(HTML.escape(action(tx, "idp")))">\(hiddenTx(tx))\
            <input type="hidden" name="provider" value="\(HTML.escape(p.id))">\
            <button type="submit" class="accountButton\(i == 0 ? " firstButton" : "")" id="\(HTML.escape(p.exchange))">\(
                HTML.escape(p.label))</button></form></div>
            """
        }.joined(separator: "\n")
        let divider =
            policy.identityProviders.contains(.local) ? "<div class=\"divider\"><h2>\(HTML.escape(t["divider_title"]))</h2></div>" : ""
        return """
            <div class="social" role="form"><div class="intro"><h2>\(HTML.escape(t["social_intro"]))</h2></div>
            <div class="options">
            \(buttons)
            </div></div>
            \(divider)
            """
    }

    /// The mock provider's page: who signs in (a test types or picks the person), or Cancel.
    func mockProviderPage(_ provider: EmulatorSeed.IdentityProvider, redirectURI: String, state: String, loginHint: String?) -> Response {
        let action = "/_idp/\(provider.rawValue)/authorize"
        let hidden =
            "<input type=\"hidden\" name=\"redirect_uri\" value=\"\(HTML.escape(redirectURI))\">"
            + "<input type=\"hidden\" name=\"state\" value=\"\(HTML.escape(state))\">"
        return .html(
            page(
                title: "Sign in with \(provider.label)",
                body: """
                    <h1>Sign in with \(HTML.escape(provider.label))</h1>
                    <p class="tenant">\(HTML.escape(provider.domain)) · the local tenant's mock identity provider</p>
                    <form id="idpSignIn" method="post" action="\(HTML.escape(action))">\(hidden)
                    <input type="hidden" name="answer" value="signin">
                    <label for="email">Email</label>
                    <input type="email" id="email" name="email" value="\(HTML.escape(loginHint ?? ""))" autofocus>
                    <label for="name">Name</label><input type="text" id="name" name="name">
                    <label for="givenName">Given name</label><input type="text" id="givenName" name="givenName">
                    <label for="surname">Surname</label><input type="text" id="surname" name="surname">
                    <label for="sub">Subject (optional: derived from the email)</label><input type="text" id="sub" name="sub">
                    <button type="submit" id="next">Sign in</button>
                    </form>
                    <form id="idpCancel" method="post" action="\(HTML.escape(action))">\(hidden)
                    <input type="hidden" name="answer" value="cancel">
                    <button type="submit" id="cancel">Cancel</button></form>
                    <p class="note">Tests can queue the next answer instead: POST /_admin/idp/\(provider.rawValue)/next.</p>
                    """))
    }

    /// A first-time federated person: the claims the provider gave, to confirm or change.
    func socialSignUpPage(
        _ tx: AuthorizeTransaction, identity: FederatedIdentity, error: String? = nil, form: [String: String] = [:]
    ) -> Response {
        let t = strings(tx)
        func v(_ key: String, _ fallback: String?) -> String { HTML.escape(form[key] ?? fallback ?? "") }
        let display = identity.name ?? [identity.givenName, identity.surname].compactMap { $0 }.joined(separator: " ").nilIfEmpty
        return .html(
            page(
                title: t["social_signup_heading"],
                body: """
                    <div id="api" data-name="SelfAsserted">
                    \(header(t["social_signup_heading"]))
                    <p class="intro">Signed in with \(HTML.escape(identity.label)) as
                    <strong id="signedInAs">\(HTML.escape(identity.email))</strong>.</p>
                    \(pageLevelError(error))
                    <form id="attributeVerification" method="post" action="\(HTML.escape(action(tx, "socialsignup")))">\(hiddenTx(tx))
                    <label for="displayName">\(HTML.escape(t["displayName_label"]))</label>
                    <input type="text" id="displayName" name="displayName" value="\(v("displayName", display))">
                    <label for="givenName">\(HTML.escape(t["givenName_label"]))</label>
                    <input type="text" id="givenName" name="givenName" value="\(v("givenName", identity.givenName))">
                    <label for="surname">\(HTML.escape(t["surname_label"]))</label>
                    <input type="text" id="surname" name="surname" value="\(v("surname", identity.surname))">
                    <button type="submit" id="continue">\(HTML.escape(t["button_continue_generic"]))</button>
                    </form>
                    <div class="links"><span></span><a id="cancel" href="\(link(tx, "cancel"))">\(HTML.escape(t["cancel"]))</a></div>
                    </div>
                    """, lang: t.language))
    }
}
