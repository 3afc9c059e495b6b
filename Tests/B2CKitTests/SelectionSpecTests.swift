@testable import B2CKit
import Foundation
import Testing

/// The account-selection rule (DESIGN §5) as a table: which account belongs to a policy, and which one a selector names.
@Suite struct SelectionSpecTests {
    static let tenant = "8f2c6d4e-1a3b-4c5d-9e7f-0a1b2c3d4e5f"
    static let alice = "0a11ce00-5eed-4a11-8000-00000000a11c", bob = "0b0b0000-5eed-4b0b-8000-000000000b0b"

    static func account(
        _ id: String, oid: String = alice, policy: String, claims: [String: JSONValue], email: String = "alice@contoso.com"
    )
        -> Account
    {
        var c = claims
        c["emails"] = [.string(email)]
        return Account(
            id: id, environment: "h", tenantID: tenant, oid: oid, policy: policy, authority: "https://h/t/\(policy)", clientID: "c",
            idToken: "x.y.z", claims: .object(c), updatedAt: 0)
    }

    /// (what, account, policy asked for, belongs?)
    static let membership: [(String, Account, String, Bool)] = [
        (
            "exact policy part and tfp", account("\(alice)-b2c_1_susi.\(tenant)", policy: "B2C_1_susi", claims: ["tfp": "B2C_1_susi"]),
            "B2C_1_susi", true
        ),
        (
            "policy names compare without case",
            account("\(alice)-b2c_1_susi.\(tenant)", policy: "B2C_1_SUSI", claims: ["tfp": "B2C_1_SUSI"]),
            "b2c_1_susi", true
        ),
        (
            "a longer policy is not a suffix match",
            account("\(alice)-b2c_1_susi_v2.\(tenant)", policy: "B2C_1_susi_v2", claims: ["tfp": "B2C_1_susi_v2"]),
            "B2C_1_susi", false
        ),
        (
            "more before the policy part is another id",
            account("\(alice)-x-b2c_1_susi.\(tenant)", policy: "B2C_1_susi", claims: ["tfp": "B2C_1_susi"]),
            "B2C_1_susi", false
        ),
        (
            "a lower-case acr names the policy (custom policies)",
            account(
                "\(alice)-b2c_1a_signin.\(tenant)", policy: "B2C_1A_signin",
                claims: ["acr": "b2c_1a_signin"]), "B2C_1A_signin", true
        ),
        (
            "the id says susi, the id token another policy",
            account(
                "\(alice)-b2c_1_susi.\(tenant)", policy: "B2C_1_susi",
                claims: ["tfp": "B2C_1_signin"]), "B2C_1_susi", false
        ),
        (
            "another tenant in the id",
            account(
                "\(alice)-b2c_1_susi.11111111-2222-4333-8444-555555555555", policy: "B2C_1_susi",
                claims: ["tfp": "B2C_1_susi"]), "B2C_1_susi", false
        ),
        ("a native account under its configuration name", account("\(alice).\(tenant)", policy: "native", claims: [:]), "native", true),
        (
            "a native-form id with a policy claim is not native",
            account("\(alice).\(tenant)", policy: "native", claims: ["tfp": "B2C_1_susi"]),
            "native", false
        ),
        ("a native account is not a user-flow account", account("\(alice).\(tenant)", policy: "native", claims: [:]), "B2C_1_susi", false),
    ]

    @Test(arguments: membership)
    func anAccountBelongsToAPolicyOnlyByTheExactRule(what: String, account: Account, policy: String, belongs: Bool) {
        #expect(AccountSelection.matches(account, policy: policy) == belongs, "\(what)")
    }

    static let people = [
        account("\(alice)-b2c_1_susi.\(tenant)", policy: "B2C_1_susi", claims: ["tfp": "B2C_1_susi"]),
        account("\(bob)-b2c_1_susi.\(tenant)", oid: bob, policy: "B2C_1_susi", claims: ["tfp": "B2C_1_susi"], email: "bob@contoso.com"),
        account(
            "0b0b0001-5eed-4b0b-8000-000000000b0c-b2c_1_susi.\(tenant)", oid: "0b0b0001-5eed-4b0b-8000-000000000b0c", policy: "B2C_1_susi",
            claims: ["tfp": "B2C_1_susi"], email: "alice@fabrikam.com"),
    ]

    /// (selector, the oids it names)
    static let selectors: [(String, [String])] = [
        ("alice@contoso.com", [alice]), ("ALICE@Contoso.com", [alice]), (alice, [alice]), ("\(bob)-b2c_1_susi.\(tenant)", [bob]),
        ("bob", [bob]), ("0a11", [alice]), ("0b0b", [bob, "0b0b0001-5eed-4b0b-8000-000000000b0c"]),
        ("alice", [alice, "0b0b0001-5eed-4b0b-8000-000000000b0c"]), ("carol", []), ("contoso.com", []),
    ]

    @Test(arguments: selectors)
    func aSelectorNamesAccountsByEmailOidIdLocalPartOrPrefix(selector: String, oids: [String]) {
        #expect(AccountSelection.filter(Self.people, selector: selector).map(\.oid) == oids, "--account \(selector)")
    }

    @Test func selectGivesOneAccountOrSaysWhyNot() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("b2c-spec-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: dir) }
        let store = try TokenStore(directory: dir, keys: .ephemeral())
        for a in Self.people {
            try store.save(
                TokenSet(identity: Identity(tenantID: a.tenantID, oid: a.oid, email: a.email), account: a),
                makeCurrent: false, now: 0)
        }
        let scope = AccountScope(environment: "h", clientID: "c")
        func select(_ selector: String?) -> Result<String, B2CError> {
            do {
                return .success(
                    try AccountSelection.select(policy: "B2C_1_susi", selector: selector, scope: scope, store: store) {
                        .signIn(policy: "B2C_1_susi", method: .browser, loginHint: $0)
                    }.account.oid)
            } catch let e as B2CError { return .failure(e) } catch { Issue.record("\(error)"); return .failure(B2CError(.failed, "")) }
        }
        #expect(try select("bob").get() == Self.bob)
        guard case .failure(let ambiguous) = select("0b0b") else { Issue.record("0b0b names two accounts"); return }
        #expect(ambiguous.kind == .usage && ambiguous.remedy == .chooseAccount(policy: "B2C_1_susi", longerSelector: true))
        guard case .failure(let none) = select("carol") else { Issue.record("carol names nobody"); return }
        #expect(none.kind == .interactionRequired && none.message.contains("bob@contoso.com"), "lists who is signed in: \(none.message)")
        guard case .failure(let noCurrent) = select(nil) else { Issue.record("three accounts, none current"); return }
        #expect(noCurrent.kind == .usage && noCurrent.remedy == .chooseAccount(policy: "B2C_1_susi", longerSelector: false))
        try store.setCurrent(Self.people[1])
        #expect(try select(nil).get() == Self.bob, "the current account")
    }
}
