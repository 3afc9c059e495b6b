#if canImport(Glibc)  // the Secret Service is a freedesktop (Linux, BSD) service; macOS has the Keychain
import Foundation

/// One D-Bus value. Arrays carry their element signature so that an empty
/// array still marshals with the right type (the wire format needs it).
indirect enum DBusValue: Sendable, Equatable {
    case byte(UInt8)
    case bool(Bool)
    case int16(Int16)
    case uint16(UInt16)
    case int32(Int32)
    case uint32(UInt32)
    case int64(Int64)
    case uint64(UInt64)
    case double(Double)
    case unixFD(UInt32)
    case string(String)
    case objectPath(String)
    case signature(String)
    case array(elementSignature: String, [DBusValue])
    /// `ay` as bytes: a secret's value is one, and boxing each byte would cost 50 times its size.
    case byteArray([UInt8])
    case structure([DBusValue])
    case dictEntry(DBusValue, DBusValue)
    case variant(DBusValue)

    /// The D-Bus type signature of this value.
    var signature: String {
        switch self {
        case .byte: "y"
        case .bool: "b"
        case .int16: "n"
        case .uint16: "q"
        case .int32: "i"
        case .uint32: "u"
        case .int64: "x"
        case .uint64: "t"
        case .double: "d"
        case .unixFD: "h"
        case .string: "s"
        case .objectPath: "o"
        case .signature: "g"
        case .array(let element, _): "a" + element
        case .byteArray: "ay"
        case .structure(let fields): "(" + fields.map(\.signature).joined() + ")"
        case .dictEntry(let key, let value): "{" + key.signature + value.signature + "}"
        case .variant: "v"
        }
    }

    // MARK: Convenience constructors for the shapes the Secret Service uses.

    /// `a{ss}`, sorted so that messages are deterministic.
    static func stringDict(_ dict: [String: String]) -> DBusValue {
        .array(elementSignature: "{ss}", dict.sorted { $0.key < $1.key }.map { .dictEntry(.string($0.key), .string($0.value)) })
    }

    /// `a{sv}`.
    static func variantDict(_ dict: [String: DBusValue]) -> DBusValue {
        .array(elementSignature: "{sv}", dict.sorted { $0.key < $1.key }.map { .dictEntry(.string($0.key), .variant($0.value)) })
    }

    /// `ay`.
    static func bytes(_ data: Data) -> DBusValue {
        .byteArray(Array(data))
    }

    /// `ao`.
    static func objectPaths(_ paths: [String]) -> DBusValue {
        .array(elementSignature: "o", paths.map { .objectPath($0) })
    }

    // MARK: Accessors (nil when the value has another type).

    var stringValue: String? {
        switch self {
        case .string(let s), .objectPath(let s), .signature(let s): s
        default: nil
        }
    }

    var arrayElements: [DBusValue]? {
        if case .array(_, let elements) = self { elements } else { nil }
    }

    var byteData: Data? {
        if case .byteArray(let b) = self { return Data(b) }
        guard case .array("y", let elements) = self else { return nil }
        return Data(elements.compactMap { if case .byte(let b) = $0 { b } else { nil } })
    }

    var boolValue: Bool? {
        if case .bool(let b) = self { b } else { nil }
    }

    var uint32Value: UInt32? {
        if case .uint32(let u) = self { u } else { nil }
    }
}

// MARK: - Signatures

/// Splits signatures into single complete types, validating them on the way.
enum DBusSignature {
    /// Deepest nesting we accept; the spec allows 32 arrays + 32 structs.
    static let maxDepth = 64

    /// Splits e.g. `"sa{sv}(oayays)"` into `["s", "a{sv}", "(oayays)"]`.
    static func split(_ signature: String) throws -> [String] {
        let chars = Array(signature.utf8)
        var types: [String] = []
        var index = 0
        while index < chars.count {
            let end = try endOfCompleteType(chars, from: index, depth: 0)
            types.append(String(decoding: chars[index..<end], as: UTF8.self))
            index = end
        }
        return types
    }

