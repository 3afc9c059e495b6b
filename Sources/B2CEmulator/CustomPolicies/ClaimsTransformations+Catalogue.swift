import Foundation

/// More of the catalogue's methods (reference: string-transformations.md, integer-transformations.md,
/// stringcollection-transformations.md): a claim cleared, an email's domain, values set when a string matches, a value
/// looked up among the parameters, a number asserted or compared, an item looked for in a collection.
extension ClaimsTransformations {
    /// `NullClaim`'s output: its claims are taken out of the bag (`PolicyRun.transform`), not given a value.
    static let clearing: Set = ["NullClaim"]

    static let catalogue: [String: @Sendable (Call) throws -> Inputs] = [
        "NullClaim": { _ in [:] },
        "ParseDomain": { c in
            let address = try c.string("emailAddress")
            guard let at = address.lastIndex(of: "@"), address.index(after: at) < address.endIndex else {
                throw TransformationFailure.input("'emailAddress' has no domain after an @")
            }
            return ["domain": .string(String(address[address.index(after: at)...]))]
        },
        "SetClaimsIfStringsAreEqual": { c in
            let equal = same(try c.string("inputClaim"), try c.parameter("matchTo"), ignoreCase: c.ignoresCase)
            var out: Inputs = ["stringCompareResultClaim": .bool(equal)]
            if equal {
                out["outputClaim1"] = c.parameters["stringMatchMsg"].map(ClaimValue.string)
                out["outputClaim2"] = c.parameters["stringMatchMsgCode"].map(ClaimValue.string)
            }
            return out
        },
        "SetClaimsIfStringsMatch": { c in
            let equal = same(try c.string("claimToMatch"), try c.parameter("matchTo"), ignoreCase: c.ignoresCase)
            var out: Inputs = ["stringCompareResultClaim": .bool(equal)]
            if equal { out["outputClaim"] = .string(try c.parameter("outputClaimIfMatched")) }
            return out
        },
        "LookupValue": { c in
            let key = try c.string("inputParameterId")
            if let found = c.parameters.first(where: { $0.key != "errorOnFailedLookup" && $0.key.lowercased() == key.lowercased() }) {
                return ["outputClaim": .string(found.value)]
            }
            guard c.flag("errorOnFailedLookup") else { return [:] }
            throw TransformationFailure.input("no input parameter is '\(key)' (errorOnFailedLookup is true)")
        },
        "AssertNumber": { c in
            guard let n = Int(try c.string("inputClaim")) else { throw TransformationFailure.input("'inputClaim' is not a number") }
            guard let other = Int(try c.parameter("CompareToValue")) else {
                throw TransformationFailure.input("CompareToValue '\(c.parameters["CompareToValue"] ?? "")' is not a number")
            }
            let result: Bool
            switch try c.parameter("Operator").lowercased() {
            case "lessthan": result = n < other
            case "greaterthan": result = n > other
            case "greaterthanorequal": result = n >= other
            case "lessthanorequal": result = n <= other
            case "equal": result = n == other
            case "notequal": result = n != other
            case let op:
                throw TransformationFailure.input(
                    "Operator '\(op)' is not LessThan, GreaterThan, GreaterThanOrEqual, LessThanOrEqual, Equal or NotEqual")
            }
            // Assertion mode (throwError true, the default) fails when the comparison holds; evaluation mode says whether.
            guard (c.parameters["throwError"]?.lowercased() ?? "true") == "true" else { return ["outputClaim": .bool(result)] }
            if result { throw TransformationFailure.assertion(key: "AssertNumberError", fallback: "The number is out of range.") }
            return [:]
        },
        "StringCollectionContainsClaim": { c in
            let item = try c.string("item"), ignore = c.flag("ignoreCase")
            return ["outputClaim": .bool(c.collection("collection").contains { same($0, item, ignoreCase: ignore) })]
        },
    ]
}

extension ClaimsTransformations.Call {
    /// `stringComparison` `OrdinalIgnoreCase` (any case); `Ordinal` or none: exact.
    var ignoresCase: Bool { (parameters["stringComparison"] ?? "ordinal").lowercased() == "ordinalignorecase" }
}
