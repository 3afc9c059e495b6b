import B2CKit
import Foundation

/// A table: columns padded to their widest cell, two spaces apart, no trailing blanks.
package func table(_ rows: [[String]]) -> String {
    guard let first = rows.first else { return "" }
    var widths = Array(repeating: 0, count: first.count)
    for r in rows { for (i, c) in r.enumerated() { widths[i] = max(widths[i], c.count) } }
    return rows.map { r in
        let line = r.enumerated().map { i, c in i == r.count - 1 ? c : c.padding(toLength: widths[i], withPad: " ", startingAt: 0) }
            .joined(separator: "  ")
        return String(line.reversed().drop { $0 == " " }.reversed())
    }.joined(separator: "\n")
}

/// How listings and reports look: one place for the tables and the JSON shapes (docs/client.md).
package enum Output {
    // MARK: times

    /// "2026-11-23 21:25:03 UTC (in 59 min)".
    static func dateAndRelative(_ epoch: Int, now: Int) -> String {
        "\(date(epoch)) (\(epoch > now ? relative(epoch - now) : relative(now - epoch, past: true)))"
    }

    static func date(_ epoch: Int) -> String {
        let f = DateFormatter()
        f.locale = Locale(identifier: "en_US_POSIX")
        f.timeZone = TimeZone(identifier: "UTC")
        f.dateFormat = "yyyy-MM-dd HH:mm:ss 'UTC'"
        return f.string(from: Date(timeIntervalSince1970: TimeInterval(epoch)))
    }

    /// "in 40 s", "in 59 min", "in 3 h", "in 12 days"; with `past`, "5 min ago".
    static func relative(_ seconds: Int, past: Bool = false) -> String {
        let amount: String
        switch seconds {
        case ..<120: amount = "\(seconds) s"
        case ..<(120 * 60): amount = "\(seconds / 60) min"
        case ..<(48 * 3600): amount = "\(seconds / 3600) h"
        default: amount = "\(seconds / 86400) days"
        }
        return past ? "\(amount) ago" : "in \(amount)"
    }

    static func indent(_ text: String) -> String {
        text.split(separator: "\n", omittingEmptySubsequences: false).map { "  " + $0 }.joined(separator: "\n")
    }
}

extension Output {
}
