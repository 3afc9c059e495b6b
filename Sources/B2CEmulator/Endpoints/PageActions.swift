import B2CProtocol
import Foundation
import Hummingbird

/// What the pages post back: each step of a user flow. Plain HTML forms that work without JavaScript, with the
/// element ids of B2C's own pages so that browser automation written for B2C works here.
/// What the pages send back: each step of the user journeys (sign-in, sign-up, edit profile, reset with an emailed code).
extension AuthorizeEndpoint {
    /// The string id of what is wrong with a new password (B2C's default rules), or nil.
    static func passwordProblem(_ p: String) -> String? {
        guard (8...64).contains(p.count) else { return "password_length" }
        let classes = [
            p.contains(where: \.isLowercase), p.contains(where: \.isUppercase), p.contains(where: \.isNumber),
            p.contains(where: { !$0.isLetter && !$0.isNumber }),
        ].filter { $0 }.count
        return classes >= 3 ? nil : "password_classes"
    }

    // MARK: page actions

    func page(_ name: String, _ req: Request, _ context: EmulatorRequestContext, policy: EmulatorSeed.Policy) async throws -> Response {
        var request = req
        let form = req.method == .post ? try await request.formParameters() : [:]
        guard let txID = try form["tx"] ?? req.queryParameters()["tx"], let tx = try store.transaction(id: txID, now: clock.now()) else {
            throw PageError(
                code: "AADB2C90208",
                message: "This sign-in page has expired or was already used. Go back to your application and start again.")
        }
        guard tx.policy.caseInsensitiveCompare(policy.id) == .orderedSame else {
            throw PageError(code: nil, message: "This page belongs to another user flow ('\(tx.policy)').")
        }
        store.journeys.note(
            tx.id, .step, name,
            ["method": .string(req.method.rawValue), "form": .object(JourneyRecorder.form(form)), "at": .string(tx.step.name)])
        return try await recording(tx.id) { try await pageStep(name, req, request, context, policy: policy, form: form, tx: tx) }
    }

    /// A step of journey `id`: an error page it ends with is the journey's end in the recorder.
    func recording(_ id: String, _ step: () async throws -> Response) async throws -> Response {
        do { return try await step() } catch let e as PageError {
            store.journeys.end(id, outcome: e.code ?? "error page", ["message": .string(e.message)])
            throw e
        }
    }

    /// One page's request, its transaction found: the step it belongs to.
    private func pageStep(
        _ name: String, _ req: Request, _ request: Request, _ context: EmulatorRequestContext, policy: EmulatorSeed.Policy,
        form: [String: String], tx: AuthorizeTransaction
    ) async throws -> Response {
        var tx = tx
        // The one rule of which page may come next: the step the transaction is at says which requests it takes.
        guard tx.step.accepts.contains(name) else {
            throw PageError(
                code: nil,
                message: "This page is not the step this sign-in is at (it waits for \(tx.step.name)). Go back to your application "
                    + "and start again.")
        }
        let now = clock.now()
        let signsUp = policy.kind == .signUpSignIn || policy.kind == .signUp
        switch (name, req.method.rawValue) {
        case ("signin", "GET"):
            return pages.signInPage(tx, policy: policy)
        case ("signin", "POST"):
            return try await signInSubmitted(form, tx, policy: policy, secure: context.isHTTPS)
        case ("idp", "POST"):
            return try await providerChosen(form, tx, policy: policy, origin: context.origin)
        case ("socialsignup", "POST"):
            return try await socialSignUpSubmitted(form, tx, policy: policy, secure: context.isHTTPS)
        case ("mfasend", "POST"), ("mfaverify", "POST"), ("mfacontinue", "POST"), ("mfaqr", "GET"):
            return try await SecondFactorStep(self).resume(name, form, tx, policy: policy, request: request, secure: context.isHTTPS)
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
            return try await signUpPageStarting(tx, policy: policy)
        case ("signup", "POST") where signsUp:
            return try await signUpSubmitted(form, tx, policy: policy, secure: context.isHTTPS)
        case ("profile", "POST"):
            guard policy.kind == .editProfile, let oid = tx.oid, let user = try store.user(oid: oid) else { break }
            let display = (form["displayName"] ?? "").trimmingCharacters(in: .whitespaces)
            guard !display.isEmpty else {
                return pages.profilePage(tx, policy: policy, user: user, error: pages.strings(tx)["error_displayName_required"])
            }
            let collected: [String: JSONValue]
            do { collected = try Self.collectedAttributes(form, policy: policy) } catch let e as AttributeProblem {
                return pages.profilePage(tx, policy: policy, user: user, error: "\(e.label): \(pages.strings(tx)[e.stringID])")
            }
            if !collected.isEmpty { try store.setAttributes(oid: oid, user.attributes.merging(collected) { _, new in new }) }
            try store.updateProfile(
                oid: oid, displayName: display,
                givenName: (form["givenName"] ?? "").trimmingCharacters(in: .whitespaces),
                surname: (form["surname"] ?? "").trimmingCharacters(in: .whitespaces))
            let updated = try store.user(oid: oid) ?? user
            let authTime = try sessions.current(request, now: now)?.authTime ?? now
            return try await TokenIssuanceStep(self).enter(tx, user: updated, authTime: authTime, newUser: false, secure: context.isHTTPS)
        case ("reset", "POST") where policy.kind == .resetPassword, ("resend", "GET") where policy.kind == .resetPassword:
            let email = name == "resend" ? (tx.resetEmail ?? "") : (form["email"] ?? "").trimmingCharacters(in: .whitespaces)
            return try await resetCodeRequested(email: email, &tx, policy: policy)
        case ("resetverify", "POST") where policy.kind == .resetPassword:
            return try await resetCodeEntered(form, &tx, policy: policy, secure: context.isHTTPS)
        default:
            break
        }
        throw PageError(code: nil, message: "There is no '\(name)' step (\(req.method)) in the user flow '\(policy.id)'.", status: 404)
    }

