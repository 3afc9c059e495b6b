import B2CProtocol
import Foundation
import Hummingbird

/// A second factor under way: who passed the first one, how, and the code or secret of this step.
struct PendingMFA: Codable, Sendable {
    var oid: String
    var method: EmulatorSeed.MFA.Method
    /// The method is being registered (a phone number entered, an authenticator scanned), not only used.
    var enrolling: Bool
    /// Phone: the number the code went to; TOTP: the secret being registered.
    var phone: String? = nil
    var totpSecret: String? = nil
    var codeHash: String? = nil
    var codeExpiresAt: Int? = nil
    /// Wrong codes typed in this journey, whichever code they were meant for (a resend does not reset them).
    var wrongCodes = 0
    /// Codes sent in this journey: the first and its resends, capped (`maxCodesSent`).
    var codesSent = 0
    /// Email: the code was verified; `#continue` goes on.
    var verified = false
}

/// Multifactor authentication in a user flow (reference: b2c-journeys.md §1): after the password page or the sign-up
/// page, the policy's method — an emailed code, a phone (text or call) with enrolment of a number on first use, or an
/// authenticator app (TOTP) with enrolment by QR code — unless the SSO session already did MFA. Entered after every
/// first factor (a password, a sign-up, a provider's answer, an SSO session of a policy that now asks more); resumed by
/// the pages of its step (`mfasend`, `mfaverify`, `mfacontinue`, `mfaqr`); ends in `TokenIssuanceStep`.
struct SecondFactorStep: OrchestrationStep {
    let parts: JourneyParts

    /// Codes live ten minutes (B2C's one-time-password default); three wrong phone or authenticator codes end the
    /// journey (AADB2C90151), five wrong email codes too (AADB2C90157, the self-asserted page's retry cap).
    static let mfaCodeLifetime = 600
    static let mfaStrikes = 3
    static let emailStrikes = 5
    /// How many codes one journey's second factor may send: the first and five resends, as native authentication allows.
    static let maxCodesSent = 6

    /// An MFA event in the request log (`GET /_admin/log`: endpoint `mfa`, the method, what happened).
    func logMFA(_ m: PendingMFA, _ tx: AuthorizeTransaction, _ outcome: String) {
        store.requests.log(
            .init(
                at: clock.now(), endpoint: "mfa", grantType: m.method.rawValue, policy: tx.policy.lowercased(), clientId: tx.clientId,
                oid: m.oid, outcome: outcome))
    }

    /// The first factor passed: the second one when the rule (`SecondFactorRule`) asks for it — or, under conditional MFA,
    /// to register a method someone has none of — else the journey goes on.
    func enter(_ tx: AuthorizeTransaction, _ visit: Visit, policy: EmulatorSeed.Policy) async throws -> StepOutcome {
        let journeys = store.journeys
        let user = try DirectoryReadStep(parts: parts).user(tx, visit)
        let c = tx.claims
        let state = try store.mfaState(oid: user.oid)
        let mfa = policy.mfa ?? .init(methods: [.email], enforcement: .off)
        let method = mfa.methods.first { state.enrolled($0) } ?? mfa.methods[0]
        let enrolled = state.enrolled(method)
        let required = SecondFactorRule.required(mfa.enforcement, state)
        let registration = mfa.enforcement == .conditional && !enrolled
        guard !c.sessionDidMFA, let why = required ?? (registration ? "conditional: a method is registered on first use" : nil) else {
            let why =
                c.sessionDidMFA
                ? "the session already did it"
                : mfa.enforcement == .conditional ? "conditional, and this sign-in is not risky" : "the user flow does not ask for it"
            journeys.note(tx.id, .decision, "MFA not asked", ["why": .string(why)], user: user.email)
            return .next(tx)
        }
        journeys.note(
            tx.id, .decision, "MFA asked", ["why": .string(why), "method": .string(method.rawValue), "enrolling": .bool(!enrolled)],
            user: user.email)
        if mfa.enforcement == .conditional && state.risky && !enrolled && !state.mfaRequired {
            try store.deleteTransaction(id: tx.id)
            store.requests.log(
                .init(
                    at: clock.now(), endpoint: "mfa", grantType: method.rawValue, policy: tx.policy.lowercased(), clientId: tx.clientId,
                    oid: user.oid, outcome: "blocked"))
            throw PageError(
                code: nil,
                message: "Your sign-in was blocked: it needs multi-factor authentication, and no method is registered for your account.",
                status: 403)
        }
        var tx = tx
        tx.mfa = PendingMFA(
            oid: user.oid, method: method, enrolling: !enrolled, phone: enrolled ? state.phone : nil,
            totpSecret: method == .totp && !enrolled ? (state.totpSecret ?? TOTP.newSecret()) : nil)
        try store.saveTransaction(tx, now: clock.now())
        return .respond(try mfaPage(tx, user: user, policy: policy))
    }

