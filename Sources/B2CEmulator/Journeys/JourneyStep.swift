import B2CProtocol

/// Where a browser journey stands: the one thing it waits for, with what that step keeps — a fact of the transaction, so
/// which request may come next is decided in one place (`accepts`), and a page posted out of turn is refused there.
enum JourneyStep: Codable, Sendable {
    /// The user flow's first page: sign-in (with the provider buttons and the sign-up link), sign-up (its email
    /// verification stays on that page), the reset's email page, the profile page after sign-in.
    case firstPage(SignUpVerification)
    /// Sent to an identity provider: only its answer is taken, and once.
    case federating(Federation)
    /// A first-time federated person on the social sign-up page.
    case socialSignUp(FederatedIdentity)
    /// The second factor, after the first (a password, a sign-up, a provider's answer).
    case secondFactor(PendingMFA)
    /// Password reset: a code sent to the address; the code and the new password come next.
    case resetCode(ResetCode)
    /// A custom policy's page (a self-asserted profile), with the policy's claims bag.
    case customPolicy(PolicyJourneyState)
    /// The new password a person must choose before the sign-in goes on (Graph's `forceChangePasswordNextSignIn`).
    case passwordChange

    static let start = JourneyStep.firstPage(SignUpVerification())

    /// The sign-up page's email verification: the address a code went to, the code's hash, until when it is good.
    struct SignUpVerification: Codable, Sendable {
        var email: String?
        var codeHash: String?
        var expiresAt: Int?
    }

    struct Federation: Codable, Sendable {
        /// A built-in provider's name, or an OpenID Connect or SAML provider's id.
        var provider: String
        var oidc: OIDCPending?
        var saml: SAMLPending?
        /// A custom policy's journey, waiting for its OAuth2 or OpenID Connect profile's answer.
        var customPolicy: PolicyJourneyState?
    }

    struct ResetCode: Codable, Sendable {
        var email: String
        var codeHash: String?
        var attempts = 0
    }

    /// The page requests (`/emulator/{name}`) a transaction at this step takes. At the first page, and while a provider
    /// is asked (the browser's Back button leads to the first page), the first page's; otherwise the step's own and
    /// Cancel.
    var accepts: Set<String> {
        switch self {
        case .firstPage, .federating: ["signin", "idp", "signup", "forgot", "cancel", "reset", "profile"]
        case .socialSignUp: ["socialsignup", "cancel"]
        case .secondFactor: ["mfasend", "mfaverify", "mfacontinue", "mfaqr", "cancel"]
        case .resetCode: ["resetverify", "resend", "reset", "cancel"]
        case .customPolicy: ["policy", "policysignup", "forgot", "cancel"]
        case .passwordChange: ["passwordchange", "cancel"]
        }
    }

    /// The step in words (the recorder, the refusal's message).
    var name: String {
        switch self {
        case .firstPage: "the first page"
        case .federating(let f): "the identity provider \(f.provider)"
        case .socialSignUp: "social sign-up"
        case .secondFactor: "the second factor"
        case .resetCode: "the reset code"
        case .customPolicy(let s): "the custom policy's page \(s.page ?? "")"
        case .passwordChange: "the new password"
        }
    }
}

/// The claims bag: what the journey has learnt about the person, carried from step to step to token issuance, and what the
/// steps' conditions (`Journey.Condition`) read.
struct JourneyClaims: Codable, Sendable {
    /// The user, once known (signed in, signed up, federated and linked, or the SSO session's).
    var oid: String?
    /// When the person authenticated (now, or the SSO session's time).
    var authTime: Int?
    /// The person signed up in this journey (the `newUser` claim).
    var newUser = false
    /// The first factor was typed on a page: token issuance makes a new SSO session.
    var newSession = false
    /// The SSO session that answered had done MFA.
    var sessionDidMFA = false
    /// A second factor was passed in this journey.
    var mfaDone = false
    /// The combined page's sign-up link was followed.
    var signUpChosen = false
    /// The provider chosen (a built-in provider's name, or an OpenID Connect or SAML provider's id), until it answers.
    var provider: String?
    /// A provider vouched for a person the directory does not know: the social sign-up's identity.
    var firstTimeIdentity: FederatedIdentity?
    /// The address the sign-up page verified.
    var verifiedEmail: String?
    /// The provider's access token of a federated sign-in, for the `idp_access_token` claim.
    var idpAccessToken: String?
    /// "Keep me signed in" was checked on the sign-in page.
    var rememberMe = false
    /// The password was right but a new one is due before the journey goes on (`AccountRule.passwordChangeDue`).
    var passwordChangeDue = false
    /// A custom policy's claims its session managers keep in the SSO session (`PersistedClaims`): written with a new
    /// session, read back when the session answers.
    var sessionClaims: [String: ClaimValue]?
    /// Claims the callouts before the token added (the API connector, the OnTokenIssuanceStart extension): JSON of any
    /// shape, kept as its serialization so the bag stays `Codable`.
    private var extraClaimsJSON: String?
    var extraClaims: [String: JSONValue] {
        get { extraClaimsJSON.flatMap { try? JSONValue.parse($0).objectValue } ?? [:] }
        set { extraClaimsJSON = newValue.isEmpty ? nil : JSONValue.object(newValue).serialized() }
    }

