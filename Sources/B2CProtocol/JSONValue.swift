import B2CFastPath
import Foundation

/// A JSON document as a value, parsed by our own strict parser (`JSONParser`, which reports line and column), so that
/// every message about a bad document can name the exact JSON path (`$.users[1].email`).
public enum JSONValue: Sendable, Equatable, CustomStringConvertible {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    // MARK: parsing

    public static func parse(_ data: Data) throws -> JSONValue {
        var parser = JSONParser(bytes: [UInt8](data))
        return try parser.parseDocument()
    }

    public static func parse(_ string: String) throws -> JSONValue { try parse(Data(string.utf8)) }

    // MARK: accessors

    public subscript(key: String) -> JSONValue? {
        if case .object(let o) = self { return o[key] }
        return nil
    }

    public var stringValue: String? { if case .string(let s) = self { return s }; return nil }
    public var boolValue: Bool? { if case .bool(let b) = self { return b }; return nil }
    public var arrayValue: [JSONValue]? { if case .array(let a) = self { return a }; return nil }
    public var objectValue: [String: JSONValue]? { if case .object(let o) = self { return o }; return nil }
    public var doubleValue: Double? { if case .number(let n) = self { return n }; return nil }

    /// The integers `lenientInt` gives: below 10^15 in size, so that arithmetic with a time (a claim of Int.max, say)
    /// cannot overflow.
    public static let lenientRange = -999_999_999_999_999...999_999_999_999_999

    /// An integer given as a JSON number or as a string of digits (B2C sends either), within `lenientRange`.
    public var lenientInt: Int? {
        switch self {
        case .number(let n): return n.rounded() == n && abs(n) < 1e15 ? Int(n) : nil
        case .string(let s): return Int(s.trimmingCharacters(in: .whitespaces)).flatMap { Self.lenientRange.contains($0) ? $0 : nil }
        default: return nil
        }
    }

    public var typeName: String {
        switch self {
        case .null: "null"
        case .bool: "a boolean"
        case .number: "a number"
        case .string: "a string"
        case .array: "an array"
        case .object: "an object"
        }
    }

    // MARK: serialisation (keys sorted: stable output)

    public var description: String { serialized() }

    public func serialized(pretty: Bool = false) -> String { String(decoding: serializedBytes(pretty: pretty), as: UTF8.self) }

    /// The document's UTF-8, as `serialized` gives it: what a token or an HTTP body is made of, without a string between.
    public func serializedBytes(pretty: Bool = false) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(256)
        write(into: &out, pretty: pretty, indent: 0)
        return out
    }

    /// Appends the value to `out` as it would appear nested `indent` levels deep in a pretty or compact document
    /// (for writers that stream a large array element by element).
    public func serialize(into out: inout String, pretty: Bool, indent: Int) {
        var bytes: [UInt8] = []
        write(into: &bytes, pretty: pretty, indent: indent)
        out += String(decoding: bytes, as: UTF8.self)
    }

    public var data: Data { Data(serializedBytes()) }

    /// Written as bytes: a token answer is two JWTs' claims and a body, and appending to a `String` cost several
    /// times as much per piece as appending to an array.
    private func write(into out: inout [UInt8], pretty: Bool, indent: Int) {
        func newline(_ level: Int) {
            out.append(UInt8(ascii: "\n"))
            out.append(contentsOf: repeatElement(UInt8(ascii: " "), count: 2 * level))
        }
        switch self {
        case .null: out.append(contentsOf: "null".utf8)
        case .bool(let b): out.append(contentsOf: (b ? "true" : "false").utf8)
        case .number(let n):
            out.append(contentsOf: (n.rounded() == n && abs(n) < 1e15 ? String(Int64(n)) : String(n)).utf8)
        case .string(let s): JSONText.escape(s, into: &out)
        case .array(let a):
            if a.isEmpty { out.append(contentsOf: "[]".utf8); return }
            out.append(UInt8(ascii: "["))
            for (i, v) in a.enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                if pretty { newline(indent + 1) }
                v.write(into: &out, pretty: pretty, indent: indent + 1)
            }
            if pretty { newline(indent) }
            out.append(UInt8(ascii: "]"))
        case .object(let o):
            if o.isEmpty { out.append(contentsOf: "{}".utf8); return }
            out.append(UInt8(ascii: "{"))
            // Sorted once as pairs: a lookup per key after sorting the keys was a second hash of every key.
            for (i, member) in o.sorted(by: { $0.key < $1.key }).enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                if pretty { newline(indent + 1) }
                JSONText.escape(member.key, into: &out)
                out.append(UInt8(ascii: ":"))
                if pretty { out.append(UInt8(ascii: " ")) }
                member.value.write(into: &out, pretty: pretty, indent: indent + 1)
            }
            if pretty { newline(indent) }
            out.append(UInt8(ascii: "}"))
        }
    }
}

extension JSONValue: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByBooleanLiteral,
    ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral, ExpressibleByNilLiteral
{
    public init(stringLiteral value: String) { self = .string(value) }
    public init(integerLiteral value: Int) { self = .number(Double(value)) }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    public init(arrayLiteral elements: JSONValue...) { self = .array(elements) }
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        self = .object(Dictionary(elements, uniquingKeysWith: { _, b in b }))
    }
    public init(nilLiteral: ()) { self = .null }
    public init(_ int: Int) { self = .number(Double(int)) }
    public init(_ strings: [String]) { self = .array(strings.map { .string($0) }) }
}

