import B2CProtocol
import Hummingbird
import NIOConcurrencyHelpers

/// A policy as B2C runs it (reference: b2c-custom-policies.md, user journeys): an ordered list of orchestration steps,
/// each entered when the steps before it are done and its precondition holds on the claims bag. A user flow builds its
/// journey from its settings (`Journey(policy)`); `JourneyRunner` walks it.
struct Journey: Sendable {
    /// The orchestration steps a journey is made of, each a type of its own (`JourneyRunner.enter`).
    enum Step: String, Codable, Sendable, Hashable {
        /// The unified page: the password, the providers' buttons, the sign-up link (sign-up-or-sign-in, sign-in, and the
        /// sign-in before edit profile).
        case combinedSignIn
        /// The page where a person whose password must change (`AccountRule.passwordChangeDue`) chooses a new one.
        case passwordChange
        /// The sign-up page: the attributes, the email verification, the account written (a sign-up flow's first page, or
        /// the combined page's link).
        case signUp
        /// The reset's pages: the address, then its code and the new password.
        case passwordReset
        /// The exchange with the chosen identity provider (mock, OpenID Connect, SAML).
        case federation
        /// B2C's API connector "after federating with an identity provider during sign-up".
        case postFederationConnector
        /// The social sign-up page of a first-time federated person.
        case socialSignUp
        /// The user read from the directory: the person the journey is about still exists.
        case directoryRead
        /// Multi-factor authentication (email, phone, authenticator; registration on first use).
        case secondFactor
        /// The edit-profile page.
        case profileEdit
        /// B2C's API connector "before sending the token".
        case preTokenConnector
        /// External ID's OnTokenIssuanceStart extension.
        case tokenIssuanceExtension
        /// Tokens and the SSO session, and the answer to the app.
        case tokenIssuance
        /// A custom policy's user journey, its orchestration steps from the XML (`CustomPolicyStep`).
        case customPolicy
    }

    /// When a step runs: every condition of its list holds on the claims bag (B2C's preconditions, the other way round:
    /// these say when a step runs, not when it is skipped).
    enum Condition: String, Codable, Sendable {
        /// Nobody is signed in yet (an SSO session or an earlier step skips the first pages).
        case noUser
        /// The sign-up link of the combined page was followed.
        case signUpChosen
        /// A provider's button was chosen (or named by `domain_hint`).
        case providerChosen
        /// A provider vouched for a person the directory does not know.
        case firstTimeFederated
        /// A person is known (signed in, signed up, or federated and linked).
        case userKnown
        /// The password typed was right, and a new one is due first.
        case passwordChangeDue

        /// Why a step was skipped, in the recorder's words.
        var unmet: String {
            switch self {
            case .noUser: "a person is already known"
            case .signUpChosen: "the sign-up link was not followed"
            case .providerChosen: "no identity provider was chosen"
            case .firstTimeFederated: "no first-time federated person"
            case .userKnown: "no person is known yet"
            case .passwordChangeDue: "no new password is due"
            }
        }

        func holds(_ c: JourneyClaims) -> Bool {
            switch self {
            case .noUser: c.oid == nil
            case .signUpChosen: c.signUpChosen
            case .providerChosen: c.provider != nil
            case .firstTimeFederated: c.firstTimeIdentity != nil
            case .userKnown: c.oid != nil
            case .passwordChangeDue: c.passwordChangeDue
            }
        }
    }

    struct Entry: Sendable {
        var step: Step
        var when: [Condition]
    }

    /// The user flow's name for its journey (B2C's `DefaultUserJourney`): its kind.
    let id: String
    let steps: [Entry]

    init(id: String, steps: [Entry]) { (self.id, self.steps) = (id, steps) }

