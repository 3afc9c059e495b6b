import ChildProcess
import Foundation
import Testing

/// The docs are tests: every fenced shell block (`sh`, `bash`, `shell`, `console`) of README.md and docs/*.md runs verbatim,
/// in order per file, in one clean shell per file — `env -i` with only HOME (fresh), PATH (the built programs, then
/// /usr/bin:/bin) and a fresh working directory; no B2C_* variable, no D-Bus, no BROWSER unless a block sets them —
/// against the local tenant the blocks start themselves. In a block of `$ ` lines (a session), those lines are the
/// commands and the rest is the output shown. A block preceded by `<!-- not run: REASON -->` is skipped (counted and
/// printed); `<!-- exit: N -->` says that the block ends with exit status N. Any other failure is a failing test.
/// GitHub Actions jobs (a `yaml` block with `jobs:`) run as the runner would: job `env:`, then each step's `run:`, in
/// bash -eo pipefail, with `$GITHUB_ENV` honoured; `${{ secrets.NAME }}` comes from the test.
@Suite(.serialized) struct DocsTests {
    struct Block {
        var file: String
        var line: Int
        var language: String
        var text: String
        var skipReason: String?
        var expectedExit: Int32
        var inSnippet: Bool

        /// The commands of the block: a session's `$ ` lines (with their `\` continuations), else every line.
        var script: String {
            let lines = text.components(separatedBy: "\n")
            guard lines.contains(where: { $0.hasPrefix("$ ") }) else { return text }
            var out: [String] = []
            var continuing = false
            for l in lines {
                if l.hasPrefix("$ ") {
                    out.append(String(l.dropFirst(2)))
                } else if continuing {
                    out.append(l)
                } else {
                    continue
                }
                continuing = l.hasSuffix("\\")
            }
            return out.joined(separator: "\n")
        }
    }

    static let shellLanguages: Set<String> = ["sh", "bash", "shell", "console"]

    static func documents() throws -> [String] {
        let docs = try FileManager.default.contentsOfDirectory(atPath: packageRoot.appendingPathComponent("docs").path)
            .filter { $0.hasSuffix(".md") }.sorted().map { "docs/\($0)" }
        return ["README.md"] + docs
    }

    /// The fenced blocks of a Markdown file, with the markers just above each.
    static func blocks(of file: String) throws -> [Block] {
        let text = try String(contentsOf: packageRoot.appendingPathComponent(file), encoding: .utf8)
        let lines = text.components(separatedBy: "\n")
        var blocks: [Block] = []
        var i = 0
        var inSnippet = false
        while i < lines.count {
            let line = lines[i]
            if line.contains("<!-- ci-snippet: start -->") { inSnippet = true }
            if line.contains("<!-- ci-snippet: end -->") { inSnippet = false }
            // A fence may be indented (a block inside a list item): its lines lose that indentation.
            let indent = line.prefix { $0 == " " }.count
            guard line.dropFirst(indent).hasPrefix("```") else { i += 1; continue }
            let language = String(line.dropFirst(indent + 3)).trimmingCharacters(in: .whitespaces)
            var body: [String] = []
            var j = i + 1
            while j < lines.count && !lines[j].drop(while: { $0 == " " }).hasPrefix("```") {
                let l = lines[j]
                body.append(l.prefix(indent).allSatisfy { $0 == " " } ? String(l.dropFirst(indent)) : l)
                j += 1
            }
            // Markers: the HTML comments on the lines just above the fence.
            var skip: String?
            var exit: Int32 = 0
            var k = i - 1
            while k >= 0, lines[k].drop(while: { $0 == " " }).hasPrefix("<!--") {
                let m = lines[k]
                if let r = m.range(of: "<!-- not run: ") {
                    skip = String(m[r.upperBound...].dropLast(4)).trimmingCharacters(in: .whitespaces)
                }
                if let r = m.range(of: "<!-- exit: "), let n = Int32(m[r.upperBound...].prefix { $0.isNumber }) { exit = n }
                k -= 1
            }
            blocks.append(
                Block(
                    file: file, line: i + 1, language: language, text: body.joined(separator: "\n"), skipReason: skip, expectedExit: exit,
                    inSnippet: inSnippet))
            i = j + 1
        }
        return blocks
    }

