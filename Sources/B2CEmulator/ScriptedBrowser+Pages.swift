import AsyncHTTPClient
import B2CProtocol
import Foundation
import NIOCore
import NIOSSL

extension ScriptedBrowser {
    /// The tenant's own pages after the identity providers: cancel where the persona cancels, the second factor, the
    /// sign-in form (a wrong password first, "Forgot your password?"), the reset and profile forms. Returns the next page.
    func localAccountPage(_ page: Page, start: URL, as persona: Persona, wrongTried: inout Bool) async throws -> Page {
        let resetKey = "reset-done:\(persona.email)"
        let resetDone = lock.withLock { jar[resetKey] != nil }
        let onSignup = page.body.contains("id=\"reenterPassword\"") && Self.form(page, "attributeVerification") != nil
        let onResetCode = page.body.contains("id=\"verificationCode\"")
        let cancelHere =
            persona.action == .cancel || (persona.action == .cancelSignup && onSignup)
            || (persona.action == .cancelResetCode && onResetCode)
        if cancelHere, let cancel = Self.link(page, "cancel") {
            return try await fetch(cancel)
        } else if let next = try await secondFactor(page, start: start, as: persona) {
            return next
        } else if persona.action == .cancelSignup, Self.form(page, "localAccountForm") != nil {
            guard let signup = Self.link(page, "createAccount") else {
                throw Failure(description: "no 'Sign up now' link at \(page.url.path)")
            }
            return try await fetch(signup)
        } else if let f = Self.form(page, "localAccountForm") {
            if (persona.action == .forgot && !resetDone) || persona.action == .cancelResetCode,
                let forgot = Self.link(page, "forgotPassword")
            {
                return try await fetch(forgot)
            }
            var fields = f.fields
            fields["logonIdentifier"] = persona.email
            if fields["signInName"] != nil { fields["signInName"] = persona.email }  // a custom policy's page: the claim's id
            let password = resetDone ? (persona.newPassword ?? persona.password) : persona.password
            fields["password"] = persona.action == .wrongThenRight && !wrongTried ? "definitely-wrong" : password
            if persona.keepSignedIn && page.body.contains("id=\"rememberMe\"") { fields["rememberMe"] = "true" }
            wrongTried = true
            return try await fetch(f.action, form: fields)
        } else if let f = Self.form(page, "attributeVerification"), f.action.path.hasSuffix("/policy") {
            return try await fetch(
                f.action, form: try await customPolicyPage(page, f.fields, start: start, as: persona, resetKey: resetKey))
        } else if page.body.contains("id=\"passwordChangeIntro\""), let f = Self.form(page, "attributeVerification") {
            // An administrator asked for a new password at this sign-in: the persona's new one, kept for the next visits.
            guard let newPassword = persona.newPassword else {
                throw Failure(
                    description: "the tenant asks \(persona.email) for a new password at this sign-in (an administrator set "
                        + "forceChangePasswordNextSignIn): give one in B2C_EMULATOR_NEW_PASSWORD")
            }
            lock.withLock { jar[resetKey] = "1" }
            return try await fetch(f.action, form: f.fields.merging(["newPassword": newPassword, "reenterPassword": newPassword]) { $1 })
        } else if let f = Self.form(page, "attributeVerification") {
            var fields = f.fields
            if page.body.contains("id=\"sendCode\"") {
                fields["email"] = persona.email
            } else if page.body.contains("id=\"verificationCode\"") {
                let outbox = try await admin("/_admin/outbox?to=\(FormEncoding.escape(persona.email))", start: start)
                fields["verificationCode"] =
                    (try? JSONValue.parse(outbox.body))?["messages"]?.arrayValue?.first?["code"]?.stringValue ?? ""
                fields["newPassword"] = persona.newPassword ?? ""
                fields["reenterPassword"] = persona.newPassword ?? ""
                lock.withLock { jar[resetKey] = "1" }
            } else {
                if let v = persona.displayName { fields["displayName"] = v }
                if let v = persona.givenName { fields["givenName"] = v }
                if let v = persona.surname { fields["surname"] = v }
            }
            return try await fetch(f.action, form: fields)
        } else {
            throw Failure(description: "no form to fill at \(page.url.path): \(page.body.prefix(300))")
        }
    }
}

