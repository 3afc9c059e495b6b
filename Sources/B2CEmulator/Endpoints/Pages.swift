import B2CProtocol
import Foundation
import Hummingbird

/// The user-facing pages of the user flows. Plain HTML forms that work without JavaScript, with the
/// element ids of B2C's own pages so that browser automation written for B2C works here.
struct PageRenderer: Sendable {
    let tenantName: String
    let clock: EmulatorClock
    let seed: EmulatorSeed

    /// The words of a transaction's pages: its language, with its user flow's overrides.
    func strings(_ tx: AuthorizeTransaction) -> PageStrings {
        PageStrings(language: tx.language, overrides: seed.policy(named: tx.policy)?.languages.overrides[tx.language] ?? [:])
    }

    func page(title: String, body: String, lang: String = "en") -> String {
        """
        <!DOCTYPE html>
        <html lang="\(HTML.escape(lang))"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
        <title>\(HTML.escape(title))</title>
        <style>\(PageStyles.content)\(PageStyles.plain)</style></head>
        <body><main>\(body)</main></body></html>
        """
    }

    func header(_ title: String) -> String {
        "<h1>\(HTML.escape(title))</h1><p class=\"tenant\">\(HTML.escape(tenantName)) · b2c emulator</p>"
    }

    func errorBox(_ message: String?) -> String {
        guard let message else { return "" }
        return "<div class=\"error\" id=\"error\" role=\"alert\">\(HTML.escape(message))</div>"
    }

    /// A self-asserted page's server message (a validation error, an API connector's `userMessage`): in B2C's page-level
    /// slot, `#claimVerificationServerError`, around the emulator's `#error`.
    func pageLevelError(_ message: String?) -> String {
        guard message != nil else { return "" }
        return "<div class=\"error pageLevel\" id=\"claimVerificationServerError\" aria-hidden=\"false\">\(errorBox(message))</div>"
    }

    func action(_ tx: AuthorizeTransaction, _ name: String) -> String {
        "/\(tx.tenantSegment)/\(tx.policy.lowercased())/emulator/\(name)"
    }

    func link(_ tx: AuthorizeTransaction, _ name: String) -> String {
        HTML.escape(action(tx, name) + "?tx=" + FormEncoding.escape(tx.id))
    }

    func hiddenTx(_ tx: AuthorizeTransaction) -> String {
        "<input type=\"hidden\" name=\"tx\" value=\"\(HTML.escape(tx.id))\">"
    }

    func signInPage(
        _ tx: AuthorizeTransaction, policy: EmulatorSeed.Policy, error: String? = nil, email: String? = nil,
        headers: [(String, String)] = []
    ) -> Response {
        let t = strings(tx)
        let value = HTML.escape(email ?? tx.loginHint ?? "")
        let signUp =
            policy.kind == .signUpSignIn
            ? "<div class=\"create\"><p>\(HTML.escape(t["createaccount_intro"])) <a id=\"createAccount\" href=\"\(link(tx, "signup"))\">"
                + "\(HTML.escape(t["createaccount_one_link"]))</a></p></div>" : "<span></span>"
        let rememberMe =
            policy.session.kmsiDays == nil
            ? ""
            : "<div class=\"rememberMe\"><input type=\"checkbox\" id=\"rememberMe\" name=\"rememberMe\" value=\"true\">"
                + "<label for=\"rememberMe\">\(HTML.escape(t["remember_me"]))</label></div>"
        let local =
            policy.identityProviders.contains(.local)
            ? """
            \(errorBox(error))
            <form id="localAccountForm" method="post" action="\(HTML.escape(action(tx, "signin")))">
            \(hiddenTx(tx))
            <div class="entry"><div class="entry-item"><label for="logonIdentifier">\(HTML.escape(t["logonIdentifier_label"]))</label>
            <input type="email" id="logonIdentifier" name="logonIdentifier" value="\(value)" autocomplete="username" autofocus></div>
            <div class="entry-item"><label for="password">\(HTML.escape(t["password_label"]))</label>
            <input type="password" id="password" name="password" autocomplete="current-password">
            <a id="forgotPassword" href="\(link(tx, "forgot"))">\(HTML.escape(t["forgotpassword_link"]))</a></div>
            \(rememberMe)
            <div class="buttons"><button type="submit" id="next" name="next" value="next">\(HTML.escape(t["button_signin"]))</button></div>
            </div>
            </form>
            """ : errorBox(error)
        return .html(
            page(
                title: t["heading"],
                body: """
                    <div id="api" data-name="Unified">
                    \(header(t["heading"]))
                    \(socialButtons(tx, policy: policy))
                    \(local)
                    <div class="links">\(policy.identityProviders.contains(.local) ? signUp : "<span></span>")\
                    <a id="cancel" href="\(link(tx, "cancel"))">\(HTML.escape(t["cancel"]))</a></div>
                    </div>
                    """, lang: t.language), headers: headers)
    }

