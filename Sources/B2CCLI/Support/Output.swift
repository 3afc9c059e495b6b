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
    Terminal.err("\(ProgramName.current): using ./policies.json (found in the current directory)\n")
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

/// A file written aside, created with its mode (O_EXCL, so never readable by others even for a moment), then renamed into
/// place.
package func writeFile(_ data: Data, to path: String, mode: Int) throws {
    // Past `ulimit -f` the kernel would kill us with SIGXFSZ; ignored, the write fails with EFBIG and is reported.
    signal(SIGXFSZ, SIG_IGN)
    let aside = path + ".tmp-\(getpid())"
    let fd = open(aside, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode_t(mode))
    guard fd >= 0 else { throw FileWriteError(path: path, code: errno) }
    var failure: Int32 = 0
    data.withUnsafeBytes { raw in
        var offset = 0
        while offset < raw.count {
            let n = write(fd, raw.baseAddress! + offset, raw.count - offset)
            if n < 0 {
                if errno == EINTR { continue }
                failure = errno
                return
            }
            if n == 0 { failure = EIO; return }
            offset += n
        }
    }
    if failure == 0 && fchmod(fd, mode_t(mode)) != 0 { failure = errno }  // the umask may have narrowed a 0644
    if failure == 0 && fsync(fd) != 0 { failure = errno }
    if close(fd) != 0 && failure == 0 { failure = errno }
    if failure == 0 && rename(aside, path) != 0 { failure = errno }
    guard failure == 0 else {
        unlink(aside)
        throw FileWriteError(path: path, code: failure)
    }
    // The rename is durable once the directory is synced.
    let directory = open(
        (path as NSString).deletingLastPathComponent.isEmpty ? "." : (path as NSString).deletingLastPathComponent, O_RDONLY)
    if directory >= 0 {
        fsync(directory)
        close(directory)
    }
}

/// Creates the missing directories above `path`, each 0700 (only the owner may list what b2c writes there); existing
/// ones are left as they are.
package func makeParentDirectories(of path: String) throws {
    var missing: [String] = []
    var dir = (path as NSString).deletingLastPathComponent
    var isDirectory: ObjCBool = false
    while !dir.isEmpty && dir != "/" && !FileManager.default.fileExists(atPath: dir, isDirectory: &isDirectory) {
        missing.append(dir)
        dir = (dir as NSString).deletingLastPathComponent
    }
    for d in missing.reversed() where mkdir(d, 0o700) != 0 && errno != EEXIST {
        throw FileWriteError(path: path, code: errno, directory: d)
    }
}

