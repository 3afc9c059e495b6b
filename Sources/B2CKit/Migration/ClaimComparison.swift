import Foundation

/// One person's tokens from Azure AD B2C and from Entra External ID, lined up claim by claim with the move's mapping
/// (docs/migration.md): `emails[0]` ↔ `email`, the policy claim (`tfp`/`acr`) ↔ none, `sub` ↔ another kind of `sub`,
/// `oid` ↔ `oid` (which must be equal), `idp` ↔ `idp`, a custom attribute `extension_Name` ↔
/// `extension_<app id>_Name` or `extension_Name`; every other claim by its name.
public struct ClaimComparison: Sendable, Equatable {
    /// How a line compares.
    public enum Verdict: String, Sendable, CaseIterable {
        /// The same value under the same or the mapped name.
        case same
        /// Different values where an app may rely on the value: it must change.
        case differs
        /// Different by design (issuer, subject, audience, token version): an app that relies on it must change, as the line says.
        case expected
        /// Only in the B2C token.
        case onlyB2C = "only-b2c"
        /// Only in the External ID token.
        case onlyExternalId = "only-external-id"
    }

    public struct Line: Sendable, Equatable {
        public var b2cClaim: String?
        public var externalIdClaim: String?
        public var b2cValue: JSONValue?
        public var externalIdValue: JSONValue?
        public var verdict: Verdict
        /// What an app that reads the claim must do, when anything.
        public var advice: String?
        /// Whether an app may rely on this line (a `differs`, a B2C-only claim that is not the policy's own): what makes
        /// `b2c migrate diff` exit non-zero.
        public var breaks: Bool
    }

    public var lines: [Line]
    public var breaks: Bool { lines.contains(where: \.breaks) }

    /// Claims of the protocol that differ on every token and say nothing an app compares (times, nonces, hashes).
    static let transient: Set = ["exp", "nbf", "iat", "auth_time", "nonce", "at_hash", "c_hash", "sid", "uti", "rh", "aio", "xms_tcdt"]

    public init(b2c: JSONValue, externalId: JSONValue) {
        var old = (b2c.objectValue ?? [:]).filter { !Self.transient.contains($0.key) }
        var new = (externalId.objectValue ?? [:]).filter { !Self.transient.contains($0.key) }
        lines =
            Self.identityLines(b2c, &old, &new) + Self.policyAndEmailLines(&old, &new) + Self.attributeLines(&old, &new)
            + Self.otherLines(old, new)
    }

    /// The person (one object id on both sides, or the move lost them) and the claims that say who issued the token to
    /// whom, which differ as expected.
    static func identityLines(_ b2c: JSONValue, _ old: inout [String: JSONValue], _ new: inout [String: JSONValue]) -> [Line] {
        let oidOld = old.removeValue(forKey: "oid") ?? (b2c["tfp"] == nil && b2c["acr"] != nil ? b2c["sub"] : nil)
        let oidNew = new.removeValue(forKey: "oid")
        var lines = [
            Line(
                b2cClaim: "oid", externalIdClaim: "oid", b2cValue: oidOld, externalIdValue: oidNew,
                verdict: oidOld == oidNew && oidOld != nil ? .same : .differs,
                advice: oidOld == oidNew ? nil : "The object ids differ: these tokens are not of the same person.",
                breaks: oidOld != oidNew || oidOld == nil)
        ]
        for (name, advice) in [
            ("iss", "Accept both issuers (each side's discovery and keys) while both sides sign people in."),
            ("sub", "External ID's sub is pairwise (per app): key people by oid, not sub."),
            ("aud", "The External ID app is a registration of its own: accept its client id as an audience."),
            ("ver", "External ID issues v2.0 tokens."),
            ("azp", "The External ID app is a registration of its own (its client id)."),
        ] {
            let a = old.removeValue(forKey: name), b = new.removeValue(forKey: name)
            guard a != nil || b != nil else { continue }
            let same = a == b
            lines.append(
                Line(
                    b2cClaim: name, externalIdClaim: name, b2cValue: a, externalIdValue: b, verdict: same ? .same : .expected,
                    advice: same ? nil : advice, breaks: false))
        }
        return lines
    }

