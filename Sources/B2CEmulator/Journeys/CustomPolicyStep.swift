import B2CProtocol
import Foundation
import Hummingbird

/// A custom policy's user journey as one step of the engine: its orchestration steps run over the claims bag
/// (`PolicyRun`), its self-asserted profiles are pages, and its `SendClaims` hands the relying party's claims and the
/// person to token issuance, which ends every journey.
struct CustomPolicyStep: OrchestrationStep {
    let parts: JourneyParts

    func enter(_ tx: AuthorizeTransaction, _ visit: Visit, policy: EmulatorSeed.Policy) async throws -> StepOutcome {
        var tx = tx
        var state = PolicyJourneyState()
        if let oid = tx.claims.oid {
            // The SSO session named the person: the journey's sign-in is skipped, as B2C's session provider does, and each
            // session manager whose work the session holds says so (SM-AAD's objectIdFromSession, SM-MFA's
            // isActiveMFASession when the session did MFA).
            state.claims = tx.claims.sessionClaims ?? [:]
            state.claims["objectId"] = .string(oid)
            state.claims["objectIdFromSession"] = .bool(true)
            try sessionOutputs(&state, tx, policy: policy)
        }
        return try await walk(&tx, state, policy: policy)
    }

    /// What the policy's session managers keep in the SSO session: the bag's values of their `PersistedClaims`.
    private func sessionKept(_ bag: [String: ClaimValue], run: PolicyRun) throws -> [String: ClaimValue] {
        var kept: [String: ClaimValue] = [:]
        for (id, node) in run.policy.all(.technicalProfile) where TechnicalProfile.Handler.of(node.child("Protocol"))?.isSession == true {
            guard let manager = try TechnicalProfile.named(id, in: run.policy), manager.handler != .noopSession else { continue }
            for claim in manager.persistedClaims {
                guard let ref = claim["ClaimTypeReferenceId"].map(run.claimTypeID), let value = bag[ref] else { continue }
                kept[ref] = value
            }
        }
        return kept
    }

    /// The output claims of the session managers the SSO session answers for.
    private func sessionOutputs(_ state: inout PolicyJourneyState, _ tx: AuthorizeTransaction, policy: EmulatorSeed.Policy) throws {
        let run = try self.run(tx, policy: policy)
        var answered: Set<String> = []
        for id in run.policy.all(.technicalProfile).keys.sorted() {
            guard let profile = try? TechnicalProfile.named(id, in: run.policy), let manager = profile.sessionManager,
                !answered.contains(manager), profile.handler != .phoneFactor || tx.claims.sessionDidMFA,
                let session = try? TechnicalProfile.named(manager, in: run.policy), session.handler.isSession,
                session.handler != .noopSession
            else { continue }
            answered.insert(manager)
            try? run.outputClaims(session, [:], &state.claims)
        }
        run.note("the SSO session answered", ["sessionManagers": JSONValue(answered.sorted())])
    }