/// A file that could not be written whole; nothing was left in its place.
package struct FileWriteError: Error, CustomStringConvertible {
    package var path: String
    package var code: Int32
    /// The directory that could not be made for it, if that was the failure.
    package var directory: String?

    package init(path: String, code: Int32, directory: String? = nil) { self.path = path; self.code = code; self.directory = directory }

    package var description: String {
        let why: String
        switch code {
        case ENOSPC, EDQUOT: why = "the disk (or your quota) is full"
        case EFBIG: why = "the file is larger than this shell allows (ulimit -f)"
        case EACCES, EPERM: why = "permission denied"
        case ENOENT: why = "its directory does not exist"
        case EROFS: why = "the file system is read-only"
        case EEXIST: why = "a temporary file of the same name is in the way"
        default: why = String(cString: strerror(code))
        }
        if let directory { return "cannot create the directory '\(directory)' for '\(path)': \(why); nothing was written" }
        return "cannot write '\(path)': \(why); nothing was written there"
    }
}

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
    // MARK: people and accounts

    /// `accounts` with a configuration: `{"people": [...], "applications": [...]}`, or a table (apps below the people).
    static func writePeople(_ people: [ListedPerson], applications: [AppToken], format: OutputFormat, now: Int, policy: String?) {
        switch format {
        case .json: writePeopleJSON(people, applications: applications, now: now)
        case .table:
            var text =
                people.isEmpty
                ? "No accounts\(policy.map { " under \($0)" } ?? ""). Sign in with: b2c signin"
                : peopleTable(people, now: now) + "\n(* = current account of the policy)"
            if !applications.isEmpty { text += "\n\n" + applicationsTable(applications, now: now) }
            writeOut(text)
        }
    }

    /// The app's own tokens: an application, not a person.
    static func applicationsTable(_ apps: [AppToken], now: Int) -> String {
        var rows: [[String]] = [["APPLICATION", "RESOURCE", "POLICY", "ACCESS TOKEN"]]
        for a in apps {
            rows.append([
                shortID(a.clientID), a.resource, a.policy, a.expiresOn > now ? relative(a.expiresOn - now) : "expired",
            ])
        }
        return table(rows)
    }

    static func applicationJSON(_ a: AppToken, now: Int) -> JSONValue {
        [
            "clientId": .string(a.clientID), "resource": .string(a.resource), "policy": .string(a.policy),
            "tenantId": .string(a.tenantID), "expiresOn": JSONValue(a.expiresOn), "expiresIn": JSONValue(max(0, a.expiresOn - now)),
        ]
    }

    /// `accounts` without a configuration: every scope of the store, `{"scopes": [{environment, clientId, people}]}`.
    static func writeStore(
        _ groups: [(scope: AccountScope, people: [ListedPerson])], applications: [AppToken], format: OutputFormat, now: Int
    ) {
        // Scopes with people, then scopes with only app tokens, each with its app tokens.
        var scopes = groups.map(\.scope)
        for a in applications {
            let s = AccountScope(environment: a.environment, clientID: a.clientID)
            if !scopes.contains(s) { scopes.append(s) }
        }
        func people(_ s: AccountScope) -> [ListedPerson] { groups.first { $0.scope == s }?.people ?? [] }
        func apps(_ s: AccountScope) -> [AppToken] { applications.filter { $0.environment == s.environment && $0.clientID == s.clientID } }
        switch format {
        case .json:
            let items = scopes.map { s -> JSONValue in
                [
                    "environment": .string(s.environment), "clientId": .string(s.clientID),
                    "people": .array(people(s).map { personJSON($0, now: now) }),
                    "applications": .array(apps(s).map { applicationJSON($0, now: now) }),
                ]
            }
            writeOut(JSONValue.object(["scopes": .array(items)]).serialized(pretty: true))
        case .table:
            if scopes.isEmpty { return writeOut("No accounts in the store.") }
            writeOut(
                scopes.map { s in
                    var parts: [String] = []
                    if !people(s).isEmpty { parts.append(indent(peopleTable(people(s), now: now))) }
                    if !apps(s).isEmpty { parts.append(indent(applicationsTable(apps(s), now: now))) }
                    return "\(s.environment) · client \(s.clientID)\n" + parts.joined(separator: "\n\n")
                }
                .joined(separator: "\n\n") + (groups.isEmpty ? "" : "\n(* = current account of the policy)"))
        }
    }

    /// The people JSON streamed person by person (same bytes as one pretty document): a large store's whole tree and its
    /// text would otherwise be held at once (bench/README.md, "listing").
    private static func writePeopleJSON(_ people: [ListedPerson], applications: [AppToken], now: Int) {
        var out = "{\n  \"people\": ["
        for (n, person) in people.enumerated() {
            out += n == 0 ? "\n    " : ",\n    "
            personJSON(person, now: now).serialize(into: &out, pretty: true, indent: 2)
            if out.utf8.count >= 1 << 20 {
                Terminal.out(out)
                out = ""
            }
        }
        out += people.isEmpty ? "]" : "\n  ]"
        out += ",\n  \"applications\": "
        JSONValue.array(applications.map { applicationJSON($0, now: now) }).serialize(into: &out, pretty: true, indent: 1)
        out += "\n}\n"
        Terminal.out(out)
    }

    static func personJSON(_ person: ListedPerson, now: Int) -> JSONValue {
        let p = person.identity
        let items: [JSONValue] = person.accounts.map { a in
            [
                "accountId": .string(a.accountID), "policy": .string(a.policy), "current": .bool(a.current),
                "refreshToken": .bool(a.hasRefreshToken), "refreshRefused": a.refreshRefused.map { .string($0) } ?? .null,
                "identityProvider": a.identityProvider.map { .string($0) } ?? .null,
                "accessTokens": .array(
                    a.accessTokens.map {
                        [
                            "scopes": .string($0.target), "expiresOn": JSONValue($0.expiresOn),
                            "expiresIn": JSONValue(max(0, $0.expiresOn - now)),
                        ]
                    }),
            ]
        }
        return [
            "tenantId": .string(p.tenantID), "oid": .string(p.oid), "name": p.name.map { .string($0) } ?? .null,
            "givenName": p.givenName.map { .string($0) } ?? .null, "familyName": p.familyName.map { .string($0) } ?? .null,
            "email": p.email.map { .string($0) } ?? .null, "accounts": .array(items),
        ]
    }

    /// People over two lines (name, then email) so that the table fits 80 columns; account ids shortened to a prefix
    /// that selects them (full ids in JSON and `whoami`).
    package static func peopleTable(_ people: [ListedPerson], now: Int) -> String {
        var rows: [[String]] = [["PERSON", "POLICY", "ACCOUNT", "ACCESS TOKEN", "REFRESH"]]
        for person in people {
            let id = person.identity
            var labels = [id.name ?? id.email ?? id.oid]
            if id.name != nil, let email = id.email { labels.append("<\(email)>") }
            for (i, a) in person.accounts.enumerated() {
                rows.append([
                    i < labels.count ? labels[i] : "", a.policy + (a.identityProvider.map { " (\($0))" } ?? "") + (a.current ? " *" : ""),
                    shortID(a.accountID),
                    tokenState(a, now: now), a.hasRefreshToken ? a.refreshRefused ?? "yes" : "no",
                ])
            }
            for label in labels.dropFirst(person.accounts.count) { rows.append([label, "", "", "", ""]) }
        }
        return table(rows)
    }

    /// The first 8 characters of the oid: a unique prefix in practice, and what `--account` accepts.
    static func shortID(_ accountID: String) -> String {
        accountID.count > 9 ? String(accountID.prefix(8)) + "…" : accountID
    }

    /// "in 59 min", "expired", or "none": the longest-lived access token of an account.
    static func tokenState(_ a: ListedAccount, now: Int) -> String {
        guard let longest = a.accessTokens.max(by: { $0.expiresOn < $1.expiresOn }) else { return "none" }
        return longest.expiresOn > now ? relative(longest.expiresOn - now) : "expired"
    }

    // MARK: whoami

    static let timeClaims: Set<String> = ["exp", "nbf", "iat", "auth_time"]

    static func writeWhoAmI(_ a: Account, person: Identity?, format: OutputFormat, now: Int) {
        switch format {
        case .json:
            writeOut(
                JSONValue.object([
                    "accountId": .string(a.id), "policy": .string(a.policy), "authority": .string(a.authority),
                    "identityProvider": a.claims["idp"]?.stringValue.map { .string($0) } ?? .null,
                    "person": [
                        "tenantId": .string(a.tenantID), "oid": .string(a.oid), "name": person?.name.map { .string($0) } ?? .null,
                        "givenName": person?.givenName.map { .string($0) } ?? .null,
                        "familyName": person?.familyName.map { .string($0) } ?? .null,
                        "email": person?.email.map { .string($0) } ?? .null,
                    ],
                    "claims": a.claims,
                ]).serialized(pretty: true))
        case .table:
            var rows = [
                ["account", a.id], ["policy", a.policy], ["person", "\(person?.name ?? "-") <\(person?.email ?? a.oid)>"],
                ["given / family name", "\(person?.givenName ?? "-") / \(person?.familyName ?? "-")"],
                ["identity provider", a.claims["idp"]?.stringValue ?? "local account"],
            ]
            // The claims are those of this policy's id token as issued; the person's profile above is the latest seen under any policy.
            for (k, v) in (a.claims.objectValue ?? [:]).sorted(by: { $0.key < $1.key }) {
                let text = timeClaims.contains(k) ? v.lenientInt.map { dateAndRelative($0, now: now) } : nil
                rows.append(["id-token claim \(k)", text ?? v.stringValue ?? v.serialized()])
            }
            writeOut(table(rows))
        }
    }

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
    /// `device`: the mode, the store, and who is signed in (by scope when there is no configuration).
    static func writeDevice(
        config: ClientConfiguration?, storePath: String, storage: StorageStatus, accounts: [Account], format: OutputFormat
    ) {
        let protection: String
        switch storage.mode {
        case .encrypted?: protection = "encrypted (key: \(storage.source?.place ?? "?"))"
        case .plaintext?: protection = "PLAINTEXT (chosen with `b2c config set storage plaintext`)"
        case nil: protection = "not decided yet (encrypted when the first token is stored)"
        }
        let people = Set(accounts.map { "\($0.tenantID)/\($0.oid)" }).count
        let meaning =
            config == nil
            ? "without a configuration, `b2c signout --all` forgets every account in the store"
            : config!.sharedDevice
                ? "signing out any account signs out every account on this device and ends the browser session"
                : "signing out forgets only the accounts named; --browser also ends the browser session"
        let scopes = Dictionary(grouping: accounts) { "\($0.environment) · client \($0.clientID)" }.mapValues(\.count)
        switch format {
        case .json:
            var o: [String: JSONValue] = [
                "mode": config.map { .string($0.sharedDevice ? "shared" : "personal") } ?? .null,
                "config": config.map { .string($0.source) } ?? .null, "store": .string(storePath),
                "accounts": JSONValue(accounts.count), "people": JSONValue(people), "signOut": .string(meaning),
                "storage": storage.mode.map { .string($0.rawValue) } ?? .null,
                "keySource": storage.source.map { .string($0.rawValue) } ?? .null,
            ]
            if config == nil {
                o["scopes"] = .array(scopes.keys.sorted().map { ["scope": .string($0), "accounts": JSONValue(scopes[$0]!)] })
            }
            writeOut(JSONValue.object(o).serialized(pretty: true))
        case .table:
            var rows = [
                ["mode", config.map { $0.sharedDevice ? "shared" : "personal" } ?? "- (no configuration)"],
                ["config", config?.source ?? "none found"], ["store", storePath], ["storage", protection],
                [
                    "signed in",
                    "\(people) \(people == 1 ? "person" : "people"), \(accounts.count) account\(accounts.count == 1 ? "" : "s")",
                ],
                ["sign-out", meaning],
            ]
            if config == nil {
                for key in scopes.keys.sorted() { rows.append(["scope", "\(key): \(scopes[key]!) account\(scopes[key] == 1 ? "" : "s")"]) }
            }
            writeOut(table(rows))
        }
    }
}

