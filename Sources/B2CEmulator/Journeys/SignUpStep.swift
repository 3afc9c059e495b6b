import B2CProtocol
import Foundation
import Hummingbird

/// Sign-up with a local account: the page (after External ID's OnAttributeCollectionStart), its email verification, the
/// password rules, the user flow's attributes, B2C's `postAttributeCollection` connector and External ID's
/// OnAttributeCollectionSubmit (its validations), then the account written to the directory.
struct SignUpStep: OrchestrationStep {
    let parts: JourneyParts

    func enter(_ tx: AuthorizeTransaction, _ visit: Visit, policy: EmulatorSeed.Policy) async throws -> StepOutcome {
        try store.saveTransaction(tx, now: clock.now())
        return .respond(try await signUpPageStarting(tx, policy: policy))
    }

    /// The string id of what is wrong with a new password (B2C's default rules), or nil.
    static func passwordProblem(_ p: String) -> String? {
        guard (8...64).contains(p.count) else { return "password_length" }
        let classes = [
            p.contains(where: \.isLowercase), p.contains(where: \.isUppercase), p.contains(where: \.isNumber),
            p.contains(where: { !$0.isLetter && !$0.isNumber }),
        ].filter { $0 }.count
        return classes >= 3 ? nil : "password_classes"
    }

    /// The sign-up form: its validations (the password rules, the attributes, the connector and the extension before the
    /// account is made), then a new user (newUser = true) and the journey goes on.
    func resume(_ form: [String: String], _ tx: AuthorizeTransaction, policy: EmulatorSeed.Policy) async throws -> StepOutcome {
        var tx = tx
        let t = pages.strings(tx)
        let now = clock.now()
        let email = (form["email"] ?? "").trimmingCharacters(in: .whitespaces)
        switch form["step"] ?? "create" {
        case "send", "verify", "edit": return .respond(try await verifySignUpEmail(form, &tx, email: email, policy: policy))
        default: break
        }
        guard EmulatorSeed.isPlausibleEmail(email) else {
            return .respond(pages.signUpPage(tx, policy: policy, error: t["error_invalid_email"], form: form))
        }
        if policy.emailVerification != .off && tx.verifiedEmail?.lowercased() != email.lowercased() {
            return .respond(pages.signUpPage(tx, policy: policy, error: t["UserMessageIfClaimNotVerified"], form: form))
        }
        let pw = form["newPassword"] ?? ""
        if let problem = Self.passwordProblem(pw) { return .respond(pages.signUpPage(tx, policy: policy, error: t[problem], form: form)) }
        guard pw == form["reenterPassword"] else {
            return .respond(pages.signUpPage(tx, policy: policy, error: t["error_passwordEntryMismatch"], form: form))
        }
        var collected: [String: JSONValue]
        do { collected = try Self.collectedAttributes(form, policy: policy) } catch let e as AttributeProblem {
            return .respond(pages.signUpPage(tx, policy: policy, error: "\(e.label): \(t[e.stringID])", form: form))
        }
        var given = (form["givenName"] ?? "").trimmingCharacters(in: .whitespaces)
        var surname = (form["surname"] ?? "").trimmingCharacters(in: .whitespaces)
        var display = (form["displayName"] ?? "").trimmingCharacters(in: .whitespaces)
        // "Before creating the user": the connector may stop the sign-up, send the page back, or override what was typed.
        let claims = connectorClaims(
            email: email, identity: nil, displayName: display, givenName: given, surname: surname, attributes: collected)
        switch try await callConnector(.postAttributeCollection, policy: policy, tx: tx, claims: claims) {
        case .block(let message): return .respond(try blockPage(tx, message: message))
        case .validationError(let message): return .respond(pages.signUpPage(tx, policy: policy, error: message, form: form))
        case .proceed(let returned):
            Self.apply(returned, policy: policy, displayName: &display, givenName: &given, surname: &surname, attributes: &collected)
        }
        // External ID's OnAttributeCollectionSubmit: the extension may change values, send the page back, or stop here.
        let info = userSignUpInfo(
            email: email, names: ["displayName": display, "givenName": given, "surname": surname], attributes: collected, policy: policy)
        if let action = try await extensionAction(.onAttributeCollectionSubmit, tx, data: ["userSignUpInfo": info]) {
            switch action["@odata.type"]?.stringValue ?? "" {
            case "microsoft.graph.attributeCollectionSubmit.showBlockPage":
                return .respond(try blockPage(tx, message: action["message"]?.stringValue ?? ""))
            case "microsoft.graph.attributeCollectionSubmit.showValidationError":
                let fields = (action["attributeErrors"]?.objectValue ?? [:]).sorted { $0.key < $1.key }.map { name, text in
                    let attribute = storedAttributeName(name)
                    let label = policy.attributes.first { $0.name == attribute }?.label ?? attribute
                    return "\(label): \(text.stringValue ?? "")"
                }
                let message = ([action["message"]?.stringValue ?? ""] + fields).filter { !$0.isEmpty }.joined(separator: " ")
                return .respond(pages.signUpPage(tx, policy: policy, error: message, form: form))
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
            return .respond(pages.signUpPage(tx, policy: policy, error: t["UserMessageIfClaimsPrincipalAlreadyExists"], form: form))
        }
        if !collected.isEmpty {
            try store.setAttributes(oid: user.oid, collected)
            user.attributes = collected
        }
        tx.claims.signedIn(user.oid, at: now, newUser: true)
        tx.claims.provider = nil
        return .next(tx)
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
}