extension ScriptedBrowser {
    /// The second-factor pages (email, phone, authenticator), done as a person with the outbox and an authenticator app
    /// at hand; nil when `page` is none of them.
    func secondFactor(_ page: Page, start: URL, as persona: Persona) async throws -> Page? {
        let wrong = persona.action == .wrongCodes
        if let f = Self.form(page, "emailVerifyForm") {
            var fields = f.fields
            fields["ReadOnlyEmail_ver_input"] = wrong ? "000000" : try await sentCode(page, start: start)
            return try await fetch(f.action, form: fields)
        }
        if page.body.contains("id=\"ReadOnlyEmail_success\""), let f = Self.form(page, "attributeVerification") {
            return try await fetch(f.action, form: f.fields)
        }
        if let f = Self.form(page, "emailSendForm") { return try await fetch(f.action, form: f.fields) }
        if let f = Self.form(page, "codeVerification") {
            var fields = f.fields
            fields["verificationCode"] = wrong ? "000000" : try await sentCode(page, start: start)
            return try await fetch(f.action, form: fields)
        }
        if let f = Self.form(page, "phoneSendForm") {
            var fields = f.fields
            fields["channel"] = "sms"
            if page.body.contains("id=\"number\"") {
                guard let phone = persona.phone else {
                    throw Failure(description: "the page asks for a phone number and the persona has none (--phone)")
                }
                fields["countryCode"] = ""
                fields["number"] = phone
            }
            return try await fetch(f.action, form: fields)
        }
        let key = "totp:\(persona.email.lowercased())"
        if page.body.contains("id=\"secretKey\""), let f = Self.form(page, "attributeVerification"),
            let r = page.body.range(of: "id=\"secretKey\">")
        {
            lock.withLock { jar[key] = String(page.body[r.upperBound...].prefix { $0 != "<" }) }
            return try await fetch(f.action, form: f.fields)
        }
        if page.body.contains("id=\"otpCode\""), let f = Self.form(page, "attributeVerification") {
            // A code is taken once (RFC 6238 §5.2): after one was used, the next step's code, which the tenant takes
            // early (one step of drift), as an authenticator app shows it 30 seconds later.
            let stepKey = "totp-step:\(persona.email.lowercased())"
            let now = try await tenantTime(start) / TOTP.period
            let step = max(now, lock.withLock { jar[stepKey].flatMap { Int($0) }.map { $0 + 1 } } ?? now)
            guard let secret = lock.withLock({ jar[key] }) ?? persona.totpSecret,
                let code = TOTP.code(secret: secret, at: step * TOTP.period)
            else { throw Failure(description: "the page asks for an authenticator code and no secret is known for \(persona.email)") }
            guard step <= now + 1 else {
                throw Failure(
                    description: "\(persona.email)'s authenticator codes of this 30 seconds and the next were used already (each is "
                        + "taken once); sign in again in 30 seconds")
            }
            if !wrong { lock.withLock { jar[stepKey] = String(step) } }
            var fields = f.fields
            fields["otpCode"] = wrong ? String(((Int(code.prefix(1)) ?? 0) + 1) % 10) + code.dropFirst() : code
            return try await fetch(f.action, form: fields)
        }
        return nil
    }

