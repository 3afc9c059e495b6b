import ArgumentParser
import B2CKit
import Foundation

/// `b2c users import FILE`: many local accounts from CSV or JSON, one report line per row. A row whose sign-in name exists
/// already is skipped (so an interrupted import runs again from the start), and each user is one Graph call: never half
/// made.
struct UsersImport: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import", abstract: "Create many users from a CSV or JSON file; reports each row; safe to run again.",
        discussion: """
            Columns (CSV header, or JSON objects' keys): email or username, displayName, givenName, surname, password, \
            forceChangePassword (true/false); any other column is an attribute (city, extension_LoyaltyId, …). A row without \
            a password fails unless --generate-passwords, which makes one and shows it in the report.
            Exit codes: 0 every row created or already there, 1 a row failed (the others are done), 3, 5, 64 as for users.
            Example:
              b2c users import testers.csv --config admin.json -o json
            """)
    @OptionGroup var options: UsersOptions
    @Argument(help: "A .csv or .json file, or - for stdin (JSON or CSV, as it starts).") var file: String
    @Flag(help: "Make a password for rows without one, and show it in the report.") var generatePasswords = false

    struct Row {
        var number: Int
        var values: [String: String]
    }

    /// The rows of the file: a JSON array of objects, or CSV with a header line.
    static func rows(_ data: Data, path: String) throws -> [Row] {
        let text = String(decoding: data, as: UTF8.self)
        if text.trimmingCharacters(in: .whitespacesAndNewlines).hasPrefix("[") {
            guard let items = (try? JSONValue.parse(data))?.arrayValue else {
                throw CLIError("\(path) is not a JSON array of objects", exitCode: ExitStatus.usage)
            }
            return try items.enumerated().map { i, item in
                guard let o = item.objectValue else {
                    throw CLIError("\(path): item \(i + 1) is not an object", exitCode: ExitStatus.usage)
                }
                return Row(number: i + 1, values: o.mapValues { $0.stringValue ?? $0.serialized() })
            }
        }
        let records = try csv(text, path: path)
        guard let header = records.first else { throw CLIError("\(path) is empty", exitCode: ExitStatus.usage) }
        return records.dropFirst().enumerated().compactMap { i, fields in
            fields.allSatisfy(\.isEmpty)
                ? nil : Row(number: i + 1, values: Dictionary(zip(header, fields), uniquingKeysWith: { a, _ in a }))
        }
    }

    /// RFC 4180's CSV: fields in double quotes may hold commas, quotes (doubled) and line breaks.
    static func csv(_ text: String, path: String) throws -> [[String]] {
        var records: [[String]] = [], fields: [String] = [], field = "", quoted = false, afterQuote = false
        var it = Array(text.replacingOccurrences(of: "\r\n", with: "\n")).makeIterator()
        while let c = it.next() {
            if quoted {
                if c == "\"" { quoted = false; afterQuote = true } else { field.append(c) }
                continue
            }
            switch c {
            case "\"" where afterQuote: field.append("\""); quoted = true; afterQuote = false
            case "\"" where field.isEmpty: quoted = true
            case ",": fields.append(field); field = ""; afterQuote = false
            case "\n": fields.append(field); records.append(fields); fields = []; field = ""; afterQuote = false
            default: field.append(c); afterQuote = false
            }
        }
        if quoted { throw CLIError("\(path): a quoted field is not closed", exitCode: ExitStatus.usage) }
        if !field.isEmpty || !fields.isEmpty { fields.append(field); records.append(fields) }
        return records.map { $0.map { $0.trimmingCharacters(in: .whitespaces) } }
    }

    func run() async throws {
        let data = try Prompt.file(file, what: "the users file")
        let rows = try Self.rows(data, path: file)
        let known: Set = ["email", "username", "displayName", "givenName", "surname", "password", "forceChangePassword"]
        var report: [JSONValue] = []
        try await options.run { c in
            for row in rows {
                let v = row.values.filter { !$0.value.isEmpty }
                let name = v["email"] ?? v["username"] ?? ""
                func line(_ outcome: String, _ extra: [String: JSONValue] = [:]) {
                    report.append(
                        .object(
                            ["row": JSONValue(row.number), "signInName": .string(name), "outcome": .string(outcome)].merging(extra) { $1 }))
                }
                guard !name.isEmpty, (v["email"] == nil) != (v["username"] == nil) else {
                    line("failed", ["message": "the row needs an email or a username (one)"])
                    continue
                }
                if let existing = try await c.user(name) {
                    line("exists", ["id": .string(existing.id)])
                    continue
                }
                var password = v["password"]
                var generated = false
                if password == nil && generatePasswords {
                    password = PasswordChoice.generated()
                    generated = true
                }
                guard let password else {
                    line("failed", ["message": "no password (add a password column, or --generate-passwords)"])
                    continue
                }
                var new = NewDirectoryUser(
                    signIn: v["email"].map { .email($0) } ?? .userName(name), displayName: v["displayName"] ?? name, password: password)
                new.givenName = v["givenName"]
                new.surname = v["surname"]
                new.forceChangePassword = v["forceChangePassword"]?.lowercased() == "true"
                new.attributes = try attributeValues(
                    v.filter { !known.contains($0.key) }.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" })
                do {
                    let user = try await c.createUser(new)
                    line("created", ["id": .string(user.id)].merging(generated ? ["password": .string(password)] : [:]) { $1 })
                } catch let e as B2CError where e.kind == .failed || e.kind == .usage {
                    line("failed", ["message": .string(e.message)])
                }
            }
        }
        switch options.output ?? .auto {
        case .json: writeOut(JSONValue.array(report).serialized(pretty: true))
        case .table:
            writeOut(
                table(
                    [["ROW", "SIGN-IN NAME", "OUTCOME", "ID / MESSAGE"]]
                        + report.map { r in
                            [
                                r["row"].map { $0.serialized() } ?? "", r["signInName"]?.stringValue ?? "", r["outcome"]?.stringValue ?? "",
                                (r["id"]?.stringValue ?? r["message"]?.stringValue ?? "")
                                    + (r["password"]?.stringValue.map { "  password: \($0)" } ?? ""),
                            ]
                        }))
        }
        let failed = report.filter { $0["outcome"] == "failed" }.count
        let created = report.filter { $0["outcome"] == "created" }.count
        writeErr("\(created) created, \(report.count - created - failed) already there, \(failed) failed")
        if failed > 0 {
            throw CLIError(
                "\(failed) row\(failed == 1 ? "" : "s") failed (see the report); run again to retry them", exitCode: ExitStatus.error)
        }
    }
}
