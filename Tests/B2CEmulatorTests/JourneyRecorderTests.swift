import B2CKit
import ChildProcess
import Foundation
import Testing

@testable import B2CEmulator

/// The journey recorder: a sign-in with MFA and an API connector, as `GET /_admin/journeys/{id}` and as the terminal's
/// timeline show it — each step in order, the decision and why, the code sent, the callout, the claims, the end.
@Suite(.serialized) struct JourneyRecorderTests {
    static func seed(_ e: ConnectorEndpoint) throws -> EmulatorSeed {
        var seed = try APIConnectorTests.seed(e)
        let i = seed.policies.firstIndex { $0.id == APIConnectorTests.policy }!
        seed.policies[i].mfa = .init(methods: [.email], enforcement: .always)
        return seed
    }

    @Test func aSignInWithMFAAndAConnectorShowsEachStep() async throws {
        let e = try ConnectorEndpoint()
        defer { e.stop() }
        try await TestTenant.with(seed: try Self.seed(e)) { t in
            try await e.queue(t, [["body": ["version": "1.0.0", "action": "Continue", "loyaltyTier": "gold"]]])
            let b = Browser(t)
            let page = try await b.signIn(policy: APIConnectorTests.policy, email: alice.email, password: alice.password)
            let sent = try await b.submit(page, form: "emailSendForm", [:])
            let code = try #require(try await MFATests.outbox(t).first?["code"]?.stringValue)
            let verified = try await b.submit(sent, form: "emailVerifyForm", ["ReadOnlyEmail_ver_input": code])
            let done = try await b.submit(verified, form: "attributeVerification", [:])
            #expect(done.redirectParams["code"] != nil, "\(done.location ?? done.body)")

            let list = try await t.admin(.GET, "/journeys?user=\(alice.email)&policy=\(APIConnectorTests.policy)").json
            let summary = try #require(list["journeys"]?.arrayValue?.first, "\(list)")
            #expect(summary["outcome"] == "tokens" && summary["channel"] == "browser" && summary["user"] == .string(alice.email))
            let id = try #require(summary["id"]?.stringValue)
            let journey = try await t.admin(.GET, "/journeys/\(id)").json
            let events = journey["events"]?.arrayValue ?? []
            let names = events.map { "\($0["kind"]?.stringValue ?? ""):\($0["name"]?.stringValue ?? "")" }
            let expected = [
                "start:authorize", "step:signin", "decision:MFA asked", "step:mfasend", "code:code sent", "step:mfaverify",
                "step:mfacontinue", "callout:preTokenIssuance", "claims:token issuance", "end:tokens",
            ]
            #expect(names == expected, "\(names)")
            let signIn = try #require(events.first { $0["name"] == "signin" })
            #expect(signIn["detail"]?["form"]?["logonIdentifier"] == .string(alice.email))
            #expect(signIn["detail"]?["form"]?["password"] == "••••", "a password is never kept: \(signIn)")
            let mfa = try #require(events.first { $0["name"] == "MFA asked" })
            #expect(mfa["detail"]?["why"] == "the user flow always asks" && mfa["detail"]?["method"] == "email")
            let callout = try #require(events.first { $0["kind"] == "callout" })
            #expect(callout["detail"]?["status"] == 200 && callout["detail"]?["outcome"] == "continue", "\(callout)")
            let claims = try #require(events.first { $0["name"] == "token issuance" })
            #expect(claims["detail"]?["extraClaims"]?["loyaltyTier"] == "gold" && claims["detail"]?["mfa"] == true, "\(claims)")
            // What the journey left elsewhere is linked: its code in the outbox, its callout.
            #expect(journey["messages"]?.arrayValue?.first?["purpose"] == "mfa" && journey["callouts"]?.arrayValue?.count == 1)
            // No secret anywhere in the record: not the password, not the code.
            let text = journey.serialized()
            #expect(!text.contains(alice.password) && !JSONValue.array(events).serialized().contains(code))
            // An unknown id is a 404 that says where the list is.
            let missing = try await t.admin(.GET, "/journeys/nope")
            #expect(missing.status == 404 && missing.body.contains("GET /_admin/journeys"))

            // The same on a terminal: the list, and the timeline in order.
            let listed = try await runOffThePool(Self.emulatorBinary, ["journeys", "--url", t.base, "--user", alice.email])
            #expect(
                listed.status == 0 && listed.stdout.contains(id) && listed.stdout.contains("tokens"), "\(listed.stdout)\(listed.stderr)")
            let timeline = try await runOffThePool(Self.emulatorBinary, ["journeys", "--url", t.base, "--id", id])
            #expect(timeline.status == 0, "\(timeline.stderr)")
            let lines = timeline.stdout.split(separator: "\n").map(String.init)
            let order = ["authorize", "signin", "MFA asked", "mfasend", "code sent", "mfaverify", "callout", "token issuance", "tokens"]
            var at = 0
            for line in lines where at < order.count && line.contains(order[at]) { at += 1 }
            #expect(at == order.count, "the timeline in order, up to '\(at < order.count ? order[at] : "")': \(timeline.stdout)")
            #expect(timeline.stdout.contains("password=••••"))
            #expect(!timeline.stdout.contains(alice.password) && !timeline.stdout.contains(code))
            let unknown = try await runOffThePool(Self.emulatorBinary, ["journeys", "--url", t.base, "--id", "nope"])
            #expect(unknown.status == 1 && unknown.stderr.contains("no journey 'nope'"), "\(unknown.status) \(unknown.stderr)")
            let nobody = try await runOffThePool(Self.emulatorBinary, ["journeys", "--url", "http://127.0.0.1:9"])
            #expect(nobody.status == 5 && nobody.stderr.contains("no tenant answers"), "\(nobody.status) \(nobody.stderr)")
        }
    }

    static var emulatorBinary: URL { b2cBinary.deletingLastPathComponent().appendingPathComponent("b2c-emulator") }

    /// `--follow` prints each event of a journey that starts after it, as it happens.
    @Test func followPrintsANewJourneyAsItHappens() async throws {
        try await TestTenant.with { t in
            let out = try ChildPipe()
            let follower = try ChildProcess(Self.emulatorBinary, ["journeys", "--url", t.base, "--follow"], stdout: out.writeEnd.fd)
            out.writeEnd.close()
            defer {
                follower.killGroup()
                follower.waitUntilExit()
            }
            final class Printed: @unchecked Sendable {
                let lock = NSLock()
                var text = ""
            }
            let printed = Printed()
            drain(out.readEnd) { data in printed.lock.withLock { printed.text += String(decoding: data, as: UTF8.self) } }
            try await Task.sleep(nanoseconds: 700_000_000)
            let r = try await Browser(t).signIn(email: alice.email, password: alice.password)
            #expect(r.redirectParams["code"] != nil)
            for _ in 0..<100 where !printed.lock.withLock({ printed.text.contains("tokens") }) {
                try await Task.sleep(nanoseconds: 100_000_000)
            }
            let text = printed.lock.withLock { printed.text }
            for step in ["authorize", "signin", "token issuance", "tokens"] { #expect(text.contains(step), "\(step): \(text)") }
        }
    }

    @Test func aCancelAndAForgottenPasswordEndWithTheirCodes() async throws {
        try await TestTenant.with { t in
            let b = Browser(t)
            let page = try await b.get(authorizeURL())
            _ = try await b.follow(page, link: "forgotPassword")
            let journeys = try await t.admin(.GET, "/journeys").json["journeys"]?.arrayValue ?? []
            #expect(journeys.first?["outcome"] == "AADB2C90118", "\(journeys)")
        }
    }

    @Test func masksEverySecretLookingName() {
        let kept = JourneyRecorder.masked([
            "password": "p", "newPassword": "p", "ReadOnlyEmail_ver_input": "1", "otpCode": "1", "client_secret": "s", "idToken": "t",
            "email": "a@b.c", "countryCode": "+33", "nested": ["verificationCode": "1", "city": "Lyon"],
        ])
        #expect(kept["email"] == "a@b.c" && kept["countryCode"] == "+33" && kept["nested"]?["city"] == "Lyon")
        for name in ["password", "newPassword", "ReadOnlyEmail_ver_input", "otpCode", "client_secret", "idToken"] {
            #expect(kept[name] == "••••", "\(name)")
        }
        #expect(kept["nested"]?["verificationCode"] == "••••")
    }
}