    struct Outcome {
        var ran = 0
        var skipped: [(Block, String)] = []
        var failures: [String] = []
    }

    /// A clean environment: HOME, PATH to the built programs, nothing else.
    static func cleanEnvironment(home: URL) -> [String: String] {
        ["HOME": home.path, "PATH": "\(buildDir.path):/usr/bin:/bin", "LANG": "C.UTF-8"]
    }

    /// Runs a script with bash (stdin empty, output to a file) and waits, at most `seconds`, for the line `exit N` that the
    /// script's EXIT trap writes to `status`: what it left running in the background may keep Foundation from seeing its
    /// end, so the script's own word is the signal. Returns N (-1 when the time ran out; the shell is killed) and the output.
    static func bash(
        _ script: URL, environment: [String: String], directory: URL, status: URL, seconds: Int
    ) async throws -> (
        status: Int32, output: String
    ) {
        let log = script.deletingPathExtension().appendingPathExtension("log")
        _ = FileManager.default.createFile(atPath: log.path, contents: nil)
        let out = open(log.path, O_WRONLY | O_CLOEXEC), null = open("/dev/null", O_RDONLY | O_CLOEXEC)
        defer {
            close(out)
            close(null)
        }
        // A terminal's signals (ChildProcess resets them): this test process ignores SIGTERM (its in-process tenants'
        // service lifecycle), and a child that inherited that would not stop on a block's `kill %1`.
        let p = try ChildProcess(
            URL(fileURLWithPath: "/bin/bash"), [script.path], environment: environment, directory: directory,
            stdin: null, stdout: out, stderr: out)
        let deadline = Date().addingTimeInterval(Double(seconds))
        var code: Int32 = -1
        while true {
            let said = ((try? String(contentsOf: status, encoding: .utf8)) ?? "").split(separator: "\n").last { $0.hasPrefix("exit ") }
            if let said, let c = Int32(said.dropFirst("exit ".count)) {
                code = c
                break
            }
            if Date() > deadline {
                p.killGroup()
                break
            }
            try await Task.sleep(nanoseconds: 50_000_000)
        }
        let output = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
        return (code, output + (code == -1 ? "\n(timed out after \(seconds) s)" : ""))
    }

