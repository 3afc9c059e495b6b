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

    /// `yyyy-MM-dd HH:mm:ssZ` in UTC, the seconds truncated (after rounding to the millisecond). Written from `gmtime_r`'s fields: a `DateFormatter` made per
    /// answer (ICU's date symbols copied each time) was most of the CPU time of every OAuth error the tenant gave, about
    /// 270 us of one, more than half a client-credentials grant with its RSA signature.
    public static func timestampString(_ date: Date) -> String {
        // (To the millisecond first, as ICU's formatter took the date: 59.9999999 s reads as the next second there too.)
        var seconds = time_t(((date.timeIntervalSince1970 * 1000).rounded() / 1000).rounded(.down))
        var t = tm()
        gmtime_r(&seconds, &t)
        func padded(_ n: Int32, _ width: Int) -> String {
            let digits = String(n)
            return String(repeating: "0", count: max(0, width - digits.count)) + digits
        }
        return "\(padded(t.tm_year + 1900, 4))-\(padded(t.tm_mon + 1, 2))-\(padded(t.tm_mday, 2)) "
            + "\(padded(t.tm_hour, 2)):\(padded(t.tm_min, 2)):\(padded(t.tm_sec, 2))Z"
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
