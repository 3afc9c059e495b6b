import B2CProtocol
import Foundation
import Hummingbird

/// The user-facing pages of the user flows. Plain HTML forms that work without JavaScript, with the
/// element ids of B2C's own pages so that browser automation written for B2C works here.
extension B2CEmulator {
    func page(title: String, body: String) -> String {
        """
        <!DOCTYPE html>
        <html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
        <title>\(HTML.escape(title))</title>
        <style>
        body{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;background:#f3f4f6;margin:0;color:#1f2937}
        main{max-width:420px;margin:48px auto;background:#fff;padding:32px 36px;border-radius:10px;box-shadow:0 2px 12px rgba(0,0,0,.08)}
        h1{font-size:1.4rem;margin:0 0 4px} .tenant{color:#6b7280;font-size:.85rem;margin:0 0 20px}
        label{display:block;font-size:.9rem;margin:14px 0 4px}
        input[type=email],input[type=password],input[type=text]{width:100%;box-sizing:border-box;padding:9px;border:1px solid #9ca3af;
        border-radius:6px;font-size:1rem}
        button{margin-top:20px;width:100%;padding:10px;border:0;border-radius:6px;background:#2563eb;color:#fff;font-size:1rem;
        cursor:pointer}
        .error{background:#fef2f2;color:#b91c1c;border:1px solid #fecaca;padding:8px 10px;border-radius:6px;font-size:.9rem}
        .links{margin-top:18px;font-size:.9rem;display:flex;justify-content:space-between} a{color:#2563eb}
        .note{font-size:.8rem;color:#6b7280;margin-top:18px}
        </style></head>
        <body><main>\(body)</main></body></html>
        """
    }

    private func header(_ title: String) -> String {
        "<h1>\(HTML.escape(title))</h1><p class=\"tenant\">\(HTML.escape(tenantName)) · b2c emulator</p>"
    }

    private func errorBox(_ message: String?) -> String {
        guard let message else { return "" }
        return "<div class=\"error\" id=\"error\" role=\"alert\">\(HTML.escape(message))</div>"
    }

    private func action(_ tx: AuthorizeTransaction, _ name: String) -> String {
        "/\(tx.tenantSegment)/\(tx.policy.lowercased())/emulator/\(name)"
    }

    private func link(_ tx: AuthorizeTransaction, _ name: String) -> String {
        HTML.escape(action(tx, name) + "?tx=" + FormEncoding.escape(tx.id))
    }

    private func hiddenTx(_ tx: AuthorizeTransaction) -> String {
        "<input type=\"hidden\" name=\"tx\" value=\"\(HTML.escape(tx.id))\">"
    }

    func signInPage(
        _ tx: AuthorizeTransaction, policy: EmulatorSeed.Policy, error: String? = nil, email: String? = nil,
        headers: [(String, String)] = []
    ) -> Response {
        let value = HTML.escape(email ?? tx.loginHint ?? "")
        let signUp =
            policy.kind == .signUpSignIn
            ? "<span>Don't have an account? <a id=\"createAccount\" href=\"\(link(tx, "signup"))\">Sign up now</a></span>" : "<span></span>"
        return .html(
            page(
                title: "Sign in",
                body: """
                    \(header("Sign in"))
                    \(errorBox(error))
                    <form id="localAccountForm" method="post" action="\(HTML.escape(action(tx, "signin")))">
                    \(hiddenTx(tx))
                    <label for="logonIdentifier">Email Address</label>
                    <input type="email" id="logonIdentifier" name="logonIdentifier" value="\(value)" autocomplete="username" autofocus>
                    <label for="password">Password</label>
                    <input type="password" id="password" name="password" autocomplete="current-password">
                    <div class="links"><a id="forgotPassword" href="\(link(tx, "forgot"))">Forgot your password?</a></div>
                    <button type="submit" id="next" name="next" value="next">Sign in</button>
                    </form>
                    <div class="links">\(signUp)<a id="cancel" href="\(link(tx, "cancel"))">Cancel</a></div>
                    """), headers: headers)
    }