    /// A /proc file (its size says 0: read until the end).
    static func readProcFile(_ path: String) -> Data? {
        let fd = open(path, O_RDONLY)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var data = Data()
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = read(fd, &buffer, buffer.count)
            if n <= 0 { break }
            data.append(contentsOf: buffer[0..<n])
        }
        return data
    }

    /// Kills every process whose environment carries the mark: what a block or a job's steps left running.
    static func endRun(mark: String) {
        guard let entries = try? FileManager.default.contentsOfDirectory(atPath: "/proc") else { return }
        let needle = Data("DOCS_TEST_RUN=\(mark)\0".utf8)
        for e in entries {
            guard let pid = Int32(e), pid != getpid(), let env = readProcFile("/proc/\(e)/environ") else { continue }
            if env.range(of: needle) != nil { kill(pid, SIGKILL) }
        }
    }

    /// One file's shell blocks in one shell, in order; a status file says how far it got.
    static func runShellBlocks(_ blocks: [Block], file: String, outcome: inout Outcome) async throws {
        let runnable = blocks.filter { Self.shellLanguages.contains($0.language) }
        for b in runnable { if let r = b.skipReason { outcome.skipped.append((b, r)) } }
        let toRun = runnable.filter { $0.skipReason == nil }
        guard !toRun.isEmpty else { return }
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("b2c-docs-\(UUID().uuidString)")
        let home = root.appendingPathComponent("home"), work = root.appendingPathComponent("work")
        try FileManager.default.createDirectory(at: home, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: root) }
        let status = root.appendingPathComponent("status")
        var driver = "exec 3>'\(status.path)'\ntrap 'echo \"exit $?\" >&3' EXIT\nset -o pipefail\n"
        for (n, b) in toRun.enumerated() {
            let blockFile = root.appendingPathComponent("block-\(n).sh")
            try Data((b.script + "\n").utf8).write(to: blockFile)
            driver += "echo 'start \(n)' >&3\n"
            if b.expectedExit == 0 {
                driver += "set -e\nsource '\(blockFile.path)'\nset +e\n"
            } else {
                driver += "( set -e; source '\(blockFile.path)' ); __rc=$?\n"
                driver += "[ \"$__rc\" -eq \(b.expectedExit) ] || { echo \"exit $__rc, expected \(b.expectedExit)\" >&3; exit 1; }\n"
            }
            driver += "echo 'ok \(n)' >&3\n"
        }
        let script = root.appendingPathComponent("driver.sh")
        try Data(driver.utf8).write(to: script)
        // What the blocks leave running (a tenant started with `&`) is found by a mark in its environment and stopped after.
        let mark = UUID().uuidString
        let environment = cleanEnvironment(home: home).merging(["DOCS_TEST_RUN": mark]) { $1 }
        let r = try await bash(script, environment: environment, directory: work, status: status, seconds: 240)
        endRun(mark: mark)
        let progress = ((try? String(contentsOf: status, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
        let finished = Set(progress.filter { $0.hasPrefix("ok ") }.compactMap { Int($0.dropFirst(3)) })
        outcome.ran += finished.count
        if let failed = toRun.indices.first(where: { !finished.contains($0) }) {
            let b = toRun[failed]
            outcome.failures.append(
                "\(file):\(b.line): the block failed (status \(r.status); \(progress.last ?? "")):\n\(b.script)\n"
                    + "--- output (last 40 lines):\n"
                    + r.output.split(separator: "\n", omittingEmptySubsequences: false).suffix(40).joined(separator: "\n"))
        }
    }

    /// A GitHub Actions job: the job's `env:`, then each step's `run:` (one line, or a `|` block) in bash -eo pipefail, as
    /// the runner runs them; `uses: actions/checkout` is the working directory itself; `$GITHUB_ENV` carries to later steps.
    static func runJob(
        _ block: Block, checkout: URL, home: URL, secrets: [String: String], extra: [String: String] = [:]
    ) async throws -> (ok: Bool, report: String) {
        var env: [String: String] = [:]
        var steps: [String] = []
        var section = ""
        let lines = block.text.components(separatedBy: "\n")
        var i = 0
        func uncommented(_ s: String) -> String {
            (s.range(of: " # ").map { String(s[..<$0.lowerBound]) } ?? s).trimmingCharacters(in: .whitespaces)
        }
        while i < lines.count {
            let raw = lines[i]
            let line = uncommented(raw)
            i += 1
            if line == "env:" { section = "env"; continue }
            if line == "steps:" { section = "steps"; continue }
            if line.hasSuffix(":") && !line.contains(" ") { section = ""; continue }
            if section == "env", let colon = line.firstIndex(of: ":") {
                var value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
                if let r = value.range(of: "${{ secrets."), let end = value.range(of: " }}") {
                    let name = String(value[r.upperBound..<end.lowerBound])
                    guard let secret = secrets[name] else {
                        return (false, "the job uses the secret \(name), which the test does not give")
                    }
                    value = secret
                }
                env[String(line[..<colon])] = value
            }
            if section == "steps" {
                if line.hasPrefix("- uses: ") {
                    guard line.hasPrefix("- uses: actions/checkout@") else {
                        return (false, "the job uses \(line), which the test cannot run")
                    }
                } else if line == "- run: |" {
                    let indent = (lines[i].prefix { $0 == " " }).count
                    var body: [String] = []
                    while i < lines.count, lines[i].prefix(indent).allSatisfy({ $0 == " " }),
                        !lines[i].trimmingCharacters(in: .whitespaces).isEmpty
                    {
                        body.append(String(lines[i].dropFirst(indent)))
                        i += 1
                    }
                    steps.append(body.joined(separator: "\n"))
                } else if line.hasPrefix("- run: ") {
                    // The command as YAML gives it: the whole line after `run: ` (a ` # ` inside it is the shell's comment).
                    steps.append(String(raw.trimmingCharacters(in: .whitespaces).dropFirst("- run: ".count)))
                } else if !line.isEmpty && !line.hasPrefix("- name:") && !line.hasPrefix("name:") {
                    return (false, "the job's step line '\(line)' is not one the test understands")
                }
            }
        }
        guard !steps.isEmpty else { return (false, "the job has no run: steps") }
        let githubEnv = checkout.deletingLastPathComponent().appendingPathComponent("github-env")
        _ = FileManager.default.createFile(atPath: githubEnv.path, contents: nil)
        var report = ""
        for (n, step) in steps.enumerated() {
            var environment = cleanEnvironment(home: home).merging(env) { $1 }.merging(extra) { $1 }
            environment["GITHUB_ENV"] = githubEnv.path
            environment["CI"] = "true"
            environment["GITHUB_ACTIONS"] = "true"
            for line in ((try? String(contentsOf: githubEnv, encoding: .utf8)) ?? "").split(separator: "\n") {
                if let eq = line.firstIndex(of: "=") { environment[String(line[..<eq])] = String(line[line.index(after: eq)...]) }
            }
            let script = checkout.deletingLastPathComponent().appendingPathComponent("step-\(n).sh")
            let done = checkout.deletingLastPathComponent().appendingPathComponent("step-\(n).status")
            try? FileManager.default.removeItem(at: done)  // a job run again in the same place starts afresh
            // The runner's `bash -e {0}` with pipefail; the trap only tells the test the step's status.
            // What a step leaves in the background keeps running, as on a runner, until the job ends.
            try Data("trap 'echo \"exit $?\" > \"\(done.path)\"' EXIT\nset -eo pipefail\n\(step)\n".utf8).write(to: script)
            let r = try await bash(script, environment: environment, directory: checkout, status: done, seconds: 120)
            report += "$ \(step)\n\(r.output)\n"
            if r.status != 0 { return (false, report + "(step \(n + 1) exited \(r.status))") }
        }
        return (true, report)
    }

    @Test func everyShellBlockOfTheDocsRuns() async throws {
        var outcome = Outcome()
        let only = ProcessInfo.processInfo.environment["B2C_DOCS_FILE"]
        var perFile: [String] = []
        for file in try Self.documents() where only == nil || file == only {
            let blocks = try Self.blocks(of: file)
            let before = (outcome.ran, outcome.skipped.count)
            try await Self.runShellBlocks(blocks, file: file, outcome: &outcome)
            // Self-contained jobs (not the snippet that needs a tenant of the test's: DocsCITests runs that one).
            for b in blocks where b.language == "yaml" && b.text.hasPrefix("jobs:") && !b.inSnippet {
                if let r = b.skipReason { outcome.skipped.append((b, r)); continue }
                let root = FileManager.default.temporaryDirectory.appendingPathComponent("b2c-docs-job-\(UUID().uuidString)")
                let checkout = root.appendingPathComponent("repo"), home = root.appendingPathComponent("home")
                try FileManager.default.createDirectory(at: checkout, withIntermediateDirectories: true)
                try FileManager.default.createDirectory(at: home, withIntermediateDirectories: true)
                let mark = UUID().uuidString
                let r = try await Self.runJob(b, checkout: checkout, home: home, secrets: [:], extra: ["DOCS_TEST_RUN": mark])
                Self.endRun(mark: mark)
                try? FileManager.default.removeItem(at: root)
                if r.ok {
                    outcome.ran += 1
                } else {
                    outcome.failures.append("\(file):\(b.line): the GitHub Actions job failed:\n\(r.report)")
                }
            }
            perFile.append("\(file) \(outcome.ran - before.0) ran, \(outcome.skipped.count - before.1) skipped")
        }
        print("docs: \(outcome.ran) blocks ran, \(outcome.skipped.count) skipped by marker (\(perFile.joined(separator: "; ")))")
        for (b, reason) in outcome.skipped { print("docs: skipped \(b.file):\(b.line): \(reason)") }
        for f in outcome.failures { Issue.record(Comment(rawValue: f)) }
        #expect(outcome.ran > 0)
    }

    /// A shell block whose language is not one the test runs is a mistake in the docs: a block meant as output is plain ```.
    @Test func shellLikeBlocksAreMarkedAsShell() throws {
        for file in try Self.documents() {
            for b in try Self.blocks(of: file) where ["", "text"].contains(b.language) {
                #expect(
                    !b.text.split(separator: "\n").contains { $0.hasPrefix("$ ") },
                    "\(file):\(b.line): a block of `$ ` commands must be ```sh (or ```console) so that the docs test runs it")
            }
        }
    }
}