    /// The policy claim (no counterpart), and B2C's `emails` (an array) as External ID's `email` (one value).
    static func policyAndEmailLines(_ old: inout [String: JSONValue], _ new: inout [String: JSONValue]) -> [Line] {
        var lines: [Line] = []
        for name in ["tfp", "acr"] {
            guard let a = old.removeValue(forKey: name) else { continue }
            lines.append(
                Line(
                    b2cClaim: name, externalIdClaim: nil, b2cValue: a, externalIdValue: nil, verdict: .onlyB2C,
                    advice: "External ID has no policy in its tokens: do not branch on the user flow's name.", breaks: false))
        }
        if let emails = old.removeValue(forKey: "emails") {
            let first = emails.arrayValue?.first ?? emails
            let email = new.removeValue(forKey: "email")
            let same = email.map { Self.sameText($0, first) } ?? false
            lines.append(
                Line(
                    b2cClaim: "emails[0]", externalIdClaim: "email", b2cValue: first, externalIdValue: email,
                    verdict: email == nil ? .onlyB2C : (same ? .same : .differs),
                    advice: "Read email (one value) instead of emails (an array).", breaks: !same))
        }
        return lines
    }

    /// Custom attributes: `extension_Name` ↔ `extension_<app id>_Name` or `extension_Name`.
    static func attributeLines(_ old: inout [String: JSONValue], _ new: inout [String: JSONValue]) -> [Line] {
        var lines: [Line] = []
        for name in old.keys.sorted() where name.hasPrefix("extension_") {
            let short = Self.attributeName(name)
            let match = new.keys.sorted().first { $0.hasPrefix("extension_") && Self.attributeName($0) == short }
            let a = old.removeValue(forKey: name)
            let b = match.flatMap { new.removeValue(forKey: $0) }
            let same = a == b
            lines.append(
                Line(
                    b2cClaim: name, externalIdClaim: match, b2cValue: a, externalIdValue: b,
                    verdict: b == nil ? .onlyB2C : (same ? .same : .differs),
                    advice: b == nil
                        ? "Add the attribute to the External ID user flow's token claims (or a custom claims provider)."
                        : (match == name ? nil : "The claim is named \(match ?? "") on External ID."),
                    breaks: !same))
        }
        return lines
    }

    /// Every other claim, by name.
    static func otherLines(_ old: [String: JSONValue], _ new: [String: JSONValue]) -> [Line] {
        Set(old.keys).union(new.keys).sorted().map { name in
            let a = old[name], b = new[name]
            let verdict: Verdict = a == nil ? .onlyExternalId : b == nil ? .onlyB2C : (a == b ? .same : .differs)
            let advice: String? =
                switch verdict {
                case .onlyB2C: "Emit \(name) on External ID (user flow attributes, or a custom claims provider) or stop reading it."
                case .differs: "The values differ: check what the app does with \(name)."
                default: nil
                }
            return Line(
                b2cClaim: a == nil ? nil : name, externalIdClaim: b == nil ? nil : name, b2cValue: a, externalIdValue: b,
                verdict: verdict, advice: advice, breaks: verdict == .differs || verdict == .onlyB2C)
        }
    }

    /// `extension_<32 hex>_Name` and `extension_Name` both name the attribute `Name`.
    static func attributeName(_ claim: String) -> String {
        let rest = claim.dropFirst("extension_".count)
        let parts = rest.split(separator: "_", maxSplits: 1)
        if parts.count == 2, parts[0].count == 32, parts[0].allSatisfy(\.isHexDigit) { return String(parts[1]) }
        return String(rest)
    }

    static func sameText(_ a: JSONValue, _ b: JSONValue) -> Bool {
        guard let x = a.stringValue, let y = b.stringValue else { return a == b }
        return x.caseInsensitiveCompare(y) == .orderedSame
    }
}

/// Two answers of an API (one per side's token), compared: status, and the top-level members of a JSON body.
public struct APIAnswerComparison: Sendable, Equatable {
    public struct Member: Sendable, Equatable {
        public var name: String
        public var b2c: JSONValue?
        public var externalId: JSONValue?
    }

    public var b2cStatus: Int
    public var externalIdStatus: Int
    /// Members whose values differ (or are on one side only); for a body that is not a JSON object, one member `(body)`.
    public var differing: [Member]
    public var breaks: Bool { b2cStatus != externalIdStatus || !differing.isEmpty }

    public init(b2cStatus: Int, b2cBody: Data, externalIdStatus: Int, externalIdBody: Data) {
        self.b2cStatus = b2cStatus
        self.externalIdStatus = externalIdStatus
        let a = try? JSONValue.parse(b2cBody), b = try? JSONValue.parse(externalIdBody)
        if let x = a?.objectValue, let y = b?.objectValue {
            differing = Set(x.keys).union(y.keys).sorted().filter { x[$0] != y[$0] }.map { Member(name: $0, b2c: x[$0], externalId: y[$0]) }
        } else if b2cBody == externalIdBody {
            differing = []
        } else {
            differing = [
                Member(
                    name: "(body)", b2c: .string(String(decoding: b2cBody.prefix(200), as: UTF8.self)),
                    externalId: .string(String(decoding: externalIdBody.prefix(200), as: UTF8.self)))
            ]
        }
    }
}
