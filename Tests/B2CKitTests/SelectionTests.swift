@testable import B2CKit
import Foundation
import Testing

/// Account selection on a real SQLite store with many accounts: the indexed paths (current account, a selector
/// narrowed in SQL) must choose exactly what the rules choose over every account of the policy.
@Suite struct SelectionTests {
    static let tenant = "8f2c6d4e-1a3b-4c5d-9e7f-0a1b2c3d4e5f"
    static let scope = AccountScope(environment: "h", clientID: "c")

    static func set(oid: String, email: String, policy: String, claimPolicy: String? = nil) -> TokenSet {
        let claims: JSONValue = ["oid": .string(oid), "tfp": .string(claimPolicy ?? policy), "emails": [.string(email)], "name": "Person"]
        let id = "\(oid)-\(policy.lowercased()).\(tenant)"
        return TokenSet(
            identity: Identity(tenantID: tenant, oid: oid, name: "Person", email: email),
            account: Account(
                id: id, environment: "h", tenantID: tenant, oid: oid, policy: policy, authority: "https://h/t/\(policy)", clientID: "c",
                idToken: "x.y.z", claims: claims, updatedAt: 0),
            accessToken: AccessToken(accountID: id, target: "s", secret: "at-\(id)", expiresOn: 9_999_999_999, cachedAt: 0),
            refreshToken: "rt-\(id)")
    }

    /// The rules applied to every account of the policy: what `select` must agree with.
    static func reference(_ store: TokenStore, policy: String, selector: String) throws -> [String] {
        AccountSelection.filter(
            try store.accounts(scope: scope, policy: policy).filter { AccountSelection.matches($0, policy: policy) }, selector: selector
        )
        .map(\.id).sorted()
    }

    static func outcome(_ store: TokenStore, policy: String, selector: String?) -> String {
        do {
            return try AccountSelection.select(policy: policy, selector: selector, scope: scope, store: store) { _ in .listAccounts }
                .account.id
        } catch { return "error" }
    }

    @Test func indexedSelectionAgreesWithTheRulesOverEveryAccount() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("b2c-selection-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: dir) }
        let store = try TokenStore(directory: dir, keys: .ephemeral())
        var oids: [String] = []
        for i in 0..<600 {
            let oid = String(format: "%08x-0000-4000-8000-%012x", i * 7919, i)
            oids.append(oid)
            try store.save(Self.set(oid: oid, email: "user\(i)@contoso.com", policy: "B2C_1_susi"), makeCurrent: i == 17, now: 0)
            if i % 3 == 0 {
                try store.save(Self.set(oid: oid, email: "user\(i)@contoso.com", policy: "B2C_1_signin"), makeCurrent: false, now: 0)
            }
        }
        // An email whose JSON form differs from its text ("/" and a non-ASCII letter), and an account whose id token names
        // another policy (it must never be chosen for B2C_1_susi).
        try store.save(
            Self.set(oid: "ffffffff-0000-4000-8000-00000000beef", email: "a/ö@contoso.com", policy: "B2C_1_susi"), makeCurrent: false,
            now: 0)
        try store.save(
            Self.set(
                oid: "eeeeeeee-0000-4000-8000-00000000beef", email: "liar@contoso.com", policy: "B2C_1_susi", claimPolicy: "B2C_1_other"),
            makeCurrent: false, now: 0)

        // No selector: the current account, read without listing the policy.
        #expect(Self.outcome(store, policy: "B2C_1_susi", selector: nil) == "\(oids[17])-b2c_1_susi.\(Self.tenant)")
        // B2C_1_signin has 200 accounts and none is current: ambiguous.
        #expect(Self.outcome(store, policy: "B2C_1_signin", selector: nil) == "error")

        var selectors = [
            "user5@contoso.com", "USER5@contoso.com", "a/ö@contoso.com", "liar@contoso.com", oids[42], oids[3], "0", "00", "0000",
            "\(oids[9])-b2c_1_susi.\(Self.tenant)", "user1", "nobody@contoso.com", "%", "_", "\\", "ffffffff", "eeeeeeee",
        ]
        var rng = SystemRandomNumberGenerator()
        for _ in 0..<60 {
            let oid = oids.randomElement(using: &rng)!
            selectors.append(String(oid.prefix(Int.random(in: 1...oid.count, using: &rng))))
        }
        for policy in ["B2C_1_susi", "B2C_1_signin"] {
            for selector in selectors {
                let expected = try Self.reference(store, policy: policy, selector: selector)
                let got = Self.outcome(store, policy: policy, selector: selector)
                #expect(
                    got == (expected.count == 1 ? expected[0] : "error"), "\(policy) --account \(selector): \(got) vs \(expected.prefix(3))"
                )
            }
        }
        #expect(
            Self.outcome(store, policy: "B2C_1_susi", selector: "liar@contoso.com") == "error",
            "an id token of another policy is never chosen")

        // The listing (one SQL query, the policy claim read with json_extract) keeps exactly the accounts the rule keeps,
        // also for odd claims: a native-form account with "tfp": null, a non-string acr, a native account proper.
        for (oid, claims, policy) in [
            ("aaaaaaaa-0000-4000-8000-000000000001", ["tfp": JSONValue.null] as JSONValue, "native"),
            ("aaaaaaaa-0000-4000-8000-000000000002", ["acr": 7] as JSONValue, "native"),
            ("aaaaaaaa-0000-4000-8000-000000000003", ["emails": ["n@contoso.com"]] as JSONValue, "native"),
            ("aaaaaaaa-0000-4000-8000-000000000004", ["acr": "B2C_1_susi", "tfp": 3] as JSONValue, "B2C_1_susi"),
        ] {
            var odd = Self.set(oid: oid, email: "odd@contoso.com", policy: policy)
            odd.account.claims = claims
            if policy == "native" { odd.account.id = "\(oid).\(Self.tenant)" }
            odd.accessToken?.accountID = odd.account.id
            try store.save(odd, makeCurrent: false, now: 0)
        }
        for policy in ["B2C_1_susi", "B2C_1_signin", "native", "B2C_1_nothing"] {
            let listed = Set(
                try AccountSelection.list(store: store, scope: Self.scope, policy: policy).flatMap { $0.accounts.map(\.accountID) })
            let rule = Set(
                try store.accounts(scope: Self.scope, policy: policy).filter { AccountSelection.matches($0, policy: policy) }.map(\.id))
            #expect(listed == rule, "\(policy): \(listed.symmetricDifference(rule))")
        }
        #expect(
            try AccountSelection.list(store: store, scope: Self.scope, policy: "native").flatMap { $0.accounts.map(\.accountID) } == [
                "aaaaaaaa-0000-4000-8000-000000000003.\(Self.tenant)"
            ])

        // The current account signed out by another process: said once, then the rules over every account.
        _ = try store.remove(store.accounts(scope: Self.scope).filter { $0.id == "\(oids[17])-b2c_1_susi.\(Self.tenant)" })
        do {
            _ = try AccountSelection.select(policy: "B2C_1_susi", selector: nil, scope: Self.scope, store: store) { _ in .listAccounts }
            Issue.record("599 accounts, none current: must be ambiguous")
        } catch let e as B2CError {
            #expect(e.description.contains("has been signed out") && e.description.contains("none is current"), "\(e.description)")
        }
    }
}
