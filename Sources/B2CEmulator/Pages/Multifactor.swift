import Hummingbird

/// The second-factor pages, with B2C's element ids and default strings (reference: b2c-journeys.md §1.3–1.5): the
/// self-asserted email page (`ReadOnlyEmail_ver_*`), the phone factor page (`multifactor`, `data-name="Phonefactor"`:
/// `#countryCode`, `#number`, `#sendCode`, `#verifyPhone`, `#verificationCode`, `#verifyCode`, `#retryCode`, `#cancel`)
/// and the authenticator pages (a QR code of the `otpauth://` URI, the secret under "Still having trouble?", then
/// `#otpCode`). Plain forms: no JavaScript needed.
enum MultifactorTemplates {
    static let multifactor = [
        "mfaemail": """
        {{<page}}{{$title}}{{t.mfa_heading}}{{/title}}{{$body}}<div id="api" data-name="SelfAsserted">
        <h1>{{t.mfa_heading}}</h1><p class="tenant">{{tenant}} · b2c emulator</p>
        <p class="intro">{{t.mfa_email_intro}}</p>
        {{#error}}<div class="error" id="error" role="alert">{{error}}</div>{{/error}}
        <label for="ReadOnlyEmail">{{t.email_label}}</label>
        <input type="email" id="ReadOnlyEmail" name="ReadOnlyEmail" value="{{email}}" readonly>
        {{#verified}}<div id="ReadOnlyEmail_success" class="verificationSuccessText">{{t.ver_success_msg}}</div>{{/verified}}\
        {{#codeEntry}}<div id="ReadOnlyEmail_info" class="verificationInfoText">{{t.ver_info_msg}}</div>{{/codeEntry}}
        {{^verified}}<form id="emailSendForm" method="post" action="{{action.mfasend}}"><input type="hidden" name="tx" value="{{tx}}">
        {{#sent}}<button type="submit" id="ReadOnlyEmail_ver_but_resend" class="sendButton">{{t.ver_but_resend}}</button>{{/sent}}\
        {{^sent}}<button type="submit" id="ReadOnlyEmail_ver_but_send" class="sendButton">{{t.ver_but_send}}</button>{{/sent}}\
        </form>{{/verified}}
        {{#codeEntry}}<form id="emailVerifyForm" method="post" action="{{action.mfaverify}}">
        <input type="hidden" name="tx" value="{{tx}}">
        <label id="ReadOnlyEmail_ver_input_label" for="ReadOnlyEmail_ver_input">{{t.ver_input}}</label>
        <input type="text" id="ReadOnlyEmail_ver_input" name="ReadOnlyEmail_ver_input" maxlength="6" inputmode="numeric"
        autocomplete="one-time-code" autofocus>
        <button type="submit" id="ReadOnlyEmail_ver_but_verify" class="verifyButton">{{t.ver_but_verify}}</button>
        </form>{{/codeEntry}}
        <form id="attributeVerification" method="post" action="{{action.mfacontinue}}"><input type="hidden" name="tx" value="{{tx}}">
        <button type="submit" id="continue" {{^verified}}disabled{{/verified}}>{{t.button_continue_generic}}</button></form>
        <div class="links"><span></span><a id="cancel" href="{{link.cancel}}">{{t.cancel}}</a></div>
        </div>{{/body}}{{/page}}
        """,
        // `maskedNumber`: the number on record (verified by a code to it); without it the person enters one (enrolment).
        // `sentTo`: the number a code went to, which the code form and the retry form then carry.
        "phonefactor": """
        {{<page}}{{$title}}{{t.phone_heading}}{{/title}}{{$body}}<div id="api" data-name="Phonefactor">
        <h1>{{t.phone_heading}}</h1><p class="tenant">{{tenant}} · b2c emulator</p>
        <div id="phonefactor_initial">
        <div class="errorText" id="errorMessage" role="alert" {{^error}}style="display:none"{{/error}}>{{error}}</div>
        {{#sentTo}}<p id="codeSentTo">{{t.code_sent}} {{sentTo}}.</p>{{/sentTo}}
        {{^sentTo}}<form id="phoneSendForm" method="post" action="{{action.mfasend}}"><input type="hidden" name="tx" value="{{tx}}">
        {{#maskedNumber}}<p class="intro">{{t.intro_mixed}}</p>
        <div class="phoneNumbers"><div class="phoneNumber">
        <span class="number" id="maskedNumber">{{maskedNumber}}</span></div></div>{{/maskedNumber}}\
        {{^maskedNumber}}<p class="intro">{{t.intro_entry_mixed}}</p>
        <div class="phoneEntry" id="phoneEntry">
        <label for="countryCode">{{t.country_label}}</label>
        <select id="countryCode" name="countryCode">\
        {{#countries}}<option value="{{code}}"{{#first()}} selected{{/first()}}>{{name}} ({{code}})</option>{{/countries}}</select>
        <label for="number">{{t.number_label}}</label>
        <input type="tel" id="number" name="number" placeholder="{{t.number_label}}" autocomplete="tel-national">
        </div>{{/maskedNumber}}
        <button type="submit" id="sendCode" name="channel" value="sms" class="sendInitialCodeButton">{{t.button_send_code}}</button>
        <button type="submit" id="verifyPhone" name="channel" value="voice">{{t.button_verify}}</button>
        </form>{{/sentTo}}
        {{#sentTo}}<form id="codeVerification" method="post" action="{{action.mfaverify}}"><input type="hidden" name="tx" value="{{tx}}">
        <p>{{t.code_intro}} <button type="submit" form="retryForm" id="retryCode" class="textButton">\
        {{t.text_button_send_second_code}}</button></p>
        <input type="text" id="verificationCode" name="verificationCode" placeholder="{{t.ver_input}}" maxlength="6"
        inputmode="numeric" autocomplete="one-time-code" autofocus>
        <button type="submit" id="verifyCode">{{t.button_verify_code}}</button>
        </form>
        <form id="retryForm" method="post" action="{{action.mfasend}}"><input type="hidden" name="tx" value="{{tx}}">
        <input type="hidden" name="countryCode" value=""><input type="hidden" name="number" value="{{sentTo}}">
        <input type="hidden" name="channel" value="sms"></form>{{/sentTo}}
        <div class="links"><span></span><a id="cancel" href="{{link.cancel}}">{{t.cancel}}</a></div>
        </div></div>{{/body}}{{/page}}
        """,
        "totpenrol": """
        {{<page}}{{$title}}{{t.totp_heading}}{{/title}}{{$body}}<div id="api" data-name="SelfAsserted">
        <h1>{{t.totp_heading}}</h1><p class="tenant">{{tenant}} · b2c emulator</p>
        <p class="intro">{{t.totp_intro}}</p>
        <div id="totpQrCodeControl"><img id="qrCode" src="{{link.mfaqr}}" alt="QR code"
        data-uri="{{uri}}"></div>
        <details id="authenticatorInfoControl"><summary>{{t.totp_trouble}}</summary>
        <p>{{t.totp_account}}:
        <span id="totpIdentifier">{{issuer}}:{{account}}</span></p>
        <p>{{t.totp_secret}}: <code id="secretKey">{{secret}}</code></p></details>
        <form id="attributeVerification" method="post" action="{{action.mfasend}}"><input type="hidden" name="tx" value="{{tx}}">
        <button type="submit" id="continue">{{t.button_continue_generic}}</button></form>
        <div class="links"><span></span><a id="cancel" href="{{link.cancel}}">{{t.cancel}}</a></div>
        </div>{{/body}}{{/page}}
        """,
        "totpverify": """
        {{<page}}{{$title}}{{t.otp_heading}}{{/title}}{{$body}}<div id="api" data-name="SelfAsserted">
        <h1>{{t.otp_heading}}</h1><p class="tenant">{{tenant}} · b2c emulator</p>
        <p class="intro">{{t.otp_intro}}</p>
        {{#error}}<div class="error" id="error" role="alert">{{error}}</div>{{/error}}
        <form id="attributeVerification" method="post" action="{{action.mfaverify}}"><input type="hidden" name="tx" value="{{tx}}">
        <label for="otpCode">{{t.otp_label}}</label>
        <input type="text" id="otpCode" name="otpCode" maxlength="6" inputmode="numeric" autocomplete="one-time-code" autofocus>
        <button type="submit" id="continue">{{t.button_verify_otp}}</button></form>
        <div class="links"><span></span><a id="cancel" href="{{link.cancel}}">{{t.cancel}}</a></div>
        </div>{{/body}}{{/page}}
        """,
    ]
}

