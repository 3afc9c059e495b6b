import B2CProtocol
import Hummingbird

/// B2C's self-asserted pages (`selfasserted`, `<div id="api" data-name="SelfAsserted">`, form `#attributeVerification`):
/// local sign-up with its email verification, social sign-up, profile edit, password reset, and an API connector's block
/// page. Attributes use their claim ids as element ids and field names (`#givenName`, `#extension_Age`). A server message
/// (a validation error, an API connector's `userMessage`) goes in B2C's page-level slot, `#claimVerificationServerError`,
/// around the emulator's `#error`.
enum SelfAssertedTemplates {
    static let selfAsserted = [
        // Sign-up: B2C's email verification beside `#email`, classic (`email_ver_*`) or as its display control
        // (`emailVerificationControl_but_*`, code in `#verificationCode`). Each button posts the one form with a `step`.
        "signup": """
        {{<page}}{{$title}}{{t.signup_heading}}{{/title}}{{$body}}<div id="api" data-name="SelfAsserted">
        <h1>{{t.signup_heading}}</h1><p class="tenant">{{tenant}} · b2c emulator</p>
        {{#error}}<div class="error pageLevel" id="claimVerificationServerError" aria-hidden="false">\
        <div class="error" id="error" role="alert">{{error}}</div></div>{{/error}}
        <form id="attributeVerification" method="post" action="{{action.signup}}">
        <input type="hidden" name="tx" value="{{tx}}">
        <div id="attributeList"><ul>
        <li class="email_li"><div class="attrEntry"><label for="email">{{t.email_label}}</label>
        <input type="email" id="email" name="email" value="{{email}}" autocomplete="email"{{#verified}} readonly{{/verified}}>
        {{#widget}}<div class="buttons verify">{{/widget}}\
        {{#classicSend}}<button type="submit" name="step" value="send" id="email_ver_but_send" formnovalidate class="sendButton">\
        {{t.ver_but_send}}</button>{{/classicSend}}\
        {{#classicSent}}<div id="email_info" class="verificationInfoText">{{t.ver_info_msg}}</div>
        <label id="email_ver_input_label" for="email_ver_input">{{t.ver_input}}</label><input type="text" id="email_ver_input" \
        name="email_ver_input" maxlength="6" inputmode="numeric" autocomplete="one-time-code">
        <button type="submit" name="step" value="verify" id="email_ver_but_verify" formnovalidate class="verifyButton">\
        {{t.ver_but_verify}}</button>
        <button type="submit" name="step" value="send" id="email_ver_but_resend" formnovalidate class="sendButton">\
        {{t.ver_but_resend}}</button>{{/classicSent}}\
        {{#classicVerified}}<div id="email_success" class="verificationSuccessText">{{t.ver_success_msg}}</div>
        <button type="submit" name="step" value="edit" id="email_ver_but_edit" formnovalidate class="editButton">\
        {{t.ver_but_edit}}</button>{{/classicVerified}}\
        {{#controlSend}}<div class="verificationControlContent">
        <button type="submit" name="step" value="send" id="emailVerificationControl_but_send_code" formnovalidate class="sendCode">\
        {{t.verification_control_but_send_code}}</button>
        </div>{{/controlSend}}\
        {{#controlSent}}<div class="verificationControlContent">
        <div class="verificationInfoText">{{t.verification_control_code_sent}}</div>
        <label id="verificationCode_label" for="verificationCode">{{t.ver_input}}</label><input type="text" id="verificationCode" \
        name="verificationCode" maxlength="6" inputmode="numeric" autocomplete="one-time-code">
        <button type="submit" name="step" value="verify" id="emailVerificationControl_but_verify_code" formnovalidate \
        class="verifyCode">{{t.verification_control_but_verify_code}}</button>
        <button type="submit" name="step" value="send" id="emailVerificationControl_but_send_new_code" formnovalidate \
        class="sendNewCode">{{t.verification_control_but_send_new_code}}</button>
        </div>{{/controlSent}}\
        {{#controlVerified}}<div class="verificationControlContent">
        <div id="emailVerificationControl_success_message" class="verificationSuccessText">{{t.ver_success_msg}}</div>
        <button type="submit" name="step" value="edit" id="emailVerificationControl_but_change_claims" formnovalidate \
        class="changeClaims">{{t.verification_control_but_change_claims}}</button>
        </div>{{/controlVerified}}\
        {{#widget}}</div>{{/widget}}</div></li>
        <li class="newPassword_li"><div class="attrEntry"><label for="newPassword">{{t.newPassword_label}}</label>
        <input type="password" id="newPassword" name="newPassword" autocomplete="new-password"></div></li>
        <li class="reenterPassword_li"><div class="attrEntry"><label for="reenterPassword">{{t.reenterPassword_label}}</label>
        <input type="password" id="reenterPassword" name="reenterPassword" autocomplete="new-password"></div></li>
        {{#attributes}}{{^first()}}
        {{/first()}}{{>attribute}}{{/attributes}}
        </ul></div>
        <div class="buttons"><button type="submit" name="step" value="create" id="continue">{{t.button_continue}}</button></div>
        </form>
        <div class="links"><span></span><a id="cancel" href="{{link.cancel}}">{{t.cancel}}</a></div>
        <p class="note">{{t.password_help}}</p>
        </div>{{/body}}{{/page}}
        """,
        "socialsignup": """
        {{<page}}{{$title}}{{t.social_signup_heading}}{{/title}}{{$body}}<div id="api" data-name="SelfAsserted">
        <h1>{{t.social_signup_heading}}</h1><p class="tenant">{{tenant}} · b2c emulator</p>
        <p class="intro">Signed in with {{provider}} as
        <strong id="signedInAs">{{signedInAs}}</strong>.</p>
        {{#error}}<div class="error pageLevel" id="claimVerificationServerError" aria-hidden="false">\
        <div class="error" id="error" role="alert">{{error}}</div></div>{{/error}}
        <form id="attributeVerification" method="post" action="{{action.socialsignup}}"><input type="hidden" name="tx" value="{{tx}}">
        <label for="displayName">{{t.displayName_label}}</label>
        <input type="text" id="displayName" name="displayName" value="{{displayName}}">
        <label for="givenName">{{t.givenName_label}}</label>
        <input type="text" id="givenName" name="givenName" value="{{givenName}}">
        <label for="surname">{{t.surname_label}}</label>
        <input type="text" id="surname" name="surname" value="{{surname}}">
        <button type="submit" id="continue">{{t.button_continue_generic}}</button>
        </form>
        <div class="links"><span></span><a id="cancel" href="{{link.cancel}}">{{t.cancel}}</a></div>
        </div>{{/body}}{{/page}}
        """,
        "profile": """
        {{<page}}{{$title}}{{t.profile_title}}{{/title}}{{$body}}\
        <h1>{{t.profile_heading}}</h1><p class="tenant">{{tenant}} · b2c emulator</p>
        <p>{{t.signed_in_as}} <strong id="signedInAs">{{signedInAs}}</strong></p>
        {{#error}}<div class="error" id="error" role="alert">{{error}}</div>{{/error}}
        <form id="attributeVerification" method="post" action="{{action.profile}}">
        <input type="hidden" name="tx" value="{{tx}}">
        <label for="displayName">{{t.displayName_label}}</label>\
        <input type="text" id="displayName" name="displayName" value="{{displayName}}">
        <label for="givenName">{{t.givenName_label}}</label><input type="text" id="givenName" name="givenName" value="{{givenName}}">
        <label for="surname">{{t.surname_label}}</label><input type="text" id="surname" name="surname" value="{{surname}}">
        <ul>{{#attributes}}{{^first()}}
        {{/first()}}{{>attribute}}{{/attributes}}</ul>
        <button type="submit" id="continue" name="continue" value="continue">{{t.button_continue_generic}}</button>
        </form>
        <div class="links"><span></span><a id="cancel" href="{{link.cancel}}">{{t.cancel}}</a></div>{{/body}}{{/page}}
        """,
        "reset": """
        {{<page}}{{$title}}{{t.reset_title}}{{/title}}{{$body}}\
        <h1>{{t.reset_heading}}</h1><p class="tenant">{{tenant}} · b2c emulator</p>
        {{#error}}<div class="error" id="error" role="alert">{{error}}</div>{{/error}}
        <form id="attributeVerification" method="post" action="{{action.reset}}">
        <input type="hidden" name="tx" value="{{tx}}">
        <label for="email">{{t.email_label}}</label>
        <input type="email" id="email" name="email" value="{{email}}"
        autocomplete="email">
        <button type="submit" id="sendCode" name="sendCode" value="sendCode">{{t.ver_but_send}}</button>
        </form>
        <div class="links"><span></span><a id="cancel" href="{{link.cancel}}">{{t.cancel}}</a></div>{{/body}}{{/page}}
        """,
        "resetverify": """
        {{<page}}{{$title}}{{t.reset_title}}{{/title}}{{$body}}\
        <h1>{{t.reset_heading}}</h1><p class="tenant">{{tenant}} · b2c emulator</p>
        <p>{{t.reset_code_sent}} <strong id="codeSentTo">{{email}}</strong>.
        {{t.reset_outbox_note}} (<code>GET /_admin/outbox</code>).</p>
        {{#error}}<div class="error" id="error" role="alert">{{error}}</div>{{/error}}
        <form id="attributeVerification" method="post" action="{{action.resetverify}}">
        <input type="hidden" name="tx" value="{{tx}}">
        <label for="verificationCode">{{t.ver_input}}</label>
        <input type="text" id="verificationCode" name="verificationCode" autocomplete="one-time-code" inputmode="numeric">
        {{>newPassword}}
        <button type="submit" id="continue" name="continue" value="continue">{{t.button_continue_generic}}</button>
        </form>
        <div class="links"><a id="resendCode" href="{{link.resend}}">{{t.resend_code}}</a>
        <a id="cancel" href="{{link.cancel}}">{{t.cancel}}</a></div>{{/body}}{{/page}}
        """,
        // A new password an administrator asked for (forceChangePasswordNextSignIn), after the sign-in page.
        "passwordchange": """
        {{<page}}{{$title}}{{t.password_change_title}}{{/title}}{{$body}}<div id="api" data-name="SelfAsserted">
        <h1>{{t.password_change_heading}}</h1><p class="tenant">{{tenant}} · b2c emulator</p>
        <p class="intro" id="passwordChangeIntro">{{t.password_change_intro}}</p>
        {{#error}}<div class="error pageLevel" id="claimVerificationServerError" aria-hidden="false">\
        <div class="error" id="error" role="alert">{{error}}</div></div>{{/error}}
        <form id="attributeVerification" method="post" action="{{action.passwordchange}}">
        <input type="hidden" name="tx" value="{{tx}}">
        {{>newPassword}}
        <button type="submit" id="continue" name="continue" value="continue">{{t.button_continue_generic}}</button>
        </form>
        <div class="links"><span></span><a id="cancel" href="{{link.cancel}}">{{t.cancel}}</a></div>
        <p class="note">{{t.password_help}}</p>
        </div>{{/body}}{{/page}}
        """,
        // An API connector's `ShowBlockPage`: its message and no way on.
        "blocked": """
        {{<page}}{{$title}}Blocked{{/title}}{{$body}}<h1>{{t.signup_heading}}</h1><p class="tenant">{{tenant}} · b2c emulator</p>
        <div class="error pageLevel" id="claimVerificationServerError" role="alert" aria-hidden="false">{{message}}</div>{{/body}}{{/page}}
        """,
    ]
}