    /// Index just past the complete type starting at `start`.
    private static func endOfCompleteType(_ chars: [UInt8], from start: Int, depth: Int) throws -> Int {
        guard depth <= maxDepth else { throw SecretServiceError.protocol("D-Bus signature nested too deeply") }
        guard start < chars.count else { throw SecretServiceError.protocol("truncated D-Bus signature") }
        switch chars[start] {
        case UInt8(ascii: "a"):
            return try endOfCompleteType(chars, from: start + 1, depth: depth + 1)
        case UInt8(ascii: "("):
            var index = start + 1
            while index < chars.count, chars[index] != UInt8(ascii: ")") {
                index = try endOfCompleteType(chars, from: index, depth: depth + 1)
            }
            guard index < chars.count, index > start + 1 else { throw SecretServiceError.protocol("bad struct in D-Bus signature") }
            return index + 1
        case UInt8(ascii: "{"):
            let keyEnd = try endOfCompleteType(chars, from: start + 1, depth: depth + 1)
            guard keyEnd == start + 2, isBasic(chars[start + 1]) else {
                throw SecretServiceError.protocol("bad dict key in D-Bus signature")
            }
            let valueEnd = try endOfCompleteType(chars, from: keyEnd, depth: depth + 1)
            guard valueEnd < chars.count, chars[valueEnd] == UInt8(ascii: "}") else {
                throw SecretServiceError.protocol("bad dict entry in D-Bus signature")
            }
            return valueEnd + 1
        case let c where isBasic(c) || c == UInt8(ascii: "v"):
            return start + 1
        default:
            throw SecretServiceError.protocol("unknown type code in D-Bus signature")
        }
    }

    static func isBasic(_ c: UInt8) -> Bool {
        Array("ybnqiuxtdhsog".utf8).contains(c)
    }

    /// Wire alignment of a type, decided by its first character.
    static func alignment(of typeCode: UInt8) -> Int {
        switch typeCode {
        case UInt8(ascii: "y"), UInt8(ascii: "g"), UInt8(ascii: "v"): 1
        case UInt8(ascii: "n"), UInt8(ascii: "q"): 2
        case UInt8(ascii: "x"), UInt8(ascii: "t"), UInt8(ascii: "d"), UInt8(ascii: "("), UInt8(ascii: "{"): 8
        default: 4  // b i u h s o a
        }
    }
}

// MARK: - Marshalling

/// Builds a little-endian D-Bus byte stream. Offsets are relative to the start
/// of the buffer, which must itself be 8-aligned within the message (true for
/// both the header and the body).
struct DBusWriter {
    private(set) var bytes: [UInt8] = []

    mutating func pad(to alignment: Int) {
        while bytes.count % alignment != 0 { bytes.append(0) }
    }

    mutating func append<T: FixedWidthInteger>(_ value: T) {
        pad(to: MemoryLayout<T>.size)
        withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
    }

    mutating func write(_ value: DBusValue) {
        switch value {
        case .byte(let v): append(v)
        case .bool(let v): append(UInt32(v ? 1 : 0))
        case .int16(let v): append(v)
        case .uint16(let v): append(v)
        case .int32(let v): append(v)
        case .uint32(let v), .unixFD(let v): append(v)
        case .int64(let v): append(v)
        case .uint64(let v): append(v)
        case .double(let v): append(v.bitPattern)
        case .string(let s), .objectPath(let s):
            let utf8 = Array(s.utf8)
            append(UInt32(utf8.count))
            bytes += utf8
            bytes.append(0)
        case .signature(let s):
            let utf8 = Array(s.utf8)
            bytes.append(UInt8(truncatingIfNeeded: utf8.count))
            bytes += utf8
            bytes.append(0)
        case .array(let elementSignature, let elements):
            append(UInt32(0))  // length placeholder, patched below
            let lengthOffset = bytes.count - 4
            pad(to: DBusSignature.alignment(of: elementSignature.utf8.first ?? UInt8(ascii: "y")))
            let start = bytes.count
            elements.forEach { write($0) }
            let length = UInt32(bytes.count - start).littleEndian
            withUnsafeBytes(of: length) { bytes.replaceSubrange(lengthOffset..<lengthOffset + 4, with: $0) }
        case .byteArray(let b):
            append(UInt32(b.count))
            bytes += b
        case .structure(let fields):
            pad(to: 8)
            fields.forEach { write($0) }
        case .dictEntry(let key, let value):
            pad(to: 8)
            write(key)
            write(value)
        case .variant(let inner):
            write(.signature(inner.signature))
            write(inner)
        }
    }
}

// MARK: - Unmarshalling

/// Reads D-Bus values from a received message, bounds-checking every access so
/// that a malformed or hostile message becomes an error, never a crash.
struct DBusReader {
    /// Largest array we accept: no larger than the message that holds it (`DBusMessage.maxLength`).
    static let maxArrayLength = DBusMessage.maxLength

    let bytes: [UInt8]
    let bigEndian: Bool
    var offset: Int

    init(bytes: [UInt8], bigEndian: Bool = false, offset: Int = 0) {
        self.bytes = bytes
        self.bigEndian = bigEndian
        self.offset = offset
    }