    /// The sign-in form: the password checked, then the edit-profile page (edit profile signs in first) or back to the app.
    private func signInSubmitted(
        _ form: [String: String], _ tx: AuthorizeTransaction, policy: EmulatorSeed.Policy, secure: Bool
    ) async throws
        -> Response
    {
        var tx = tx
        let now = clock.now()
        let email = (form["logonIdentifier"] ?? "").trimmingCharacters(in: .whitespaces)
        let password = form["password"] ?? ""
        guard !email.isEmpty, !password.isEmpty else {
            return pages.signInPage(tx, policy: policy, error: pages.strings(tx)["requiredField_credentials"], email: email)
        }
        guard try store.user(email: email) != nil else {
            return pages.signInPage(tx, policy: policy, error: pages.strings(tx)["UserMessageIfClaimsPrincipalDoesNotExist"], email: email)
        }
        guard let user = try store.checkPassword(email: email, password: password) else {
            return pages.signInPage(tx, policy: policy, error: pages.strings(tx)["UserMessageIfInvalidPassword"], email: email)
        }
        tx.rememberMe = policy.session.kmsiDays != nil && ["true", "on"].contains(form["rememberMe"]?.lowercased() ?? "")
        if policy.kind == .editProfile {
            let keep = tx.rememberMe ? policy.session.kmsiDays.map { $0 * 86_400 } : nil
            let sessionID = try store.createSession(
                oid: user.oid, now: now, expiresAt: now + (keep ?? policy.session.lifetimeMinutes * 60), persistent: keep != nil,
                clientID: tx.clientId, policy: policy.id)
            tx.oid = user.oid
            try store.saveTransaction(tx, now: now)
            return pages.profilePage(
                tx, policy: policy, user: user, headers: [sessions.cookie(sessionID, secure: secure, keepSeconds: keep)])
        }
        return try await SecondFactorStep(self).enter(
            tx, user: user, authTime: now, newUser: false, secure: secure, newSession: true, sessionDidMFA: false, policy: policy)
    }