protocol SelfAssertedPages: PageMaking {}

extension SelfAssertedPages {
    /// The local sign-up page, built from the user flow's attributes, with the email verification the flow asks for.
    func signUpPage(_ tx: AuthorizeTransaction, policy: EmulatorSeed.Policy, error: String? = nil, form: [String: String] = [:]) -> Response
    {
        let verified = tx.verifiedEmail != nil && tx.verifiedEmail?.lowercased() == (form["email"] ?? tx.verifiedEmail)?.lowercased()
        let sent = tx.signUpCodeHash != nil && !verified
        let state = verified ? "Verified" : sent ? "Sent" : "Send"
        var values: [String: Any] = [
            "email": form["email"] ?? "", "verified": verified, "widget": policy.emailVerification != .off,
            "attributes": attributeItems(policy.attributes, values: form, strings: strings(tx)),
        ]
        switch policy.emailVerification {
        case .off: break
        case .classic: values["classic\(state)"] = true
        case .displayControl: values["control\(state)"] = true
        }
        if let error { values["error"] = error }
        return page("signup", tx, values)
    }

    /// The `attribute` template's items: claim id, label (the language's, else the flow's), kind, value (a checkbox is
    /// checked for "true").
    func attributeItems(_ list: [EmulatorSeed.Attribute], values: [String: String], strings t: PageStrings) -> [[String: Any]] {
        list.map { a in
            let translated = t["\(a.name)_label"]
            return [
                "name": a.name, "label": a.isCustom || translated == "\(a.name)_label" ? a.label : translated,
                "value": values[a.name] ?? "", "required": a.required, "checked": values[a.name] == "true",
                "checkbox": a.kind == .boolean, "number": a.kind == .int, "text": a.kind == .string,
            ]
        }
    }