extension Output {
    /// `policies`: each policy with its role and authority.
    static func writePolicies(_ config: ClientConfiguration, format: OutputFormat, caProblem: String?) {
        let rows = config.policies.map { p -> (ClientConfiguration.Policy, Authority, Bool) in
            let a = config.authority(for: p)
            return (p, a, config.isKnown(a.hostAndPort))
        }
        switch format {
        case .json:
            var o: [String: JSONValue] = [
                "config": .string(config.source), "clientId": .string(config.clientID),
                "policies": .array(
                    rows.map { p, a, known in
                        [
                            "name": .string(p.name), "role": .string(p.role.rawValue), "authority": .string(a.url.absoluteString),
                            "discovery": .string(a.discoveryURL.absoluteString), "knownAuthority": .bool(known),
                        ]
                    }),
            ]
            if let ca = config.caFile { o["caFile"] = ["path": .string(ca), "readable": .bool(caProblem == nil)] }
            writeOut(JSONValue.object(o).serialized(pretty: true))
        case .table:
            var text = table(
                [["POLICY", "ROLE", "AUTHORITY", "KNOWN"]]
                    + rows.map { [$0.0.name, $0.0.role.rawValue, $0.1.url.absoluteString, $0.2 ? "yes" : "NO"] })
            if let ca = config.caFile { text += "\nCA file: \(ca)" + (caProblem == nil ? "" : " (MISSING)") }
            writeOut(text)
        }
    }

