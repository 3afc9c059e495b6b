/// JSON's string syntax: one implementation for every JSON b2c writes (B2CProtocol's values and the token's JSON form).
public enum JSONText {
    /// Appends `s` to `out` as a JSON string's UTF-8: quotes, backslashes and control characters escaped (`\n`, `\r`,
    /// `\t`, else `\u00XX`), everything else as it is. Control characters are C0, and also DEL and C1 (U+0080–U+009F),
    /// which JSON allows raw but a terminal showing the JSON would obey.
    public static func escape(_ s: String, into out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        // Most strings (ids, emails, scopes, tokens) need no escape: their bytes are copied whole.
        if isPlain(s) { out.append(contentsOf: s.utf8) } else { escapeScalars(s, into: &out) }
        out.append(UInt8(ascii: "\""))
    }

    /// The same, appended to a string.
    public static func escape(_ s: String, into out: inout String) {
        guard !isPlain(s) else {
            out += "\""
            out += s
            out += "\""
            return
        }
        var bytes: [UInt8] = []
        escape(s, into: &bytes)
        out += String(decoding: bytes, as: UTF8.self)
    }

    /// Whether no byte of `s` needs an escape: scanned in place where its bytes are contiguous (a native string's are).
    private static func isPlain(_ s: String) -> Bool {
        s.utf8.withContiguousStorageIfAvailable(isPlain) ?? !s.utf8.contains(where: needsEscape)
    }

    /// A byte that starts something to escape: C0, `"`, `\`, DEL, and 0xC2, which leads C1 controls (and also
    /// U+00A0–U+00BF, which then take the scalar loop).
    @inline(__always)
    static func needsEscape(_ b: UInt8) -> Bool {
        b < 0x20 || b == UInt8(ascii: "\"") || b == UInt8(ascii: "\\") || b == 0x7F || b == 0xC2
    }

    /// Whether no byte needs an escape (`needsEscape`'s bytes, written without `||`). Every byte is looked at, with no
    /// branch and no early exit, so that the loop compiles to vector compares: most strings are plain, and the tokens in
    /// an answer are kilobytes (the branching loop was 3 % of a refresh grant's instructions outside RSA).
    @inline(__always)
    static func isPlain(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        var found: UInt8 = 0
        for b in bytes {
            found |=
                (b < 0x20 ? 1 : 0) | (b == UInt8(ascii: "\"") ? 1 : 0) | (b == UInt8(ascii: "\\") ? 1 : 0) | (b == 0x7F ? 1 : 0)
                | (b == 0xC2 ? 1 : 0)
        }
        return found == 0
    }

    private static func escapeScalars(_ s: String, into out: inout [UInt8]) {
        func ascii(_ text: StaticString) {
            text.withUTF8Buffer { out.append(contentsOf: $0) }
        }
        for scalar in s.unicodeScalars {
            switch scalar {
            case "\"": ascii("\\\"")
            case "\\": ascii("\\\\")
            case "\n": ascii("\\n")
            case "\r": ascii("\\r")
            case "\t": ascii("\\t")
            default:
                if scalar.value < 0x20 || (0x7F..<0xA0).contains(scalar.value) {
                    func hex(_ nibble: UInt32) -> UInt8 { UInt8(nibble < 10 ? 0x30 + nibble : 0x57 + nibble) }
                    ascii("\\u00")
                    out.append(hex(scalar.value >> 4))
                    out.append(hex(scalar.value & 0xF))
                } else {
                    UTF8.encode(scalar) { out.append($0) }
                }
            }
        }
    }
}