protocol MultifactorPages: PageMaking {}

extension MultifactorPages {
    func emailMFAPage(_ tx: AuthorizeTransaction, email: String, verified: Bool = false, error: String? = nil) -> Response {
        let sent = tx.mfa?.codeHash != nil
        var values: [String: Any] = ["email": email, "verified": verified, "sent": sent, "codeEntry": sent && !verified]
        if let error { values["error"] = error }
        return page("mfaemail", tx, values)
    }

    /// `registered`: the number on record (verified by a code to it); nil: the person enters one (enrolment).
    func phoneFactorPage(_ tx: AuthorizeTransaction, registered: String?, error: String? = nil) -> Response {
        var values: [String: Any] = ["countries": Self.countries]
        if let registered { values["maskedNumber"] = String(repeating: "X", count: max(0, registered.count - 4)) + registered.suffix(4) }
        if tx.mfa?.codeHash != nil, let phone = tx.mfa?.phone { values["sentTo"] = phone }
        if let error { values["error"] = error }
        return page("phonefactor", tx, values)
    }

    func totpEnrolPage(_ tx: AuthorizeTransaction, account: String, secret: String, issuer: String) -> Response {
        page(
            "totpenrol", tx,
            ["uri": TOTP.uri(secret: secret, account: account, issuer: issuer), "issuer": issuer, "account": account, "secret": secret])
    }

    func totpVerifyPage(_ tx: AuthorizeTransaction, error: String? = nil) -> Response {
        var values: [String: Any] = [:]
        if let error { values["error"] = error }
        return page("totpverify", tx, values)
    }

    /// The phone page's countries, the first one selected.
    static var countries: [[String: String]] {
        [
            ("+1", "United States"), ("+44", "United Kingdom"), ("+33", "France"), ("+49", "Germany"), ("+61", "Australia"),
            ("+81", "Japan"), ("+91", "India"),
        ].map { ["code": $0.0, "name": $0.1] }
    }
}