    /// A page's answer: the code buttons of an email to verify, the sign-up link, or the page submitted.
    func resume(
        _ name: String, _ form: [String: String], _ tx: AuthorizeTransaction, policy: EmulatorSeed.Policy
    ) async throws
        -> StepOutcome
    {
        var tx = tx
        guard case .customPolicy(var state) = tx.step else {
            throw PageError(code: nil, message: "This sign-in is not at a page of its custom policy. Start again from your application.")
        }
        let run = try self.run(tx, policy: policy)
        if form["step"] == "exchange" {
            // A provider's button: only one the page offered.
            guard let chosen = form["exchange"], state.choices.contains(chosen) else {
                throw PageError(code: "AADB2C90051", message: "No suitable claims providers were found.")
            }
            run.note("claims provider chosen", ["claimsExchange": .string(chosen)])
            (state.chosenExchange, state.page, state.choices) = (chosen, nil, [])
            state.order += 1
            return try await walk(&tx, state, policy: policy)
        }
        guard let pageProfile = state.page, let profile = try TechnicalProfile.named(pageProfile, in: run.policy) else {
            throw PageError(code: "AADB2C90250", message: "This page of the custom policy takes no form; choose one of its buttons.")
        }
        if name == "policysignup" {
            guard state.combined, let target = profile.metadata("SignUpTarget") else {
                throw PageError(code: nil, message: "This page has no sign-up link.")
            }
            state.chosenExchange = target
            state.page = nil
            state.choices = []
            state.order += 1
            run.note("sign-up link", ["claimsExchange": .string(target)])
            return try await walk(&tx, state, policy: policy)
        }
        if profile.handler == .phoneFactor {
            let (page, done) = try phoneFactor(form, &state, tx, profile: profile, run: run)
            if let page {
                tx.step = .customPolicy(state)
                try store.saveTransaction(tx, now: clock.now())
                return .respond(page)
            }
            if done { tx.claims.mfaDone = true }
            state.page = nil
            state.order += 1
            return try await walk(&tx, state, policy: policy)
        }
        let values = CustomPolicyPages.values(form, profile: profile, policy: run.policy)
        for (id, value) in values { state.claims[id] = run.typed(value, id) }
        if let step = form["step"], let colon = step.firstIndex(of: ":") {
            let control = String(step[..<colon])
            let error = try await controlAction(
                control, String(step[step.index(after: colon)...]), form, profile: profile, &state, run: run)
            return try await show(&tx, state, run: run, controlError: error.map { [control: $0] } ?? [:])
        }
        switch form["step"] ?? "continue" {
        case "send":
            try sendCode(values, profile: profile, &state, tx, run: run)
            return try await show(&tx, state, run: run)
        case "verify":
            let error = verifyCode(form, &state)
            return try await show(&tx, state, run: run, error: error)
        case "edit":
            state.verified = []
            (state.codeSentTo, state.codeHash) = (nil, nil)
            return try await show(&tx, state, run: run)
        default:
            do {
                try await submit(profile, values, &state, run: run)
            } catch let e as CustomPolicyError where e.onPage {
                run.note("page refused", ["error": .string(e.code), "message": .string(e.message)])
                return try await show(&tx, state, run: run, error: e.message)
            }
            state.page = nil
            state.order += 1
            return try await walk(&tx, state, policy: policy)
        }
    }

    // MARK: the walk

    private func walk(
        _ tx: inout AuthorizeTransaction, _ state: PolicyJourneyState, policy: EmulatorSeed.Policy
    ) async throws
        -> StepOutcome
    {
        var state = state
        let run = try self.run(tx, policy: policy)
        let stop: PolicyRun.Stop
        do { stop = try await run.walk(try run.journey(), &state) } catch let e as CustomPolicyError {
            throw PageError(code: e.code, message: e.message)
        }
        switch stop {
        case .federate(_, let provider):
            tx.step = .federating(.init(provider: provider.rawValue, customPolicy: state))
            return .respond(try FederationStep(parts: parts).federate(tx, to: provider, origin: tx.origin))
        case .federateSAML(_, let provider):
            tx.step = .federating(.init(provider: provider.id, customPolicy: state))
            return .respond(try await FederationStep(parts: parts).federate(tx, to: provider, origin: tx.origin, policy: policy))
        case .federateOIDC(_, let provider):
            tx.step = .federating(.init(provider: provider.id, customPolicy: state))
            return .respond(try await FederationStep(parts: parts).federate(tx, to: provider, origin: tx.origin))
        case .page where tx.prompt.contains("none"):
            throw OAuthFailure(
                error: "interaction_required", code: "AADB2C90077",
                message: "The policy needs a page for this sign-in and the request's prompt parameter has a value of 'None'.")
        case .page:
            return try await show(&tx, state, run: run)
        case .sendClaims:
            guard let oid = state.claims["objectId"]?.text, !oid.isEmpty else {
                throw PageError(code: "AADB2C90251", message: "The journey sent its claims without an objectId: nobody is signed in.")
            }
            let claims = run.relyingPartyClaims(state.claims)
            run.note("send claims", ["claims": .object(JourneyRecorder.masked(claims))])
            if state.claims["objectIdFromSession"]?.bool != true {
                tx.claims.signedIn(oid, at: clock.now(), newUser: state.claims["newUser"]?.bool ?? false)
            }
            tx.claims.extraClaims = claims
            tx.claims.sessionClaims = try sessionKept(state.claims, run: run)
            tx.step = .start
            return .next(tx)
        }
    }

