import ArgumentParser
import B2CFastPath
import Foundation

/// What b2c and b2c-emulator say about their own commands beyond ArgumentParser: which command a mistyped word meant, and
/// help whose example lines stay whole. One rule each, for both programs.
package enum CommandHelp {
    /// "did you mean `b2c signin`?" for a word where a subcommand belongs that names none, at any depth (`b2c sigin`,
    /// `b2c jwt decod`, `b2c-emulator serv`, `b2c emulator brwoser`), with exit 64; nil when the words name commands as
    /// far as they go (options, arguments and `help` are ArgumentParser's to judge).
    package static func unknownSubcommand(_ args: [String], root: ParsableCommand.Type) -> CLIError? {
        var command = root
        var path = [root.configuration.commandName ?? "b2c"]
        for word in args {
            let subcommands = command.configuration.subcommands
            guard !subcommands.isEmpty, command.configuration.defaultSubcommand == nil, !word.hasPrefix("-"), word != "help" else {
                return nil
            }
            if let next = subcommands.first(where: { names($0).contains(word) }) {
                command = next
                path.append(next.configuration.commandName ?? word)
                continue
            }
            let typed = word.lowercased()
            let close = subcommands.filter { $0.configuration.shouldDisplay }.flatMap { names($0) }
                .map { ($0, editDistance($0, typed)) }.filter { $0.1 <= 2 || $0.0.hasPrefix(typed) }
                .sorted { $0.1 < $1.1 }.map(\.0)
            let command = path.joined(separator: " ")
            let hint = close.first.map { " Did you mean `\(command) \($0)`?" } ?? ""
            return CLIError("'\(word)' is not a \(command) command.\(hint) See `\(command) --help`.", exitCode: ExitStatus.usage)
        }
        return nil
    }

    private static func names(_ command: ParsableCommand.Type) -> [String] {
        [command.configuration.commandName ?? ""] + command.configuration.aliases
    }

    /// Levenshtein distance, for command suggestions.
    static func editDistance(_ a: String, _ b: String) -> Int {
        let a = Array(a), b = Array(b)
        guard !a.isEmpty, !b.isEmpty else { return max(a.count, b.count) }
        var row = Array(0...b.count)
        for i in 1...a.count {
            var previous = row[0]
            row[0] = i
            for j in 1...b.count {
                let saved = row[j]
                row[j] = min(row[j] + 1, row[j - 1] + 1, previous + (a[i - 1] == b[j - 1] ? 0 : 1))
                previous = saved
            }
        }
        return row[b.count]
    }

    /// The width help is laid out for, as ArgumentParser takes it: $COLUMNS, else the terminal's, else 80.
    package static var columns: Int {
        if let value = ProcessEnvironment.current()["COLUMNS"], let columns = Int(value) { return columns }
        var size = winsize()
        if ioctl(STDOUT_FILENO, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0 { return Int(size.ws_col) }
        return 80
    }

    /// ArgumentParser's help screen `text` with its overview laid out again. ArgumentParser wraps every line of a command's
    /// discussion at the width, indented or not, so an example longer than the terminal would break in the middle of the
    /// command (and a copied line would not run); here a line that starts with whitespace — an example, the continuation
    /// of one — is printed as written, and only prose is wrapped as ArgumentParser wraps it. nil when `text` is no help
    /// screen of a command of `root`'s tree (a version, a completion script).
    package static func keepingExamplesWhole(_ text: String, root: ParsableCommand.Type, columns: Int) -> String? {
        let head = "OVERVIEW: "
        guard text.hasPrefix(head), let end = text.range(of: "\n\nUSAGE: ") else { return nil }
        let shown = collapsed(text[text.index(text.startIndex, offsetBy: head.count)..<end.lowerBound])
        guard let command = commands(of: root).first(where: { collapsed(overview(of: $0)) == shown }) else { return nil }
        let lines = (head + overview(of: command)).split(separator: "\n", omittingEmptySubsequences: false)
        let laidOut = lines.map { $0.first?.isWhitespace == true ? String($0) : wrapped($0, to: columns) }
        return laidOut.joined(separator: "\n") + text[end.lowerBound...]
    }

    /// The command and every command below it.
    private static func commands(of root: ParsableCommand.Type) -> [ParsableCommand.Type] {
        [root] + root.configuration.subcommands.flatMap { commands(of: $0) }
    }

    /// A command's overview as ArgumentParser composes it: the abstract, then the discussion after an empty line.
    private static func overview(of command: ParsableCommand.Type) -> String {
        let c = command.configuration
        return c.discussion.isEmpty ? c.abstract : c.abstract + "\n\n" + c.discussion
    }

    private static func collapsed<S: StringProtocol>(_ text: S) -> String {
        text.split(whereSeparator: \.isWhitespace).joined(separator: " ")
    }

    /// One line broken at spaces into lines of at most `columns` characters, as ArgumentParser breaks it.
    static func wrapped(_ line: Substring, to columns: Int) -> String {
        guard columns > 0 else { return String(line) }
        var rest = line
        var lines: [Substring] = []
        while rest.count > columns, let space = rest.prefix(columns).lastIndex(of: " ") ?? rest.firstIndex(of: " ") {
            lines.append(rest[..<space])
            rest = rest[rest.index(after: space)...]
        }
        lines.append(rest)
        return lines.joined(separator: "\n")
    }
}
