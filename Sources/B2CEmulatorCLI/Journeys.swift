import ArgumentParser
import B2CCLI
import B2CKit
import B2CProtocol
import Foundation

/// `b2c-emulator journeys`: the journey recorder of a running tenant on a terminal — the last journeys, one journey's
/// timeline (`--id`), or every event as it happens (`--follow`).
struct JourneysCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "journeys",
        abstract: "Show what the tenant's journeys did, step by step: why a sign-in went the way it did.",
        discussion: """
            Without --id: the last journeys, newest first (id, start, policy, user, steps, outcome). With --id: that journey's \
            timeline — each step, decision, callout, code sent and the claims it wrote, passwords and codes masked. With \
            --follow: every new event of every journey (or of --id's) as it happens, until interrupted.

            Asks http://127.0.0.1:$B2C_EMULATOR_PORT (8080 without the variable) unless --url names the tenant; a tenant \
            that wants its admin token gets it from --admin-token-file or B2C_EMULATOR_ADMIN_TOKEN_FILE.
            Exit codes: 0 shown, 1 no such journey, 3 a CA or token file that cannot be read, 5 no tenant answers, 64 usage.
            """)

    @Option(help: ArgumentHelp("The tenant's base URL (default: http://127.0.0.1:$B2C_EMULATOR_PORT, else :8080).", valueName: "url"))
    var url: String?
    @Option(help: ArgumentHelp("The CA of a tenant served with --tls (its state directory's CA file).", valueName: "file")) var ca: String?
    @Option(help: ArgumentHelp("The tenant's admin token file, when it requires one.", valueName: "file")) var adminTokenFile: String?
    /// Taken whatever it begins with: a browser journey's id is base64url, and one in 64 begins with '-', which would
    /// otherwise read as an option ("Missing value for '--id <id>'").
    @Option(parsing: .unconditional, help: ArgumentHelp("One journey's timeline (an id from the list).", valueName: "id"))
    var id: String?
    @Option(help: ArgumentHelp("Only this person's journeys (their email).", valueName: "email")) var user: String?
    @Option(help: ArgumentHelp("Only this user flow's journeys.", valueName: "id")) var policy: String?
    @Option(help: ArgumentHelp("Only this app's journeys (its client id).", valueName: "id")) var client: String?
    @Flag(help: "Print each new event as it happens, until interrupted.") var follow = false
    @Flag(help: "Print the recorder's JSON as it is.") var json = false

    func validate() throws {
        if follow && json { throw ValidationError("--follow prints a timeline; --json prints once: give one of them.") }
    }

    func run() async throws {
        let tenant = try Tenant(url: url, ca: ca, adminTokenFile: adminTokenFile)
        do { try await show(tenant) } catch {
            await tenant.transport.shutdown()
            throw error
        }
        await tenant.transport.shutdown()
    }

    private func show(_ tenant: Tenant) async throws {
        if follow {
            try await tenant.follow(only: id, filter: filterQuery)
        } else if let id {
            let journey = try await tenant.get("journeys/\(FormEncoding.escape(id))")
            if json { Terminal.out(journey.serialized() + "\n") } else { Terminal.out(Timeline.journey(journey)) }
        } else {
            let list = try await tenant.get("journeys" + filterQuery)
            if json {
                Terminal.out(list.serialized() + "\n")
            } else {
                Terminal.out(Timeline.list(list["journeys"]?.arrayValue ?? []))
            }
        }
    }

    var filterQuery: String {
        let pairs = [("user", user), ("policy", policy), ("client", client)].compactMap { k, v in v.map { (k, $0) } }
        return pairs.isEmpty ? "" : "?" + FormEncoding.encode(pairs)
    }

    /// A running tenant's admin surface.
    struct Tenant {
        let base: URL
        let transport: HTTPTransport
        let headers: [(String, String)]

        init(url: String?, ca: String?, adminTokenFile: String?) throws {
            let environment = ProcessInfo.processInfo.environment
            let port = environment["B2C_EMULATOR_PORT"].flatMap { Int($0) } ?? 8080
            let text = url ?? "http://127.0.0.1:\(port)"
            guard let root = URL(string: text), let scheme = root.scheme?.lowercased(), ["http", "https"].contains(scheme),
                root.host != nil
            else {
                throw CLIError("--url takes the tenant's base URL such as http://127.0.0.1:8080, not '\(text)'", exitCode: ExitStatus.usage)
            }
            base = root
            do { transport = try HTTPTransport(caFile: ca, timeoutSeconds: 10) } catch {
                throw CLIError("\(error)", exitCode: ExitStatus.configuration)
            }
            let tokenFile = adminTokenFile ?? environment["B2C_EMULATOR_ADMIN_TOKEN_FILE"].flatMap { $0.isEmpty ? nil : $0 }
            let option = adminTokenFile != nil ? "--admin-token-file" : "B2C_EMULATOR_ADMIN_TOKEN_FILE"
            headers = try tokenFile.map { [("Authorization", "Bearer " + (try BrowserCommand.adminToken($0, option: option)))] } ?? []
        }

        func get(_ path: String) async throws -> JSONValue {
            let answer: HTTPResult
            let target = URL(string: base.absoluteString.trimmingCharacters(in: CharacterSet(charactersIn: "/")) + "/_admin/" + path)!
            do { answer = try await transport.send(.GET, target, headers: headers + [("Accept", "application/json")]) } catch {
                throw CLIError("no tenant answers at \(base.absoluteString): \(error)", exitCode: ExitStatus.network)
            }
            let body = try? JSONValue.parse(answer.body)
            switch answer.status {
            case 200: return body ?? .null
            case 404 where path.hasPrefix("journeys/"):
                throw CLIError(
                    "the tenant has no journey '\(path.dropFirst("journeys/".count).removingPercentEncoding ?? "")' (it keeps the last "
                        + "200; `b2c-emulator journeys` lists them)", exitCode: ExitStatus.error)
            case 401, 403:
                throw CLIError(
                    "the tenant refused its admin surface (HTTP \(answer.status)): give --admin-token-file FILE, the file serve "
                        + "--admin-token-file wrote", exitCode: ExitStatus.configuration)
            default:
                throw CLIError(
                    "the tenant at \(base.absoluteString) answered HTTP \(answer.status) to /_admin/\(path)", exitCode: ExitStatus.network)
            }
        }

        /// Polls the recorder twice a second and prints the events it has not printed yet.
        func follow(only id: String?, filter: String) async throws {
            var printed: [String: Int] = [:]
            var first = true
            while true {
                let ids: [String]
                if let id {
                    ids = [id]
                } else {
                    // Newest first from the tenant: printed oldest first.
                    ids = (try await get("journeys" + filter)["journeys"]?.arrayValue ?? []).compactMap { $0["id"]?.stringValue }.reversed()
                }
                for journeyID in ids {
                    let journey = try await get("journeys/\(FormEncoding.escape(journeyID))")
                    let events = journey["events"]?.arrayValue ?? []
                    let seen = printed[journeyID] ?? (first && id == nil ? events.count : 0)
                    for event in events.dropFirst(seen) { Terminal.out(Timeline.followed(journey, event)) }
                    printed[journeyID] = events.count
                }
                first = false
                try await Task.sleep(nanoseconds: 500_000_000)
            }
        }
    }
}

