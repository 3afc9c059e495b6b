import B2CProtocol
import Foundation
import Hummingbird

/// The second-factor pages, with B2C's element ids and default strings (reference: b2c-journeys.md §1.3–1.5): the
/// self-asserted email page (`ReadOnlyEmail_ver_*`), the phone factor page (`#countryCode`, `#number`, `#sendCode`,
/// `#verifyPhone`, `#verificationCode`, `#verifyCode`, `#retryCode`, `#cancel`) and the authenticator pages (a QR code
/// of the `otpauth://` URI, the secret under "Still having trouble?", then `#otpCode`). Plain forms: no JavaScript needed.
extension PageRenderer {
    func emailMFAPage(_ tx: AuthorizeTransaction, email: String, verified: Bool = false, error: String? = nil) -> Response {
        let t = strings(tx)
        let sent = tx.mfa?.codeHash != nil
        let info =
            verified
            ? "<div id=\"ReadOnlyEmail_success\" class=\"verificationSuccessText\">\(HTML.escape(t["ver_success_msg"]))</div>"
            : sent
                ? "<div id=\"ReadOnlyEmail_info\" class=\"verificationInfoText\">\(HTML.escape(t["ver_info_msg"]))</div>" : ""
        let verify =
            sent && !verified
            ? """
            <form id="emailVerifyForm" method="post" action="\(HTML.escape(action(tx, "mfaverify")))">
            \(hiddenTx(tx))
            <label id="ReadOnlyEmail_ver_input_label" for="ReadOnlyEmail_ver_input">\(HTML.escape(t["ver_input"]))</label>
            <input type="text" id="ReadOnlyEmail_ver_input" name="ReadOnlyEmail_ver_input" maxlength="6" inputmode="numeric"
            autocomplete="one-time-code" autofocus>
            <button type="submit" id="ReadOnlyEmail_ver_but_verify" class="verifyButton">\(HTML.escape(t["ver_but_verify"]))</button>
            </form>
            """ : ""
        let send =
            verified
            ? ""
            : """
            <form id="emailSendForm" method="post" action="\(HTML.escape(action(tx, "mfasend")))">\(hiddenTx(tx))
            <button type="submit" id="\(sent ? "ReadOnlyEmail_ver_but_resend" : "ReadOnlyEmail_ver_but_send")" class="sendButton">\(
                HTML.escape(sent ? t["ver_but_resend"] : t["ver_but_send"]))</button></form>
            """
        return .html(
            page(
                title: t["mfa_heading"],
                body: """
                    <div id="api" data-name="SelfAsserted">
                    \(header(t["mfa_heading"]))
                    <p class="intro">\(HTML.escape(t["mfa_email_intro"]))</p>
                    \(errorBox(error))
                    <label for="ReadOnlyEmail">\(HTML.escape(t["email_label"]))</label>
                    <input type="email" id="ReadOnlyEmail" name="ReadOnlyEmail" value="\(HTML.escape(email))" readonly>
                    \(info)
                    \(send)
                    \(verify)
                    <form id="attributeVerification" method="post" action="\(HTML.escape(action(tx, "mfacontinue")))">\(hiddenTx(tx))
                    <button type="submit" id="continue" \(verified ? "" : "disabled")>\(
                        HTML.escape(t["button_continue_generic"]))</button></form>
                    <div class="links"><span></span><a id="cancel" href="\(link(tx, "cancel"))">\(HTML.escape(t["cancel"]))</a></div>
                    </div>
                    """, lang: t.language))
    }

