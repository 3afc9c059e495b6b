import Foundation

/// `application/x-www-form-urlencoded` and URL query strings.
public enum FormEncoding {
    public struct MalformedError: Error, CustomStringConvertible {
        public let description: String
    }

    /// Parses `a=b&c=d`. `+` means space. Repeated keys keep the first value (B2C tolerates a redundant `p=`). A `%` not
    /// followed by two hex digits, or decoded bytes that are not UTF-8, make the whole form malformed. `&` and `=` are
    /// separators as bytes (as the URL standard reads a form), even before a combining mark.
    public static func parse(_ string: some StringProtocol) throws -> [String: String] { try parse(bytes: Array(string.utf8)) }

    /// The same, from the form's bytes (a request body, with no string made of it first).
    public static func parse(bytes: [UInt8]) throws -> [String: String] {
        var out: [String: String] = [:]
        out.reserveCapacity(8)  // a token request's form, without growing the table three times
        // One pass over the indices: no array of pairs, and a component without '%' or '+' becomes its string directly.
        var start = bytes.startIndex
        while start < bytes.endIndex {
            let end = bytes[start...].firstIndex(of: UInt8(ascii: "&")) ?? bytes.endIndex
            defer { start = end + 1 }
            let pair = bytes[start..<end]
            if pair.isEmpty { continue }
            let equals = pair.firstIndex(of: UInt8(ascii: "="))
            let keyBytes = pair[..<(equals ?? pair.endIndex)]
            guard let key = decode(keyBytes), let value = equals.map({ decode(pair[($0 + 1)...]) }) ?? "" else {
                let shown = String(decoding: keyBytes, as: UTF8.self).replacingOccurrences(of: "+", with: " ").prefix(40)
                throw MalformedError(description: "the parameter '\(shown)' is not valid percent-encoding")
            }
            if key.isEmpty { continue }
            if out[key] == nil { out[key] = value }
        }
        return out
    }

    /// One form-encoded component: `+` is a space, `%XX` a byte; nil when a `%` is not followed by two hex digits or the
    /// bytes are not UTF-8.
    static func decode(_ bytes: ArraySlice<UInt8>) -> String? {
        func hex(_ b: UInt8) -> UInt8? {
            switch b {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): b - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): b - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): b - UInt8(ascii: "A") + 10
            default: nil
            }
        }
        if !bytes.contains(where: { $0 == UInt8(ascii: "+") || $0 == UInt8(ascii: "%") }) { return utf8String(bytes) }
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var i = bytes.startIndex
        while i < bytes.endIndex {
            switch bytes[i] {
            case UInt8(ascii: "+"): out.append(UInt8(ascii: " "))
            case UInt8(ascii: "%"):
                guard i + 2 < bytes.endIndex, let high = hex(bytes[i + 1]), let low = hex(bytes[i + 2]) else { return nil }
                out.append(high << 4 | low)
                i += 2
            case let b: out.append(b)
            }
            i += 1
        }
        return utf8String(out[...])
    }

    /// The bytes as a string, nil when they are not UTF-8. ASCII (a form's usual bytes) is a string as it is; the full
    /// validation, a thousand instructions per component, is for the rest.
    private static func utf8String(_ bytes: ArraySlice<UInt8>) -> String? {
        var high: UInt8 = 0
        for b in bytes { high |= b }  // no early exit: a loop the compiler vectorises
        return high < 0x80 ? String(decoding: bytes, as: UTF8.self) : String(validating: bytes, as: UTF8.self)
    }

    /// Percent-encodes every byte of the UTF-8 form but RFC 3986's unreserved characters (letters, digits, `-._~`), hex in
    /// upper case. A byte loop: Foundation's `addingPercentEncoding` bridges through NSString, and its first use was a
    /// measurable share of a command's refresh (bench/README.md, item 3).
    public static func escape(_ s: String) -> String {
        let utf8 = s.utf8
        if utf8.allSatisfy(isUnreserved) { return s }
        let hexDigits = Array("0123456789ABCDEF".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(utf8.count * 3)
        for byte in utf8 {
            if isUnreserved(byte) {
                out.append(byte)
            } else {
                out.append(UInt8(ascii: "%"))
                out.append(hexDigits[Int(byte >> 4)])
                out.append(hexDigits[Int(byte & 0x0F)])
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    private static func isUnreserved(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
            UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
            true
        default: false
        }
    }

    /// Serialises pairs in the given order.
    public static func encode(_ pairs: [(String, String)]) -> String {
        pairs.map { "\(escape($0.0))=\(escape($0.1))" }.joined(separator: "&")
    }

    public static func encode(_ dict: [String: String]) -> String {
        encode(dict.keys.sorted().map { ($0, dict[$0]!) })
    }
}
