import B2CProtocol
import Foundation
import NIOConcurrencyHelpers

/// One thing that happened in a journey: a step entered or answered, a decision and its reason, a callout, the claims it
/// read and wrote (secrets and codes masked), the error or the tokens that ended it.
struct JourneyEvent: Sendable {
    enum Kind: String, Sendable { case start, step, decision, claims, callout, code, end }

    /// Milliseconds since the journey began (wall clock: how long each step took, whatever the tenant clock says).
    var elapsedMs: Int
    var kind: Kind
    var name: String
    var detail: [String: JSONValue] = [:]

    var json: JSONValue {
        .object(["elapsedMs": JSONValue(elapsedMs), "kind": .string(kind.rawValue), "name": .string(name), "detail": .object(detail)])
    }
}

/// A journey as the recorder saw it, from the authorize request (or native authentication's first call) to its end.
struct JourneyRecord: Sendable {
    var id: String
    /// `browser` (the user flow's pages) or `native` (native authentication's API).
    var channel: String
    var policy: String
    var clientId: String
    /// The person, once known (their email).
    var user: String?
    /// The tenant clock's time at the start (seconds).
    var startedAt: Int
    var started: ContinuousClock.Instant
    /// `tokens`, the error code that ended it, or nil while it runs.
    var outcome: String?
    var events: [JourneyEvent] = []

    var summary: JSONValue {
        var o: [String: JSONValue] = [
            "id": .string(id), "channel": .string(channel), "policy": .string(policy), "clientId": .string(clientId),
            "startedAt": JSONValue(startedAt), "steps": JSONValue(events.filter { $0.kind == .step }.count),
        ]
        if let user { o["user"] = .string(user) }
        o["outcome"] = outcome.map { .string($0) } ?? .null
        return .object(o)
    }

    var json: JSONValue {
        guard case .object(var o) = summary else { return summary }
        o["events"] = .array(events.map(\.json))
        return .object(o)
    }
}

/// The journey recorder: every journey's steps in order, in memory (the last 200 journeys, 400 events each), for
/// `GET /_admin/journeys` and `b2c-emulator journeys`. What it keeps is what a developer needs to tell why a sign-in
/// went the way it did; a password, a code, a token or a secret is never kept (`masked`).
final class JourneyRecorder: Sendable {
    static let keptJourneys = 200
    static let keptEvents = 400
    private let journeys = NIOLockedValueBox<[JourneyRecord]>([])

    /// Starts the record of journey `id` (a second start of the same id is ignored).
    func begin(_ id: String, channel: String, policy: String, clientId: String, at now: Int, detail: [String: JSONValue] = [:]) {
        journeys.withLockedValue { all in
            guard !all.contains(where: { $0.id == id }) else { return }
            var r = JourneyRecord(
                id: id, channel: channel, policy: policy, clientId: clientId, startedAt: now, started: .now)
            r.events.append(
                JourneyEvent(
                    elapsedMs: 0, kind: .start, name: channel == "native" ? "native authentication" : "authorize",
                    detail: Self.masked(detail)))
            all = Array((all + [r]).suffix(Self.keptJourneys))
        }
    }

    /// Adds an event to journey `id` (nothing if the recorder does not know it).
    func note(_ id: String?, _ kind: JourneyEvent.Kind, _ name: String, _ detail: [String: JSONValue] = [:], user: String? = nil) {
        guard let id else { return }
        journeys.withLockedValue { all in
            guard let i = all.lastIndex(where: { $0.id == id }) else { return }
            let elapsed = ContinuousClock.now - all[i].started
            let ms = Int(elapsed.components.seconds * 1000 + elapsed.components.attoseconds / 1_000_000_000_000_000)
            if all[i].events.count < Self.keptEvents {
                all[i].events.append(JourneyEvent(elapsedMs: ms, kind: kind, name: name, detail: Self.masked(detail)))
            }
            if let user { all[i].user = user }
        }
    }

