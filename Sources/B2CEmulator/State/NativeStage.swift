/// Where a native-authentication flow stands between two calls, and where it may go next: the flow's state machine.
/// Each call answers a new continuation token for the stage it moved the flow to; a token is taken only at the stages the
/// call's endpoint names (`NativeAuthEndpoint.flow(_:app:at:)`), and a flow moves only along `next` (`advanceFlow`).
enum NativeStage: String, Codable, Sendable, CaseIterable {
    // Sign-in: the username known, then a password or an emailed code asked.
    case initiated, password, oob
    // The second factor after the first (`mfa_required`): a registered method chosen, its code sent.
    case mfa, mfaOOB = "mfa_oob"
    // Just-in-time registration of a strong method (`registration_required`): the method given, its code sent, done.
    case register, registerOOB = "register_oob", registered
    // Sign-up: started, the email's code sent, the email verified, attributes asked, the account made.
    case signUpStarted = "signup_started", signUpOOB = "signup_oob", signUpVerified = "signup_verified"
    case signUpAttributes = "signup_attributes", signedUp = "signed_up"
    // Password reset: started, the code sent, the code right, the new password being set, done.
    case resetStarted = "reset_started", resetOOB = "reset_oob", resetVerified = "reset_verified", resetPolling = "reset_polling"
    case resetDone = "reset_done"

    /// The stages a flow starts at (a flow's first continuation token).
    static let starts: Set<NativeStage> = [.initiated, .signUpStarted, .resetStarted]

    /// After a first factor (a password, a code sign-in, a sign-up, a reset) a sign-in may need a second one.
    private static let secondFactor: Set<NativeStage> = [.mfa, .register]

    /// The stages a flow may move to from this one (a resend of a code stays where it is).
    var next: Set<NativeStage> {
        switch self {
        case .initiated: [.password, .oob]
        case .password: Self.secondFactor.union([.password, .oob])
        case .oob: Self.secondFactor.union([.oob, .password])
        case .mfa: [.mfa, .mfaOOB]
        case .mfaOOB: [.mfa, .mfaOOB]
        case .register: [.register, .registerOOB, .registered]
        case .registerOOB: [.register, .registerOOB, .registered]
        case .registered: []
        case .signUpStarted: [.signUpOOB, .signUpVerified, .signUpAttributes, .signedUp]
        case .signUpOOB: [.signUpOOB, .signUpVerified, .signUpAttributes, .signedUp]
        case .signUpVerified: [.signUpVerified, .signUpAttributes, .signedUp]
        case .signUpAttributes: [.signUpAttributes, .signedUp]
        case .signedUp: Self.secondFactor
        case .resetStarted: [.resetOOB]
        case .resetOOB: [.resetOOB, .resetVerified]
        case .resetVerified: [.resetPolling]
        case .resetPolling: [.resetPolling, .resetDone]
        case .resetDone: Self.secondFactor
        }
    }

    /// The stages whose continuation token a token grant takes, and by which grant.
    var grants: Set<String> {
        switch self {
        case .password: ["password"]
        case .oob: ["oob"]
        case .mfaOOB: ["mfa_oob"]
        case .registered, .signedUp, .resetDone: ["continuation_token"]
        default: []
        }
    }
}