    mutating func align(to alignment: Int) throws {
        let aligned = (offset + alignment - 1) / alignment * alignment
        guard aligned <= bytes.count else { throw SecretServiceError.protocol("truncated D-Bus message") }
        offset = aligned
    }

    mutating func read<T: FixedWidthInteger>(_: T.Type) throws -> T {
        let size = MemoryLayout<T>.size
        try align(to: size)
        guard offset + size <= bytes.count else { throw SecretServiceError.protocol("truncated D-Bus message") }
        var value: T = 0
        for i in 0..<size {
            let byte = T(bytes[offset + (bigEndian ? size - 1 - i : i)])
            value |= byte << (8 * i)
        }
        offset += size
        return value
    }

    private mutating func readRawString(length: Int) throws -> String {
        guard length >= 0, offset + length + 1 <= bytes.count, bytes[offset + length] == 0 else {
            throw SecretServiceError.protocol("malformed D-Bus string")
        }
        defer { offset += length + 1 }
        return String(decoding: bytes[offset..<offset + length], as: UTF8.self)
    }

    /// Reads every value of a (possibly multi-type) signature, e.g. a message body.
    mutating func readAll(signature: String) throws -> [DBusValue] {
        try DBusSignature.split(signature).map { try read(type: $0, depth: 0) }
    }

    /// Reads one value of a single complete type.
    mutating func read(type: String, depth: Int) throws -> DBusValue {
        guard depth <= DBusSignature.maxDepth else { throw SecretServiceError.protocol("D-Bus value nested too deeply") }
        guard let code = type.utf8.first else { throw SecretServiceError.protocol("empty D-Bus type") }
        switch UnicodeScalar(code) {
        case "y": return .byte(try read(UInt8.self))
        case "b":
            let raw = try read(UInt32.self)
            guard raw <= 1 else { throw SecretServiceError.protocol("bad D-Bus boolean") }
            return .bool(raw == 1)
        case "n": return .int16(try read(Int16.self))
        case "q": return .uint16(try read(UInt16.self))
        case "i": return .int32(try read(Int32.self))
        case "u": return .uint32(try read(UInt32.self))
        case "x": return .int64(try read(Int64.self))
        case "t": return .uint64(try read(UInt64.self))
        case "d": return .double(Double(bitPattern: try read(UInt64.self)))
        case "h": return .unixFD(try read(UInt32.self))
        case "s": return .string(try readRawString(length: Int(try read(UInt32.self))))
        case "o": return .objectPath(try readRawString(length: Int(try read(UInt32.self))))
        case "g": return .signature(try readRawString(length: Int(try read(UInt8.self))))
        case "v":
            let inner = try readRawString(length: Int(try read(UInt8.self)))
            let types = try DBusSignature.split(inner)
            guard types.count == 1 else { throw SecretServiceError.protocol("D-Bus variant must hold one type") }
            return .variant(try read(type: inner, depth: depth + 1))
        case "a": return try readArray(elementType: String(type.dropFirst()), depth: depth)
        case "(":
            try align(to: 8)
            let fields = try DBusSignature.split(String(type.dropFirst().dropLast()))
            return .structure(try fields.map { try read(type: $0, depth: depth + 1) })
        case "{":
            try align(to: 8)
            let parts = try DBusSignature.split(String(type.dropFirst().dropLast()))
            guard parts.count == 2 else { throw SecretServiceError.protocol("bad D-Bus dict entry") }
            return .dictEntry(try read(type: parts[0], depth: depth + 1), try read(type: parts[1], depth: depth + 1))
        default:
            throw SecretServiceError.protocol("unsupported D-Bus type '\(type)'")
        }
    }

    private mutating func readArray(elementType: String, depth: Int) throws -> DBusValue {
        let length = Int(try read(UInt32.self))
        guard length <= Self.maxArrayLength, let code = elementType.utf8.first else {
            throw SecretServiceError.protocol("D-Bus array too long")
        }
        try align(to: DBusSignature.alignment(of: code))
        let end = offset + length
        guard end <= bytes.count else { throw SecretServiceError.protocol("truncated D-Bus array") }
        if elementType == "y" {
            defer { offset = end }
            return .byteArray(Array(bytes[offset..<end]))
        }
        var elements: [DBusValue] = []
        while offset < end {
            elements.append(try read(type: elementType, depth: depth + 1))
        }
        guard offset == end else { throw SecretServiceError.protocol("D-Bus array length mismatch") }
        return .array(elementSignature: elementType, elements)
    }
}
#endif
