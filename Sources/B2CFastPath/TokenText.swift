/// How `b2c token` prints a token: alone, as a bearer value, as a header line, or as a JSON object with what identifies
/// it. One implementation for the full client and the fast path, so that both print the same bytes.
public enum TokenText {
    public enum Format: String, Sendable, CaseIterable { case raw, bearer, header, json }

    /// A value of the JSON form: a string, a whole number or a flag.
    public enum Field: Sendable, Equatable {
        case string(String), int(Int), bool(Bool)
    }

    /// The text to print (ending with a newline). The JSON form is an object with sorted keys, two-space indentation and
    /// `"key": value` pairs, as b2c's other JSON output.
    public static func render(_ secret: String, expiresOn: Int, format: Format, extra: [String: Field]) -> String {
        switch format {
        case .raw: return secret + "\n"
        case .bearer: return "Bearer \(secret)\n"
        case .header: return "Authorization: Bearer \(secret)\n"
        case .json:
            var fields: [String: Field] = ["accessToken": .string(secret), "tokenType": .string("Bearer"), "expiresOn": .int(expiresOn)]
            fields.merge(extra) { $1 }
            var out = "{"
            for (i, key) in fields.keys.sorted().enumerated() {
                out += i == 0 ? "\n  " : ",\n  "
                out += quoted(key) + ": "
                switch fields[key]! {
                case .string(let s): out += quoted(s)
                case .int(let n): out += String(n)
                case .bool(let b): out += b ? "true" : "false"
                }
            }
            return out + "\n}\n"
        }
    }

    static func quoted(_ s: String) -> String {
        var out = ""
        JSONText.escape(s, into: &out)
        return out
    }
}
