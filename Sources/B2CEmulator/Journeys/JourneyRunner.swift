import B2CProtocol
import Foundation
import Hummingbird

/// An orchestration step: entered by the runner when the journey reaches it and its conditions hold. A step that waits (a
/// page, a provider) is resumed by the requests its state (`JourneyStep`) takes, and its resume says `next` when it is
/// done; the runner then goes on after it.
protocol OrchestrationStep: JourneyStepType {
    func enter(_ tx: AuthorizeTransaction, _ visit: Visit, policy: EmulatorSeed.Policy) async throws -> StepOutcome
}

/// The journey engine: walks a policy's journey from a step, entering each step whose conditions hold, until one waits or
/// ends the journey. The one place that decides which step comes next.
struct JourneyRunner: JourneyStepType {
    let parts: JourneyParts

    /// The journey of `policy` for this transaction's app (its extensions are per app).
    func journey(_ tx: AuthorizeTransaction, policy: EmulatorSeed.Policy) -> Journey {
        Journey(
            policy,
            tokenExtension: seed.tenant.externalId && authenticationExtension(.onTokenIssuanceStart, clientId: tx.clientId) != nil,
            passwordChange: seed.tenant.externalId || policy.forcedPasswordReset)
    }

    /// The journey from its first step (a new authorize request, or one the SSO session answers: its claims skip the
    /// pages).
    func start(_ tx: AuthorizeTransaction, policy: EmulatorSeed.Policy, _ visit: Visit) async throws -> Response {
        try await run(tx, from: 0, journey(tx, policy: policy), policy: policy, visit)
    }

    /// prompt=none: only the steps that need no page (the directory, the callouts, token issuance) — the SSO session named
    /// the person, and a page would need the user.
    func silently(_ tx: AuthorizeTransaction, policy: EmulatorSeed.Policy, _ visit: Visit) async throws -> Response {
        let journey = journey(tx, policy: policy)
        let quiet: Set<Journey.Step> = [.customPolicy, .directoryRead, .preTokenConnector, .tokenIssuanceExtension, .tokenIssuance]
        return try await run(
            tx, from: 0, Journey(id: journey.id, steps: journey.steps.filter { quiet.contains($0.step) }), policy: policy, visit)
    }

    /// What a step's entry or resume said: its response, or the journey going on after `step`.
    func proceed(
        _ outcome: StepOutcome, after step: Journey.Step, policy: EmulatorSeed.Policy, _ visit: Visit
    ) async throws -> Response {
        switch outcome {
        case .respond(let response): return response
        case .next(let tx):
            let journey = journey(tx, policy: policy)
            guard let i = journey.index(of: step) else {
                throw PageError(code: nil, message: "The user flow '\(policy.id)' has no step '\(step.rawValue)'.", status: 404)
            }
            return try await run(tx, from: i + 1, journey, policy: policy, visit)
        }
    }

    /// The steps from `index` on: each whose conditions hold is entered; the first that answers ends the walk.
    func run(
        _ tx: AuthorizeTransaction, from index: Int, _ journey: Journey, policy: EmulatorSeed.Policy, _ visit: Visit
    ) async throws -> Response {
        var tx = tx
        for i in journey.steps.indices where i >= index {
            let entry = journey.steps[i]
            if let unmet = entry.when.first(where: { !$0.holds(tx.claims) }) {
                store.journeys.note(
                    tx.id, .decision, "step \(i + 1) skipped: \(entry.step.rawValue)", ["because": .string(unmet.unmet)])
                continue
            }
            tx.stepIndex = i
            store.journeys.note(tx.id, .step, "step \(i + 1): \(entry.step.rawValue)", ["claims": tx.claims.recorded])
            switch try await Self.type(entry.step, parts).enter(tx, visit, policy: policy) {
            case .respond(let response): return response
            case .next(let after): tx = after
            }
        }
        throw PageError(code: nil, message: "The user flow '\(policy.id)' ended without an answer for the app.")
    }

    /// The type of each orchestration step.
    static func type(_ step: Journey.Step, _ parts: JourneyParts) -> any OrchestrationStep {
        switch step {
        case .combinedSignIn: SignInStep(parts: parts)
        case .passwordChange: PasswordChangeStep(parts: parts)
        case .signUp: SignUpStep(parts: parts)
        case .passwordReset: PasswordResetStep(parts: parts)
        case .federation: FederationStep(parts: parts)
        case .postFederationConnector: ConnectorCalloutStep(parts: parts, point: .postFederationSignup)
        case .socialSignUp: SocialSignUpStep(parts: parts)
        case .directoryRead: DirectoryReadStep(parts: parts)
        case .secondFactor: SecondFactorStep(parts: parts)
        case .profileEdit: ProfileEditStep(parts: parts)
        case .preTokenConnector: ConnectorCalloutStep(parts: parts, point: .preTokenIssuance)
        case .tokenIssuanceExtension: TokenExtensionStep(parts: parts)
        case .tokenIssuance: TokenIssuanceStep(parts: parts)
        case .customPolicy: CustomPolicyStep(parts: parts)
        }
    }
}