/// The recorder's JSON as lines a person reads.
enum Timeline {
    static func list(_ journeys: [JSONValue]) -> String {
        guard !journeys.isEmpty else { return "No journeys yet: sign in through the tenant, then ask again.\n" }
        let rows = journeys.map { j in
            [
                j["id"]?.stringValue ?? "", j["startedAt"]?.lenientInt.map { Self.time($0) } ?? "", j["channel"]?.stringValue ?? "",
                j["policy"]?.stringValue ?? "", j["user"]?.stringValue ?? "-", j["steps"].map(text) ?? "",
                j["outcome"]?.stringValue ?? "running",
            ]
        }
        let header = ["ID", "STARTED", "CHANNEL", "POLICY", "USER", "STEPS", "OUTCOME"]
        let widths = header.indices.map { i in ([header] + rows).map { $0[i].count }.max() ?? 0 }
        return ([header] + rows).map { row in
            row.indices.map { i in i == row.count - 1 ? row[i] : pad(row[i], widths[i]) }.joined(separator: "  ")
        }.joined(separator: "\n") + "\n"
    }

    static func journey(_ j: JSONValue) -> String {
        var lines = [
            "journey \(j["id"]?.stringValue ?? "") · \(j["channel"]?.stringValue ?? "") · \(j["policy"]?.stringValue ?? "") · "
                + "client \(j["clientId"]?.stringValue ?? "") · \(j["user"]?.stringValue ?? "no user yet") · "
                + (j["outcome"]?.stringValue ?? "running")
        ]
        for e in j["events"]?.arrayValue ?? [] { lines.append(event(e)) }
        return lines.joined(separator: "\n") + "\n"
    }

    static func followed(_ journey: JSONValue, _ e: JSONValue) -> String {
        "\(String((journey["id"]?.stringValue ?? "").prefix(8))) \(event(e))\n"
    }

    /// `  +12 ms    step      signin  method=POST form={logonIdentifier=…, password=••••}`
    static func event(_ e: JSONValue) -> String {
        let ms = e["elapsedMs"]?.lenientInt ?? 0
        let details = (e["detail"]?.objectValue ?? [:]).sorted { $0.key < $1.key }.map { "\($0.key)=\(short($0.value))" }
        return "  " + pad("+\(ms) ms", 10) + pad(e["kind"]?.stringValue ?? "", 9) + " " + (e["name"]?.stringValue ?? "")
            + (details.isEmpty ? "" : "  " + details.joined(separator: " "))
    }

    /// A value on one line: an object whole (a claims bag is what the timeline is read for), each of its values and any
    /// other value cut at 160 characters.
    static func short(_ v: JSONValue) -> String {
        let s: String
        switch v {
        case .string(let text): s = text
        case .object(let o): return "{" + o.sorted { $0.key < $1.key }.map { "\($0.key)=\(short($0.value))" }.joined(separator: ", ") + "}"
        default: s = v.serialized()
        }
        return s.count > 160 ? String(s.prefix(157)) + "…" : s
    }

    static func text(_ v: JSONValue) -> String { v.stringValue ?? v.serialized() }

    static func pad(_ s: String, _ width: Int) -> String { s.count >= width ? s : s + String(repeating: " ", count: width - s.count) }

    static func time(_ epoch: Int) -> String {
        let f = DateFormatter()
        f.dateFormat = "HH:mm:ss"
        f.timeZone = TimeZone(identifier: "UTC")
        return f.string(from: Date(timeIntervalSince1970: Double(epoch)))
    }
}
