import B2CProtocol
import Foundation

/// A custom policy's journey as it stands between requests: the claims bag, the orchestration step it is at, the page it
/// shows, the addresses a code verified. Kept in the transaction (`JourneyStep.customPolicy`).
struct PolicyJourneyState: Codable, Sendable {
    var claims: [String: ClaimValue] = [:]
    /// The `Order` of the orchestration step the journey is at.
    var order = 1
    /// The self-asserted profile whose page is shown, when one is.
    var page: String?
    /// The orchestration step's page is the combined sign-in (`CombinedSignInAndSignUp`).
    var combined = false
    /// The claims exchange the page's sign-up link (or a provider's button) chose, for the next `ClaimsExchange` step.
    var chosenExchange: String?
    /// The providers' buttons the page offers (`ClaimsProviderSelection`'s `TargetClaimsExchangeId`s): the only exchanges
    /// a button may choose.
    var choices: [String] = []
    /// An address a code was sent to, the code's hash, and the addresses verified.
    var codeSentTo: String?
    var codeHash: String?
    var verified: [String] = []
    /// The phone factor's number on record (its input claim), when the person has one.
    var phoneOnRecord: String?
    /// The display controls of the page whose code was sent (`sent`) or verified (`verified`), by control id.
    var controls: [String: String] = [:]
    /// The codes issued in this journey by identifier (an address, a number, an OTP identifier), hashed.
    var codes: [String: IssuedCode] = [:]
    /// The sub-journeys the walk is inside (`InvokeSubJourney`), innermost last; `order` is then the sub-journey's.
    var calls: [SubJourneyCall] = []

    /// A sub-journey entered: its id, and the parent's step to go on from when it ends (nil for a `Transfer`, whose
    /// parent never resumes).
    struct SubJourneyCall: Codable, Sendable, Equatable {
        var id: String
        var returnTo: Int?
    }
}

/// One request's run of a custom policy (reference: b2c-custom-policies.md): technical profiles in B2C's order — input
/// claims transformations, input claims, the protocol, validation profiles, output claims, output claims transformations
/// — over the claims bag, and the orchestration steps of the relying party's journey. The pages are the step's
/// (`CustomPolicyStep`); everything else happens here.
struct PolicyRun {
    let policy: EffectivePolicy
    let resolvers: ClaimResolvers
    let store: EmulatorStore
    let tenantName: String
    let now: Int
    /// The recorder's note for this journey: what happened, with what. The details are made only when a recorder
    /// listens (a refresh's run has none, and masking the claims bag at every step was a share of its time).
    let note: (String, @autoclosure () -> [String: JSONValue]) -> Void
    /// The journey's id, for the callouts' records.
    var journeyID: String? = nil
    /// The tenant's policy keys that hold a value (the seed's `tenant.policyKeyValues`), by name.
    var policyKeys: [String: String] = [:]
    /// A PEM file of CA certificates trusted beside the system's for the policy's REST APIs (`tenant.customPolicyCAFile`).
    var caFile: String? = nil
    /// The tenant's app registrations and APIs, which the starter pack's password grant names (nil: not checked).
    var registrations: (apps: [EmulatorSeed.App], apis: [EmulatorSeed.API])? = nil

    /// What the walk stopped at.
    enum Stop {
        /// A self-asserted page (the state names it).
        case page
        /// `SendClaims`: the relying party's claims are due, by this issuer profile.
        case sendClaims(issuer: String?)
        /// An OAuth2 or OpenID Connect profile: the person goes to the provider (the tenant's mock of it).
        case federate(profile: String, provider: EmulatorSeed.IdentityProvider)
        /// An OpenID Connect profile whose `METADATA` names a provider of your own: the tenant is its relying party.
        case federateOIDC(profile: String, provider: EmulatorSeed.OIDCProvider)
        /// A `SAML2` profile whose `PartnerEntity` names a provider's metadata: the tenant is its service provider.
        case federateSAML(profile: String, provider: EmulatorSeed.SAMLProvider)
    }

    /// A claim reference as the claims bag keys it: the claim type's declared id.
    func claimTypeID(_ reference: String) -> String { policy.declaredID(.claimType, reference) }

    // MARK: orchestration