    /// `policies --check`: each policy's verdict.
    static func writeChecks(_ checks: [PolicyCheck], config: ClientConfiguration, format: OutputFormat) {
        func verdict(_ c: PolicyCheck) -> (status: String, detail: String) {
            switch c.outcome {
            case .ok(let keys): ("ok", "\(keys) signing key\(keys == 1 ? "" : "s")" + c.notes.map { "; \($0)" }.joined())
            case .configuration(let why): ("misconfigured", why)
            case .network(let why): ("unreachable", why)
            }
        }
        switch format {
        case .json:
            writeOut(
                JSONValue.object([
                    "config": .string(config.source),
                    "policies": .array(
                        checks.map { c in
                            let v = verdict(c)
                            return [
                                "name": .string(c.name), "role": .string(c.role), "discovery": .string(c.discovery.absoluteString),
                                "status": .string(v.status), "detail": .string(v.detail),
                            ]
                        }),
                ]).serialized(pretty: true))
        case .table:
            writeOut(
                table(
                    [["POLICY", "ROLE", "STATUS", "DETAIL"]]
                        + checks.map { c in
                            let v = verdict(c)
                            return [c.name, c.role, v.status.uppercased() == "OK" ? "OK" : v.status.uppercased(), v.detail]
                        }))
        }
    }
}