    /// `registered`: the number on record (verified by a code to it); nil: the person enters one (enrolment).
    func phoneFactorPage(_ tx: AuthorizeTransaction, registered: String?, error: String? = nil) -> Response {
        let t = strings(tx)
        let sentTo = tx.mfa?.codeHash != nil ? tx.mfa?.phone : nil
        let entry: String
        if let registered {
            let masked = String(repeating: "X", count: max(0, registered.count - 4)) + registered.suffix(4)
            entry = """
                <p class="intro">\(HTML.escape(t["intro_mixed"]))</p>
                <div class="phoneNumbers"><div class="phoneNumber">
                <span class="number" id="maskedNumber">\(HTML.escape(masked))</span></div></div>
                """
        } else {
            entry = """
                <p class="intro">\(HTML.escape(t["intro_entry_mixed"]))</p>
                <div class="phoneEntry" id="phoneEntry">
                <label for="countryCode">\(HTML.escape(t["country_label"]))</label>
                <select id="countryCode" name="countryCode">\(Self.countries)</select>
                <label for="number">\(HTML.escape(t["number_label"]))</label>
                <input type="tel" id="number" name="number" placeholder="\(HTML.escape(t["number_label"]))" autocomplete="tel-national">
                </div>
                """
        }
        let verification =
            sentTo == nil
            ? ""
            : """
            <form id="codeVerification" method="post" action="\(HTML.escape(action(tx, "mfaverify")))">\(hiddenTx(tx))
            <p>\(HTML.escape(t["code_intro"])) <button type="submit" form="retryForm" id="retryCode" class="textButton">\(
                HTML.escape(t["text_button_send_second_code"]))</button></p>
            <input type="text" id="verificationCode" name="verificationCode" placeholder="\(HTML.escape(t["ver_input"]))" maxlength="6"
            inputmode="numeric" autocomplete="one-time-code" autofocus>
            <button type="submit" id="verifyCode">\(HTML.escape(t["button_verify_code"]))</button>
            </form>
            <form id="retryForm" method="post" action="\(HTML.escape(action(tx, "mfasend")))">\(hiddenTx(tx))
            <input type="hidden" name="countryCode" value=""><input type="hidden" name="number" value="\(HTML.escape(sentTo ?? ""))">
            <input type="hidden" name="channel" value="sms"></form>
            """
        let send =
            sentTo != nil
            ? ""
            : """
            <form id="phoneSendForm" method="post" action="\(HTML.escape(action(tx, "mfasend")))">\(hiddenTx(tx))
            \(entry)
            <button type="submit" id="sendCode" name="channel" value="sms" class="sendInitialCodeButton">\(
                HTML.escape(t["button_send_code"]))</button>
            <button type="submit" id="verifyPhone" name="channel" value="voice">\(HTML.escape(t["button_verify"]))</button>
            </form>
            """
        return .html(
            page(
                title: t["phone_heading"],
                body: """
                    <div id="api" data-name="Phonefactor">
                    \(header(t["phone_heading"]))
                    <div id="phonefactor_initial">
                    <div class="errorText" id="errorMessage" role="alert" \(error == nil ? "style=\"display:none\"" : "")>\(
                        HTML.escape(error ?? ""))</div>
                    \(sentTo.map { "<p id=\"codeSentTo\">\(HTML.escape(t["code_sent"])) \(HTML.escape($0)).</p>" } ?? "")
                    \(send)
                    \(verification)
                    <div class="links"><span></span><a id="cancel" href="\(link(tx, "cancel"))">\(HTML.escape(t["cancel"]))</a></div>
                    </div></div>
                    """, lang: t.language))
    }

    func totpEnrolPage(_ tx: AuthorizeTransaction, account: String, secret: String, issuer: String) -> Response {
        let t = strings(tx)
        let uri = TOTP.uri(secret: secret, account: account, issuer: issuer)
        return .html(
            page(
                title: t["totp_heading"],
                body: """
                    <div id="api" data-name="SelfAsserted">
                    \(header(t["totp_heading"]))
                    <p class="intro">\(HTML.escape(t["totp_intro"]))</p>
                    <div id="totpQrCodeControl"><img id="qrCode" src="\(link(tx, "mfaqr"))" alt="QR code"
                    data-uri="\(HTML.escape(uri))"></div>
                    <details id="authenticatorInfoControl"><summary>\(HTML.escape(t["totp_trouble"]))</summary>
                    <p>\(HTML.escape(t["totp_account"])):
                    <span id="totpIdentifier">\(HTML.escape(issuer)):\(HTML.escape(account))</span></p>
                    <p>\(HTML.escape(t["totp_secret"])): <code id="secretKey">\(HTML.escape(secret))</code></p></details>
                    <form id="attributeVerification" method="post" action="\(HTML.escape(action(tx, "mfasend")))">\(hiddenTx(tx))
                    <button type="submit" id="continue">\(HTML.escape(t["button_continue_generic"]))</button></form>
                    <div class="links"><span></span><a id="cancel" href="\(link(tx, "cancel"))">\(HTML.escape(t["cancel"]))</a></div>
                    </div>
                    """, lang: t.language))
    }

    func totpVerifyPage(_ tx: AuthorizeTransaction, error: String? = nil) -> Response {
        let t = strings(tx)
        return .html(
            page(
                title: t["otp_heading"],
                body: """
                    <div id="api" data-name="SelfAsserted">
                    \(header(t["otp_heading"]))
                    <p class="intro">\(HTML.escape(t["otp_intro"]))</p>
                    \(errorBox(error))
                    <form id="attributeVerification" method="post" action="\(HTML.escape(action(tx, "mfaverify")))">\(hiddenTx(tx))
                    <label for="otpCode">\(HTML.escape(t["otp_label"]))</label>
                    <input type="text" id="otpCode" name="otpCode" maxlength="6" inputmode="numeric" autocomplete="one-time-code" autofocus>
                    <button type="submit" id="continue">\(HTML.escape(t["button_verify_otp"]))</button></form>
                    <div class="links"><span></span><a id="cancel" href="\(link(tx, "cancel"))">\(HTML.escape(t["cancel"]))</a></div>
                    </div>
                    """, lang: t.language))
    }

    /// The country list of the phone page: a few, each `<option value="+CC">`.
    static let countries: String = [
        ("+1", "United States (+1)"), ("+44", "United Kingdom (+44)"), ("+33", "France (+33)"), ("+49", "Germany (+49)"),
        ("+61", "Australia (+61)"), ("+81", "Japan (+81)"), ("+91", "India (+91)"),
    ].enumerated().map { i, c in "<option value=\"\(c.0)\"\(i == 0 ? " selected" : "")>\(c.1)</option>" }.joined()
}