    /// The sign-up form: a new user, then back to the app (newUser = true).
    private func signUpSubmitted(
        _ form: [String: String], _ tx: AuthorizeTransaction, policy: EmulatorSeed.Policy, secure: Bool
    ) async throws
        -> Response
    {
        var tx = tx
        let t = pages.strings(tx)
        let now = clock.now()
        let email = (form["email"] ?? "").trimmingCharacters(in: .whitespaces)
        switch form["step"] ?? "create" {
        case "send", "verify", "edit": return try await verifySignUpEmail(form, &tx, email: email, policy: policy)
        default: break
        }
        guard EmulatorSeed.isPlausibleEmail(email) else {
            return pages.signUpPage(tx, policy: policy, error: t["error_invalid_email"], form: form)
        }
        if policy.emailVerification != .off && tx.verifiedEmail?.lowercased() != email.lowercased() {
            return pages.signUpPage(tx, policy: policy, error: t["UserMessageIfClaimNotVerified"], form: form)
        }
        let pw = form["newPassword"] ?? ""
        if let problem = Self.passwordProblem(pw) { return pages.signUpPage(tx, policy: policy, error: t[problem], form: form) }
        guard pw == form["reenterPassword"] else {
            return pages.signUpPage(tx, policy: policy, error: t["error_passwordEntryMismatch"], form: form)
        }
        var collected: [String: JSONValue]
        do { collected = try Self.collectedAttributes(form, policy: policy) } catch let e as AttributeProblem {
            return pages.signUpPage(tx, policy: policy, error: "\(e.label): \(t[e.stringID])", form: form)
        }
        var given = (form["givenName"] ?? "").trimmingCharacters(in: .whitespaces)
        var surname = (form["surname"] ?? "").trimmingCharacters(in: .whitespaces)
        var display = (form["displayName"] ?? "").trimmingCharacters(in: .whitespaces)
        // "Before creating the user": the connector may stop the sign-up, send the page back, or override what was typed.
        let claims = connectorClaims(
            email: email, identity: nil, displayName: display, givenName: given, surname: surname, attributes: collected)
        switch try await callConnector(.postAttributeCollection, policy: policy, tx: tx, claims: claims) {
        case .block(let message): return try blockPage(tx, message: message)
        case .validationError(let message): return pages.signUpPage(tx, policy: policy, error: message, form: form)
        case .proceed(let returned):
            Self.apply(returned, policy: policy, displayName: &display, givenName: &given, surname: &surname, attributes: &collected)
        }
        // External ID's OnAttributeCollectionSubmit: the extension may change values, send the page back, or stop here.
        let info = userSignUpInfo(
            email: email, names: ["displayName": display, "givenName": given, "surname": surname], attributes: collected, policy: policy)
        if let action = try await extensionAction(.onAttributeCollectionSubmit, tx, data: ["userSignUpInfo": info]) {
            switch action["@odata.type"]?.stringValue ?? "" {
            case "microsoft.graph.attributeCollectionSubmit.showBlockPage":
                return try blockPage(tx, message: action["message"]?.stringValue ?? "")
            case "microsoft.graph.attributeCollectionSubmit.showValidationError":
                let fields = (action["attributeErrors"]?.objectValue ?? [:]).sorted { $0.key < $1.key }.map { name, text in
                    let attribute = storedAttributeName(name)
                    let label = policy.attributes.first { $0.name == attribute }?.label ?? attribute
                    return "\(label): \(text.stringValue ?? "")"
                }
                let message = ([action["message"]?.stringValue ?? ""] + fields).filter { !$0.isEmpty }.joined(separator: " ")
                return pages.signUpPage(tx, policy: policy, error: message, form: form)
            case "microsoft.graph.attributeCollectionSubmit.modifyAttributeValues":
                var changed: [String: JSONValue] = [:]
                for (name, value) in action["attributes"]?.objectValue ?? [:] { changed[storedAttributeName(name)] = value }
                Self.apply(changed, policy: policy, displayName: &display, givenName: &given, surname: &surname, attributes: &collected)
            default: break
            }
        }
        if display.isEmpty { display = "\(given) \(surname)".trimmingCharacters(in: .whitespaces) }
        if display.isEmpty { display = email }
        var user: EmulatorStore.UserRecord
        do {
            user = try store.createUser(email: email, password: pw, displayName: display, givenName: given, surname: surname, now: now)
        } catch EmulatorStore.UserError.emailTaken {
            return pages.signUpPage(tx, policy: policy, error: t["UserMessageIfClaimsPrincipalAlreadyExists"], form: form)
        }
        if !collected.isEmpty {
            try store.setAttributes(oid: user.oid, collected)
            user.attributes = collected
        }
        return try await SecondFactorStep(self).enter(
            tx, user: user, authTime: now, newUser: true, secure: secure, newSession: true, sessionDidMFA: false, policy: policy)
    }

