import Foundation
import NIOConcurrencyHelpers

/// The emulator's clock: real time plus an offset that tests move forward through the admin surface.
public final class EmulatorClock: Sendable {
    let offset: NIOLockedValueBox<Int>
    let store: EmulatorStore

    init(store: EmulatorStore) throws {
        self.store = store
        self.offset = NIOLockedValueBox(Int(try store.setting("clock_offset") ?? "0") ?? 0)
    }

    public func now() -> Int { Int(Date().timeIntervalSince1970) + offset.withLockedValue { $0 } }
    public var date: Date { Date(timeIntervalSince1970: TimeInterval(now())) }
    public var offsetSeconds: Int { offset.withLockedValue { $0 } }

    public func advance(by seconds: Int) throws {
        let value = offset.withLockedValue { o -> Int in
            o += seconds; return o
        }
        try store.setSetting("clock_offset", String(value))
    }

    public func set(offset value: Int) throws {
        offset.withLockedValue { $0 = value }
        try store.setSetting("clock_offset", String(value))
    }
}
