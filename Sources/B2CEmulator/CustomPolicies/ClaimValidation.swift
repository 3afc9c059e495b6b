import B2CProtocol
import Foundation

/// What a page's value must be, from its claim type (reference: claimsschema.md, predicates.md): a `Restriction/Pattern`
/// (its `HelpText` when it does not match), or the `PredicateValidation` the claim's `PredicateValidationReference`
/// names — predicate groups, each satisfied when at least `MatchAtLeast` (all when absent) of its predicates hold:
/// `IsLengthRange`, `MatchesRegex`, `IncludesCharacters`, `IsDateRange`; and a `Restriction` of `Enumeration`s (a drop-down,
/// radio buttons, checkboxes): the value is one of their `Value`s (for `CheckboxMultiSelect`, each of its comma-separated
/// items), whatever the page was sent.
struct ClaimValidation {
    let policy: EffectivePolicy
    /// The recorder's note: a pattern that ran out of time is the policy author's to know of.
    var note: (String, @autoclosure () -> [String: JSONValue]) -> Void = { _, _ in }
    /// The tenant clock's time (the wall clock unless given): `IsDateRange`'s `Today` is its date.
    var now = Date()

    /// The first thing wrong with `value` for the claim type, in the policy's words; nil when it is fine.
    func problem(claimType id: String, value: String) -> String? {
        guard let claim = policy.element(.claimType, id) else { return nil }
        let choices = claim.at("Restriction")?.all("Enumeration").compactMap { $0["Value"] } ?? []
        if !choices.isEmpty {
            let multiple = claim.child("UserInputType")?.trimmedText == "CheckboxMultiSelect"
            let picked = multiple ? value.split(separator: ",").map(String.init) : [value]
            if let stranger = picked.first(where: { !choices.contains($0) }) {
                return "'\(stranger)' is not one of the choices for \(claim.child("DisplayName")?.trimmedText ?? id)."
            }
        }
        if let pattern = claim.at("Restriction/Pattern"), let regex = PolicyRegex.compile(pattern["RegularExpression"] ?? "") {
            if !matches(regex, claim: id, value) { return pattern["HelpText"] ?? "The value is not in the expected format." }
        }
        guard let reference = claim.child("PredicateValidationReference")?["Id"],
            let validation = policy.element(.predicateValidation, reference)
        else { return nil }
        for group in validation.at("PredicateGroups")?.all("PredicateGroup") ?? [] {
            let references = group.at("PredicateReferences")
            let predicates = references?.all("PredicateReference").compactMap { $0["Id"] } ?? []
            let needed = Int(references?["MatchAtLeast"] ?? "") ?? predicates.count
            let failing = predicates.filter { p in policy.element(.predicate, p).map { !holds($0, value, claim: id) } ?? false }
            if predicates.count - failing.count < needed {
                let predicateText = failing.compactMap { policy.element(.predicate, $0) }.compactMap {
                    $0.child("UserHelpText")?.trimmedText ?? $0["HelpText"]
                }.first
                return group.child("UserHelpText")?.trimmedText ?? predicateText ?? "The value does not meet the requirements."
            }
        }
        return nil
    }

    /// A match within ICU's time limit; a pattern that runs out of time does not match, and the recorder says so.
    private func matches(_ regex: PolicyRegex, claim: String, _ value: String) -> Bool {
        switch regex.matches(value) {
        case .match: return true
        case .noMatch: return false
        case .timedOut:
            note(
                "a pattern ran out of time",
                ["claimType": .string(claim), "pattern": .string(regex.pattern), "characters": JSONValue(value.count)])
            return false
        }
    }

    /// One predicate of B2C's four methods; an unknown method holds (the upload checks said nothing of it).
    func holds(_ predicate: PolicyNode, _ value: String, claim: String) -> Bool {
        var parameters: [String: String] = [:]
        for p in predicate.at("Parameters")?.all("Parameter") ?? [] { parameters[p["Id"] ?? ""] = p.trimmedText }
        switch predicate["Method"] ?? "" {
        case "IsLengthRange":
            let minimum = Int(parameters["Minimum"] ?? "") ?? 0, maximum = Int(parameters["Maximum"] ?? "") ?? Int.max
            return (minimum...maximum).contains(value.count)
        case "MatchesRegex":
            return PolicyRegex.compile(parameters["RegularExpression"] ?? "").map { matches($0, claim: claim, value) } ?? false
        case "IncludesCharacters":
            let set = parameters["CharacterSet"] ?? ""
            let wanted: (Character) -> Bool
            switch set {
            case "a-z": wanted = { $0.isLowercase }
            case "A-Z": wanted = { $0.isUppercase }
            case "0-9": wanted = { $0.isNumber }
            default: wanted = { set.contains($0) }
            }
            return value.contains(where: wanted)
        case "IsDateRange":
            // Each bound is a date (yyyy-mm-dd) or `Today` (the tenant clock's date, in UTC).
            let f = DateFormatter()
            f.dateFormat = "yyyy-MM-dd"
            f.timeZone = TimeZone(identifier: "UTC")
            func bound(_ text: String?) -> Date? {
                text?.caseInsensitiveCompare("Today") == .orderedSame ? f.date(from: f.string(from: now)) : text.flatMap(f.date(from:))
            }
            guard let date = f.date(from: value) else { return false }
            return (bound(parameters["Minimum"]) ?? .distantPast) <= date && date <= (bound(parameters["Maximum"]) ?? .distantFuture)
        default:
            return true
        }
    }
}