    /// The local sign-up page, built from the user flow's attributes (claim ids as element ids) with B2C's email
    /// verification widget (`email_ver_but_send`, `email_ver_input`, `email_ver_but_verify`, `email_ver_but_resend`,
    /// `email_success`, `email_ver_but_edit`). Its buttons post the one form with a `step`: no JavaScript needed.
    func signUpPage(_ tx: AuthorizeTransaction, policy: EmulatorSeed.Policy, error: String? = nil, form: [String: String] = [:]) -> Response
    {
        let t = strings(tx)
        func v(_ k: String) -> String { HTML.escape(form[k] ?? "") }
        func label(_ id: String) -> String { "<label for=\"\(id)\">\(HTML.escape(t["\(id)_label"]))</label>" }
        let verified = tx.verifiedEmail != nil && tx.verifiedEmail?.lowercased() == (form["email"] ?? tx.verifiedEmail)?.lowercased()
        let sent = tx.signUpCodeHash != nil && !verified
        let widget = verificationWidget(policy.emailVerification, verified: verified, sent: sent, strings: t)
        let attributes = attributeItems(policy.attributes, values: form, strings: t)
        return .html(
            page(
                title: t["signup_heading"],
                body: """
                    <div id="api" data-name="SelfAsserted">
                    \(header(t["signup_heading"]))
                    \(pageLevelError(error))
                    <form id="attributeVerification" method="post" action="\(HTML.escape(action(tx, "signup")))">
                    \(hiddenTx(tx))
                    <div id="attributeList"><ul>
                    <li class="email_li"><div class="attrEntry">\(label("email"))
                    <input type="email" id="email" name="email" value="\(v("email"))" autocomplete="email"\(verified ? " readonly" : "")>
                    \(widget.isEmpty ? "" : "<div class=\"buttons verify\">\(widget)</div>")</div></li>
                    <li class="newPassword_li"><div class="attrEntry">\(label("newPassword"))
                    <input type="password" id="newPassword" name="newPassword" autocomplete="new-password"></div></li>
                    <li class="reenterPassword_li"><div class="attrEntry">\(label("reenterPassword"))
                    <input type="password" id="reenterPassword" name="reenterPassword" autocomplete="new-password"></div></li>
                    \(attributes)
                    </ul></div>
                    <div class="buttons"><button type="submit" name="step" value="create" id="continue">\(
                        HTML.escape(t["button_continue"]))</button></div>
                    </form>
                    <div class="links"><span></span><a id="cancel" href="\(link(tx, "cancel"))">\(HTML.escape(t["cancel"]))</a></div>
                    <p class="note">\(HTML.escape(t["password_help"]))</p>
                    </div>
                    """, lang: t.language))
    }