    func signUpPage(_ tx: AuthorizeTransaction, policy: EmulatorSeed.Policy, error: String? = nil, form: [String: String] = [:]) -> Response
    {
        func v(_ k: String) -> String { HTML.escape(form[k] ?? "") }
        return .html(
            page(
                title: "Sign up",
                body: """
                    \(header("Create your account"))
                    \(errorBox(error))
                    <form id="attributeVerification" method="post" action="\(HTML.escape(action(tx, "signup")))">
                    \(hiddenTx(tx))
                    <label for="email">Email Address</label>
                    <input type="email" id="email" name="email" value="\(v("email"))" autocomplete="email">
                    <label for="newPassword">New Password</label>
                    <input type="password" id="newPassword" name="newPassword" autocomplete="new-password">
                    <label for="reenterPassword">Confirm New Password</label>
                    <input type="password" id="reenterPassword" name="reenterPassword" autocomplete="new-password">
                    <label for="displayName">Display Name</label>
                    <input type="text" id="displayName" name="displayName" value="\(v("displayName"))">
                    <label for="givenName">Given Name</label><input type="text" id="givenName" name="givenName" value="\(v("givenName"))">
                    <label for="surname">Surname</label><input type="text" id="surname" name="surname" value="\(v("surname"))">
                    <button type="submit" id="continue" name="continue" value="continue">Create</button>
                    </form>
                    <div class="links"><span></span><a id="cancel" href="\(link(tx, "cancel"))">Cancel</a></div>
                    <p class="note">Passwords: 8–64 characters with at least three of lower case, upper case, digits and symbols.</p>
                    """))
    }

    func profilePage(
        _ tx: AuthorizeTransaction, policy: EmulatorSeed.Policy, user: EmulatorStore.UserRecord, error: String? = nil,
        headers: [(String, String)] = []
    ) -> Response {
        .html(
            page(
                title: "Edit profile",
                body: """
                    \(header("Edit your profile"))
                    <p>Signed in as <strong id="signedInAs">\(HTML.escape(user.email))</strong></p>
                    \(errorBox(error))
                    <form id="attributeVerification" method="post" action="\(HTML.escape(action(tx, "profile")))">
                    \(hiddenTx(tx))
                    <label for="displayName">Display Name</label>
                    <input type="text" id="displayName" name="displayName" value="\(HTML.escape(user.displayName))">
                    <label for="givenName">Given Name</label>
                    <input type="text" id="givenName" name="givenName" value="\(HTML.escape(user.givenName))">
                    <label for="surname">Surname</label><input type="text" id="surname" name="surname" value="\(HTML.escape(user.surname))">
                    <button type="submit" id="continue" name="continue" value="continue">Continue</button>
                    </form>
                    <div class="links"><span></span><a id="cancel" href="\(link(tx, "cancel"))">Cancel</a></div>
                    """), headers: headers)
    }

    func resetEmailPage(_ tx: AuthorizeTransaction, policy: EmulatorSeed.Policy, error: String? = nil) -> Response {
        .html(
            page(
                title: "Reset password",
                body: """
                    \(header("Reset your password"))
                    \(errorBox(error))
                    <form id="attributeVerification" method="post" action="\(HTML.escape(action(tx, "reset")))">
                    \(hiddenTx(tx))
                    <label for="email">Email Address</label>
                    <input type="email" id="email" name="email" value="\(HTML.escape(tx.resetEmail ?? tx.loginHint ?? ""))"
                    autocomplete="email">
                    <button type="submit" id="sendCode" name="sendCode" value="sendCode">Send verification code</button>
                    </form>
                    <div class="links"><span></span><a id="cancel" href="\(link(tx, "cancel"))">Cancel</a></div>
                    """))
    }

    func resetVerifyPage(_ tx: AuthorizeTransaction, policy: EmulatorSeed.Policy, error: String? = nil) -> Response {
        .html(
            page(
                title: "Reset password",
                body: """
                    \(header("Reset your password"))
                    <p>A verification code has been sent to <strong id="codeSentTo">\(HTML.escape(tx.resetEmail ?? ""))</strong>. In the
                    emulator it is in the outbox (<code>GET /_admin/outbox</code>).</p>
                    \(errorBox(error))
                    <form id="attributeVerification" method="post" action="\(HTML.escape(action(tx, "resetverify")))">
                    \(hiddenTx(tx))
                    <label for="verificationCode">Verification code</label>
                    <input type="text" id="verificationCode" name="verificationCode" autocomplete="one-time-code" inputmode="numeric">
                    <label for="newPassword">New Password</label>
                    <input type="password" id="newPassword" name="newPassword" autocomplete="new-password">
                    <label for="reenterPassword">Confirm New Password</label>
                    <input type="password" id="reenterPassword" name="reenterPassword" autocomplete="new-password">
                    <button type="submit" id="continue" name="continue" value="continue">Continue</button>
                    </form>
                    <div class="links"><a id="resendCode" href="\(link(tx, "resend"))">Send a new code</a>
                    <a id="cancel" href="\(link(tx, "cancel"))">Cancel</a></div>
                    """))
    }

    func errorPage(_ e: PageError, headers: [(String, String)] = []) -> Response {
        let text = (e.code.map { "\($0): " } ?? "") + e.message
        return .html(
            page(
                title: "Error",
                body: """
                    <h1>Sorry, but we're having trouble signing you in.</h1>
                    <p class="tenant">\(HTML.escape(tenantName)) · b2c emulator</p>
                    <div class="error" id="error" role="alert">\(HTML.escape(text))</div>
                    <p class="note">Correlation ID: \(UUID().uuidString.lowercased())<br>Timestamp:
                    \(B2CErrorDescription.timestampString(clock.date))</p>
                    """), status: e.status, headers: headers)
    }