    /// The page of the profile the state names (or the provider buttons alone), with the values the person typed and the
    /// bag's.
    func show(
        _ tx: inout AuthorizeTransaction, _ state: PolicyJourneyState, run: PolicyRun, error: String? = nil,
        controlError: [String: String] = [:]
    ) async throws
        -> StepOutcome
    {
        tx.step = .customPolicy(state)
        try store.saveTransaction(tx, now: clock.now())
        let profile = try state.page.flatMap { try TechnicalProfile.named($0, in: run.policy) }
        guard profile != nil || !state.choices.isEmpty else {
            throw PageError(code: "AADB2C90250", message: "The policy's page has no technical profile.")
        }
        if let profile, profile.handler == .phoneFactor { return .respond(phoneFactorPage(tx, state: state, error: error)) }
        return .respond(
            CustomPolicyPages(parts: parts).page(tx, profile: profile, state: state, run: run, error: error, controlError: controlError))
    }

    /// A provider answered the journey's OAuth2 or OpenID Connect profile (the checks of which provider may answer are
    /// `FederationStep`'s): its claims, by the profile's partner names, go into the bag, and the journey goes on.
    func federated(
        _ identity: FederatedIdentity, _ tx: AuthorizeTransaction, state: PolicyJourneyState, policy: EmulatorSeed.Policy
    )
        async throws -> StepOutcome
    {
        var (tx, state) = (tx, state)
        let run = try self.run(tx, policy: policy)
        guard let id = state.page, let profile = try TechnicalProfile.named(id, in: run.policy) else {
            throw PageError(code: "AADB2C90250", message: "The policy no longer has the technical profile that federated.")
        }
        do { try run.outputClaims(profile, PolicyRun.federatedClaims(identity), &state.claims) } catch let e as CustomPolicyError {
            throw PageError(code: e.code, message: e.message)
        }
        run.note("technical profile \(id)", ["handler": .string(profile.handler.rawValue), "claims": PolicyRun.recorded(state.claims)])
        state.page = nil
        state.order += 1
        return try await walk(&tx, state, policy: policy)
    }

    /// The OpenID Connect provider of the profile the journey federated with (`state.page`), for its answer.
    func oidcProvider(
        _ tx: AuthorizeTransaction, state: PolicyJourneyState, policy: EmulatorSeed.Policy
    ) throws -> EmulatorSeed.OIDCProvider? {
        let run = try self.run(tx, policy: policy)
        return try state.page.flatMap { try TechnicalProfile.named($0, in: run.policy) }.flatMap { try run.oidcProvider($0) }
    }

    /// The run of this transaction's policy: its effective policy (cached by the tenant), the request's resolvers.
    func run(_ tx: AuthorizeTransaction, policy: EmulatorSeed.Policy) throws -> PolicyRun {
        let effective: EffectivePolicy
        do { effective = try parts.customPolicies.effective(policy.id) } catch {
            throw PageError(code: "AADB2C90067", message: "The custom policy '\(policy.id)' cannot run: \(error)")
        }
        var request = tx.parameters ?? [:]
        request.merge(["client_id": tx.clientId, "redirect_uri": tx.redirectUri, "scope": tx.scope]) { _, checked in checked }
        if let hint = tx.loginHint { request["login_hint"] = hint }
        if let nonce = tx.nonce { request["nonce"] = nonce }
        let resolvers = ClaimResolvers.of(
            tenantName: seed.tenant.name, tenantId: seed.tenant.id, policyId: policy.id, request: request, language: tx.language,
            correlationId: tx.id, now: clock.date)
        let journeys = store.journeys, id = tx.id
        return PolicyRun(
            policy: effective, resolvers: resolvers, store: store, tenantName: seed.tenant.name, now: clock.now(),
            note: { name, detail in journeys.note(id, .claims, name, detail()) }, journeyID: id,
            policyKeys: seed.tenant.policyKeyValues,
            caFile: seed.tenant.customPolicyCAFile, registrations: (seed.apps, seed.apis))
    }

    // MARK: the page's submit