    /// A request of this step's pages.
    func resume(
        _ name: String, _ form: [String: String], _ tx: AuthorizeTransaction, policy: EmulatorSeed.Policy, request: Request
    ) async throws -> StepOutcome {
        var tx = tx
        switch name {
        case "mfasend": return .respond(try await mfaSend(form, &tx, policy: policy))
        case "mfaverify": return try await mfaVerify(form, &tx, policy: policy, request: request)
        case "mfacontinue": return try await mfaContinue(tx, policy: policy, request: request)
        default: return .respond(try mfaQRCode(tx))
        }
    }

    /// The page of the pending step as it stands.
    func mfaPage(
        _ tx: AuthorizeTransaction, user: EmulatorStore.UserRecord, policy: EmulatorSeed.Policy, error: String? = nil
    ) throws
        -> Response
    {
        guard let m = tx.mfa else { throw PageError(code: nil, message: "There is no multi-factor step in this sign-in.") }
        switch m.method {
        case .email: return pages.emailMFAPage(tx, email: user.email, error: error)
        case .phone: return pages.phoneFactorPage(tx, registered: m.enrolling ? nil : m.phone, error: error)
        case .totp:
            if m.enrolling && m.codeHash == nil && !m.verified, let secret = m.totpSecret {
                return pages.totpEnrolPage(tx, account: user.email, secret: secret, issuer: tenantName)
            }
            return pages.totpVerifyPage(tx, error: error)
        }
    }

    /// `mfasend`: a code by email, text or call (phone: the number entered at enrolment, else the registered one).
    private func mfaSend(_ form: [String: String], _ tx: inout AuthorizeTransaction, policy: EmulatorSeed.Policy) async throws -> Response {
        guard var m = tx.mfa, let user = try store.user(oid: m.oid) else { throw PageError(code: nil, message: "Sign in first.") }
        let now = clock.now()
        let knobs = try store.mfaKnobs
        let channel: EmulatorStore.Channel
        let recipient: String
        switch m.method {
        case .email:
            (channel, recipient) = (.email, user.email)
        case .phone:
            channel = form["channel"] == "voice" ? .voice : .sms
            if m.enrolling {
                let typed = ((form["countryCode"] ?? "") + (form["number"] ?? "")).filter { $0 == "+" || $0.isNumber }
                guard EmulatorSeed.isE164(typed) else {
                    return try mfaPage(tx, user: user, policy: policy, error: pages.strings(tx)["error_invalid_number"])
                }
                m.phone = typed
            }
            guard let phone = m.phone else { throw PageError(code: "AADB2C90145", message: "No phone number is registered for you.") }
            recipient = phone
            if knobs.throttled {
                return try mfaPage(
                    tx, user: user, policy: policy, error: pages.strings(tx)["error_throttled"])
            }
            if knobs.unreachable.contains(phone) {
                return try mfaPage(tx, user: user, policy: policy, error: pages.strings(tx)["error_448"])
            }
        case .totp:
            // Continue after scanning: the authenticator holds the secret; the next page asks for its code.
            m.verified = true
            tx.mfa = m
            try store.saveTransaction(tx, now: now)
            return pages.totpVerifyPage(tx)
        }
        m.codesSent += 1
        guard m.codesSent <= Self.maxCodesSent else {
            try store.deleteTransaction(id: tx.id)
            logMFA(m, tx, "too many codes sent")
            let (code, step) = m.method == .email ? ("AADB2C90157", "a self-asserted step") : ("AADB2C90151", "multi-factor authentication")
            return redirectError(
                tx.reply,
                OAuthFailure(error: "access_denied", code: code, message: "User has exceeded the maximum number for retries for \(step)."))
        }
        let code = knobs.fixedCode ?? Random.digits(6)
        if channel == .email {
            try await sendEmailCode(
                to: recipient, purpose: "mfa", code: code, now: now, expiresAt: now + Self.mfaCodeLifetime, tx: tx.callout)
        } else {
            try store.outbox.send(
                to: recipient, purpose: "mfa", code: code, now: now, channel: channel, expiresAt: now + Self.mfaCodeLifetime, journey: tx.id
            )
        }
        logMFA(m, tx, "sent \(channel.rawValue)")
        m.codeHash = EmulatorStore.hash(code)
        m.codeExpiresAt = now + Self.mfaCodeLifetime
        m.verified = false  // wrong codes stay counted: a new code is not a new set of tries
        tx.mfa = m
        try store.saveTransaction(tx, now: now)
        return try mfaPage(tx, user: user, policy: policy)
    }