    static func passwordProblem(_ p: String) -> String? {
        guard (8...64).contains(p.count) else { return "The password must be between 8 and 64 characters." }
        let classes = [
            p.contains(where: \.isLowercase), p.contains(where: \.isUppercase), p.contains(where: \.isNumber),
            p.contains(where: { !$0.isLetter && !$0.isNumber }),
        ].filter { $0 }.count
        return classes >= 3 ? nil : "The password must have at least 3 of: a lowercase letter, an uppercase letter, a digit, a symbol."
    }

    // MARK: page actions

    func page(_ name: String, _ req: Request, _ context: EmulatorRequestContext, policy: EmulatorSeed.Policy) async throws -> Response {
        var request = req
        let form = req.method == .post ? try await request.formParameters() : [:]
        guard let txID = try form["tx"] ?? req.queryParameters()["tx"], var tx = try store.transaction(id: txID, now: clock.now()) else {
            throw PageError(
                code: "AADB2C90208",
                message: "This sign-in page has expired or was already used. Go back to your application and start again.")
        }
        guard tx.policy.caseInsensitiveCompare(policy.id) == .orderedSame else {
            throw PageError(code: nil, message: "This page belongs to another user flow ('\(tx.policy)').")
        }
        let now = clock.now()
        let signsUp = policy.kind == .signUpSignIn || policy.kind == .signUp
        switch (name, req.method.rawValue) {
        case ("signin", "GET"):
            return signInPage(tx, policy: policy)
        case ("signin", "POST"):
            return try signInSubmitted(form, tx, policy: policy, secure: context.isHTTPS)
        case ("forgot", "GET"):
            try store.deleteTransaction(id: tx.id)
            return redirectError(
                tx.reply, OAuthFailure(error: "access_denied", code: "AADB2C90118", message: "The user has forgotten their password."))
        case ("cancel", _):
            try store.deleteTransaction(id: tx.id)
            return redirectError(
                tx.reply,
                OAuthFailure(
                    error: "access_denied", code: "AADB2C90091", message: "The user has cancelled entering self-asserted information."))
        case ("signup", "GET") where signsUp:
            return signUpPage(tx, policy: policy)
        case ("signup", "POST") where signsUp:
            return try signUpSubmitted(form, tx, policy: policy, secure: context.isHTTPS)
        case ("profile", "POST"):
            guard policy.kind == .editProfile, let oid = tx.oid, let user = try store.user(oid: oid) else { break }
            let display = (form["displayName"] ?? "").trimmingCharacters(in: .whitespaces)
            guard !display.isEmpty else { return profilePage(tx, policy: policy, user: user, error: "Display Name is required.") }
            try store.updateProfile(
                oid: oid, displayName: display,
                givenName: (form["givenName"] ?? "").trimmingCharacters(in: .whitespaces),
                surname: (form["surname"] ?? "").trimmingCharacters(in: .whitespaces))
            let updated = try store.user(oid: oid) ?? user
            let authTime = try currentSession(request)?.authTime ?? now
            return try complete(tx, user: updated, authTime: authTime, newUser: false, secure: context.isHTTPS)
        case ("reset", "POST") where policy.kind == .resetPassword, ("resend", "GET") where policy.kind == .resetPassword:
            let email = name == "resend" ? (tx.resetEmail ?? "") : (form["email"] ?? "").trimmingCharacters(in: .whitespaces)
            return try resetCodeRequested(email: email, &tx, policy: policy)
        case ("resetverify", "POST") where policy.kind == .resetPassword:
            return try resetCodeEntered(form, &tx, policy: policy, secure: context.isHTTPS)
        default:
            break
        }
        throw PageError(code: nil, message: "There is no '\(name)' step (\(req.method)) in the user flow '\(policy.id)'.", status: 404)
    }

    /// The sign-in form: the password checked, then the edit-profile page (edit profile signs in first) or back to the app.
    private func signInSubmitted(
        _ form: [String: String], _ tx: AuthorizeTransaction, policy: EmulatorSeed.Policy, secure: Bool
    ) throws
        -> Response
    {
        var tx = tx
        let now = clock.now()
        let email = (form["logonIdentifier"] ?? "").trimmingCharacters(in: .whitespaces)
        let password = form["password"] ?? ""
        guard !email.isEmpty, !password.isEmpty else {
            return signInPage(tx, policy: policy, error: "Please enter your email address and your password.", email: email)
        }
        guard try store.user(email: email) != nil else {
            return signInPage(tx, policy: policy, error: "We can't seem to find your account.", email: email)
        }
        guard let user = try store.checkPassword(email: email, password: password) else {
            return signInPage(tx, policy: policy, error: "Your password is incorrect.", email: email)
        }
        if policy.kind == .editProfile {
            let sessionID = try store.createSession(oid: user.oid, now: now)
            tx.oid = user.oid
            try store.saveTransaction(tx, now: now)
            return profilePage(tx, policy: policy, user: user, headers: [sessionCookie(sessionID, secure: secure)])
        }
        return try complete(tx, user: user, authTime: now, newUser: false, secure: secure, newSession: true)
    }

