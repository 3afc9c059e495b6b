import Foundation

/// Every failure the client reports, by kind; the CLI maps kinds to exit codes (README "Exit codes").
public struct B2CError: Error, Sendable, CustomStringConvertible {
    public enum Kind: Sendable, Equatable {
        case failed              // 1
        case cancelled           // 2
        case configuration       // 3
        case interactionRequired // 4
        case network             // 5
        case usage               // 64
    }

    public var kind: Kind
    public var message: String
    /// For `interactionRequired`: the command that fixes it.
    public var fix: String?

    public init(_ kind: Kind, _ message: String, fix: String? = nil) {
        self.kind = kind; self.message = message; self.fix = fix
    }

    public var description: String { message + (fix.map { "\nRun: \($0)" } ?? "") }
}
