/// JSON's string syntax: one implementation for every JSON b2c writes (B2CProtocol's values and the token's JSON form).
public enum JSONText {
    /// Appends `s` to `out` as a JSON string: quotes, backslashes and control characters escaped (`\n`, `\r`, `\t`, else
    /// `\u00XX`), everything else as it is.
    public static func escape(_ s: String, into out: inout String) {
        out += "\""
        // Most strings (ids, emails, scopes, tokens) need no escape: appended whole.
        if !s.utf8.contains(where: { $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") }) {
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
                if scalar.value < 0x20 {
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
