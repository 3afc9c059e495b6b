import B2CProtocol

/// What the directory says of a person about to be signed in, written once. Every path asks it: the typed password
/// (`submitPassword`: the browser's sign-in page and native authentication), the journey's directory read (a person named
/// by an SSO session, a provider's answer or a custom policy), and the issuer, which every token passes (a code redeemed,
/// a refresh, ROPC, native authentication, on-behalf-of, a device code).
enum AccountRule {
    /// Graph's `accountEnabled` is false: the person gets no token and no session, whatever proved who they are.
    static func disabled(_ user: EmulatorStore.UserRecord) -> Bool { !user.accountEnabled }

    /// The refusal of a disabled account where an OAuth answer is due (the token endpoint; the app's redirect URI with
    /// `error`). B2C documents no code for it; the emulator answers Entra's (AADSTS50057), on both sides of a twin.
    static func refusal(error: String = "invalid_grant") -> OAuthFailure {
        OAuthFailure(
            error: error, code: "AADSTS50057",
            message: "The user account is disabled. An administrator must enable it (Graph: accountEnabled true) before it signs in.")
    }

    /// The same refusal in native authentication's shape.
    static let nativeRefusal = AADFailure(
        error: "invalid_grant",
        description: "AADSTS50057: The user account is disabled. An administrator must enable it before it signs in.", codes: [50057])

    /// Whether a sign-in with the password must first choose a new one: Graph's `forceChangePasswordNextSignIn`, which an
    /// External ID tenant always honours and a B2C user flow honours where its "Forced password reset" is on
    /// (`forcedPasswordReset`). A federated person has no password to change.
    static func passwordChangeDue(_ user: EmulatorStore.UserRecord, policy: EmulatorSeed.Policy?, externalId: Bool) -> Bool {
        user.passwordChangeDue && user.idp == nil && (externalId || policy?.forcedPasswordReset == true)
    }
}