    /// A first-time federated person: the claims the provider gave, to confirm or change.
    func socialSignUpPage(
        _ tx: AuthorizeTransaction, identity: FederatedIdentity, error: String? = nil, form: [String: String] = [:]
    ) -> Response {
        let display = identity.name ?? [identity.givenName, identity.surname].compactMap { $0 }.joined(separator: " ").nilIfEmpty
        var values: [String: Any] = [
            "provider": identity.label, "signedInAs": identity.email, "displayName": form["displayName"] ?? display ?? "",
            "givenName": form["givenName"] ?? identity.givenName ?? "", "surname": form["surname"] ?? identity.surname ?? "",
        ]
        if let error { values["error"] = error }
        return page("socialsignup", tx, values)
    }

    func profilePage(
        _ tx: AuthorizeTransaction, policy: EmulatorSeed.Policy, user: EmulatorStore.UserRecord, error: String? = nil,
        headers: [(String, String)] = []
    ) -> Response {
        let others = policy.attributes.filter { !EmulatorSeed.Attribute.names.contains($0.name) }
        var values: [String: Any] = [
            "signedInAs": user.email, "displayName": user.displayName, "givenName": user.givenName, "surname": user.surname,
            "attributes": attributeItems(others, values: user.attributes.compactMapValues(\.formValue), strings: strings(tx)),
        ]
        if let error { values["error"] = error }
        return page("profile", tx, values, headers: headers)
    }

