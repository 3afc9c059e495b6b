import Foundation
import Logging
import Synchronization
import Testing

@testable import B2CEmulator

/// The quiet server's log: metadata is kept as given and rendered only for a line that is written.
@Suite struct QuietLogTests {
    /// A metadata value that counts how often it is rendered.
    final class Rendered: CustomStringConvertible, Sendable {
        let count = Mutex(0)
        var description: String {
            count.withLock { $0 += 1 }
            return "req-7"
        }
    }

    /// The lines the handler wrote.
    final class Capture: Sendable {
        let lines = Mutex<[String]>([])
        var written: [String] { lines.withLock { $0 } }
    }

    static func logger(_ capture: Capture) -> Logger {
        Logger(label: "b2c.emulator") { _ in QuietLogHandler(write: { line in capture.lines.withLock { $0.append(line) } }) }
    }

    @Test func metadataIsNotRenderedUntilALineIsWritten() {
        let lines = Capture()
        let id = Rendered()
        var log = Self.logger(lines)
        #expect(log.logLevel == Logger.Level.critical)
        for _ in 0..<100 {
            var request = log
            request[metadataKey: "hb.request.id"] = Logger.MetadataValue.stringConvertible(id)
            request.info("served")
            request.error("failed")
        }
        #expect(id.count.withLock { $0 } == 0)
        #expect(lines.written.isEmpty)

        log[metadataKey: "hb.request.id"] = Logger.MetadataValue.stringConvertible(id)
        log.critical("cannot accept connections", metadata: ["errno": "24"])
        #expect(id.count.withLock { $0 } == 1)
        #expect(lines.written == ["b2c-emulator: cannot accept connections (errno=24 hb.request.id=req-7)\n"])
    }

    @Test func aLowerLevelIsHonoured() {
        let lines = Capture()
        var log = Self.logger(lines)
        log.logLevel = Logger.Level.warning
        log.info("quiet")
        log.warning("loud")
        #expect(lines.written == ["b2c-emulator: loud\n"])
    }
}
