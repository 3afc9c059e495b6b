/// JSON's string syntax: one implementation for every JSON b2c writes (B2CProtocol's values and the token's JSON form).
public enum JSONText {
    /// Appends `s` to `out` as a JSON string: quotes, backslashes and control characters escaped (`\n`, `\r`, `\t`, else
    /// `\u00XX`), everything else as it is. Control characters are C0, and also DEL and C1 (U+0080–U+009F), which JSON
    /// allows raw but a terminal showing the JSON would obey.
    public static func escape(_ s: String, into out: inout String) {
        out += "\""
        // Most strings (ids, emails, scopes, tokens) need no escape: appended whole. (0xC2 leads C1 controls, and also
        // U+00A0–U+00BF, which then take the scalar loop below.)
        func needsEscape(_ b: UInt8) -> Bool {
            b < 0x20 || b == UInt8(ascii: "\"") || b == UInt8(ascii: "\\") || b == 0x7F || b == 0xC2
        }
        // (A plain loop over the contiguous bytes: tokens inside JSON are kilobytes, and this scan is all they cost.)
        let plain = s.utf8.withContiguousStorageIfAvailable { bytes in
            for b in bytes where needsEscape(b) { return false }
            return true
        }
        if plain ?? !s.utf8.contains(where: needsEscape) {
            out += s
            out += "\""
            return
        }
        for scalar in s.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            default:
                if scalar.value < 0x20 || (0x7F..<0xA0).contains(scalar.value) {
                    let hex = String(scalar.value, radix: 16)
                    out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        out += "\""
    }
}