    /// The relying party's journey (its `DefaultUserJourney`), or the one `endpoint` names (`Token` on a refresh).
    func journey(endpoint: String? = nil) throws -> PolicyNode {
        let rp = policy.relyingParty
        let id =
            endpoint.flatMap { e in rp?.at("Endpoints")?.all("Endpoint").first { $0["Id"] == e }?["UserJourneyReferenceId"] }
            ?? rp?.child("DefaultUserJourney")?["ReferenceId"]
        guard let id, let journey = policy.element(.userJourney, id) else {
            throw CustomPolicyError(code: "AADB2C90067", message: "The policy '\(policy.id)' names no user journey the tenant can run.")
        }
        return journey
    }

    static func steps(of journey: PolicyNode) -> [PolicyNode] {
        (journey.child("OrchestrationSteps")?.all("OrchestrationStep") ?? []).sorted {
            (Int($0["Order"] ?? "") ?? 0) < (Int($1["Order"] ?? "") ?? 0)
        }
    }

    /// How deep sub-journeys may call one another (the upload refuses a cycle; this bounds what a cycle could not).
    static let maximumCallDepth = 8

    /// The journey the state is in: the innermost sub-journey called, else `journey`.
    func current(_ journey: PolicyNode, _ state: PolicyJourneyState) throws -> PolicyNode {
        guard let call = state.calls.last else { return journey }
        guard let sub = policy.element(.subJourney, call.id) else {
            throw CustomPolicyError(code: "AADB2C90067", message: "The policy no longer declares the sub-journey '\(call.id)'.")
        }
        return sub
    }

    /// The steps from the state's order on, until a page or `SendClaims`; a called sub-journey runs its steps, then its
    /// caller goes on after the `InvokeSubJourney` step.
    func walk(_ journey: PolicyNode, _ state: inout PolicyJourneyState) async throws -> Stop {
        while true {
            let current = try current(journey, state)
            switch try await walkSteps(of: current, &state) {
            case .stop(let stop): return stop
            case .entered: continue
            case .ended: break
            }
            guard let call = state.calls.popLast() else {
                throw CustomPolicyError(code: "AADB2C90067", message: "The user journey ended without a SendClaims step.")
            }
            guard let back = call.returnTo else {
                throw CustomPolicyError(
                    code: "AADB2C90067", message: "The sub-journey '\(call.id)' (Transfer) ended without a SendClaims step.")
            }
            note("sub-journey \(call.id) ended", [:])
            state.order = back
        }
    }

    private enum StepsOutcome {
        case stop(Stop)
        /// A sub-journey was entered (`calls` names it, `order` is 0).
        case entered
        /// The journey's steps ran out.
        case ended
    }

    /// One journey's steps from the state's order on.
    private func walkSteps(of journey: PolicyNode, _ state: inout PolicyJourneyState) async throws -> StepsOutcome {
        let inside = state.calls.last.map { "sub-journey \($0.id), " } ?? ""
        for step in Self.steps(of: journey) {
            let order = Int(step["Order"] ?? "") ?? 0
            guard order >= state.order else { continue }
            state.order = order
            let type = step["Type"] ?? ""
            if let why = Preconditions.skipReason(step.child("Preconditions"), claims: state.claims) {
                note("\(inside)orchestration step \(order) skipped: \(type)", ["because": .string(why)])
                continue
            }
            note("\(inside)orchestration step \(order): \(type)", ["claims": Self.recorded(state.claims)])
            switch type {
            case "InvokeSubJourney":
                if try invoke(step, order: order, &state) { return .entered }
            case "CombinedSignInAndSignUp", "ClaimsProviderSelection":
                if let outcome = try selectProvider(step, order: order, &state) { return outcome }
            case "ClaimsExchange":
                if let outcome = try await claimsExchange(step, order: order, &state) { return outcome }
            case "SendClaims":
                return .stop(.sendClaims(issuer: step["CpimIssuerTechnicalProfileReferenceId"]))
            case "GetClaims":
                try getClaims(step, order: order, &state)
            default:
                throw CustomPolicyError(
                    code: "AADB2C90250",
                    message: "Orchestration step \(order) is of type '\(type)', which the local tenant does not run yet.")
            }
        }
        return .ended
    }

