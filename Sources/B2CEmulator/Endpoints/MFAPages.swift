import B2CProtocol
import Foundation
import Hummingbird

/// The second-factor pages, with B2C's element ids and default strings (reference: b2c-journeys.md §1.3–1.5): the
/// self-asserted email page (`ReadOnlyEmail_ver_*`), the phone factor page (`#countryCode`, `#number`, `#sendCode`,
/// `#verifyPhone`, `#verificationCode`, `#verifyCode`, `#retryCode`, `#cancel`) and the authenticator pages (a QR code
/// of the `otpauth://` URI, the secret under "Still having trouble?", then `#otpCode`). Plain forms: no JavaScript needed.
extension PageRenderer {
    func emailMFAPage(_ tx: AuthorizeTransaction, email: String, verified: Bool = false, error: String? = nil) -> Response {
        let sent = tx.mfa?.codeHash != nil
        let info =
            verified
            ? "<div id=\"ReadOnlyEmail_success\" class=\"verificationSuccessText\">E-mail address verified. You can now continue.</div>"
            : sent
                ? "<div id=\"ReadOnlyEmail_info\" class=\"verificationInfoText\">Verification code has been sent to your inbox. "
                    + "Please copy it to the input box below.</div>" : ""
        let verify =
            sent && !verified
            ? """
            <form id="emailVerifyForm" method="post" action="\(HTML.escape(action(tx, "mfaverify")))">
            \(hiddenTx(tx))
            <label id="ReadOnlyEmail_ver_input_label" for="ReadOnlyEmail_ver_input">Verification code</label>
            <input type="text" id="ReadOnlyEmail_ver_input" name="ReadOnlyEmail_ver_input" maxlength="6" inputmode="numeric"
            autocomplete="one-time-code" autofocus>
            <button type="submit" id="ReadOnlyEmail_ver_but_verify" class="verifyButton">Verify code</button>
            </form>
            """ : ""
        let send =
            verified
            ? ""
            : """
            <form id="emailSendForm" method="post" action="\(HTML.escape(action(tx, "mfasend")))">\(hiddenTx(tx))
            <button type="submit" id="\(sent ? "ReadOnlyEmail_ver_but_resend" : "ReadOnlyEmail_ver_but_send")" class="sendButton">\(
                sent ? "Send new code" : "Send verification code")</button></form>
            """
        return .html(
            page(
                title: "Security verification",
                body: """
                    <div id="api" data-name="SelfAsserted">
                    \(header("Security verification"))
                    <p class="intro">Enter the verification code in the email to continue.</p>
                    \(errorBox(error))
                    <label for="ReadOnlyEmail">Email Address</label>
                    <input type="email" id="ReadOnlyEmail" name="ReadOnlyEmail" value="\(HTML.escape(email))" readonly>
                    \(info)
                    \(send)
                    \(verify)
                    <form id="attributeVerification" method="post" action="\(HTML.escape(action(tx, "mfacontinue")))">\(hiddenTx(tx))
                    <button type="submit" id="continue" \(verified ? "" : "disabled")>Continue</button></form>
                    <div class="links"><span></span><a id="cancel" href="\(link(tx, "cancel"))">Cancel</a></div>
                    </div>
                    """))
    }

