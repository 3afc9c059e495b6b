import B2CKit
import Foundation

/// `accounts` and `whoami`: people, their accounts and the app's own tokens.
extension Output {
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

}
