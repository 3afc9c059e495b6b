/// Whether a sign-in needs a second factor after its first: the one rule of the browser's journeys (`SecondFactorStep`)
/// and native authentication (`NativeAuthEndpoint.mfaNeed`). The user flow's MFA asks always, or when the person's
/// sign-ins are marked risky (conditional); a person with `mfaRequired` is asked whatever the user flow says.
enum SecondFactorRule {
    /// Why a second factor is needed, or nil when it is not.
    static func required(_ enforcement: EmulatorSeed.MFA.Enforcement?, _ state: MFAState) -> String? {
        if state.mfaRequired { return "the user is marked mfaRequired" }
        switch enforcement ?? .off {
        case .always: return "the user flow always asks"
        case .conditional where state.risky: return "conditional, and this sign-in is risky"
        case .conditional, .off: return nil
        }
    }
}