    func resetEmailPage(_ tx: AuthorizeTransaction, policy: EmulatorSeed.Policy, error: String? = nil) -> Response {
        var values: [String: Any] = ["email": tx.resetEmail ?? tx.loginHint ?? ""]
        if let error { values["error"] = error }
        return page("reset", tx, values)
    }

    func resetVerifyPage(_ tx: AuthorizeTransaction, policy: EmulatorSeed.Policy, error: String? = nil) -> Response {
        var values: [String: Any] = ["email": tx.resetEmail ?? ""]
        if let error { values["error"] = error }
        return page("resetverify", tx, values)
    }

    /// The page where a person whose password must change chooses a new one.
    func passwordChangePage(_ tx: AuthorizeTransaction, error: String? = nil) -> Response {
        page("passwordchange", tx, error.map { ["error": $0] } ?? [:])
    }

    /// An API connector's block page (the sign-in ends here).
    func blockPage(_ tx: AuthorizeTransaction, message: String) -> Response {
        page("blocked", tx, ["message": message])
    }
}

extension JSONValue {
    /// A stored attribute as a page's field shows it ("true", "41", "Lyon").
    fileprivate var formValue: String? {
        switch self {
        case .string(let s): s
        case .bool(let b): b ? "true" : "false"
        case .number(let n): Int(exactly: n).map(String.init) ?? String(n)
        default: nil
        }
    }
}
