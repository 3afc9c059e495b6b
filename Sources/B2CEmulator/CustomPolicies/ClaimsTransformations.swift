import B2CProtocol
import Foundation

/// A claim's value in a custom policy's claims bag, of the claim type's data type.
enum ClaimValue: Equatable, Sendable, Codable {
    case string(String)
    case bool(Bool)
    case int(Int)
    case dateTime(Date)
    case collection([String])

    /// The value as a string claim reads it (B2C's invariant forms: `true`, `2026-11-28T19:16:17Z`).
    var text: String {
        switch self {
        case .string(let s): s
        case .bool(let b): b ? "true" : "false"
        case .int(let n): String(n)
        case .dateTime(let d): ISO8601.string(d)
        case .collection(let items): items.joined(separator: ",")
        }
    }

    var bool: Bool? {
        switch self {
        case .bool(let b): b
        case .string(let s): ["true": true, "false": false][s.lowercased()]
        default: nil
        }
    }

    var date: Date? {
        switch self {
        case .dateTime(let d): d
        case .string(let s): ISO8601.date(s)
        case .int(let n): Date(timeIntervalSince1970: Double(n))
        default: nil
        }
    }
}

/// Why a claims transformation stopped the journey: an asserting method whose assertion failed (the self-asserted
/// profile's metadata `key` holds the message the page shows), or a transformation the policy cannot run.
enum TransformationFailure: Error, Equatable {
    case assertion(key: String, fallback: String)
    case unsupported(String)
    case input(String)
}

/// B2C's claims-transformation methods (reference: the `*-transformations.md` pages): inputs by their
/// `TransformationClaimType`, parameters by `Id` (claim resolvers already resolved), outputs by their
/// `TransformationClaimType`. Each is a pure function of its inputs, except the random and the current time.
enum ClaimsTransformations {
    typealias Inputs = [String: ClaimValue]
    typealias Parameters = [String: String]

    /// The methods the tenant runs.
    static var methods: Set<String> { Set(table.keys) }

    static func apply(_ method: String, _ inputs: Inputs, _ parameters: Parameters, now: Date = Date()) throws -> Inputs {
        guard let run = table[method] else { throw TransformationFailure.unsupported(method) }
        return try run(Call(inputs: inputs, parameters: parameters, now: now))
    }

    struct Call {
        var inputs: Inputs
        var parameters: Parameters
        var now: Date

        func string(_ name: String) throws -> String {
            guard let v = inputs[name] else { throw TransformationFailure.input("the input claim '\(name)' has no value") }
            return v.text
        }
        func optionalString(_ name: String) -> String? { inputs[name]?.text }
        func collection(_ name: String) -> [String] {
            if case .collection(let items) = inputs[name] { return items }
            return inputs[name].map { [$0.text] } ?? []
        }
        func bool(_ name: String) throws -> Bool {
            guard let b = inputs[name]?.bool else { throw TransformationFailure.input("the input claim '\(name)' is not a boolean") }
            return b
        }
        func parameter(_ name: String) throws -> String {
            guard let p = parameters[name] else { throw TransformationFailure.input("the input parameter '\(name)' is missing") }
            return p
        }
        func flag(_ name: String) -> Bool { parameters[name]?.lowercased() == "true" }
        /// `EQUAL` / `NOT EQUAL` (any case), as the comparisons take it.
        func equalOperator() throws -> Bool {
            switch try parameter("operator").uppercased() {
            case "EQUAL": return true
            case "NOT EQUAL": return false
            case let other: throw TransformationFailure.input("the operator '\(other)' is not EQUAL or NOT EQUAL")
            }
        }
    }

    static func same(_ a: String, _ b: String, ignoreCase: Bool) -> Bool {
        ignoreCase ? a.caseInsensitiveCompare(b) == .orderedSame : a == b
    }

    /// C#'s `String.Format` with positional arguments only (`{0}`, `{1}`; `{{` and `}}` for braces).
    static func format(_ template: String, _ args: [String]) -> String {
        var out = ""
        var i = template.startIndex
        while i < template.endIndex {
            let c = template[i]
            let next = template.index(after: i)
            if c == "{", next < template.endIndex, template[next] == "{" {
                out.append("{")
                i = template.index(after: next)
            } else if c == "}", next < template.endIndex, template[next] == "}" {
                out.append("}")
                i = template.index(after: next)
            } else if c == "{", let close = template[next...].firstIndex(of: "}"), let n = Int(template[next..<close]),
                args.indices.contains(n)
            {
                out += args[n]
                i = template.index(after: close)
            } else {
                out.append(c)
                i = next
            }
        }
        return out
    }