    init() {}

    /// The person signed in now, on a page: a new session follows.
    mutating func signedIn(_ oid: String, at now: Int, newUser: Bool = false) {
        (self.oid, authTime, self.newUser, newSession) = (oid, now, newUser, true)
    }

    /// The SSO session named the person: no new session, and its MFA counts.
    mutating func fromSession(_ oid: String, authTime: Int, mfa: Bool) {
        (self.oid, self.authTime, newSession, sessionDidMFA) = (oid, authTime, false, mfa)
    }

    /// The bag as the recorder keeps it (which masks the provider's token, as it masks every secret).
    var recorded: JSONValue {
        var o: [String: JSONValue] = [
            "newUser": .bool(newUser), "newSession": .bool(newSession), "mfaDone": .bool(mfaDone), "rememberMe": .bool(rememberMe),
        ]
        if let oid { o["objectId"] = .string(oid) }
        if let authTime { o["authTime"] = JSONValue(authTime) }
        if sessionDidMFA { o["sessionDidMFA"] = true }
        if passwordChangeDue { o["passwordChangeDue"] = true }
        if signUpChosen { o["signUpChosen"] = true }
        if let provider { o["provider"] = .string(provider) }
        if let f = firstTimeIdentity { o["firstTimeIdentity"] = .string(f.email) }
        if let verifiedEmail { o["verifiedEmail"] = .string(verifiedEmail) }
        if let idpAccessToken { o["idpAccessToken"] = .string(idpAccessToken) }
        if !extraClaims.isEmpty { o["extraClaims"] = .object(extraClaims) }
        return .object(o)
    }
}

/// The transaction's fields as each step reads and writes them: each lives in its step (setting one moves the transaction
/// to that step; clearing it, back to the first page) or in the claims.
extension AuthorizeTransaction {
    var oid: String? {
        get { claims.oid }
        set { claims.oid = newValue }
    }
    var verifiedEmail: String? {
        get { claims.verifiedEmail }
        set { claims.verifiedEmail = newValue }
    }
    var idpAccessToken: String? {
        get { claims.idpAccessToken }
        set { claims.idpAccessToken = newValue }
    }
    var rememberMe: Bool {
        get { claims.rememberMe }
        set { claims.rememberMe = newValue }
    }

    var mfa: PendingMFA? {
        get { if case .secondFactor(let m) = step { m } else { nil } }
        set { step = newValue.map { .secondFactor($0) } ?? (mfa == nil ? step : .start) }
    }

    var federated: FederatedIdentity? {
        get { if case .socialSignUp(let f) = step { f } else { nil } }
        set { step = newValue.map { .socialSignUp($0) } ?? (federated == nil ? step : .start) }
    }

    private var federation: JourneyStep.Federation? {
        get { if case .federating(let f) = step { f } else { nil } }
        set { step = newValue.map { .federating($0) } ?? (federation == nil ? step : .start) }
    }
    /// The custom policy's journey that sent the person to a provider.
    var federatingCustomPolicy: PolicyJourneyState? { federation?.customPolicy }

    var federatingWith: String? {
        get { federation?.provider }
        set {
            guard let provider = newValue else { return federation = nil }
            var f = federation ?? .init(provider: provider)
            f.provider = provider
            federation = f
        }
    }
    var oidc: OIDCPending? {
        get { federation?.oidc }
        set {
            guard federation != nil || newValue != nil else { return }
            var f = federation ?? .init(provider: "")
            f.oidc = newValue
            federation = f
        }
    }
    var saml: SAMLPending? {
        get { federation?.saml }
        set {
            guard federation != nil || newValue != nil else { return }
            var f = federation ?? .init(provider: "")
            f.saml = newValue
            federation = f
        }
    }

    private var reset: JourneyStep.ResetCode? {
        get { if case .resetCode(let r) = step { r } else { nil } }
        set { step = newValue.map { .resetCode($0) } ?? (reset == nil ? step : .start) }
    }
    var resetEmail: String? {
        get { reset?.email }
        set {
            guard let email = newValue else { return reset = nil }
            var r = reset ?? .init(email: email)
            r.email = email
            reset = r
        }
    }
    var resetCodeHash: String? {
        get { reset?.codeHash }
        set { reset?.codeHash = newValue }
    }
    var resetAttempts: Int {
        get { reset?.attempts ?? 0 }
        set { reset?.attempts = newValue }
    }

    private var signUp: JourneyStep.SignUpVerification {
        get { if case .firstPage(let v) = step { v } else { .init() } }
        set { step = .firstPage(newValue) }
    }
    var signUpEmail: String? {
        get { signUp.email }
        set { signUp.email = newValue }
    }
    var signUpCodeHash: String? {
        get { signUp.codeHash }
        set { signUp.codeHash = newValue }
    }
    var signUpCodeExpiresAt: Int? {
        get { signUp.expiresAt }
        set { signUp.expiresAt = newValue }
    }
}