    /// The sign-up journey: "Sign up now" on the sign-in page, then the sign-up page's steps (send the code, type it,
    /// create); nil when `page` is neither.
    func signUp(_ page: Page, start: URL, as persona: Persona) async throws -> Page? {
        if Self.form(page, "localAccountForm") != nil, let link = Self.link(page, "createAccount") { return try await fetch(link) }
        guard page.body.contains("id=\"reenterPassword\""), let f = Self.form(page, "attributeVerification"),
            f.action.path.hasSuffix("/signup") || f.action.path.hasSuffix("/policy")
        else { return nil }
        let customPolicy = f.action.path.hasSuffix("/policy")
        if let error = page.body.range(of: "id=\"error\" role=\"alert\">") {
            // The page refused what was typed (a taken address, a weak password, a required attribute): say so and stop.
            let message = page.body[error.upperBound...].prefix { $0 != "<" }
            throw Failure(description: "the sign-up page says: \(PageParser.unescape(String(message)))")
        }
        var fields = f.fields
        fields["email"] = persona.email
        // B2C's classic widget (`email_ver_*`) or its display control (`emailVerificationControl_but_*`, `#verificationCode`).
        if page.body.contains("id=\"email_ver_but_send\"") || page.body.contains("id=\"emailVerificationControl_but_send_code\"") {
            fields["step"] = "send"
        } else if page.body.contains("id=\"email_ver_input\"") {
            fields["step"] = "verify"
            fields["email_ver_input"] = try await sentCode(page, start: start)
        } else if page.body.contains("id=\"emailVerificationControl_but_verify_code\"") {
            fields["step"] = "verify"
            fields["verificationCode"] = try await sentCode(page, start: start)
        } else {
            fields["step"] = customPolicy ? "continue" : "create"
            fields["newPassword"] = persona.password
            fields["reenterPassword"] = persona.password
            if let v = persona.displayName { fields["displayName"] = v }
            if let v = persona.givenName { fields["givenName"] = v }
            if let v = persona.surname { fields["surname"] = v }
            for (k, v) in persona.attributes { fields[k] = v }
        }
        return try await fetch(f.action, form: fields)
    }

    /// The newest code the tenant sent for this page's journey, from its outbox.
    func sentCode(_ page: Page, start: URL) async throws -> String {
        let tx = page.body.range(of: "name=\"tx\" value=\"").map { String(page.body[$0.upperBound...].prefix { $0 != "\"" }) } ?? ""
        let outbox = try await admin("/_admin/outbox", start: start)
        let messages = (try? JSONValue.parse(outbox.body))?["messages"]?.arrayValue ?? []
        guard let code = messages.first(where: { $0["journey"]?.stringValue == tx })?["code"]?.stringValue else {
            throw Failure(description: "no code in the outbox for this sign-in")
        }
        return code
    }

    /// A read of the tenant's admin surface, with the admin token when the browser has one. A refusal is said as one, never
    /// read as an empty outbox.
    func admin(_ path: String, start: URL) async throws -> Page {
        let page = try await fetch(URL(string: path, relativeTo: start)!.absoluteURL, bearer: adminToken)
        guard page.status != 401 && page.status != 403 else {
            let endpoint = String(path.prefix { $0 != "?" })
            throw Failure(
                description: "the tenant's admin surface refused \(endpoint) (HTTP \(page.status)) "
                    + (adminToken == nil ? "without the admin token" : "with this admin token"), adminRefused: true)
        }
        return page
    }

    /// The tenant's clock (its admin clock may be moved), for an authenticator code the tenant accepts.
    func tenantTime(_ start: URL) async throws -> Int {
        let page = try await admin("/_admin/clock", start: start)
        return (try? JSONValue.parse(page.body))?["now"]?.lenientInt ?? Int(Date().timeIntervalSince1970)
    }
}

/// Reading the emulator's pages as a person's browser would: a form (by id, or the form_post page's by name) with its
/// action and fields, and a link by id. Shared by the scripted user agent and the emulator's tests.
public enum PageParser {
    public static func form(_ id: String, in body: String) -> (action: String, fields: [String: String])? {
        guard let start = body.range(of: "<form id=\"\(id)\"") ?? body.range(of: "<form method=\"post\" name=\"\(id)\"") else { return nil }
        return form(at: start.lowerBound, in: body)
    }