    /// `registered`: the number on record (verified by a code to it); nil: the person enters one (enrolment).
    func phoneFactorPage(_ tx: AuthorizeTransaction, registered: String?, error: String? = nil) -> Response {
        let sentTo = tx.mfa?.codeHash != nil ? tx.mfa?.phone : nil
        let entry: String
        if let registered {
            let masked = String(repeating: "X", count: max(0, registered.count - 4)) + registered.suffix(4)
            entry = """
                <p class="intro">We have the following number on record for you. We can send a code via SMS or phone to authenticate you.</p>
                <div class="phoneNumbers"><div class="phoneNumber"><span class="number" id="maskedNumber">\(HTML.escape(masked))</span></div></div>
                """
        } else {
            entry = """
                <p class="intro">Enter a number below that we can send a code via SMS or phone to authenticate you.</p>
                <div class="phoneEntry" id="phoneEntry">
                <label for="countryCode">Country/Region</label>
                <select id="countryCode" name="countryCode">\(Self.countries)</select>
                <label for="number">Phone number</label>
                <input type="tel" id="number" name="number" placeholder="Phone number" autocomplete="tel-national">
                </div>
                """
        }
        let verification =
            sentTo == nil
            ? ""
            : """
            <form id="codeVerification" method="post" action="\(HTML.escape(action(tx, "mfaverify")))">\(hiddenTx(tx))
            <p>Enter your verification code below, or <button type="submit" form="retryForm" id="retryCode" class="textButton">send a
            new code</button></p>
            <input type="text" id="verificationCode" name="verificationCode" placeholder="Verification code" maxlength="6"
            inputmode="numeric" autocomplete="one-time-code" autofocus>
            <button type="submit" id="verifyCode">Verify Code</button>
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
            <button type="submit" id="sendCode" name="channel" value="sms" class="sendInitialCodeButton">Send Code</button>
            <button type="submit" id="verifyPhone" name="channel" value="voice">Call Me</button>
            </form>
            """
        return .html(
            page(
                title: "Multi-factor authentication",
                body: """
                    <div id="api" data-name="Phonefactor">
                    \(header("Verify your phone"))
                    <div id="phonefactor_initial">
                    <div class="errorText" id="errorMessage" role="alert" \(error == nil ? "style=\"display:none\"" : "")>\(
                        HTML.escape(error ?? ""))</div>
                    \(sentTo.map { "<p id=\"codeSentTo\">A code has been sent to \(HTML.escape($0)).</p>" } ?? "")
                    \(send)
                    \(verification)
                    <div class="links"><span></span><a id="cancel" href="\(link(tx, "cancel"))">Cancel</a></div>
                    </div></div>
                    """))
    }

    func totpEnrolPage(_ tx: AuthorizeTransaction, account: String, secret: String, issuer: String) -> Response {
        let uri = TOTP.uri(secret: secret, account: account, issuer: issuer)
        return .html(
            page(
                title: "Register an authenticator app",
                body: """
                    <div id="api" data-name="SelfAsserted">
                    \(header("Set up your authenticator app"))
                    <p class="intro">Scan the QR code with an authenticator app (Microsoft Authenticator, or any app that supports
                    TOTP), then select Continue.</p>
                    <div id="totpQrCodeControl"><img id="qrCode" src="\(link(tx, "mfaqr"))" alt="QR code"
                    data-uri="\(HTML.escape(uri))"></div>
                    <details id="authenticatorInfoControl"><summary>Still having trouble?</summary>
                    <p>Account Name: <span id="totpIdentifier">\(HTML.escape(issuer)):\(HTML.escape(account))</span></p>
                    <p>Secret: <code id="secretKey">\(HTML.escape(secret))</code></p></details>
                    <form id="attributeVerification" method="post" action="\(HTML.escape(action(tx, "mfasend")))">\(hiddenTx(tx))
                    <button type="submit" id="continue">Continue</button></form>
                    <div class="links"><span></span><a id="cancel" href="\(link(tx, "cancel"))">Cancel</a></div>
                    </div>
                    """))
    }

    func totpVerifyPage(_ tx: AuthorizeTransaction, error: String? = nil) -> Response {
        .html(
            page(
                title: "Enter your code",
                body: """
                    <div id="api" data-name="SelfAsserted">
                    \(header("Enter your code"))
                    <p class="intro">Enter the verification code from your authenticator app.</p>
                    \(errorBox(error))
                    <form id="attributeVerification" method="post" action="\(HTML.escape(action(tx, "mfaverify")))">\(hiddenTx(tx))
                    <label for="otpCode">Enter your code</label>
                    <input type="text" id="otpCode" name="otpCode" maxlength="6" inputmode="numeric" autocomplete="one-time-code" autofocus>
                    <button type="submit" id="continue">Verify</button></form>
                    <div class="links"><span></span><a id="cancel" href="\(link(tx, "cancel"))">Cancel</a></div>
                    </div>
                    """))
    }

    /// The country list of the phone page: a few, each `<option value="+CC">`.
    static let countries: String = [
        ("+1", "United States (+1)"), ("+44", "United Kingdom (+44)"), ("+33", "France (+33)"), ("+49", "Germany (+49)"),
        ("+61", "Australia (+61)"), ("+81", "Japan (+81)"), ("+91", "India (+91)"),
    ].enumerated().map { i, c in "<option value=\"\(c.0)\"\(i == 0 ? " selected" : "")>\(c.1)</option>" }.joined()
}
