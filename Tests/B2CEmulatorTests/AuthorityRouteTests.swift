import B2CProtocol
import Foundation
import Testing

@testable import B2CEmulator

/// B2C's authority forms as every request's path is read (`AuthorityPrefixMiddleware.route`), against the version that
/// copied each segment into a String and lower-cased it (kept here as the reference), on paths made of the words that
/// matter to it, their cases, percent escapes and characters that are not ASCII.
@Suite struct AuthorityRouteTests {
    /// What the reference decided, in words both versions can be compared by.
    static func byCopies(_ path: String, _ emulator: B2CEmulator, _ p: String?) -> String {
        let segments = path.utf8.split(separator: UInt8(ascii: "/")).map {
            $0.contains(UInt8(ascii: "%")) ? String(Substring($0)).removingPercentEncoding ?? String(Substring($0)) : String(Substring($0))
        }
        guard let first = segments.first else { return "fixed pages" }
        let fixed: [String: String] = [
            "_admin": "admin", "hello": "hello", "public": "hello", "common": "any", "health": "health", "_idp": "idp", "graph": "graph",
        ]
        if let name = fixed[first] ?? (segments.count == 1 && emulator.seed.apis.contains { $0.name == first } ? "hello" : nil) {
            return "fixed \(name)"
        }
        var rest = segments[...]
        let tfp = rest.first?.lowercased() == "tfp"
        if tfp { rest = rest.dropFirst() }
        guard let tenant = rest.first else { return "unnamed" }
        let s = tenant.lowercased()
        let name = emulator.tenantName.lowercased()
        guard s == name || s == emulator.tenantID || s[...] == name.prefix(while: { $0 != "." }) else { return "unknown tenant \(tenant)" }
        rest = rest.dropFirst()
        var policy: EmulatorSeed.Policy?
        var inPath = false
        if let candidate = rest.first, candidate.lowercased().hasPrefix("b2c_1") {
            guard let found = emulator.policy(named: candidate) else { return "unknown policy \(candidate)" }
            policy = found
            inPath = true
            rest = rest.dropFirst()
        }
        if policy == nil, let p {
            guard let found = emulator.policy(named: p) else { return "unknown policy \(p)" }
            policy = found
        }
        var implicit = false
        if policy == nil, let flow = emulator.seed.externalIdFlow {
            policy = flow
            implicit = true
        }
        let endpoint = rest.map { $0.lowercased() }.joined(separator: "/")
        return
            "authority tfp=\(tfp) tenant=\(tenant) policy=\(policy?.id ?? "-") inPath=\(inPath) implicit=\(implicit) endpoint=\(endpoint)"
    }

    static func byRoute(_ path: String, _ emulator: B2CEmulator, _ p: String?) -> String {
        switch AuthorityPrefixMiddleware.route(path, emulator: emulator, policyParameter: { p }) {
        case .fixed(let name): "fixed \(name)"
        case .unnamed: "unnamed"
        case .unknownTenant(let tenant): "unknown tenant \(tenant)"
        case .unknownPolicy(let name): "unknown policy \(name)"
        case .authority(let tfp, let tenant, let policy, let inPath, let implicit, let endpoint):
            "authority tfp=\(tfp) tenant=\(tenant) policy=\(policy?.id ?? "-") inPath=\(inPath) implicit=\(implicit) endpoint=\(endpoint)"
        }
    }

    static let words = [
        "", "tfp", "TFP", "tFp", "t\u{301}fp", "contoso.onmicrosoft.com", "CONTOSO.onmicrosoft.COM", "contoso", "Contoso", "fabrikam",
        "8f2c6d4e-1a3b-4c5d-9e7f-0a1b2c3d4e5f", "8F2C6D4E-1A3B-4C5D-9E7F-0A1B2C3D4E5F", "B2C_1_susi", "b2c_1_SUSI", "b2c_1_nope",
        "b2c_1\u{301}_susi", "B2C_1", "b2c_", "oauth2", "OAuth2", "v2.0", "V2.0", "token", "Token", "authorize", "%41uthorize",
        "b2c%5F1_susi", "%zz", "%2F", "_admin", "hello", "HELLO", "health", "graph", "common", "_idp", "\u{212A}", "stra\u{df}e",
        "\u{e9}t\u{e9}", "discovery", "keys", ".well-known", "openid-configuration", "helloapi",
    ]

    @Test(arguments: [false, true])
    func agreesWithTheVersionThatCopied(externalId: Bool) throws {
        var seed = EmulatorSeed.default
        seed.tenant.externalId = externalId
        let emulator = try B2CEmulator(seed: seed, store: try .inMemory())
        var rng = SystemRandomNumberGenerator()
        var kinds = Set<String>()
        for _ in 0..<5_000 {
            let count = Int.random(in: 0...6, using: &rng)
            let path = "/" + (0..<count).map { _ in Self.words.randomElement(using: &rng)! }.joined(separator: "/")
            let p = [nil, nil, "B2C_1_susi", "b2c_1_susi", "nope", "\u{212A}"].randomElement(using: &rng)!
            let expected = Self.byCopies(path, emulator, p)
            #expect(Self.byRoute(path, emulator, p) == expected, "\(path.debugDescription) p=\(p ?? "nil")")
            kinds.insert(expected.split(separator: " ").prefix(expected.hasPrefix("unknown") ? 2 : 1).joined(separator: " "))
        }
        // The corpus reached every outcome, so agreeing means something.
        #expect(kinds == ["fixed", "unnamed", "unknown tenant", "unknown policy", "authority"], "\(kinds)")
    }

    /// The named forms, as discovery and the token endpoint see them.
    @Test func namedForms() throws {
        let emulator = try B2CEmulator(store: try .inMemory())
        let cases: [(String, String?, String)] = [
            (
                "/contoso.onmicrosoft.com/B2C_1_susi/oauth2/v2.0/token", nil,
                "authority tfp=false tenant=contoso.onmicrosoft.com policy=B2C_1_susi inPath=true implicit=false endpoint=oauth2/v2.0/token"
            ),
            (
                "/tfp/CONTOSO/b2c_1_SUSI/V2.0/.well-known/openid-configuration", nil,
                "authority tfp=true tenant=CONTOSO policy=B2C_1_susi inPath=true implicit=false "
                    + "endpoint=v2.0/.well-known/openid-configuration"
            ),
            (
                "/8f2c6d4e-1a3b-4c5d-9e7f-0a1b2c3d4e5f/oauth2/v2.0/authorize", "b2c_1_susi",
                "authority tfp=false tenant=8f2c6d4e-1a3b-4c5d-9e7f-0a1b2c3d4e5f policy=B2C_1_susi inPath=false implicit=false "
                    + "endpoint=oauth2/v2.0/authorize"
            ),
            ("/fabrikam.onmicrosoft.com/B2C_1_susi/oauth2/v2.0/token", nil, "unknown tenant fabrikam.onmicrosoft.com"),
            ("/contoso/b2c_1_nope/oauth2/v2.0/token", nil, "unknown policy b2c_1_nope"),
            ("/_admin/log", nil, "fixed admin"),
            ("/", nil, "fixed pages"),
            ("/tfp", nil, "unnamed"),
        ]
        for (path, p, expected) in cases {
            #expect(Self.byRoute(path, emulator, p) == expected, "\(path)")
            #expect(Self.byCopies(path, emulator, p) == expected, "\(path)")
        }
    }
}
