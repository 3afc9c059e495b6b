import B2CProtocol
import Foundation

/// The part of OData's `$filter` that user-management scripts send to Graph's `/users`: comparisons (`eq`, `ne`) of a
/// property with a literal, `startswith(property,'text')`, `identities/any(c:c/issuer eq '…' and c/issuerAssignedId eq
/// '…')`, joined with `and` / `or` and parentheses. Strings compare without regard to case, as Graph's do.
indirect enum GraphFilter: Equatable {
    case compare(property: String, equal: Bool, value: JSONValue)
    case startsWith(property: String, prefix: String)
    /// `identities/any(…)`: each condition names a field of one identity and the value it must have.
    case anyIdentity([(field: String, value: String)])
    case and(GraphFilter, GraphFilter)
    case or(GraphFilter, GraphFilter)

    static func == (a: GraphFilter, b: GraphFilter) -> Bool { "\(a)" == "\(b)" }

    /// Why a filter cannot be read: Graph's code and words.
    struct Invalid: Error {
        var code: String
        var message: String
    }

    static func parse(_ text: String) throws(Invalid) -> GraphFilter {
        var parser = Parser(tokens: try Parser.tokens(text))
        let filter = try parser.expression()
        guard parser.at >= parser.tokens.count else { throw parser.invalid("unexpected '\(parser.tokens[parser.at].text)'") }
        return filter
    }

    /// Whether a user (Graph's properties, `identities` among them) passes.
    func matches(_ user: [String: JSONValue]) -> Bool {
        switch self {
        case .and(let a, let b): return a.matches(user) && b.matches(user)
        case .or(let a, let b): return a.matches(user) || b.matches(user)
        case .compare(let property, let equal, let value):
            return Self.same(Self.value(property, in: user), value) == equal
        case .startsWith(let property, let prefix):
            guard let s = Self.value(property, in: user)?.stringValue else { return false }
            return s.lowercased().hasPrefix(prefix.lowercased())
        case .anyIdentity(let conditions):
            let identities = user["identities"]?.arrayValue ?? []
            return identities.contains { identity in
                conditions.allSatisfy { Self.same(Self.value($0.field, in: identity.objectValue ?? [:]), .string($0.value)) }
            }
        }
    }

    private static func value(_ name: String, in object: [String: JSONValue]) -> JSONValue? {
        object.first { $0.key.caseInsensitiveCompare(name) == .orderedSame }?.value
    }

    private static func same(_ a: JSONValue?, _ b: JSONValue) -> Bool {
        switch (a, b) {
        case (.string(let x)?, .string(let y)): return x.caseInsensitiveCompare(y) == .orderedSame
        case (nil, .null), (.null?, .null): return true
        case (let x?, let y): return x == y
        default: return false
        }
    }

    private struct Token {
        enum Kind { case word, string, open, close, comma, colon }
        var kind: Kind
        var text: String
    }

    private struct Parser {
        var tokens: [Token]
        var at = 0

        func invalid(_ what: String) -> Invalid {
            Invalid(code: "BadRequest", message: "Invalid filter clause: \(what).")
        }

        static func tokens(_ text: String) throws(Invalid) -> [Token] {
            var out: [Token] = []
            var i = text.startIndex
            while i < text.endIndex {
                let c = text[i]
                if c.isWhitespace {
                    i = text.index(after: i)
                } else if c == "'" {
                    var value = ""
                    i = text.index(after: i)
                    while true {
                        guard i < text.endIndex else {
                            throw Invalid(code: "BadRequest", message: "Invalid filter clause: a string is not closed with '.")
                        }
                        if text[i] == "'" {
                            let next = text.index(after: i)
                            if next < text.endIndex && text[next] == "'" {
                                value.append("'")
                                i = text.index(after: next)
                                continue
                            }
                            i = next
                            break
                        }
                        value.append(text[i])
                        i = text.index(after: i)
                    }
                    out.append(Token(kind: .string, text: value))
                } else if let kind = [Character("("): Token.Kind.open, ")": .close, ",": .comma, ":": .colon][c] {
                    out.append(Token(kind: kind, text: String(c)))
                    i = text.index(after: i)
                } else {
                    var word = ""
                    while i < text.endIndex, !text[i].isWhitespace, !"(),:'".contains(text[i]) {
                        word.append(text[i])
                        i = text.index(after: i)
                    }
                    out.append(Token(kind: .word, text: word))
                }
            }
            return out
        }

        mutating func next() throws(Invalid) -> Token {
            guard at < tokens.count else { throw invalid("it ends too early") }
            defer { at += 1 }
            return tokens[at]
        }

        mutating func expect(_ kind: Token.Kind, _ what: String) throws(Invalid) {
            let t = try next()
            guard t.kind == kind else { throw invalid("expected \(what) before '\(t.text)'") }
        }

        func peekWord(_ word: String) -> Bool {
            at < tokens.count && tokens[at].kind == .word && tokens[at].text.lowercased() == word
        }

        mutating func expression() throws(Invalid) -> GraphFilter {
            var left = try conjunction()
            while peekWord("or") {
                at += 1
                left = .or(left, try conjunction())
            }
            return left
        }

        mutating func conjunction() throws(Invalid) -> GraphFilter {
            var left = try term()
            while peekWord("and") {
                at += 1
                left = .and(left, try term())
            }
            return left
        }

        mutating func literal() throws(Invalid) -> JSONValue {
            let t = try next()
            switch (t.kind, t.text.lowercased()) {
            case (.string, _): return .string(t.text)
            case (.word, "true"): return .bool(true)
            case (.word, "false"): return .bool(false)
            case (.word, "null"): return .null
            case (.word, _):
                if let n = Double(t.text) { return .number(n) }
                throw invalid("'\(t.text)' is not a value (a string goes in single quotes)")
            default: throw invalid("expected a value before '\(t.text)'")
            }
        }

        mutating func term() throws(Invalid) -> GraphFilter {
            let t = try next()
            if t.kind == .open {
                let inner = try expression()
                try expect(.close, "')'")
                return inner
            }
            guard t.kind == .word else { throw invalid("expected a property before '\(t.text)'") }
            if t.text.lowercased() == "startswith" {
                try expect(.open, "'('")
                let property = try next()
                guard property.kind == .word else { throw invalid("startswith takes a property first") }
                try expect(.comma, "','")
                let prefix = try next()
                guard prefix.kind == .string else { throw invalid("startswith takes a string in single quotes second") }
                try expect(.close, "')'")
                return .startsWith(property: property.text, prefix: prefix.text)
            }
            if t.text.lowercased() == "identities/any" {
                try expect(.open, "'('")
                let variable = try next()
                guard variable.kind == .word else { throw invalid("identities/any takes a variable, as in any(c:c/issuer eq '…')") }
                try expect(.colon, "':'")
                var conditions: [(field: String, value: String)] = []
                repeat {
                    if !conditions.isEmpty { at += 1 }  // the `and`
                    let path = try next()
                    let prefix = variable.text + "/"
                    guard path.kind == .word, path.text.hasPrefix(prefix) else {
                        throw invalid("inside identities/any each condition names \(prefix)<field>")
                    }
                    let field = String(path.text.dropFirst(prefix.count))
                    guard ["issuer", "issuerassignedid", "signintype"].contains(field.lowercased()) else {
                        throw Invalid(
                            code: "Request_UnsupportedQuery",
                            message:
                                "Unsupported or invalid query filter clause specified for property '\(field)' of resource 'identities'.")
                    }
                    guard try next().text.lowercased() == "eq" else { throw invalid("identities/any compares with eq") }
                    guard case .string(let value) = try literal() else { throw invalid("identities/any compares with a string") }
                    conditions.append((field, value))
                } while peekWord("and")
                try expect(.close, "')'")
                return .anyIdentity(conditions)
            }
            let op = try next()
            guard op.kind == .word, ["eq", "ne"].contains(op.text.lowercased()) else {
                throw Invalid(
                    code: "Request_UnsupportedQuery",
                    message: "Unsupported or invalid query filter clause specified for property '\(t.text)' of resource 'User' "
                        + "(this tenant reads eq, ne, startswith and identities/any).")
            }
            return .compare(property: t.text, equal: op.text.lowercased() == "eq", value: try literal())
        }
    }
}