    /// The sign-up page's email verification: send a code (to the outbox), verify it, or change the address.
    private func verifySignUpEmail(
        _ form: [String: String], _ tx: inout AuthorizeTransaction, email: String, policy: EmulatorSeed.Policy
    ) async throws -> Response {
        let t = pages.strings(tx)
        let now = clock.now()
        switch form["step"] {
        case "send":
            guard EmulatorSeed.isPlausibleEmail(email) else {
                return pages.signUpPage(tx, policy: policy, error: t["error_invalid_email"], form: form)
            }
            let code = try store.mfaKnobs.fixedCode ?? Random.digits(6)
            try await sendEmailCode(
                to: email, purpose: "signup", code: code, now: now, expiresAt: now + SecondFactorStep.mfaCodeLifetime, tx: tx.callout)
            (tx.signUpEmail, tx.signUpCodeHash, tx.signUpCodeExpiresAt, tx.verifiedEmail) =
                (email, EmulatorStore.hash(code), now + SecondFactorStep.mfaCodeLifetime, nil)
        case "verify":
            let typed = (form["email_ver_input"] ?? form["verificationCode"] ?? "").filter { !$0.isWhitespace }
            guard let hash = tx.signUpCodeHash, tx.signUpEmail?.lowercased() == email.lowercased() else {
                return pages.signUpPage(tx, policy: policy, error: t["ver_fail_retry"], form: form)
            }
            guard now < (tx.signUpCodeExpiresAt ?? 0) else {
                return pages.signUpPage(tx, policy: policy, error: t["ver_fail_code_expired"], form: form)
            }
            guard EmulatorStore.hash(typed) == hash else {
                return pages.signUpPage(tx, policy: policy, error: t["ver_fail_retry"], form: form)
            }
            (tx.verifiedEmail, tx.signUpCodeHash) = (email, nil)
        default:  // edit: another address, verified anew
            (tx.verifiedEmail, tx.signUpCodeHash, tx.signUpEmail) = (nil, nil, nil)
        }
        try store.saveTransaction(tx, now: now)
        return pages.signUpPage(tx, policy: policy, form: form)
    }

    /// The sign-up page as it first shows: in an External ID tenant, after OnAttributeCollectionStart (pre-filled values,
    /// or a block page).
    func signUpPageStarting(_ tx: AuthorizeTransaction, policy: EmulatorSeed.Policy) async throws -> Response {
        let info = userSignUpInfo(email: "", names: [:], attributes: [:], policy: policy)
        guard let action = try await extensionAction(.onAttributeCollectionStart, tx, data: ["userSignUpInfo": info]) else {
            return pages.signUpPage(tx, policy: policy)
        }
        switch action["@odata.type"]?.stringValue ?? "" {
        case "microsoft.graph.attributeCollectionStart.showBlockPage":
            return try blockPage(tx, message: action["message"]?.stringValue ?? "")
        case "microsoft.graph.attributeCollectionStart.setPrefillValues":
            var form: [String: String] = [:]
            for (name, value) in action["inputs"]?.objectValue ?? [:] {
                form[storedAttributeName(name)] =
                    switch value {
                    case .bool(let b): b ? "true" : "false"
                    case .number(let n): Int(exactly: n).map(String.init) ?? String(n)
                    default: value.stringValue ?? ""
                    }
            }
            return pages.signUpPage(tx, policy: policy, form: form)
        default:
            return pages.signUpPage(tx, policy: policy)
        }
    }