    /// A SAML identity provider's answer: the page's form carrying `SAMLResponse` (its attributes in any order).
    static func samlResponseForm(in body: String) -> (action: String, fields: [String: String])? {
        guard body.contains("name=\"SAMLResponse\""), let start = body.range(of: "<form") else { return nil }
        return form(at: start.lowerBound, in: body).flatMap { $0.fields["SAMLResponse"] == nil ? nil : $0 }
    }

    static func form(at start: String.Index, in body: String) -> (action: String, fields: [String: String])? {
        let rest = body[start...]
        guard let end = rest.range(of: "</form>") else { return nil }
        let html = rest[..<end.upperBound]
        var fields: [String: String] = [:]
        for tag in html.components(separatedBy: "<input").dropFirst() {
            let t = Substring(tag.prefix { $0 != ">" })
            // A browser sends a checkbox or a radio button only when it is checked.
            if ["checkbox", "radio"].contains(attribute("type", t)) && !t.contains(" checked") { continue }
            if let name = attribute("name", t) { fields[name] = attribute("value", t) ?? "" }
        }
        guard let action = attribute("action", html) else { return nil }
        return (action, fields)
    }

    public static func link(_ id: String, in body: String) -> String? {
        guard let r = body.range(of: "id=\"\(id)\" href=\"") else { return nil }
        return unescape(String(body[r.upperBound...].prefix { $0 != "\"" }))
    }

    static func attribute(_ name: String, _ html: Substring) -> String? {
        guard let r = html.range(of: " \(name)=\"") else { return nil }
        return unescape(String(html[r.upperBound...].prefix { $0 != "\"" }))
    }

    /// The page type B2C's `<div id="api" data-name="…">` names (`Unified`, `SelfAsserted`, …).
    public static func dataName(in html: String) -> String? {
        guard let r = html.range(of: #"<div id="api"[^>]*data-name="[^"]*""#, options: .regularExpression) else { return nil }
        let tag = html[r]
        return tag.range(of: "data-name=\"").map { String(tag[$0.upperBound...].prefix { $0 != "\"" }) }
    }

    /// The entities `HTML.escape` writes.
    public static func unescape(_ s: String) -> String {
        s.replacingOccurrences(of: "&quot;", with: "\"").replacingOccurrences(of: "&#39;", with: "'").replacingOccurrences(
            of: "&lt;", with: "<"
        )
        .replacingOccurrences(of: "&gt;", with: ">").replacingOccurrences(of: "&amp;", with: "&")
    }

}

extension ScriptedBrowser {
    /// A custom policy's self-asserted page (its fields are its claim type ids): an address to verify first, then every
    /// field the persona has a value for.
    func customPolicyPage(
        _ page: Page, _ form: [String: String], start: URL, as persona: Persona, resetKey: String
    ) async throws -> [String: String] {
        var fields = form
        if page.body.contains("id=\"email_ver_but_send\"") {
            (fields["email"], fields["step"]) = (persona.email, "send")
            return fields
        }
        if page.body.contains("id=\"email_ver_input\"") {
            (fields["step"], fields["email_ver_input"]) = ("verify", try await sentCode(page, start: start))
            return fields
        }
        fields["step"] = "continue"
        let has = { (id: String) in page.body.contains("id=\"\(id)\"") }
        let resetDone = lock.withLock { jar[resetKey] != nil }
        if has("signInName") { fields["signInName"] = persona.email }
        if has("password") { fields["password"] = resetDone ? (persona.newPassword ?? persona.password) : persona.password }
        if has("reenterPassword") {
            let password = persona.newPassword ?? persona.password
            (fields["newPassword"], fields["reenterPassword"]) = (password, password)
            lock.withLock { jar[resetKey] = "1" }
        }
        if let v = persona.displayName, has("displayName") { fields["displayName"] = v }
        if let v = persona.givenName, has("givenName") { fields["givenName"] = v }
        if let v = persona.surname, has("surname") { fields["surname"] = v }
        for (k, v) in persona.attributes where has(k) { fields[k] = v }
        return fields
    }
}
