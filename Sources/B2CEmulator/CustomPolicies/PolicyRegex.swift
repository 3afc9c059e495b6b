import Foundation
import _FoundationICU

/// A policy's regular expression (a claim type's `Pattern`, a `MatchesRegex` predicate, `SetClaimsIfRegexMatch`), matched
/// by ICU with a time limit, so that a pattern that backtracks without end (`^(a+)+$` against `aaaa…!`) costs a request
/// a tenth of a second and not the tenant a core. NSRegularExpression is ICU too but has no limit; this calls ICU as
/// Foundation ships it.
///
/// The patterns are .NET's: inside a character class .NET takes `[` and `&` literally, where ICU reads a nested set or
/// an intersection, so those are escaped (`icu(_:)`).
struct PolicyRegex {
    let pattern: String

    /// ICU's limit in its own unit, match steps: "on the order of milliseconds" each (uregex.h). 100 is about 0.1 s here.
    static let timeLimit: Int32 = 100

    /// How a match went.
    enum Outcome: Equatable {
        case match
        case noMatch
        /// The pattern ran out of time on the value: counted as no match, and the recorder says why.
        case timedOut
    }

    /// The pattern when ICU compiles it; nil when it is not a regular expression.
    static func compile(_ pattern: String) -> PolicyRegex? {
        let regex = PolicyRegex(pattern: icu(pattern))
        guard let compiled = regex.open() else { return nil }
        swift_uregex_close(compiled)
        return regex
    }

    /// Whether the pattern is found in `value` (anchors are the pattern's, as .NET's `Regex.IsMatch`).
    func matches(_ value: String) -> Outcome {
        guard let compiled = open() else { return .noMatch }
        defer { swift_uregex_close(compiled) }
        var status = U_ZERO_ERROR
        swift_uregex_setTimeLimit(compiled, Self.timeLimit, &status)
        let text = Array(value.utf16)
        return text.withUnsafeBufferPointer { buffer in
            swift_uregex_setText(compiled, buffer.baseAddress, Int32(buffer.count), &status)
            let found = swift_uregex_find(compiled, 0, &status) != 0
            if status == U_REGEX_TIME_OUT || status == U_REGEX_STACK_OVERFLOW { return .timedOut }
            return found && status.rawValue <= U_ZERO_ERROR.rawValue ? .match : .noMatch
        }
    }

    private func open() -> OpaquePointer? {
        let units = Array(pattern.utf16)
        var status = U_ZERO_ERROR
        let compiled = swift_uregex_open(units, Int32(units.count), 0, nil, &status)
        guard status.rawValue <= U_ZERO_ERROR.rawValue, let compiled else {
            if let compiled { swift_uregex_close(compiled) }
            return nil
        }
        return compiled
    }

    static func icu(_ pattern: String) -> String {
        var out = ""
        var inClass = false
        var escaped = false
        for c in pattern {
            if escaped {
                out.append(c)
                escaped = false
                continue
            }
            switch c {
            case "\\":
                escaped = true
                out.append(c)
            case "[" where inClass, "&" where inClass:
                out += "\\\(c)"
            case "[":
                inClass = true
                out.append(c)
            // A `]` right after `[` or `[^` is literal in both dialects.
            case "]" where inClass && !(out.hasSuffix("[") || out.hasSuffix("[^")):
                inClass = false
                out.append(c)
            default:
                out.append(c)
            }
        }
        return out
    }
}