    /// Ends journey `id` with `outcome` (`tokens` or an error code); the first end counts.
    func end(_ id: String?, outcome: String, _ detail: [String: JSONValue] = [:]) {
        guard let id else { return }
        let ended = journeys.withLockedValue { all -> Bool in
            guard let i = all.lastIndex(where: { $0.id == id }), all[i].outcome == nil else { return false }
            all[i].outcome = outcome
            return true
        }
        if ended { note(id, .end, outcome, detail) }
    }

    /// Newest first, those matching every filter given (a user's email, a policy, a client id; case-insensitive).
    func list(user: String? = nil, policy: String? = nil, clientId: String? = nil) -> [JourneyRecord] {
        func same(_ a: String?, _ b: String?) -> Bool { b == nil || a?.caseInsensitiveCompare(b!) == .orderedSame }
        return journeys.withLockedValue { $0 }.reversed().filter {
            same($0.user, user) && same($0.policy, policy) && same($0.clientId, clientId)
        }
    }

    func journey(_ id: String) -> JourneyRecord? { journeys.withLockedValue { all in all.last { $0.id == id } } }

    func clear() { journeys.withLockedValue { $0 = [] } }

    /// What the recorder keeps of claims and form values: a value whose name says password, code, secret, token,
    /// assertion, verifier, otp or ver_input (case-insensitive, anywhere in the name; not countryCode or postalCode) is
    /// replaced by `••••`, and so is such a value (of four characters or more) wherever another value quotes it (a JSON
    /// body a transformation built around a one-time code) — the one place that rule lives. `context` holds secrets to
    /// hide that are not among `values` (the claims bag beside a transformation's outputs).
    static func masked(_ values: [String: JSONValue], context: [String: JSONValue] = [:]) -> [String: JSONValue] {
        var secrets: [String] = []
        for (name, value) in values.merging(context, uniquingKeysWith: { a, _ in a }) where isSecret(name) {
            if let s = value.stringValue, s.utf8.count >= 4 { secrets.append(s) }
        }
        return masked(values, hiding: secrets)
    }

    private static func masked(_ values: [String: JSONValue], hiding secrets: [String]) -> [String: JSONValue] {
        var out: [String: JSONValue] = [:]
        for (name, value) in values {
            if isSecret(name) {
                out[name] = "••••"
            } else if case .object(let inner) = value {
                out[name] = .object(masked(inner, hiding: secrets))
            } else if case .array(let items) = value, items.contains(where: { $0.objectValue != nil }) {
                out[name] = .array(items.map { $0.objectValue.map { .object(masked($0, hiding: secrets)) } ?? $0 })
            } else if case .string(let text) = value, !secrets.isEmpty, secrets.contains(where: { text.contains($0) }) {
                out[name] = .string(secrets.reduce(text) { $0.replacingOccurrences(of: $1, with: "••••") })
            } else {
                out[name] = value
            }
        }
        return out
    }

    static func isSecret(_ name: String) -> Bool {
        // Byte-wise over ASCII-lowercased UTF-8: this runs for every claim at every step, and Foundation's `contains`
        // cost a measurable share of a page walk. Non-ASCII bytes never match an ASCII needle.
        let n = name.utf8.map { $0 >= 0x41 && $0 <= 0x5A ? $0 | 0x20 : $0 }
        if n.elementsEqual("countrycode".utf8) || n.elementsEqual("postalcode".utf8) { return false }
        return secretWords.contains { word in
            let w = Array(word.utf8)
            guard n.count >= w.count else { return false }
            return (0...(n.count - w.count)).contains { start in n[start..<(start + w.count)].elementsEqual(w) }
        }
    }

    /// `*_ver_input` are B2C's fields for a code sent to verify an address (email_ver_input, ReadOnlyEmail_ver_input).
    private static let secretWords = ["password", "code", "secret", "token", "assertion", "verifier", "otp", "samlresponse", "ver_input"]

    /// A form as the recorder keeps it: field names and (masked) values, without the transaction handle.
    static func form(_ fields: [String: String]) -> [String: JSONValue] {
        var out: [String: JSONValue] = [:]
        for (k, v) in fields where k != "tx" { out[k] = .string(v) }
        return masked(out)
    }
}