    /// The email verification controls beside `#email`, in B2C's classic form (`email_ver_*`) or as its display control
    /// (`emailVerificationControl_but_*`, code in `#verificationCode`). Each button posts the form with its `step`.
    func verificationWidget(_ kind: EmulatorSeed.EmailVerification, verified: Bool, sent: Bool, strings t: PageStrings) -> String {
        func button(_ step: String, _ id: String, _ css: String, _ text: String) -> String {
            "<button type=\"submit\" name=\"step\" value=\"\(step)\" id=\"\(id)\" formnovalidate class=\"\(css)\">"
                + "\(HTML.escape(t[text]))</button>"
        }
        func input(_ id: String) -> String {
            "<label id=\"\(id)_label\" for=\"\(id)\">\(HTML.escape(t["ver_input"]))</label>"
                + "<input type=\"text\" id=\"\(id)\" name=\"\(id)\" maxlength=\"6\" inputmode=\"numeric\" autocomplete=\"one-time-code\">"
        }
        func text(_ id: String?, _ css: String, _ string: String) -> String {
            "<div\(id.map { " id=\"\($0)\"" } ?? "") class=\"\(css)\">\(HTML.escape(t[string]))</div>"
        }
        let control = "emailVerificationControl"
        let parts: [String]
        switch (kind, verified, sent) {
        case (.off, _, _): return ""
        case (.classic, true, _):
            parts = [
                text("email_success", "verificationSuccessText", "ver_success_msg"),
                button("edit", "email_ver_but_edit", "editButton", "ver_but_edit"),
            ]
        case (.classic, false, true):
            parts = [
                text("email_info", "verificationInfoText", "ver_info_msg"), input("email_ver_input"),
                button("verify", "email_ver_but_verify", "verifyButton", "ver_but_verify"),
                button("send", "email_ver_but_resend", "sendButton", "ver_but_resend"),
            ]
        case (.classic, false, false): parts = [button("send", "email_ver_but_send", "sendButton", "ver_but_send")]
        case (.displayControl, true, _):
            parts = [
                "<div class=\"verificationControlContent\">",
                text("\(control)_success_message", "verificationSuccessText", "ver_success_msg"),
                button("edit", "\(control)_but_change_claims", "changeClaims", "verification_control_but_change_claims"), "</div>",
            ]
        case (.displayControl, false, true):
            parts = [
                "<div class=\"verificationControlContent\">", text(nil, "verificationInfoText", "verification_control_code_sent"),
                input("verificationCode"),
                button("verify", "\(control)_but_verify_code", "verifyCode", "verification_control_but_verify_code"),
                button("send", "\(control)_but_send_new_code", "sendNewCode", "verification_control_but_send_new_code"), "</div>",
            ]
        case (.displayControl, false, false):
            parts = [
                "<div class=\"verificationControlContent\">",
                button("send", "\(control)_but_send_code", "sendCode", "verification_control_but_send_code"), "</div>",
            ]
        }
        return parts.joined(separator: "\n")
    }

    /// The `<li>` of each attribute, its claim id as element id and field name; `values` fills them (a checkbox is
    /// checked for "true").
    func attributeItems(_ list: [EmulatorSeed.Attribute], values: [String: String], strings t: PageStrings) -> String {
        list.map { a -> String in
            let text = a.isCustom ? a.label : (t["\(a.name)_label"] == "\(a.name)_label" ? a.label : t["\(a.name)_label"])
            let required = a.required ? " required" : ""
            let value = HTML.escape(values[a.name] ?? "")
            let input: String
            switch a.kind {
            case .boolean:
                input =
                    "<input type=\"checkbox\" id=\"\(a.name)\" name=\"\(a.name)\" value=\"true\""
                    + (values[a.name] == "true" ? " checked>" : ">")
            case .int: input = "<input type=\"number\" id=\"\(a.name)\" name=\"\(a.name)\" value=\"\(value)\"\(required)>"
            case .string: input = "<input type=\"text\" id=\"\(a.name)\" name=\"\(a.name)\" value=\"\(value)\"\(required)>"
            }
            return "<li class=\"\(a.name)_li\"><div class=\"attrEntry\"><label for=\"\(a.name)\">\(HTML.escape(text))</label>"
                + "\(input)</div></li>"
        }.joined(separator: "\n")
    }

    func profilePage(
        _ tx: AuthorizeTransaction, policy: EmulatorSeed.Policy, user: EmulatorStore.UserRecord, error: String? = nil,
        headers: [(String, String)] = []
    ) -> Response {
        let t = strings(tx)
        func field(_ id: String, _ value: String) -> String {
            "<label for=\"\(id)\">\(HTML.escape(t["\(id)_label"]))</label>"
                + "<input type=\"text\" id=\"\(id)\" name=\"\(id)\" value=\"\(HTML.escape(value))\">"
        }
        let others = policy.attributes.filter { !EmulatorSeed.Attribute.names.contains($0.name) }
        return .html(
            page(
                title: t["profile_title"],
                body: """
                    \(header(t["profile_heading"]))
                    <p>\(HTML.escape(t["signed_in_as"])) <strong id="signedInAs">\(HTML.escape(user.email))</strong></p>
                    \(errorBox(error))
                    <form id="attributeVerification" method="post" action="\(HTML.escape(action(tx, "profile")))">
                    \(hiddenTx(tx))
                    \(field("displayName", user.displayName))
                    \(field("givenName", user.givenName))
                    \(field("surname", user.surname))
                    <ul>\(attributeItems(others, values: user.attributes.compactMapValues(\.formValue), strings: t))</ul>
                    <button type="submit" id="continue" name="continue" value="continue">\(
                        HTML.escape(t["button_continue_generic"]))</button>
                    </form>
                    <div class="links"><span></span><a id="cancel" href="\(link(tx, "cancel"))">\(HTML.escape(t["cancel"]))</a></div>
                    """, lang: t.language), headers: headers)
    }

    func resetEmailPage(_ tx: AuthorizeTransaction, policy: EmulatorSeed.Policy, error: String? = nil) -> Response {
        let t = strings(tx)
        return .html(
            page(
                title: t["reset_title"],
                body: """
                    \(header(t["reset_heading"]))
                    \(errorBox(error))
                    <form id="attributeVerification" method="post" action="\(HTML.escape(action(tx, "reset")))">
                    \(hiddenTx(tx))
                    <label for="email">\(HTML.escape(t["email_label"]))</label>
                    <input type="email" id="email" name="email" value="\(HTML.escape(tx.resetEmail ?? tx.loginHint ?? ""))"
                    autocomplete="email">
                    <button type="submit" id="sendCode" name="sendCode" value="sendCode">\(HTML.escape(t["ver_but_send"]))</button>
                    </form>
                    <div class="links"><span></span><a id="cancel" href="\(link(tx, "cancel"))">\(HTML.escape(t["cancel"]))</a></div>
                    """, lang: t.language))
    }

    func resetVerifyPage(_ tx: AuthorizeTransaction, policy: EmulatorSeed.Policy, error: String? = nil) -> Response {
        let t = strings(tx)
        return .html(
            page(
                title: t["reset_title"],
                body: """
                    \(header(t["reset_heading"]))
                    <p>\(HTML.escape(t["reset_code_sent"])) <strong id="codeSentTo">\(HTML.escape(tx.resetEmail ?? ""))</strong>.
                    \(HTML.escape(t["reset_outbox_note"])) (<code>GET /_admin/outbox</code>).</p>
                    \(errorBox(error))
                    <form id="attributeVerification" method="post" action="\(HTML.escape(action(tx, "resetverify")))">
                    \(hiddenTx(tx))
                    <label for="verificationCode">\(HTML.escape(t["ver_input"]))</label>
                    <input type="text" id="verificationCode" name="verificationCode" autocomplete="one-time-code" inputmode="numeric">
                    <label for="newPassword">\(HTML.escape(t["newPassword_label"]))</label>
                    <input type="password" id="newPassword" name="newPassword" autocomplete="new-password">
                    <label for="reenterPassword">\(HTML.escape(t["reenterPassword_label"]))</label>
                    <input type="password" id="reenterPassword" name="reenterPassword" autocomplete="new-password">
                    <button type="submit" id="continue" name="continue" value="continue">\(
                        HTML.escape(t["button_continue_generic"]))</button>
                    </form>
                    <div class="links"><a id="resendCode" href="\(link(tx, "resend"))">\(HTML.escape(t["resend_code"]))</a>
                    <a id="cancel" href="\(link(tx, "cancel"))">\(HTML.escape(t["cancel"]))</a></div>
                    """, lang: t.language))
    }

    func errorPage(_ e: PageError, headers: [(String, String)] = []) -> Response {
        let text = (e.code.map { "\($0): " } ?? "") + e.message
        return .html(
            page(
                title: "Error",
                body: """
                    <div id="api" class="error-page-content" data-name="GlobalException">
                    <h1>Sorry, but we're having trouble signing you in.</h1>
                    <p class="tenant">\(HTML.escape(tenantName)) · b2c emulator</p>
                    <div class="error" id="error" role="alert">\(HTML.escape(text))</div>
                    <p class="note">Correlation ID: \(UUID().uuidString.lowercased())<br>Timestamp:
                    \(B2CErrorDescription.timestampString(clock.date))</p>
                    </div>
                    """), status: e.status, headers: headers)
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
