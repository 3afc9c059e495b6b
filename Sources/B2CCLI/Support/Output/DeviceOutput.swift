import B2CKit
import Foundation

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
}
