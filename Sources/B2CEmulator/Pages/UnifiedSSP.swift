import Hummingbird

/// B2C's unified sign-in page (`unifiedssp`, `<div id="api" data-name="Unified">`): the local account form
/// (`#localAccountForm`, `#logonIdentifier`, `#password`, `#forgotPassword`, `#next`, `#rememberMe` with keep-me-signed-in),
/// `#createAccount` when sign-up is allowed, and the identity providers' buttons (B2C's `.social .options` with one
/// `button.accountButton` per provider, ids such as `#GoogleExchange`), each in its own form so that it posts without
/// JavaScript.
enum UnifiedSSPTemplates {
    static let unifiedSSP = [
        "signin": """
        {{<page}}{{$title}}{{t.heading}}{{/title}}{{$body}}<div id="api" data-name="Unified">
        <h1>{{t.heading}}</h1><p class="tenant">{{tenant}} · b2c emulator</p>
        {{#social}}<div class="social" role="form"><div class="intro"><h2>{{t.social_intro}}</h2></div>
        <div class="options">
        {{#providers}}{{^first()}}
        {{/first()}}<div><form id="idp_{{id}}" method="post" action="{{action.idp}}">\
        <input type="hidden" name="tx" value="{{tx}}"><input type="hidden" name="provider" value="{{id}}">\
        <button type="submit" class="accountButton{{#first()}} firstButton{{/first()}}" id="{{exchange}}">{{label}}</button>\
        </form></div>{{/providers}}
        </div></div>
        {{#local}}<div class="divider"><h2>{{t.divider_title}}</h2></div>{{/local}}{{/social}}
        {{#error}}<div class="error" id="error" role="alert">{{error}}</div>{{/error}}{{#local}}
        <form id="localAccountForm" method="post" action="{{action.signin}}">
        <input type="hidden" name="tx" value="{{tx}}">
        <div class="entry"><div class="entry-item"><label for="logonIdentifier">{{t.logonIdentifier_label}}</label>
        <input type="email" id="logonIdentifier" name="logonIdentifier" value="{{email}}" autocomplete="username" autofocus></div>
        <div class="entry-item"><label for="password">{{t.password_label}}</label>
        <input type="password" id="password" name="password" autocomplete="current-password">
        <a id="forgotPassword" href="{{link.forgot}}">{{t.forgotpassword_link}}</a></div>
        {{#kmsi}}<div class="rememberMe"><input type="checkbox" id="rememberMe" name="rememberMe" value="true">\
        <label for="rememberMe">{{t.remember_me}}</label></div>{{/kmsi}}
        <div class="buttons"><button type="submit" id="next" name="next" value="next">{{t.button_signin}}</button></div>
        </div>
        </form>{{/local}}
        <div class="links">{{#signUp}}<div class="create"><p>{{t.createaccount_intro}} \
        <a id="createAccount" href="{{link.signup}}">{{t.createaccount_one_link}}</a></p></div>{{/signUp}}\
        {{^signUp}}<span></span>{{/signUp}}<a id="cancel" href="{{link.cancel}}">{{t.cancel}}</a></div>
        </div>{{/body}}{{/page}}
        """
    ]
}

protocol UnifiedSSPPages: PageMaking {}

extension UnifiedSSPPages {
    func signInPage(
        _ tx: AuthorizeTransaction, policy: EmulatorSeed.Policy, error: String? = nil, email: String? = nil,
        headers: [(String, String)] = []
    ) -> Response {
        let local = policy.identityProviders.contains(.local)
        let providers: [[String: Any]] =
            policy.identityProviders.filter { $0 != .local }.map { ["id": $0.rawValue, "exchange": $0.exchangeID, "label": $0.label] }
            + policy.oidcProviders.map { ["id": $0.id, "exchange": $0.exchangeID, "label": $0.name] }
            + policy.samlProviders.map { ["id": $0.id, "exchange": $0.exchangeID, "label": $0.name] }
        var values: [String: Any] = [
            "local": local, "social": !providers.isEmpty, "providers": providers, "email": email ?? tx.loginHint ?? "",
            "kmsi": policy.session.kmsiDays != nil, "signUp": local && policy.kind == .signUpSignIn,
        ]
        if let error { values["error"] = error }
        return page("signin", tx, values, headers: headers)
    }
}