    /// `mfaverify`: the code typed (email, phone) or the authenticator's (TOTP). Email then shows `#continue`; the others go
    /// back to the app at once. The last wrong phone or authenticator code ends the journey with AADB2C90151.
    private func mfaVerify(
        _ form: [String: String], _ tx: inout AuthorizeTransaction, policy: EmulatorSeed.Policy, request: Request
    ) async throws -> StepOutcome {
        guard var m = tx.mfa, let user = try store.user(oid: m.oid) else { throw PageError(code: nil, message: "Sign in first.") }
        let now = clock.now()
        let typed = (form["verificationCode"] ?? form["ReadOnlyEmail_ver_input"] ?? form["otpCode"] ?? "").filter { !$0.isWhitespace }
        let good: Bool
        switch m.method {
        case .totp:
            let secret = m.enrolling ? m.totpSecret : try store.mfaState(oid: m.oid).totpSecret
            // A code is taken once: its step must be later than the last one accepted for this user (RFC 6238 §5.2).
            let step = secret.flatMap { TOTP.step(of: typed, secret: $0, at: now) }
            good = try step.map { try store.takeTOTPStep(oid: m.oid, $0) } ?? false
        case .email, .phone:
            guard let hash = m.codeHash, let expires = m.codeExpiresAt else {
                return .respond(try mfaPage(tx, user: user, policy: policy, error: "Send a verification code first."))
            }
            guard now < expires else {
                return .respond(try mfaPage(tx, user: user, policy: policy, error: pages.strings(tx)["ver_fail_code_expired"]))
            }
            good = typed.count == 6 && EmulatorStore.hash(typed) == hash
        }
        guard good else {
            logMFA(m, tx, "wrong code")
            return .respond(try wrongCode(&tx, &m, user: user, policy: policy))
        }
        logMFA(m, tx, m.enrolling ? "verified, registered" : "verified")
        if m.method == .email && !m.verified {
            m.verified = true
            tx.mfa = m
            try store.saveTransaction(tx, now: now)
            return .respond(pages.emailMFAPage(tx, email: user.email, verified: true))
        }
        return try mfaDone(tx, m, request: request)
    }

    /// `mfacontinue`: email's `#continue` after its code was verified.
    private func mfaContinue(_ tx: AuthorizeTransaction, policy: EmulatorSeed.Policy, request: Request) async throws -> StepOutcome {
        guard let m = tx.mfa, let user = try store.user(oid: m.oid) else { throw PageError(code: nil, message: "Sign in first.") }
        guard m.verified else { return .respond(try mfaPage(tx, user: user, policy: policy, error: "Verify the code first.")) }
        return try mfaDone(tx, m, request: request)
    }

    /// `mfaqr`: the enrolment's QR code (a PNG of the `otpauth://` URI).
    private func mfaQRCode(_ tx: AuthorizeTransaction) throws -> Response {
        guard let m = tx.mfa, m.enrolling, let secret = m.totpSecret, let user = try store.user(oid: m.oid) else {
            throw PageError(code: nil, message: "There is no authenticator to register in this sign-in.", status: 404)
        }
        let png = try QRCode(TOTP.uri(secret: secret, account: user.email, issuer: tenantName)).png()
        return Response(
            status: .ok, headers: [.contentType: "image/png", .cacheControl: "no-store"], body: .init(byteBuffer: .init(bytes: png)))
    }

    private func wrongCode(
        _ tx: inout AuthorizeTransaction, _ m: inout PendingMFA, user: EmulatorStore.UserRecord, policy: EmulatorSeed.Policy
    ) throws -> Response {
        m.wrongCodes += 1
        // Email is a self-asserted page: its retry cap ends the journey with AADB2C90157; phone and authenticator codes with
        // AADB2C90151.
        let (limit, code, step) =
            m.method == .email
            ? (Self.emailStrikes, "AADB2C90157", "a self-asserted step") : (Self.mfaStrikes, "AADB2C90151", "multi-factor authentication")
        guard m.wrongCodes < limit else {
            try store.deleteTransaction(id: tx.id)
            logMFA(m, tx, "too many wrong codes")
            return redirectError(
                tx.reply,
                OAuthFailure(error: "access_denied", code: code, message: "User has exceeded the maximum number for retries for \(step)."))
        }
        tx.mfa = m
        try store.saveTransaction(tx, now: clock.now())
        let message = pages.strings(tx)[m.method == .phone ? "error_incorrect_code" : "ver_fail_retry"]
        return try mfaPage(tx, user: user, policy: policy, error: message)
    }

    /// The second factor passed: a new method is registered, the session remembers MFA, and the journey goes on.
    private func mfaDone(_ tx: AuthorizeTransaction, _ m: PendingMFA, request: Request) throws -> StepOutcome {
        if m.enrolling {
            switch m.method {
            case .phone: try store.setPhone(oid: m.oid, m.phone, enrolled: true)
            case .totp: try store.setTOTP(oid: m.oid, secret: m.totpSecret, enrolled: true)
            case .email: break
            }
        }
        var tx = tx
        if !tx.claims.newSession, let id = sessions.id(in: request) { try store.ssoSessions.markMFA(id: id) }
        tx.claims.mfaDone = true
        tx.mfa = nil
        return .next(tx)
    }
}
