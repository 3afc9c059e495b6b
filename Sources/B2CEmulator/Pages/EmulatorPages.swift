import Hummingbird

/// The emulator's own pages, which B2C does not have: the tenant's index, the mock identity providers' sign-in page, the
/// signed-out page, and the page that posts an answer on (`form_post` to the app, a SAML request to a provider, a mock
/// provider's answer to the tenant).
enum EmulatorPageTemplates {
    static let emulatorPages = [
        "index": """
        {{<page}}{{$title}}b2c emulator{{/title}}{{$body}}<h1>b2c emulator</h1>
        <p>Tenant <code>{{tenant}}</code> (<code>{{tenantID}}</code>) at <code>{{origin}}</code>.</p>
        <ul>{{#policies}}<li><code>{{id}}</code> ({{kind}}) — \
        <a href="/{{tenant}}/{{path}}/v2.0/.well-known/openid-configuration">discovery</a></li>{{/policies}}</ul>
        <p>Sample API: <code>GET /hello</code>. Admin (loopback only): <code>/_admin</code>.</p>{{/body}}{{/page}}
        """,
        // A mock provider: who signs in (a test types or picks the person), or Cancel.
        "mockidp": """
        {{<page}}{{$title}}Sign in with {{provider}}{{/title}}{{$body}}<h1>Sign in with {{provider}}</h1>
        <p class="tenant">{{domain}} · the local tenant's mock identity provider</p>
        <form id="idpSignIn" method="post" action="{{formAction}}">\
        <input type="hidden" name="redirect_uri" value="{{redirectURI}}"><input type="hidden" name="state" value="{{state}}">
        <input type="hidden" name="answer" value="signin">
        <label for="email">Email</label>
        <input type="email" id="email" name="email" value="{{loginHint}}" autofocus>
        <label for="name">Name</label><input type="text" id="name" name="name">
        <label for="givenName">Given name</label><input type="text" id="givenName" name="givenName">
        <label for="surname">Surname</label><input type="text" id="surname" name="surname">
        <label for="sub">Subject (optional: derived from the email)</label><input type="text" id="sub" name="sub">
        <button type="submit" id="next">Sign in</button>
        </form>
        <form id="idpCancel" method="post" action="{{formAction}}">\
        <input type="hidden" name="redirect_uri" value="{{redirectURI}}"><input type="hidden" name="state" value="{{state}}">
        <input type="hidden" name="answer" value="cancel">
        <button type="submit" id="cancel">Cancel</button></form>
        <p class="note">Tests can queue the next answer instead: POST /_admin/idp/{{name}}/next.</p>{{/body}}{{/page}}
        """,
        // The device authorization grant's verification page: the code the device shows, then the tenant's usual journey.
        "devicelogin": """
        {{<page}}{{$title}}Enter code{{/title}}{{$body}}<h1>Enter code</h1>
        <p>Enter the code shown on your device to sign in to it.</p>
        {{#error}}<div class="error pageLevel" role="alert"><p>{{error}}</p></div>{{/error}}
        <form id="deviceCode" method="post" action="{{formAction}}">
        <label for="otc">Code</label><input type="text" id="otc" name="otc" autocomplete="off" autofocus>
        <button type="submit" id="next" name="answer" value="next">Next</button>
        <button type="submit" id="decline" name="answer" value="decline">Cancel sign-in on that device</button>
        </form>{{/body}}{{/page}}
        """,
        "devicedone": """
        {{<page}}{{$title}}{{heading}}{{/title}}{{$body}}<h1 id="deviceDone" data-outcome="{{outcome}}">{{heading}}</h1>
        <p>{{text}}</p>{{/body}}{{/page}}
        """,
        "signedout": """
        {{<page}}{{$title}}Signed out{{/title}}{{$body}}<h1>You have signed out.</h1><p>You can close this window.</p>{{/body}}{{/page}}
        """,
        // The script is the one the Content-Security-Policy allows by its hash; without script, Continue posts the form.
        "autopost": """
        <!DOCTYPE html><html><head><title>Working...</title></head><body>
        <form method="post" name="hiddenform" action="{{action}}">
        {{#fields}}{{^first()}}
        {{/first()}}<input type="hidden" name="{{name}}" value="{{value}}">{{/fields}}
        <noscript><p>Script is disabled. Click Continue to go {{destination}}.</p></noscript>
        <button type="submit" id="continue">Continue</button>
        </form>
        <script>\(HTML.autoSubmitScript)</script>
        </body></html>
        """,
    ]
}

protocol EmulatorOwnPages: PageMaking {}

extension EmulatorOwnPages {
    /// The tenant's index: its policies, each with its discovery document.
    func indexPage(tenantID: String, origin: String) -> Response {
        let policies = seed.policies.map { ["id": $0.id, "kind": $0.kind.rawValue, "path": $0.lowercasedID] }
        let values: [String: Any] = ["lang": "en", "tenant": tenantName, "tenantID": tenantID, "origin": origin, "policies": policies]
        return .html(PageTemplates.render("index", values))
    }

    func mockProviderPage(_ provider: EmulatorSeed.IdentityProvider, redirectURI: String, state: String, loginHint: String?) -> Response {
        let values = [
            "lang": "en", "provider": provider.label, "domain": provider.domain, "name": provider.rawValue,
            "formAction": "/_idp/\(provider.rawValue)/authorize", "redirectURI": redirectURI, "state": state, "loginHint": loginHint ?? "",
        ]
        return .html(PageTemplates.render("mockidp", values))
    }

    /// The device authorization grant's verification page (an error says why the last code was refused).
    func deviceLoginPage(formAction: String, error: String? = nil) -> Response {
        var values: [String: Any] = ["lang": "en", "formAction": formAction]
        if let error { values["error"] = error }
        return .html(PageTemplates.render("devicelogin", values))
    }

    /// What the person sees after a device sign-in: done, declined, or too late.
    func deviceDonePage(heading: String, text: String, status: Int = 200, signedIn: Bool = false) -> Response {
        let values = ["lang": "en", "heading": heading, "text": text, "outcome": signedIn ? "signedin" : "stopped"]
        var response = Response.html(PageTemplates.render("devicedone", values))
        response.status = .init(code: status)
        return response
    }

    func signedOutPage(headers: [(String, String)] = []) -> Response {
        .html(PageTemplates.render("signedout", ["lang": "en"]), headers: headers)
    }
}

extension HTML {
    /// A page that posts `fields` to `action` at once (and shows a Continue button where script is off).
    static func autoPostPage(
        to action: String, _ fields: [(String, String)], goingBackTo destination: String, headers: [(String, String)] = []
    ) -> Response {
        let values: [String: Any] = [
            "action": action, "fields": fields.map { ["name": $0.0, "value": $0.1] }, "destination": destination,
        ]
        return .html(PageTemplates.render("autopost", values), headers: headers)
    }
}