    /// `GetClaims`: the relying party's input claims, from the request — each its `DefaultValue` with the claim resolvers
    /// resolved (`{OAUTH-KV:campaignId}` is the authorize request's `campaignId`), into the bag. An `id_token_hint` issuer
    /// (`CpimIssuerTechnicalProfileReferenceId`) is refused by name: the local tenant does not read id token hints.
    private func getClaims(_ step: PolicyNode, order: Int, _ state: inout PolicyJourneyState) throws {
        if let issuer = step["CpimIssuerTechnicalProfileReferenceId"] {
            throw CustomPolicyError(
                code: "AADB2C90250",
                message:
                    "Orchestration step \(order) reads claims through '\(issuer)' (an id_token_hint); the local tenant does not run that.")
        }
        let rp = policy.relyingParty?.child("TechnicalProfile")
        for claim in rp?.at("InputClaims")?.all("InputClaim") ?? [] {
            guard let ref = claim["ClaimTypeReferenceId"].map(claimTypeID), let given = claim["DefaultValue"] else { continue }
            let value = resolvers.resolve(given)
            if !value.isEmpty { state.claims[ref] = typed(value, ref) }
        }
        note("orchestration step \(order): the relying party's input claims", ["claims": Self.recorded(state.claims)])
    }

    /// A provider selection step: answered by the SSO session, by the only provider there is, or the page (B2C's
    /// selection page, or the combined sign-in page with its validation profile); nil goes on to the next step.
    private func selectProvider(_ step: PolicyNode, order: Int, _ state: inout PolicyJourneyState) throws -> StepsOutcome? {
        if state.claims["objectIdFromSession"]?.bool == true {
            note("orchestration step \(order) answered by the SSO session", [:])
            return nil
        }
        let selections = step.at("ClaimsProviderSelections")?.all("ClaimsProviderSelection") ?? []
        let validation = selections.compactMap { $0["ValidationClaimsExchangeId"] }.first
        let targets = selections.compactMap { $0["TargetClaimsExchangeId"] }
        if validation == nil, targets.count == 1 {
            // One provider to choose from: chosen, as B2C does, without a selection page.
            state.chosenExchange = targets[0]
            note("orchestration step \(order): the only claims provider chosen", ["claimsExchange": .string(targets[0])])
            return nil
        }
        state.choices = targets
        state.combined = true
        guard let validation else {
            // Buttons only: B2C's provider selection page.
            guard !targets.isEmpty else {
                throw CustomPolicyError(code: "AADB2C90250", message: "Orchestration step \(order) offers no claims provider.")
            }
            state.page = nil
            return .stop(.page)
        }
        guard let exchange = exchange(of: step, id: validation), let profile = try TechnicalProfile.named(exchange, in: policy) else {
            throw CustomPolicyError(
                code: "AADB2C90250", message: "Orchestration step \(order) has no self-asserted sign-in the tenant can show.")
        }
        state.page = profile.id
        return .stop(.page)
    }

    /// A claims exchange: its technical profile's page (self-asserted, phone factor), a federation, or the profile run
    /// here; nil goes on to the next step.
    private func claimsExchange(_ step: PolicyNode, order: Int, _ state: inout PolicyJourneyState) async throws -> StepsOutcome? {
        let chosen = try state.chosenExchange ?? sessionExchange(of: step, state)
        guard let id = exchange(of: step, id: chosen), let profile = try TechnicalProfile.named(id, in: policy) else {
            throw CustomPolicyError(code: "AADB2C90250", message: "Orchestration step \(order) names no technical profile.")
        }
        state.chosenExchange = nil
        if profile.handler == .selfAsserted, state.claims["objectIdFromSession"]?.bool == true, try keepsSession(profile) {
            note("orchestration step \(order): \(profile.id) answered by the SSO session", [:])
            return nil
        }
        if profile.handler == .selfAsserted {
            state.page = profile.id
            state.combined = false
            return .stop(.page)
        }
        if profile.handler == .phoneFactor {
            // B2C's phone factor page: the number on record verified by a code, or one entered (when allowed).
            let inputs = try inputClaims(profile, &state.claims)
            state.phoneOnRecord = inputs["strongAuthenticationPhoneNumber"]?.text.nilIfEmpty
            (state.page, state.combined, state.codeSentTo, state.codeHash) = (profile.id, false, nil, nil)
            return .stop(.page)
        }
        if [.oauth2, .openIdConnect, .saml].contains(profile.handler), !Self.isLocalPasswordCheck(profile) {
            return try federate(profile, &state)
        }
        try await execute(profile, &state)
        return nil
    }