    /// A self-asserted page submitted: each shown claim required and valid by its claim type, a verified address
    /// verified, the passwords equal, then the validation profiles in order and the profile's outputs.
    private func submit(
        _ profile: TechnicalProfile, _ values: [String: String], _ state: inout PolicyJourneyState, run: PolicyRun
    )
        async throws
    {
        let validation = ClaimValidation(policy: run.policy, note: run.note, now: Date(timeIntervalSince1970: Double(run.now)))
        for field in CustomPolicyPages.fields(profile, policy: run.policy) {
            if field.readOnly {
                // What the page showed (its input claim's value), never what came back.
                let input = profile.inputClaims.first { $0["ClaimTypeReferenceId"].map(run.claimTypeID) == field.id }
                if let shown = input.flatMap({ run.value(of: $0, field.id, in: state.claims) }) { state.claims[field.id] = shown }
                continue
            }
            let value = values[field.id] ?? ""
            if value.isEmpty {
                if field.required { throw CustomPolicyError(code: "AADB2C90075", message: "\(field.label) is required.", onPage: true) }
                continue
            }
            if let problem = validation.problem(claimType: field.id, value: value) {
                throw CustomPolicyError(code: "AADB2C90075", message: problem, onPage: true)
            }
            if field.verify && !state.verified.contains(value.lowercased()) {
                throw CustomPolicyError(code: "AADB2C90075", message: "Please verify your email address before you continue.", onPage: true)
            }
        }
        for control in CustomPolicyPages.controls(profile, policy: run.policy) where state.controls[control.id] != "verified" {
            throw CustomPolicyError(
                code: "AADB2C90075", message: "Please verify \(control.label) before you continue.", onPage: true)
        }
        if let password = values["newPassword"], let again = values["reenterPassword"], password != again {
            throw CustomPolicyError(
                code: "AADB2C90075",
                message: "The password entry fields do not match. Please enter the same password in both fields and try again.",
                onPage: true)
        }
        var scratch = state
        _ = try run.inputClaims(profile, &scratch.claims)
        for reference in profile.validationProfiles {
            try await validate(reference, &scratch, run: run)
        }
        try run.outputClaims(profile, [:], &scratch.claims)
        state = scratch
    }

    /// One validation profile of a page or a display control's action, unless its preconditions skip it; an error is the
    /// page's (or, with `ContinueOnError`, noted and passed over).
    func validate(_ reference: PolicyNode, _ state: inout PolicyJourneyState, run: PolicyRun) async throws {
        guard let id = reference["ReferenceId"] ?? reference["TechnicalProfileReferenceId"],
            let vtp = try TechnicalProfile.named(id, in: run.policy)
        else { return }
        if let why = Preconditions.skipReason(reference.child("Preconditions"), claims: state.claims) {
            run.note("validation profile \(id) skipped", ["because": .string(why)])
            return
        }
        do { try await run.execute(vtp, &state) } catch let e as CustomPolicyError where reference["ContinueOnError"] == "true" {
            run.note("validation profile \(id) failed, and the page goes on", ["error": .string(e.code), "message": .string(e.message)])
        } catch let e as CustomPolicyError {
            run.note("validation profile \(id) failed", ["error": .string(e.code), "message": .string(e.message)])
            throw CustomPolicyError(code: e.code, message: e.message, onPage: true)
        }
    }

    // MARK: email verification

    private func sendCode(
        _ values: [String: String], profile: TechnicalProfile, _ state: inout PolicyJourneyState, _ tx: AuthorizeTransaction,
        run: PolicyRun
    ) throws {
        guard let field = CustomPolicyPages.fields(profile, policy: run.policy).first(where: \.verify) else { return }
        let address = (values[field.id] ?? "").lowercased()
        guard !address.isEmpty, ClaimValidation(policy: run.policy).problem(claimType: field.id, value: address) == nil else { return }
        let code = try store.mfaKnobs.fixedCode ?? Random.digits(6)
        let now = clock.now()
        (state.codeSentTo, state.codeHash) = (address, EmulatorStore.hash(code))
        try store.outbox.send(
            to: address, purpose: "signup", code: code, now: now, expiresAt: now + SecondFactorStep.mfaCodeLifetime, journey: tx.id)
        run.note("code sent", ["to": .string(address)])
    }

    private func verifyCode(_ form: [String: String], _ state: inout PolicyJourneyState) -> String? {
        let typed = (form["email_ver_input"] ?? "").trimmingCharacters(in: .whitespaces)
        guard let address = state.codeSentTo, let hash = state.codeHash, EmulatorStore.hash(typed) == hash else {
            return "The verification code you have entered does not match our records. Please try again, or request a new code."
        }
        state.verified.append(address)
        (state.codeSentTo, state.codeHash) = (nil, nil)
        return nil
    }
}
