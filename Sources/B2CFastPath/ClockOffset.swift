/// `B2C_CLOCK_OFFSET`: seconds added to b2c's clock, so that a test can follow a local tenant whose clock it moved
/// (`POST /_admin/clock`). The tenant's clock moves at most ten years either way, and so may b2c's. One reading for the
/// full client and the fast path, so that the fast path never answers where the full client refuses.
public enum ClockOffset {
    public static let variable = "B2C_CLOCK_OFFSET"
    /// Ten years of 365 days, in seconds: the tenant's clock endpoint's bound.
    public static let limit = 315_360_000

    /// The offset a value gives: 0 when unset or empty, nil when it is not a whole number of seconds within ±`limit`.
    public static func parse(_ value: String?) -> Int? {
        guard let value, !value.isEmpty else { return 0 }
        guard let seconds = Int(value), (-limit...limit).contains(seconds) else { return nil }
        return seconds
    }
}
