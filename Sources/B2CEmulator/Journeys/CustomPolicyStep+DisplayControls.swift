import B2CProtocol
import Foundation

/// A self-asserted page's display controls (reference: display-controls.md, b2c-journeys.md §1.4): a `VerificationControl`
/// sends a code with its `SendCode` action's validation profiles and checks it with `VerifyCode`'s; the page continues only
/// once each control is verified, and the claims it verified cannot change without its "change" button.
extension CustomPolicyStep {
    /// One action of a control; the message for the control's error slot, or nil when it went well.
    func controlAction(
        _ id: String, _ action: String, _ form: [String: String], profile: TechnicalProfile, _ state: inout PolicyJourneyState,
        run: PolicyRun
    ) async throws -> String? {
        guard let control = CustomPolicyPages.controls(profile, policy: run.policy).first(where: { $0.id == id }) else {
            throw PageError(code: "AADB2C90250", message: "This page has no display control '\(id)'.")
        }
        if action == "change" {
            state.controls[id] = nil
            run.note("display control \(id): change", [:])
            return nil
        }
        guard let references = control.actions[action] else {
            throw PageError(code: "AADB2C90250", message: "The display control '\(id)' has no action '\(action)'.")
        }
        // The control's claims as typed (the code only with VerifyCode; what was sent to stays as it was sent).
        for field in control.fields where !field.readOnly {
            let isCode = field.id == control.codeClaim
            guard isCode == (action == "VerifyCode"), isCode || state.controls[id] == nil, let value = form[field.id] else { continue }
            let typed = value.trimmingCharacters(in: .whitespacesAndNewlines)
            if !isCode {
                if typed.isEmpty, field.required { return "\(field.label) is required." }
                let validation = ClaimValidation(policy: run.policy, note: run.note, now: Date(timeIntervalSince1970: Double(run.now)))
                if let problem = validation.problem(claimType: field.id, value: typed) { return problem }
            }
            state.claims[field.id] = run.typed(typed, field.id)
        }
        var scratch = state
        do {
            for reference in references { try await validate(reference, &scratch, run: run) }
        } catch let e as CustomPolicyError where e.onPage {
            state.codes = scratch.codes  // a wrong answer counts, even though the action failed
            run.note("display control \(id): \(action) refused", ["message": .string(e.message)])
            return e.message
        }
        if let code = control.codeClaim { scratch.claims[code] = nil }
        state = scratch
        state.controls[id] = action == "VerifyCode" ? "verified" : "sent"
        run.note("display control \(id): \(action)", [:])
        return nil
    }
}