    private static let table = core.merging(structured) { first, _ in first }.merging(catalogue) { first, _ in first }

    private static let core: [String: @Sendable (Call) throws -> Inputs] = [
        // String
        "AssertStringClaimsAreEqual": { c in
            let ignore = (c.parameters["stringComparison"] ?? "ordinal").lowercased() == "ordinalignorecase"
            guard same(try c.string("inputClaim1"), try c.string("inputClaim2"), ignoreCase: ignore) else {
                throw TransformationFailure.assertion(
                    key: "UserMessageIfClaimsTransformationStringsAreNotEqual", fallback: "The claims are not equal.")
            }
            return [:]
        },
        "ChangeCase": { c in
            let value = try c.string("inputClaim1")
            switch try c.parameter("toCase").uppercased() {
            case "LOWER": return ["outputClaim": .string(value.lowercased())]
            case "UPPER": return ["outputClaim": .string(value.uppercased())]
            case let other: throw TransformationFailure.input("toCase is '\(other)'; it is LOWER or UPPER")
            }
        },
        "CreateStringClaim": { c in ["createdClaim": .string(try c.parameter("value"))] },
        "CompareClaims": { c in
            let equal = same(try c.string("inputClaim1"), try c.string("inputClaim2"), ignoreCase: c.flag("ignoreCase"))
            return ["outputClaim": .bool(equal == (try c.equalOperator()))]
        },
        "CompareClaimToValue": { c in
            let equal = same(try c.string("inputClaim1"), try c.parameter("compareTo"), ignoreCase: c.flag("ignoreCase"))
            return ["outputClaim": .bool(equal == (try c.equalOperator()))]
        },
        "CreateRandomString": { c in
            var value: String
            switch try c.parameter("randomGeneratorType").uppercased() {
            case "GUID": value = UUID().uuidString.lowercased()
            case "INTEGER":
                let maximum = Int(c.parameters["maximumNumber"] ?? "") ?? Int(Int32.max)
                value = String(Int.random(in: 0...max(0, maximum)))
            case let other: throw TransformationFailure.input("randomGeneratorType is '\(other)'; it is GUID or INTEGER")
            }
            if let f = c.parameters["stringFormat"] { value = format(f, [value]) }
            if c.flag("base64") { value = Data(value.utf8).base64EncodedString() }
            return ["outputClaim": .string(value)]
        },
        "FormatStringClaim": { c in ["outputClaim": .string(format(try c.parameter("stringFormat"), [try c.string("inputClaim")]))] },
        "FormatStringMultipleClaims": { c in
            [
                "outputClaim": .string(
                    format(try c.parameter("stringFormat"), [c.optionalString("inputClaim1") ?? "", c.optionalString("inputClaim2") ?? ""]))
            ]
        },
        "StringSubstring": { c in
            let s = Array(try c.string("inputClaim"))
            let start = Int(try c.parameter("startIndex")) ?? 0
            let length = Int(c.parameters["length"] ?? "") ?? (s.count - start)
            guard start >= 0, length >= 0, start + length <= s.count else {
                throw TransformationFailure.input("startIndex \(start) and length \(length) fall outside a string of \(s.count)")
            }
            return ["outputClaim": .string(String(s[start..<(start + length)]))]
        },
        "StringReplace": { c in
            [
                "outputClaim": .string(
                    try c.string("inputClaim").replacingOccurrences(of: try c.parameter("oldValue"), with: try c.parameter("newValue")))
            ]
        },
        "StringContains": { c in
            let s = try c.string("inputClaim"), part = try c.parameter("contains")
            let found = c.flag("ignoreCase") ? s.range(of: part, options: .caseInsensitive) != nil : s.contains(part)
            return ["outputClaim": .bool(found)]
        },
        "StringJoin": { c in ["outputClaim": .string(c.collection("inputClaim").joined(separator: try c.parameter("delimiter")))] },
        "StringSplit": { c in
            ["outputClaim": .collection(try c.string("inputClaim").components(separatedBy: try c.parameter("delimiter")))]
        },
        "CopyClaim": { c in
            guard let v = c.inputs["inputClaim"] else { throw TransformationFailure.input("the input claim 'inputClaim' has no value") }
            return ["outputClaim": v]
        },
        "DoesClaimExist": { c in ["outputClaim": .bool(c.inputs["inputClaim"].map { !$0.text.isEmpty } ?? false)] },
        // Boolean
        "AndClaims": { c in ["outputClaim": .bool(try c.bool("inputClaim1") && c.bool("inputClaim2"))] },
        "OrClaims": { c in ["outputClaim": .bool(try c.bool("inputClaim1") || c.bool("inputClaim2"))] },
        "NotClaims": { c in ["outputClaim": .bool(!(try c.bool("inputClaim")))] },
        "CompareBooleanClaimToValue": { c in
            ["compareResult": .bool(try c.bool("inputClaim") == (try c.parameter("valueToCompareTo").lowercased() == "true"))]
        },
        "AssertBooleanClaimIsEqualToValue": { c in
            guard try c.bool("inputClaim") == (try c.parameter("valueToCompareTo").lowercased() == "true") else {
                throw TransformationFailure.assertion(
                    key: "UserMessageIfClaimsTransformationBooleanValueIsNotEqual", fallback: "Your account has been locked.")
            }
            return [:]
        },
        // Date and time
        "GetCurrentDateTime": { c in ["currentDateTime": .dateTime(c.now)] },
        "AssertDateTimeIsGreaterThan": { c in
            let tolerance = Double(c.parameters["TreatAsEqualIfWithinMillseconds"] ?? "0") ?? 0
            guard let left = c.inputs["leftOperand"]?.date else {
                throw TransformationFailure.input("the input claim 'leftOperand' is not a date and time")
            }
            guard let right = c.inputs["rightOperand"]?.date else {
                if c.parameters["AssertIfRightOperandIsNotPresent"]?.lowercased() == "true" {
                    throw TransformationFailure.assertion(
                        key: "UserMessageIfClaimsTransformationDateTimeIsNotGreaterThan", fallback: "The date is not later.")
                }
                return [:]
            }
            let difference = left.timeIntervalSince(right) * 1000
            let equal = abs(difference) <= tolerance
            if equal ? c.flag("AssertIfEqualTo") : difference < 0 {
                throw TransformationFailure.assertion(
                    key: "UserMessageIfClaimsTransformationDateTimeIsNotGreaterThan", fallback: "The date is not later.")
            }
            return [:]
        },
        "DateTimeComparison": { c in
            guard let first = c.inputs["firstDateTime"]?.date, let second = c.inputs["secondDateTime"]?.date else {
                throw TransformationFailure.input("firstDateTime and secondDateTime must be dates and times")
            }
            let span = Double(c.parameters["timeSpanInSeconds"] ?? "0") ?? 0
            let result: Bool
            switch try c.parameter("operator").lowercased() {
            case "later than": result = first.timeIntervalSince(second) > span
            case "earlier than": result = second.timeIntervalSince(first) > span
            case "equal": result = abs(first.timeIntervalSince(second)) <= span
            case let other: throw TransformationFailure.input("the operator '\(other)' is not 'later than', 'earlier than' or 'equal'")
            }
            return ["result": .bool(result)]
        },
        // Integer
        "ConvertNumberToStringClaim": { c in ["outputClaim": .string(try c.string("inputClaim"))] },
        "AdjustNumber": { c in
            let n = Int(c.optionalString("inputClaim") ?? "0") ?? 0
            switch try c.parameter("Operator").uppercased() {
            case "INCREMENT": return ["outputClaim": .int(n + 1)]
            case "DECREMENT": return ["outputClaim": .int(n - 1)]
            case let other: throw TransformationFailure.input("Operator is '\(other)'; it is INCREMENT or DECREMENT")
            }
        },
        // String collection
        "AddItemToStringCollection": { c in ["collection": .collection(c.collection("collection") + [try c.string("item")])] },
        "AddParameterToStringCollection": { c in ["collection": .collection(c.collection("collection") + [try c.parameter("item")])] },
        "GetSingleItemFromStringCollection": { c in
            c.collection("collection").first.map { ["extractedItem": .string($0)] } ?? [:]
        },
        "StringCollectionContains": { c in
            let item = try c.parameter("item"), ignore = c.flag("ignoreCase")
            return ["outputClaim": .bool(c.collection("inputClaim").contains { same($0, item, ignoreCase: ignore) })]
        },
        // JSON
        "GetClaimFromJson": { c in
            guard let value = try json(c, "inputJson", path: try c.parameter("claimToExtract")) else { return [:] }
            return ["extractedClaim": .string(value.stringValue ?? value.serialized())]
        },
        // Social accounts
        "CreateAlternativeSecurityId": { c in
            let id: JSONValue = [
                "issuer": .string(try c.string("identityProvider")),
                "issuerUserId": .string(Data(try c.string("key").utf8).base64EncodedString()),
            ]
            return ["alternativeSecurityId": .string(id.serialized())]
        },
    ]
}
