import Foundation

/// `application/x-www-form-urlencoded` and URL query strings.
public enum FormEncoding {
    public struct MalformedError: Error, CustomStringConvertible {
        public let description: String
    }

    /// Parses `a=b&c=d`. `+` means space. Repeated keys keep the first value (B2C tolerates a redundant `p=`).
    public static func parse(_ string: some StringProtocol) throws -> [String: String] {
        var out: [String: String] = [:]
        for pair in string.split(separator: "&", omittingEmptySubsequences: true) {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let rawKey = String(parts[0]).replacingOccurrences(of: "+", with: " ")
            let rawValue = parts.count > 1 ? String(parts[1]).replacingOccurrences(of: "+", with: " ") : ""
            guard let key = rawKey.removingPercentEncoding, let value = rawValue.removingPercentEncoding else {
                throw MalformedError(description: "the parameter '\(rawKey.prefix(40))' is not valid percent-encoding")
            }
            if key.isEmpty { continue }
            if out[key] == nil { out[key] = value }
        }
        return out
    }

    private static let unreserved: CharacterSet = {
        var set = CharacterSet.alphanumerics.intersection(CharacterSet(charactersIn: Unicode.Scalar(0)...Unicode.Scalar(127)))
        set.insert(charactersIn: "-._~")
        return set
    }()

    public static func escape(_ s: String) -> String {
        s.addingPercentEncoding(withAllowedCharacters: unreserved) ?? s
    }

    /// Serialises pairs in the given order.
    public static func encode(_ pairs: [(String, String)]) -> String {
        pairs.map { "\(escape($0.0))=\(escape($0.1))" }.joined(separator: "&")
    }

    public static func encode(_ dict: [String: String]) -> String {
        encode(dict.keys.sorted().map { ($0, dict[$0]!) })
    }
}