    /// A federation profile: the browser goes to the provider the local tenant mocks or knows (mock, SAML, OpenID Connect).
    private func federate(_ profile: TechnicalProfile, _ state: inout PolicyJourneyState) throws -> StepsOutcome {
        if let provider = Self.mockProvider(profile) {
            _ = try inputClaims(profile, &state.claims)
            state.page = profile.id
            return .stop(.federate(profile: profile.id, provider: provider))
        }
        if let provider = Self.samlProvider(profile) {
            _ = try inputClaims(profile, &state.claims)
            state.page = profile.id
            return .stop(.federateSAML(profile: profile.id, provider: provider))
        }
        if let provider = try oidcProvider(profile) {
            _ = try inputClaims(profile, &state.claims)
            state.page = profile.id
            return .stop(.federateOIDC(profile: profile.id, provider: provider))
        }
        throw CustomPolicyError(
            code: "AADB2C90250",
            message: "The technical profile '\(profile.id)' federates with a provider the local tenant does not mock "
                + "(\(profile.metadata("authorization_endpoint") ?? profile.metadata("METADATA") ?? "no endpoint")).")
    }

    /// `InvokeSubJourney`: its first candidate whose preconditions hold is entered, at its first step; false when none
    /// holds.
    private func invoke(_ step: PolicyNode, order: Int, _ state: inout PolicyJourneyState) throws -> Bool {
        let candidates = step.at("JourneyList")?.all("Candidate") ?? []
        guard
            let id = candidates.first(where: { Preconditions.skipReason($0.child("Preconditions"), claims: state.claims) == nil })?[
                "SubJourneyReferenceId"], let sub = policy.element(.subJourney, id)
        else {
            note("orchestration step \(order): no sub-journey's preconditions hold", [:])
            return false
        }
        guard state.calls.count < Self.maximumCallDepth else {
            throw CustomPolicyError(
                code: "AADB2C90067", message: "Sub-journeys call one another more than \(Self.maximumCallDepth) deep (at '\(id)').")
        }
        let transfer = sub["Type"]?.lowercased() == "transfer"
        state.calls.append(.init(id: id, returnTo: transfer ? nil : order + 1))
        state.order = 0
        note("sub-journey \(id) entered", ["type": .string(transfer ? "Transfer" : "Call")])
        return true
    }

    /// Whether a profile's session manager keeps what it did in the SSO session (any but B2C's no-op provider), so that a
    /// session answers it the next time.
    private func keepsSession(_ profile: TechnicalProfile) throws -> Bool {
        guard let id = profile.sessionManager, let manager = try TechnicalProfile.named(id, in: policy) else { return false }
        return manager.handler.isSession && manager.handler != .noopSession
    }

    /// With an SSO session and no provider chosen (its selection step was answered by the session), the exchange the
    /// session answers: the first whose self-asserted profile keeps its work in the session, as B2C goes on with the
    /// session's claims provider instead of the step's first exchange (a profile edit after a local sign-in is not sent
    /// to Facebook because Facebook's exchange comes first).
    private func sessionExchange(of step: PolicyNode, _ state: PolicyJourneyState) throws -> String? {
        guard state.claims["objectIdFromSession"]?.bool == true else { return nil }
        for exchange in step.at("ClaimsExchanges")?.all("ClaimsExchange") ?? [] {
            guard let tp = exchange["TechnicalProfileReferenceId"], let profile = try TechnicalProfile.named(tp, in: policy) else {
                continue
            }
            if profile.handler == .selfAsserted, try keepsSession(profile) { return exchange["Id"] }
        }
        return nil
    }

    /// The technical profile of the claims exchange `id`, wherever the journey declares it (a button's label and provider).
    func profile(ofExchange id: String, in journey: PolicyNode) throws -> TechnicalProfile? {
        for step in Self.steps(of: journey) {
            if let tp = step.at("ClaimsExchanges")?.all("ClaimsExchange").first(where: { $0["Id"] == id })?["TechnicalProfileReferenceId"] {
                return try TechnicalProfile.named(tp, in: policy)
            }
        }
        return nil
    }