    /// The journey of a user flow, from its kind, providers, connectors and extensions. MFA is a step of every journey
    /// that signs in or up; it decides for itself whether to ask (the user flow's enforcement, the user's own
    /// `mfaRequired`, an SSO session that already did it).
    /// `tokenExtension`: the tenant calls an OnTokenIssuanceStart extension for this app. `passwordChange`: the tenant
    /// honours a password change due at the next sign-in here (External ID; a B2C user flow with "Forced password reset").
    init(_ policy: EmulatorSeed.Policy, tokenExtension: Bool = false, passwordChange: Bool = false) {
        id = policy.kind.rawValue
        let federates =
            !policy.identityProviders.filter { $0 != .local }.isEmpty || !policy.oidcProviders.isEmpty
            || !policy.samlProviders.isEmpty
        let federation: [Entry] = federates ? [.init(step: .federation, when: [.providerChosen])] : []
        let connectors = Set(EmulatorSeed.APIConnectors.Step.allCases.filter { policy.apiConnectors[$0] != nil })
        let socialSignUp: [Entry] =
            !federates
            ? []
            : (connectors.contains(.postFederationSignup) ? [.init(step: .postFederationConnector, when: [.firstTimeFederated])] : [])
                + [.init(step: .socialSignUp, when: [.firstTimeFederated])]
        var tokens: [Entry] = [.init(step: .directoryRead, when: [.userKnown])]
        if connectors.contains(.preTokenIssuance) { tokens.append(.init(step: .preTokenConnector, when: [.userKnown])) }
        if tokenExtension { tokens.append(.init(step: .tokenIssuanceExtension, when: [.userKnown])) }
        tokens.append(.init(step: .tokenIssuance, when: [.userKnown]))
        let mfa = Entry(step: .secondFactor, when: [.userKnown])
        if policy.runsCustomPolicy {
            steps = [.init(step: .customPolicy, when: []), tokens[0], tokens.last!]
            return
        }
        let signIn: [Entry] =
            [.init(step: .combinedSignIn, when: [.noUser])]
            + (passwordChange ? [.init(step: .passwordChange, when: [.passwordChangeDue])] : [])
        switch policy.kind {
        case .signUpSignIn:
            steps =
                signIn + federation + socialSignUp
                + [.init(step: .signUp, when: [.noUser, .signUpChosen]), mfa] + tokens
        case .signIn:
            steps = signIn + federation + [mfa] + tokens
        case .signUp:
            steps = [.init(step: .signUp, when: [.noUser])] + federation + socialSignUp + [mfa] + tokens
        case .editProfile:
            steps =
                [.init(step: .combinedSignIn, when: [.noUser])] + federation
                + [tokens[0], .init(step: .profileEdit, when: [.userKnown])] + tokens.dropFirst()
        case .resetPassword:
            steps = [.init(step: .passwordReset, when: [])] + tokens
        case .ropc, .clientCredentials:
            steps = []
        }
    }

    func index(of step: Step) -> Int? { steps.firstIndex { $0.step == step } }
    func contains(_ step: Step) -> Bool { index(of: step) != nil }
}

/// What a step says happens next.
enum StepOutcome {
    /// The step is done: the journey goes on with the next step whose conditions hold.
    case next(AuthorizeTransaction)
    /// The journey waits (a page, a redirect to a provider) or ends (the answer to the app, an error page).
    case respond(Response)
}

/// What a step of a request needs of that request: whether the browser came over HTTPS (the session cookie), the origin it
/// used (the providers' redirect URIs), and the request itself (its cookies).
struct Visit {
    var secure: Bool
    var origin: String
    var request: Request
    /// The directory's rows this request has read, shared by the steps it runs (`DirectoryReadStep.user`).
    let directory = DirectoryMemo()

    init(_ request: Request, _ context: EmulatorRequestContext) {
        (secure, origin, self.request) = (context.isHTTPS, context.origin, request)
    }

    init(secure: Bool, origin: String, request: Request) { (self.secure, self.origin, self.request) = (secure, origin, request) }
}

/// The users one request's steps read, each read once: a sign-in's steps (second factor, directory read, callouts, token
/// issuance) all need the person. Lives as long as the request; steps that write a user do so in `resume`, before the
/// runner's walk fills this.
final class DirectoryMemo: Sendable {
    private let users = NIOLockedValueBox<[String: EmulatorStore.UserRecord]>([:])

    func user(_ oid: String, read: () throws -> EmulatorStore.UserRecord?) rethrows -> EmulatorStore.UserRecord? {
        if let known = users.withLockedValue({ $0[oid] }) { return known }
        let user = try read()
        if let user { users.withLockedValue { $0[oid] = user } }
        return user
    }
}