    /// The sign-up form: a new user, then back to the app (newUser = true).
    private func signUpSubmitted(
        _ form: [String: String], _ tx: AuthorizeTransaction, policy: EmulatorSeed.Policy, secure: Bool
    ) throws
        -> Response
    {
        let now = clock.now()
        let email = (form["email"] ?? "").trimmingCharacters(in: .whitespaces)
        let pw = form["newPassword"] ?? ""
        guard EmulatorSeed.isPlausibleEmail(email) else {
            return signUpPage(tx, policy: policy, error: "Please enter a valid email address.", form: form)
        }
        if let problem = Self.passwordProblem(pw) { return signUpPage(tx, policy: policy, error: problem, form: form) }
        guard pw == form["reenterPassword"] else {
            return signUpPage(
                tx, policy: policy,
                error: "The password entry fields do not match. Please enter the same password in both fields and try again.",
                form: form)
        }
        let given = (form["givenName"] ?? "").trimmingCharacters(in: .whitespaces)
        let surname = (form["surname"] ?? "").trimmingCharacters(in: .whitespaces)
        var display = (form["displayName"] ?? "").trimmingCharacters(in: .whitespaces)
        if display.isEmpty { display = "\(given) \(surname)".trimmingCharacters(in: .whitespaces) }
        if display.isEmpty { display = email }
        let user: EmulatorStore.UserRecord
        do {
            user = try store.createUser(email: email, password: pw, displayName: display, givenName: given, surname: surname, now: now)
        } catch EmulatorStore.UserError.emailTaken {
            return signUpPage(
                tx, policy: policy, error: "A user with the specified ID already exists. Please choose a different one.", form: form)
        }
        return try complete(tx, user: user, authTime: now, newUser: true, secure: secure, newSession: true)
    }

    /// "Send verification code": the code goes to the outbox (`GET /_admin/outbox`).
    private func resetCodeRequested(email: String, _ tx: inout AuthorizeTransaction, policy: EmulatorSeed.Policy) throws -> Response {
        let now = clock.now()
        guard let user = try store.user(email: email) else {
            return resetEmailPage(tx, policy: policy, error: "An account could not be found for the provided user ID.")
        }
        let code = Random.digits(6)
        try store.send(to: user.email, purpose: "password_reset", code: code, now: now)
        tx.resetEmail = user.email
        tx.resetCodeHash = EmulatorStore.hash(code)
        tx.resetAttempts = 0
        try store.saveTransaction(tx, now: now)
        return resetVerifyPage(tx, policy: policy)
    }

    /// The emailed code and the new password: three wrong codes need a new code; a good one sets the password.
    private func resetCodeEntered(
        _ form: [String: String], _ tx: inout AuthorizeTransaction, policy: EmulatorSeed.Policy, secure: Bool
    )
        throws -> Response
    {
        let now = clock.now()
        guard let email = tx.resetEmail, let expected = tx.resetCodeHash, let user = try store.user(email: email) else {
            throw PageError(code: nil, message: "Send a verification code first.")
        }
        let code = (form["verificationCode"] ?? "").trimmingCharacters(in: .whitespaces)
        guard EmulatorStore.hash(code) == expected else {
            tx.resetAttempts += 1
            if tx.resetAttempts >= 3 { tx.resetCodeHash = nil }
            try store.saveTransaction(tx, now: now)
            let message =
                tx.resetAttempts >= 3
                ? "You've made too many incorrect attempts. Please send a new code."
                : "The verification code you have entered does not match our records. Please try again, or request a new code."
            return resetVerifyPage(tx, policy: policy, error: message)
        }
        let pw = form["newPassword"] ?? ""
        if let problem = Self.passwordProblem(pw) { return resetVerifyPage(tx, policy: policy, error: problem) }
        guard pw == form["reenterPassword"] else {
            return resetVerifyPage(
                tx, policy: policy,
                error: "The password entry fields do not match. Please enter the same password in both fields and try again.")
        }
        try store.setPassword(oid: user.oid, password: pw, now: now)
        return try complete(tx, user: user, authTime: now, newUser: false, secure: secure, newSession: true)
    }
}