    /// The technical profile a step's claims exchange names: the one chosen (its `Id`), else the step's only one.
    private func exchange(of step: PolicyNode, id: String?) -> String? {
        let exchanges = step.at("ClaimsExchanges")?.all("ClaimsExchange") ?? []
        let chosen = id.flatMap { id in exchanges.first { $0["Id"] == id } } ?? exchanges.first
        return chosen?["TechnicalProfileReferenceId"]
    }

    // MARK: technical profiles

    /// A profile that needs no page: its inputs, its protocol, its outputs.
    func execute(_ profile: TechnicalProfile, _ state: inout PolicyJourneyState) async throws {
        let inputs = try inputClaims(profile, &state.claims)
        let returned: [String: ClaimValue]
        switch profile.handler {
        case .directory: returned = try directory(profile, inputs, state.claims)
        case .openIdConnect where Self.isLocalPasswordCheck(profile): returned = try passwordCheck(profile, inputs)
        case .restful: returned = try await restful(profile, inputs)
        case .oneTimePassword: returned = try oneTimePassword(profile, inputs, &state.codes)
        case .sspr: returned = try sspr(profile, inputs, &state.codes)
        case .claimsTransformation, .none, .noopSession, .defaultSession, .externalLoginSession, .oauthSession, .samlSession:
            returned = [:]
        default:
            throw CustomPolicyError(
                code: "AADB2C90250",
                message: "The technical profile '\(profile.id)' uses \(profile.handler.rawValue), which the local tenant does not run yet.")
        }
        try outputClaims(profile, returned, &state.claims)
        note("technical profile \(profile.id)", ["handler": .string(profile.handler.rawValue), "claims": Self.recorded(state.claims)])
    }

    /// Input claims transformations, then the input claims keyed by the names the protocol knows them by.
    func inputClaims(_ profile: TechnicalProfile, _ bag: inout [String: ClaimValue]) throws -> [String: ClaimValue] {
        for id in profile.transformations("InputClaimsTransformations") { try transform(id, &bag, profile: profile) }
        var out: [String: ClaimValue] = [:]
        for claim in profile.inputClaims {
            guard let ref = claim["ClaimTypeReferenceId"].map(claimTypeID) else { continue }
            let name = claim["PartnerClaimType"] ?? ref
            if let value = value(of: claim, ref, in: bag) { out[name] = value }
            if claim["Required"] == "true" && out[name] == nil {
                throw CustomPolicyError(
                    code: "AADB2C90075", message: "The claim '\(ref)' that '\(profile.id)' requires was not supplied.", onPage: true)
            }
        }
        return out
    }

    /// Output claims from what the protocol returned (by partner name), else their default; then the output
    /// transformations.
    func outputClaims(_ profile: TechnicalProfile, _ returned: [String: ClaimValue], _ bag: inout [String: ClaimValue]) throws {
        for claim in profile.outputClaims {
            guard let ref = claim["ClaimTypeReferenceId"].map(claimTypeID) else { continue }
            let always = claim["AlwaysUseDefaultValue"] == "true"
            if !always, let v = returned[claim["PartnerClaimType"] ?? ref] {
                bag[ref] = v
            } else if let d = claim["DefaultValue"], always || bag[ref] == nil {
                bag[ref] = typed(resolvers.resolve(d), ref)
            }
        }
        for id in profile.transformations("OutputClaimsTransformations") { try transform(id, &bag, profile: profile) }
    }

    /// A claim element's value: the bag's, or its `DefaultValue` (always, with `AlwaysUseDefaultValue`).
    func value(of claim: PolicyNode, _ ref: String, in bag: [String: ClaimValue]) -> ClaimValue? {
        let always = claim["AlwaysUseDefaultValue"] == "true"
        if !always, let v = bag[ref], !v.text.isEmpty { return v }
        return claim["DefaultValue"].map { typed(resolvers.resolve($0), ref) }.flatMap { $0.text.isEmpty ? nil : $0 }
    }

    /// Text as the claim type's data type holds it.
    func typed(_ text: String, _ claimType: String) -> ClaimValue {
        switch policy.element(.claimType, claimType)?.child("DataType")?.trimmedText.lowercased() {
        case "boolean": ClaimValue.string(text).bool.map(ClaimValue.bool) ?? .string(text)
        case "int", "long": Int(text).map(ClaimValue.int) ?? .string(text)
        case "datetime", "date": ClaimValue.string(text).date.map(ClaimValue.dateTime) ?? .string(text)
        case "stringcollection": .collection(text.isEmpty ? [] : [text])
        default: .string(text)
        }
    }