/// An error about one place in a JSON document.
public struct JSONPathError: Error, Equatable, CustomStringConvertible {
    public let path: String
    public let message: String
    public init(path: String, message: String) { self.path = path; self.message = message }
    public var description: String { "\(path) \(message)" }
}

/// Reads an object at a known JSON path, collecting which keys were used so that unknown keys
/// can be reported precisely.
public struct JSONObjectReader {
    public let path: String
    private let object: [String: JSONValue]

    public init(_ value: JSONValue, path: String = "$") throws {
        guard case .object(let o) = value else {
            throw JSONPathError(path: path, message: "must be an object, found \(value.typeName)")
        }
        self.object = o
        self.path = path
    }

    public func childPath(_ key: String) -> String { "\(path).\(key)" }

    public func rejectUnknownKeys(allowed: Set<String>) throws {
        for key in object.keys.sorted() where !allowed.contains(key) {
            let known = allowed.sorted().joined(separator: ", ")
            throw JSONPathError(path: childPath(key), message: "is not a known key (known keys here: \(known))")
        }
    }

    public func has(_ key: String) -> Bool { object[key] != nil }
    public func raw(_ key: String) -> JSONValue? { object[key] }

    public func string(_ key: String) throws -> String {
        guard let v = object[key] else { throw JSONPathError(path: childPath(key), message: "is required (a string)") }
        guard case .string(let s) = v else { throw JSONPathError(path: childPath(key), message: "must be a string, found \(v.typeName)") }
        guard !s.isEmpty else { throw JSONPathError(path: childPath(key), message: "must not be empty") }
        return s
    }

    public func optionalString(_ key: String) throws -> String? {
        guard let v = object[key], v != .null else { return nil }
        return try string(key)
    }

    public func bool(_ key: String, default value: Bool) throws -> Bool {
        guard let v = object[key], v != .null else { return value }
        guard case .bool(let b) = v else {
            throw JSONPathError(path: childPath(key), message: "must be true or false, found \(v.typeName)")
        }
        return b
    }

    public func int(_ key: String, default value: Int?, range: ClosedRange<Int>? = nil) throws -> Int? {
        guard let v = object[key], v != .null else { return value }
        guard case .number(let n) = v, n.rounded() == n, abs(n) < 1e15 else {
            throw JSONPathError(path: childPath(key), message: "must be a whole number, found \(v.typeName)")
        }
        let i = Int(n)
        if let range, !range.contains(i) {
            throw JSONPathError(path: childPath(key), message: "must be between \(range.lowerBound) and \(range.upperBound), found \(i)")
        }
        return i
    }

    public func stringArray(_ key: String, required: Bool = false) throws -> [String] {
        guard let v = object[key], v != .null else {
            if required { throw JSONPathError(path: childPath(key), message: "is required (an array of strings)") }
            return []
        }
        guard case .array(let a) = v else {
            throw JSONPathError(path: childPath(key), message: "must be an array of strings, found \(v.typeName)")
        }
        return try a.enumerated().map { i, e in
            guard case .string(let s) = e, !s.isEmpty else {
                throw JSONPathError(path: "\(childPath(key))[\(i)]", message: "must be a non-empty string, found \(e.typeName)")
            }
            return s
        }
    }

    public func objects(_ key: String, required: Bool = false) throws -> [JSONObjectReader] {
        guard let v = object[key], v != .null else {
            if required { throw JSONPathError(path: childPath(key), message: "is required (an array of objects)") }
            return []
        }
        guard case .array(let a) = v else { throw JSONPathError(path: childPath(key), message: "must be an array, found \(v.typeName)") }
        return try a.enumerated().map { try JSONObjectReader($0.element, path: "\(childPath(key))[\($0.offset)]") }
    }

    public func object(_ key: String) throws -> JSONObjectReader? {
        guard let v = object[key], v != .null else { return nil }
        return try JSONObjectReader(v, path: childPath(key))
    }
}

/// Any JSON value through Swift's `Codable` (a seed object's `init(from:)` reads its whole value, then its own fields).
extension JSONValue: Codable {
    public init(from decoder: any Decoder) throws {
        let c = try decoder.singleValueContainer()
        if c.decodeNil() {
            self = .null
        } else if let b = try? c.decode(Bool.self) {
            self = .bool(b)
        } else if let n = try? c.decode(Double.self) {
            self = .number(n)
        } else if let s = try? c.decode(String.self) {
            self = .string(s)
        } else if let a = try? c.decode([JSONValue].self) {
            self = .array(a)
        } else {
            self = .object(try c.decode([String: JSONValue].self))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.singleValueContainer()
        switch self {
        case .null: try c.encodeNil()
        case .bool(let b): try c.encode(b)
        case .number(let n): try c.encode(n)
        case .string(let s): try c.encode(s)
        case .array(let a): try c.encode(a)
        case .object(let o): try c.encode(o)
        }
    }
}
