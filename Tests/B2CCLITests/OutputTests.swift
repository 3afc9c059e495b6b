@testable import B2CCLI
@testable import B2CKit
import Foundation
import Testing

/// How the CLI says things: tables, times, and the library's remedies as command lines.
@Suite struct OutputTests {
    @Test(arguments: [
        (
            Remedy.signIn(policy: "B2C_1_susi", method: .browser, loginHint: "alice@contoso.com"),
            "Run: b2c signin --policy B2C_1_susi --login-hint alice@contoso.com"
        ),
        (
            .signIn(policy: "B2C_1_ROPC_Auth", method: .password, loginHint: nil),
            "Run: b2c signin --policy B2C_1_ROPC_Auth --username <user> --password-stdin"
        ),
        (.signIn(policy: "native", method: .native, loginHint: "bob@contoso.com"), "Run: b2c signin --native --username bob@contoso.com"),
        (
            .signIn(policy: "B2C_1_edit_profile", method: .editProfile, loginHint: "a@b.c"),
            "Run: b2c edit-profile --policy B2C_1_edit_profile --account a@b.c"
        ),
        (.signIn(policy: "B2C_1_reset", method: .resetPassword, loginHint: nil), "Run: b2c reset-password --policy B2C_1_reset"),
        (.chooseAccount(policy: "B2C_1_susi", longerSelector: false), "`b2c switch --policy B2C_1_susi <account>`"),
        (.chooseAccount(policy: "B2C_1_susi", longerSelector: true), "Give a longer --account"),
        (.allowHost("api.example.com"), "add --allow-host api.example.com"),
        (.nameAccount, ": --account <email|oid|account id>, --policy <policy>, or --all"),
    ])
    func remediesAreRenderedAsCommandLines(remedy: Remedy, expected: String) {
        let text = CLIError(B2CError(.interactionRequired, "something happened", remedy: remedy)).message
        #expect(text.hasPrefix("something happened") && text.contains(expected), "\(text)")
    }

    @Test(arguments: [
        (40, "in 40 s"), (119, "in 119 s"), (3540, "in 59 min"), (7199, "in 119 min"), (7200, "in 2 h"), (200_000, "in 2 days"),
    ])
    func relativeTimes(seconds: Int, expected: String) {
        #expect(Output.relative(seconds) == expected)
    }

    @Test func datesAreUTCWithTheirDistance() {
        #expect(Output.dateAndRelative(1_795_000_000, now: 1_795_000_000 - 3600) == "2026-11-18 11:06:40 UTC (in 60 min)")
        #expect(Output.dateAndRelative(1_795_000_000, now: 1_795_000_030) == "2026-11-18 11:06:40 UTC (30 s ago)")
    }

    @Test func tablesPadColumnsAndLeaveNoTrailingSpaces() {
        let text = table([["A", "BB", "C"], ["long value", "", ""], ["x", "y", "z"]])
        #expect(text == "A           BB  C\nlong value\nx           y   z")
    }

    @Test func thePeopleTableFitsEightyColumnsAndShortensAccountIds() {
        let tenant = "8f2c6d4e-1a3b-4c5d-9e7f-0a1b2c3d4e5f", oid = "0a11ce00-5eed-4a11-8000-00000000a11c"
        let accounts = ["B2C_1_edit_profile", "B2C_1_signin", "B2C_1_susi"].map {
            ListedAccount(
                accountID: "\(oid)-\($0.lowercased()).\(tenant)", tenantID: tenant, oid: oid, policy: $0, claimPolicy: $0,
                hasPolicyClaim: true, current: $0 == "B2C_1_susi", hasRefreshToken: true,
                accessTokens: [.init(target: "s", expiresOn: 1000 + 3600)])
        }
        let person = ListedPerson(
            environment: "h", clientID: "c",
            identity: Identity(
                tenantID: tenant, oid: oid, name: "Alice Example",
                email: "alice@contoso.com"), accounts: accounts)
        let text = Output.peopleTable([person], now: 1000)
        #expect(text.split(separator: "\n").allSatisfy { $0.count <= 80 }, "\(text)")
        #expect(
            text.contains("0a11ce00…") && !text.contains(tenant) && text.contains("B2C_1_susi *")
                && text.contains("in 60 min"), "\(text)")
        #expect(text.contains("Alice Example") && text.contains("<alice@contoso.com>"))
    }
}