    /// A connector's `Continue` claims over what the page collected: the names and the user flow's attributes (never the
    /// email, as B2C's contract says), each of the attribute's type.
    static func apply(
        _ claims: [String: JSONValue], policy: EmulatorSeed.Policy, displayName: inout String, givenName: inout String,
        surname: inout String, attributes: inout [String: JSONValue]
    ) {
        for (name, value) in claims {
            switch name {
            case "displayName": displayName = value.stringValue ?? displayName
            case "givenName": givenName = value.stringValue ?? givenName
            case "surname": surname = value.stringValue ?? surname
            default:
                guard let a = policy.attributes.first(where: { $0.name == name }), !EmulatorSeed.Attribute.names.contains(name) else {
                    continue
                }
                switch (a.kind, value) {
                case (.string, .string), (.boolean, .bool): attributes[name] = value
                case (.int, .number(let n)) where Int(exactly: n) != nil: attributes[name] = value
                default: continue
                }
            }
        }
    }

    struct AttributeProblem: Error {
        var label: String
        /// The page string that says what is wrong (`required_field`, `error_fieldIncorrect`).
        var stringID: String
    }

    /// The attributes of the page beyond the names, typed as the user flow declares them; a required one missing or an
    /// Int that is not one is a problem the page shows.
    static func collectedAttributes(_ form: [String: String], policy: EmulatorSeed.Policy) throws -> [String: JSONValue] {
        var out: [String: JSONValue] = [:]
        for a in policy.attributes {
            let value = (form[a.name] ?? "").trimmingCharacters(in: .whitespaces)
            if a.required && (a.kind == .boolean ? value != "true" : value.isEmpty) {
                throw AttributeProblem(label: a.label, stringID: "required_field")
            }
            if EmulatorSeed.Attribute.names.contains(a.name) { continue }
            switch a.kind {
            case .string where !value.isEmpty: out[a.name] = .string(value)
            case .int where !value.isEmpty:
                guard let n = Int(value) else { throw AttributeProblem(label: a.label, stringID: "error_fieldIncorrect") }
                out[a.name] = JSONValue(n)
            case .boolean: out[a.name] = .bool(value == "true")
            default: break
            }
        }
        return out
    }

    /// "Send verification code": the code goes to the outbox (`GET /_admin/outbox`).
    private func resetCodeRequested(
        email: String, _ tx: inout AuthorizeTransaction, policy: EmulatorSeed.Policy
    ) async throws
        -> Response
    {
        let now = clock.now()
        guard let user = try store.user(email: email) else {
            return pages.resetEmailPage(tx, policy: policy, error: pages.strings(tx)["reset_account_not_found"])
        }
        let code = Random.digits(6)
        try await sendEmailCode(to: user.email, purpose: "password_reset", code: code, now: now, tx: tx.callout)
        tx.resetEmail = user.email
        tx.resetCodeHash = EmulatorStore.hash(code)
        tx.resetAttempts = 0
        try store.saveTransaction(tx, now: now)
        return pages.resetVerifyPage(tx, policy: policy)
    }

    /// The emailed code and the new password: three wrong codes need a new code; a good one sets the password.
    private func resetCodeEntered(
        _ form: [String: String], _ tx: inout AuthorizeTransaction, policy: EmulatorSeed.Policy, secure: Bool
    )
        async throws -> Response
    {
        let now = clock.now()
        let t = pages.strings(tx)
        guard let email = tx.resetEmail, let expected = tx.resetCodeHash, let user = try store.user(email: email) else {
            throw PageError(code: nil, message: "Send a verification code first.")
        }
        let code = (form["verificationCode"] ?? "").trimmingCharacters(in: .whitespaces)
        guard EmulatorStore.hash(code) == expected else {
            tx.resetAttempts += 1
            if tx.resetAttempts >= 3 { tx.resetCodeHash = nil }
            try store.saveTransaction(tx, now: now)
            let message = t[tx.resetAttempts >= 3 ? "reset_too_many_attempts" : "reset_code_mismatch"]
            return pages.resetVerifyPage(tx, policy: policy, error: message)
        }
        let pw = form["newPassword"] ?? ""
        if let problem = Self.passwordProblem(pw) { return pages.resetVerifyPage(tx, policy: policy, error: t[problem]) }
        guard pw == form["reenterPassword"] else {
            return pages.resetVerifyPage(tx, policy: policy, error: t["error_passwordEntryMismatch"])
        }
        try store.setPassword(oid: user.oid, password: pw, now: now)
        return try await TokenIssuanceStep(self).enter(tx, user: user, authTime: now, newUser: false, secure: secure, newSession: true)
    }
}