extension Output {
    // MARK: tokens and the store's settings

    /// A token in the asked format; `json` adds what identifies it (`json`'s other keys).
    static func writeToken(_ secret: String, expiresOn: Int, format: TokenFormat, json extra: [String: TokenText.Field]) throws {
        FileHandle.standardOutput.write(Data(try tokenText(secret, expiresOn: expiresOn, format: format, json: extra).utf8))
    }

    /// A token's printed form, byte for byte as the tenant issued it (scripts and the fast path depend on that), or a
    /// refusal: a token is printable ASCII (RFC 6749, appendix A), and one with anything else was made to reach a terminal.
    static func tokenText(_ secret: String, expiresOn: Int, format: TokenFormat, json extra: [String: TokenText.Field]) throws -> String {
        guard secret.utf8.allSatisfy({ (0x20...0x7E).contains($0) }) else {
            throw CLIError(
                "the token the tenant issued holds characters no OAuth token has (RFC 6749 allows printable ASCII only); it was "
                    + "not printed. Sign in again (b2c signin); if the tenant issues such a token again, tell its administrator",
                exitCode: ExitStatus.network)
        }
        return TokenText.render(secret, expiresOn: expiresOn, format: format, extra: extra)
    }

    /// An API's answer that is not JSON: its bytes as they came into a file or a pipe (they are the data); on a terminal,
    /// text shown as `Terminal` shows it, ending with a line feed.
    static func writeBody(_ body: Data) {
        guard !body.isEmpty else { return }
        guard isatty(STDOUT_FILENO) == 1 else { return FileHandle.standardOutput.write(body) }
        let text = String(decoding: body, as: UTF8.self)
        Terminal.out(text.hasSuffix("\n") ? text : text + "\n")
    }

    /// A token decoded (not verified): its header and claims, times as dates, with a note that it was not checked.
    static func writeDecodedJWT(_ token: String, format: OutputFormat, now: Int) throws {
        let jwt: JWT
        do { jwt = try JWT.decode(token) } catch { throw CLIError("\(error)", exitCode: ExitStatus.error) }
        switch format {
        case .json:
            writeOut(
                JSONValue.object(["verified": false, "header": .object(jwt.header), "claims": .object(jwt.claims)]).serialized(pretty: true)
            )
        case .table:
            // The note is a line of its own above the table: as a row it would set the width of the key column.
            var rows: [[String]] = []
            for (k, v) in jwt.header.sorted(by: { $0.key < $1.key }) { rows.append(["header \(k)", v.stringValue ?? v.serialized()]) }
            for (k, v) in jwt.claims.sorted(by: { $0.key < $1.key }) {
                let time = Output.timeClaims.contains(k) ? v.lenientInt.map { Output.dateAndRelative($0, now: now) } : nil
                rows.append([k, time ?? v.stringValue ?? v.serialized()])
            }
            if let exp = jwt.int("exp") {
                rows.append(["", exp > now ? "expires \(Output.relative(exp - now))" : "expired \(Output.relative(now - exp, past: true))"])
            }
            writeOut("(unverified: decoded only; `b2c jwt verify` checks it)\n" + table(rows))
        }
    }

    /// `b2c config get`: the storage mode, where the key is kept (never the key) and the store's path.
    static func writeStorage(_ s: StorageStatus, path: String, format: OutputFormat) {
        switch format {
        case .json:
            let json: JSONValue = [
                "storage": s.mode.map { .string($0.rawValue) } ?? .null, "keySource": s.source.map { .string($0.rawValue) } ?? .null,
                "keyId": s.keyID.map { .string($0) } ?? .null, "store": .string(path),
            ]
            writeOut(json.serialized(pretty: true))
        case .table:
            var rows = [["storage", s.mode?.rawValue ?? "not decided yet (decided when the first token is stored)"]]
            if let source = s.source { rows.append(["key", "\(source.place) (key id \(s.keyID ?? "?"))"]) }
            rows.append(["store", path])
            writeOut(table(rows))
        }
    }
}
