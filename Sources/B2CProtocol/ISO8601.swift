import Foundation

/// Dates as ISO 8601 UTC text (`2026-11-28T19:16:17Z`), read and written with Foundation's format style. Every date the
/// tenant and the client write or read as text goes through here: an `ISO8601DateFormatter` made per call builds ICU's
/// formatter each time on Linux, which showed as a share of a custom policy's refresh; the format style does not.
public enum ISO8601 {
    /// `date` as `yyyy-MM-ddTHH:mm:ssZ`.
    public static func string(_ date: Date) -> String { date.formatted(.iso8601) }

    /// Epoch seconds as `yyyy-MM-ddTHH:mm:ssZ`.
    public static func string(epoch: Int) -> String { string(Date(timeIntervalSince1970: TimeInterval(epoch))) }

    /// The date `text` names (`Z` or an offset; no fractional seconds), or nil.
    public static func date(_ text: String) -> Date? { try? Date(text, strategy: .iso8601) }
}
