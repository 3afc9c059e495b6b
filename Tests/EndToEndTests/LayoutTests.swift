import Foundation
import Testing

/// docs/testing.md answers "where is X" in one hop: its layout names every folder under Sources/, and every source path it
/// names (in the layout or in the questions above it) exists.
struct LayoutTests {
    static let testing = packageRoot.appendingPathComponent("docs/testing.md")

    /// The layout: the fenced block whose lines start with `Sources/`, as (folder, its sub-folders as written) pairs.
    static func layout() throws -> [String: Set<String>] {
        let text = try String(contentsOf: testing, encoding: .utf8)
        let blocks = text.components(separatedBy: "```").enumerated().filter { $0.offset % 2 == 1 }.map(\.element)
        let block = try #require(blocks.first { $0.contains("\nSources/B2CKit/") }, "docs/testing.md has no layout block")
        var folders: [String: Set<String>] = [:]
        var current: String?
        for line in block.split(separator: "\n", omittingEmptySubsequences: false) {
            let first = line.split(separator: " ", maxSplits: 1).first.map(String.init) ?? ""
            if !line.hasPrefix(" ") {
                current = first.hasPrefix("Sources/") ? first : nil
                if let current { folders[current, default: []] = folders[current] ?? [] }
            } else if let current, first.hasSuffix("/"), line.hasPrefix("  "), !line.hasPrefix("   ") {
                folders[current, default: []].insert(first)
            }
        }
        return folders
    }

    /// Every folder under `Sources/` (C headers' `include/` aside), relative to the package, ending in '/'.
    static func sourceFolders() throws -> [String] {
        let root = packageRoot.appendingPathComponent("Sources")
        let walker = try #require(FileManager.default.enumerator(at: root, includingPropertiesForKeys: [.isDirectoryKey]))
        var out: [String] = []
        for case let url as URL in walker where (try? url.resourceValues(forKeys: [.isDirectoryKey]).isDirectory) == true {
            let relative = "Sources/" + url.path.dropFirst(root.path.count + 1) + "/"
            if !relative.hasSuffix("/include/") { out.append(relative) }
        }
        return out.sorted()
    }

    @Test func everyFolderUnderSourcesIsInTheLayout() throws {
        let layout = try Self.layout()
        let folders = try Self.sourceFolders()
        #expect(folders.count > 20, "\(folders)")
        for folder in folders {
            let parts = folder.split(separator: "/").map(String.init)
            let top = "Sources/\(parts[1])/"
            if parts.count == 2 {
                #expect(layout[top] != nil, "\(folder) is missing from docs/testing.md's layout: add a line for it")
            } else {
                let inner = parts.dropFirst(2).joined(separator: "/") + "/"
                #expect(
                    layout[top]?.contains(inner) == true,
                    "\(folder) is missing from docs/testing.md's layout: add a line `  \(inner)` under \(top)")
            }
        }
        // And the reverse: the layout names no folder that is gone.
        for (top, inner) in layout {
            #expect(folders.contains(top), "docs/testing.md's layout names \(top), which is not in Sources/")
            for sub in inner {
                #expect(folders.contains(top + sub), "docs/testing.md's layout names \(top + sub), which is not in Sources/")
            }
        }
    }

    @Test func everySourcePathTheDocNamesExists() throws {
        let text = try String(contentsOf: Self.testing, encoding: .utf8)
        let paths = text.matches(of: /`(Sources\/[A-Za-z0-9_+\/.-]+)`/).map { String($0.output.1) }
        #expect(paths.count >= 10, "\(paths)")
        for path in paths {
            #expect(
                FileManager.default.fileExists(atPath: packageRoot.appendingPathComponent(path).path),
                "docs/testing.md names \(path), which does not exist")
        }
    }
}

/// STYLE.md's function size: no function, initializer or subscript under `Sources/` longer than 80 lines from its
/// declaration to its closing brace (a long one is split into named parts).
struct FunctionSizeTests {
    static let limit = 80

