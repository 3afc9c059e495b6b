import ArgumentParser
import B2CFastPath
import B2CKit
import Foundation
import Synchronization


/// How a token itself is printed (`b2c token --format`, `-o`): alone, as a bearer value, as a header line, or as JSON.
typealias TokenFormat = TokenText.Format
extension TokenText.Format: ExpressibleByArgument {}

enum OutputFormat: String, ExpressibleByArgument, CaseIterable {
    case table, json
    static var auto: OutputFormat { isatty(STDOUT_FILENO) == 1 ? .table : .json }
}

/// The way text reaches the terminal. Text from outside — names and claims from the tenant and its tokens, Graph's fields,
/// the tenant's error descriptions and native-auth labels, files — may carry control characters that a terminal obeys:
/// OSC 52 writes the clipboard, CSI 2J clears the screen, OSC 8 forges a link, others hide text. Every human-readable
/// line (tables, messages, prompts, ArgumentParser's errors) leaves through `out` or `err`, which show each such character
/// as U+FFFD: one column wide, so tables stay aligned, and unlike a caret or `\x1b` spelling it is no text a sender could
/// type to pass for a replacement. JSON carries them escaped (`JSONText`), and a token is printed byte for byte or not
/// at all (`Output.tokenText`).
package enum Terminal {
    /// Writes `text` to standard output, its control characters shown as U+FFFD.
    package static func out(_ text: String) { FileHandle.standardOutput.write(Data(shown(text).utf8)) }

    /// Writes `text` to standard error, its control characters shown as U+FFFD.
    package static func err(_ text: String) { FileHandle.standardError.write(Data(shown(text).utf8)) }

    /// `text` with C0 controls (but line feed and tab), DEL and C1 controls (U+0080–U+009F) replaced by U+FFFD. Judged
    /// per Unicode scalar: a control followed by a combining mark is one `Character`, and must not hide in it.
    package static func shown(_ text: String) -> String {
        guard containsControls(text) else { return text }
        var out = String.UnicodeScalarView()
        for scalar in text.unicodeScalars { out.append(isControl(scalar) ? "\u{FFFD}" : scalar) }
        return String(out)
    }

    package static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x09, 0x0A: false
        case 0x00..<0x20, 0x7F..<0xA0: true
        default: false
        }
    }

    /// A scan of the UTF-8 bytes: most text, and every large listing, has no control character and is written as it is.
    package static func containsControls(_ text: String) -> Bool {
        func scan(_ bytes: some Sequence<UInt8>) -> Bool {
            var afterC2 = false  // U+0080–U+009F are 0xC2 then 0x80–0x9F
            for b in bytes {
                if b < 0x20 ? b != 0x09 && b != 0x0A : b == 0x7F || (afterC2 && b < 0xA0) { return true }
                afterC2 = b == 0xC2
            }
            return false
        }
        return text.utf8.withContiguousStorageIfAvailable { scan($0) } ?? scan(text.utf8)
    }
}

package func writeOut(_ text: String) { Terminal.out(text.hasSuffix("\n") ? text : text + "\n") }

package func writeErr(_ text: String) {
    StandardError.used.withLock { $0 = true }
    Terminal.err("\(ProgramName.current): \(text)\n")
}

/// A question at the terminal (on stderr, no line ending: the answer is typed after it).
func writePrompt(_ text: String) { Terminal.err(text) }

/// Says which configuration found in the working directory is in use: the one line the fast path of `b2c token` says too,
/// so it does not count as `StandardError.used`.
func writeFoundConfigurationNotice() {
    StandardError.foundConfiguration.withLock { $0 = true }
    Terminal.err("\(ProgramName.current): \(StoreRules.foundConfigurationNotice)\n")
}

/// Whether this process said anything on stderr: `b2c token` files an answer for its fast path only when it said nothing
/// there, since the fast path prints the token alone.
package enum StandardError {
    static let used = Mutex(false)
    /// `writeFoundConfigurationNotice` was said.
    static let foundConfiguration = Mutex(false)
}

/// The name this process's messages start with: `b2c`, or `b2c-emulator` when the local tenant's program runs (set by
/// `B2CCommand.runCatching`).
package enum ProgramName {
    private final class Box: @unchecked Sendable {
        let lock = NSLock()
        var name = "b2c"
    }
    private static let box = Box()

    package static var current: String { box.lock.withLock { box.name } }
    static func set(_ name: String) { box.lock.withLock { box.name = name } }
}
