import Foundation

/// An orchestration step's (or validation profile's) preconditions in B2C's semantics (reference: userjourneys.md):
/// evaluated in order, the first that is satisfied takes its action (skip the step); the step runs when none is.
/// `ClaimsExist` is satisfied when the claim exists (`ExecuteActionsIf="true"`) or does not (`"false"`); `ClaimEquals`
/// compares the claim with a value, ordinal and case-sensitive — and a claim with no value makes it ignored, whatever
/// `ExecuteActionsIf` says.
enum Preconditions {
    /// Why the step is skipped (for the recorder), or nil when it runs.
    static func skipReason(_ preconditions: PolicyNode?, claims: [String: ClaimValue]) -> String? {
        for p in preconditions?.all("Precondition") ?? [] {
            let values = p.all("Value").map(\.trimmedText)
            guard let claim = values.first else { continue }
            let executeIf = (p["ExecuteActionsIf"] ?? "true").lowercased() == "true"
            let present = claims[claim].map { !$0.text.isEmpty } ?? false
            let satisfied: Bool
            switch p["Type"] ?? "" {
            case "ClaimsExist":
                satisfied = present == executeIf
            case "ClaimEquals":
                guard present, let value = claims[claim]?.text, values.count > 1 else { continue }
                satisfied = (value == values[1]) == executeIf
            default:
                continue
            }
            if satisfied {
                let action = p.child("Action")?.trimmedText ?? "SkipThisOrchestrationStep"
                return "\(action): \(p["Type"] ?? "") \(values.joined(separator: " = ")) is \(executeIf)"
            }
        }
        return nil
    }
}