    /// The source with comments and string literals blanked (their line breaks kept), so braces count as code.
    static func code(_ source: String) -> [UInt8] {
        let s = Array(source.utf8)
        var out: [UInt8] = []
        out.reserveCapacity(s.count)
        var i = 0
        func starts(_ text: String, at j: Int) -> Bool {
            let t = Array(text.utf8)
            return j + t.count <= s.count && Array(s[j..<j + t.count]) == t
        }
        func keepLines(_ from: Int, _ to: Int) { out += s[from..<min(to, s.count)].filter { $0 == 10 } }
        while i < s.count {
            if starts("//", at: i) {
                while i < s.count && s[i] != 10 { i += 1 }
            } else if starts("/*", at: i) {
                var j = i + 2
                while j < s.count && !starts("*/", at: j) { j += 1 }
                keepLines(i, j + 2)
                i = j + 2
            } else if s[i] == UInt8(ascii: "\"") || (s[i] == UInt8(ascii: "#") && i + 1 < s.count && s[i + 1] == UInt8(ascii: "\"")) {
                var hashes = 0
                while s[i + hashes] == UInt8(ascii: "#") { hashes += 1 }
                let quote = starts("\"\"\"", at: i + hashes) ? "\"\"\"" : "\""
                let close = quote + String(repeating: "#", count: hashes)
                let interpolation = "\\" + String(repeating: "#", count: hashes) + "("
                var j = i + hashes + quote.utf8.count
                while j < s.count {
                    if starts(interpolation, at: j) {
                        var depth = 1
                        j += interpolation.utf8.count
                        while j < s.count && depth > 0 {
                            if s[j] == UInt8(ascii: "(") { depth += 1 } else if s[j] == UInt8(ascii: ")") { depth -= 1 }
                            j += 1
                        }
                        continue
                    }
                    if hashes == 0 && s[j] == UInt8(ascii: "\\") {
                        j += 2
                        continue
                    }
                    if starts(close, at: j) {
                        j += close.utf8.count
                        break
                    }
                    j += 1
                }
                out += Array("\"\"".utf8)
                keepLines(i, j)
                i = j
            } else {
                out.append(s[i])
                i += 1
            }
        }
        return out
    }

    /// (name, first line, lines) of every declaration with a body.
    static func functions(_ source: String) throws -> [(String, Int, Int)] {
        let text = String(decoding: code(source), as: UTF8.self)
        let bytes = Array(text.utf8)
        let modifiers =
            "@\\w+|public|package|private|fileprivate|internal|static|override|mutating|nonisolated|convenience|required|final|class"
        let declaration = try Regex(
            #"(?m)^[ \t]*(?:(?:"# + modifiers + #")[ \t]+)*(func[ \t]+[^\s(<]+|init\??|subscript)[ \t]*[(<]"#,
            as: (Substring, Substring).self)
        var found: [(String, Int, Int)] = []
        for match in text.matches(of: declaration) {
            let start = text.utf8.distance(from: text.utf8.startIndex, to: match.range.lowerBound)
            let afterName = text.utf8.distance(from: text.utf8.startIndex, to: match.range.upperBound)
            guard let open = bytes[afterName...].firstIndex(of: UInt8(ascii: "{")) else { continue }
            // A requirement without a body: the next declaration or a closing brace comes before any '{'.
            let between = String(decoding: bytes[afterName..<open], as: UTF8.self)
            if between.contains(/\n\s*(?:(?:func|var|let|case|init)\b|\})/) { continue }
            var depth = 0
            var end = open
            while end < bytes.count {
                if bytes[end] == UInt8(ascii: "{") {
                    depth += 1
                } else if bytes[end] == UInt8(ascii: "}") {
                    depth -= 1
                    if depth == 0 { break }
                }
                end += 1
            }
            let first = bytes[..<start].filter { $0 == 10 }.count + 1
            let last = bytes[..<min(end, bytes.count)].filter { $0 == 10 }.count + 1
            found.append((String(match.output.1), first, last - first + 1))
        }
        return found
    }

    @Test func theCounterSeesThroughStringsAndComments() throws {
        let sample = """
            struct S {
                func a() {
                    let s = "}}} \\(f("}")) {"
                    // }
                    /* { */
                    let t = #\"""
                        { \\(x) }
                        \"""#
                }
                func b()
                func c() { }
            }
            """
        let found = try Self.functions(sample)
        #expect(found.map(\.0) == ["func a", "func c"], "\(found)")
        #expect(found.first?.2 == 8, "\(found)")
    }

    @Test func noFunctionIsLongerThanEightyLines() throws {
        let root = packageRoot.appendingPathComponent("Sources")
        let walker = try #require(FileManager.default.enumerator(at: root, includingPropertiesForKeys: nil))
        var files = 0
        for case let url as URL in walker where url.pathExtension == "swift" {
            files += 1
            let relative = String(url.path.dropFirst(packageRoot.path.count + 1))
            for (name, line, length) in try Self.functions(try String(contentsOf: url, encoding: .utf8)) {
                #expect(
                    length <= Self.limit, "\(relative):\(line): \(name) is \(length) lines; split it into named parts (≤ \(Self.limit))")
            }
        }
        #expect(files > 100)
    }
}