    /// A claims transformation of the policy run over the bag; an asserting one's failure is the calling profile's message.
    func transform(_ id: String, _ bag: inout [String: ClaimValue], profile: TechnicalProfile? = nil) throws {
        guard let ct = policy.element(.claimsTransformation, id), let method = ct["TransformationMethod"] else {
            throw CustomPolicyError(code: "AADB2C90250", message: "The claims transformation '\(id)' is not declared.")
        }
        var inputs: [String: ClaimValue] = [:]
        for c in ct.at("InputClaims")?.all("InputClaim") ?? [] {
            if let ref = c["ClaimTypeReferenceId"].map(claimTypeID), let name = c["TransformationClaimType"], let v = bag[ref] {
                inputs[name] = v
            }
        }
        var parameters: [String: String] = [:]
        for p in ct.at("InputParameters")?.all("InputParameter") ?? [] {
            if let name = p["Id"] { parameters[name] = resolvers.resolve(p["Value"] ?? "") }
        }
        let outputs: [String: ClaimValue]
        do {
            outputs = try ClaimsTransformations.apply(method, inputs, parameters, now: Date(timeIntervalSince1970: Double(now)))
        } catch TransformationFailure.assertion(let key, let fallback) {
            throw CustomPolicyError(code: "AADB2C90000", message: profile?.metadata(key) ?? fallback, onPage: true)
        } catch TransformationFailure.unsupported(let m) {
            throw CustomPolicyError(code: "AADB2C90250", message: "The claims transformation method '\(m)' is not one the tenant runs.")
        } catch TransformationFailure.input(let why) {
            throw CustomPolicyError(code: "AADB2C90250", message: "The claims transformation '\(id)': \(why)")
        }
        for c in ct.at("OutputClaims")?.all("OutputClaim") ?? [] {
            guard let ref = c["ClaimTypeReferenceId"].map(claimTypeID), let name = c["TransformationClaimType"] else { continue }
            if ClaimsTransformations.clearing.contains(method) {
                bag[ref] = nil
            } else if let v = outputs[name] {
                bag[ref] = v
            }
        }
        note(
            "claims transformation \(id)",
            [
                "method": .string(method), "inputs": Self.recorded(inputs, context: bag),
                "parameters": .object(JourneyRecorder.masked(parameters.mapValues { .string($0) }, context: bag.mapValues(Self.json))),
                "outputs": Self.recorded(outputs, context: bag),
            ])
    }

    // MARK: the relying party's claims

    /// The token's claims the relying party's profile names: each output claim by its partner name (else the claim
    /// type's OpenID Connect name, else its id), from the bag or its default; `sub` from `SubjectNamingInfo`.
    func relyingPartyClaims(_ bag: [String: ClaimValue]) -> [String: JSONValue] {
        guard let rp = policy.relyingParty?.child("TechnicalProfile") else { return [:] }
        var out: [String: JSONValue] = [:]
        for claim in rp.at("OutputClaims")?.all("OutputClaim") ?? [] {
            guard let ref = claim["ClaimTypeReferenceId"].map(claimTypeID), let value = value(of: claim, ref, in: bag) else { continue }
            let name =
                claim["PartnerClaimType"]
                ?? policy.element(.claimType, ref)?.at("DefaultPartnerClaimTypes")?.all("Protocol").first {
                    $0["Name"] == "OpenIdConnect"
                }?["PartnerClaimType"] ?? ref
            out[name] = Self.json(value)
        }
        return out
    }

    static func json(_ v: ClaimValue) -> JSONValue {
        switch v {
        case .string(let s): .string(s)
        case .bool(let b): .bool(b)
        case .int(let n): JSONValue(n)
        case .dateTime: .string(v.text)
        case .collection(let items): JSONValue(items)
        }
    }

    static func recorded(_ bag: [String: ClaimValue], context: [String: ClaimValue] = [:]) -> JSONValue {
        .object(JourneyRecorder.masked(bag.mapValues(json), context: context.mapValues(json)))
    }
}
