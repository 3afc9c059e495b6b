import Foundation

/// B2C's `error_description` format: `AADB2Cxxxxx: message\r\nCorrelation ID: guid\r\nTimestamp: yyyy-MM-dd HH:mm:ssZ\r\n`.
public struct B2CErrorDescription: Sendable, Equatable {
    public var code: String?
    public var message: String
    public var correlationID: String?
    public var timestamp: String?

    public init(code: String?, message: String, correlationID: String? = nil, timestamp: String? = nil) {
        self.code = code
        self.message = message
        self.correlationID = correlationID
        self.timestamp = timestamp
    }

    public static func format(
        code: String, message: String, correlationID: String = UUID().uuidString.lowercased(), at date: Date
    ) -> String {
        "\(code): \(message)\r\nCorrelation ID: \(correlationID)\r\nTimestamp: \(timestampString(date))\r\n"
    }

    public static func timestampString(_ date: Date) -> String {
        let f = DateFormatter()
        f.locale = Locale(identifier: "en_US_POSIX")
        f.timeZone = TimeZone(identifier: "UTC")
        f.dateFormat = "yyyy-MM-dd HH:mm:ss'Z'"
        return f.string(from: date)
    }

    /// Parses any `error_description`; the AADB2C code is found wherever it stands (clients match by substring).
    public static func parse(_ description: String) -> B2CErrorDescription {
        var lines = description.components(separatedBy: "\r\n").flatMap { $0.components(separatedBy: "\n") }
        lines = lines.filter { !$0.isEmpty }
        var correlation: String?
        var timestamp: String?
        var messageLines: [String] = []
        for line in lines {
            if line.hasPrefix("Correlation ID:") {
                correlation = line.dropFirst("Correlation ID:".count).trimmingCharacters(in: .whitespaces)
            } else if line.hasPrefix("Timestamp:") {
                timestamp = line.dropFirst("Timestamp:".count).trimmingCharacters(in: .whitespaces)
            } else {
                messageLines.append(line)
            }
        }
        var message = messageLines.joined(separator: " ")
        var code: String?
        if let range = Self.codeRange(in: message) {
            code = String(message[range])
            if range.lowerBound == message.startIndex {
                message = String(message[range.upperBound...]).trimmingCharacters(in: CharacterSet(charactersIn: ": "))
            }
        }
        return B2CErrorDescription(code: code, message: message, correlationID: correlation, timestamp: timestamp)
    }

    /// The first "AADB2C" followed by five digits.
    static func codeRange(in text: String) -> Range<String.Index>? {
        var from = text.startIndex
        while let r = text.range(of: "AADB2C", range: from..<text.endIndex) {
            var end = r.upperBound
            var digits = 0
            while digits < 5, end < text.endIndex, text[end].isASCII, text[end].isNumber {
                end = text.index(after: end)
                digits += 1
            }
            if digits == 5 { return r.lowerBound..<end }
            from = r.upperBound
        }
        return nil
    }
}