/// STYLE.md's figures: a comment under `Sources/` says why, and a measurement (what a step took or cost, its share of a
/// profile's samples, a speed-up) lives in bench/README.md, where it is dated and can be measured again; the comment
/// points there. Protocol facts (a timeout of 2000 ms, a sample log line's `3ms`) are not measurements.
struct MeasurementCommentTests {
    /// A time with a word that makes it a measurement (took, cost, spent, saved, faster, "of a …"); a share of samples,
    /// time or CPU; a speed-up.
    nonisolated(unsafe) static let measurement: Regex<AnyRegexOutput> = {
        let number = #"\b\d+(?:[.,]\d+)? ?"#
        let time = #"(?:ms|µs|us|ns|milliseconds?|microseconds?|nanoseconds?)\b"#
        let verb = #"\b(?:took|takes|taking|cost|costs|costing|spent|spends|saved|saves|faster|slower)\b"#
        let share = #"(?:%|per ?cent) (?:of (?:its |the |all |a |an |every )?(?:samples|time|CPU|cycles|profile|wall)|faster|slower)"#
        let alternatives = [
            number + time + "(?:[^.;]*" + verb + #"| of (?:a|an|the|its|every|each)\b)"#,
            verb + "[^.;]*" + number + time,
            number + share,
            number + #"(?:x|×|times) (?:faster|slower)\b"#,
        ]
        return try! Regex("(?i)" + alternatives.joined(separator: "|"))
    }()

    /// The comment text of each line (after a `//` that starts a comment, not one inside `https://`), with its line number.
    static func comments(_ source: String) -> [(line: Int, text: String)] {
        source.split(separator: "\n", omittingEmptySubsequences: false).enumerated().compactMap { i, line in
            guard let start = line.firstMatch(of: /(?:^|\s)\/\/+/) else { return nil }
            return (i + 1, String(line[start.range.upperBound...]))
        }
    }

    static func measurements(_ source: String) -> [(line: Int, text: String)] {
        comments(source).filter { $0.text.contains(where: \.isNumber) && $0.text.contains(measurement) }
    }

    @Test(arguments: [
        ("// that lookup was 0.6 ms of a 9 ms cache hit", true),
        ("/// The scan took 12 ms on the 2-core machine.", true),
        ("// rendering costs 3.5ms per request", true),
        ("// saves 120 µs a grant", true),
        ("// it was 41 % of its samples", true),
        ("// 12% of the samples in perf", true),
        ("// the cache makes it 2.3x faster", true),
        ("// a timeout of 2000 ms (Entra's maximum)", false),
        ("/// `  +12 ms    step      signin`", false),
        ("/// One line per request (`GET /path 200 3ms`)", false),
        ("// a core at 100 % while accept retries", false),
        ("let url = \"https://example.com/took/12ms\"", false),
        ("// a per cent of a refresh grant: see bench/README.md", false),
    ])
    func theRuleTellsAMeasurementFromAFact(line: String, isMeasurement: Bool) {
        #expect(Self.measurements(line).isEmpty != isMeasurement, "\(line)")
    }

    @Test func noCommentUnderSourcesQuotesAMeasurement() throws {
        let root = packageRoot.appendingPathComponent("Sources")
        let walker = try #require(FileManager.default.enumerator(at: root, includingPropertiesForKeys: nil))
        var files = 0
        for case let url as URL in walker where ["swift", "c", "h"].contains(url.pathExtension) {
            files += 1
            let relative = String(url.path.dropFirst(packageRoot.path.count + 1))
            for (line, text) in Self.measurements(try String(contentsOf: url, encoding: .utf8)) {
                let quoted = text.trimmingCharacters(in: .whitespaces)
                let message = "\(relative):\(line): this comment quotes a measurement (\(quoted)); keep the figure in bench/README.md "
                Issue.record(Comment(rawValue: message + "and point there"))
            }
        }
        #expect(files > 100)
    }
}
