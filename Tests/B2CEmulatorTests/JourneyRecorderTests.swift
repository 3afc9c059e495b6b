import B2CKit
import B2CProtocol
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
        let e = try await ConnectorEndpoint()
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
            // The journey's orchestration steps in order, the ones whose conditions did not hold said as skipped, the page
            // requests between them.
            let expected = [
                "start:authorize", "step:step 1: combinedSignIn", "step:signin", "decision:step 2 skipped: federation",
                "decision:step 3 skipped: postFederationConnector", "decision:step 4 skipped: socialSignUp",
                "decision:step 5 skipped: signUp", "step:step 6: secondFactor", "decision:MFA asked", "step:mfasend", "code:code sent",
                "step:mfaverify", "step:mfacontinue", "step:step 7: directoryRead", "claims:directory read",
                "step:step 8: preTokenConnector", "callout:preTokenIssuance", "step:step 9: tokenIssuance", "claims:token issuance",
                "end:tokens",
            ]
            #expect(names == expected, "\(names)")
            let skipped = try #require(events.first { $0["name"] == "step 5 skipped: signUp" })
            #expect(skipped["detail"]?["because"] == "a person is already known")
            let entered = try #require(events.first { $0["name"] == "step 6: secondFactor" })
            #expect(entered["detail"]?["claims"]?["objectId"] == .string(alice.oid) && entered["detail"]?["claims"]?["mfaDone"] == false)
            let signIn = try #require(events.first { $0["name"] == "signin" })
            #expect(signIn["detail"]?["form"]?["logonIdentifier"] == .string(alice.email))
            #expect(signIn["detail"]?["form"]?["password"] == "••••", "a password is never kept: \(signIn)")
            #expect(signIn["detail"]?["orchestrationStep"] == "step 1: combinedSignIn", "the step the transaction waited at")
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
            // An id is one path segment whatever it holds: a slash or a letter outside ASCII is escaped, not sent raw; one
            // that begins with '-' (base64url: one browser journey in 64) is the option's value, not another option.
            for odd in ["a/b", "é?x", "-Ab_c", "--json"] {
                let r = try await runOffThePool(Self.emulatorBinary, ["journeys", "--url", t.base, "--id", odd])
                #expect(r.status == 1 && r.stderr.contains("no journey '\(odd)'"), "\(odd): \(r.status) \(r.stderr)")
            }
            let nobody = try await runOffThePool(Self.emulatorBinary, ["journeys", "--url", "http://127.0.0.1:9"])
            #expect(nobody.status == 5 && nobody.stderr.contains("no tenant answers"), "\(nobody.status) \(nobody.stderr)")
        }
    }

    /// The same journey as a page a person opens (the URL asked for HTML): the steps in order with their claims, the code
    /// and the callout in the page, no script, and what the app or the person typed escaped.
    @Test func aJourneyAsAPage() async throws {
        let e = try await ConnectorEndpoint()
        defer { e.stop() }
        try await TestTenant.with(seed: try Self.seed(e)) { t in
            try await e.queue(t, [["body": ["version": "1.0.0", "action": "Continue"]]])
            let b = Browser(t)
            let hostile = "x\"><img src=x onerror=alert(1)>@contoso.com"
            _ = try await b.get(authorizeURL(policy: APIConnectorTests.policy) + "&login_hint=" + FormEncoding.escape(hostile))
            let page = try await b.signIn(policy: APIConnectorTests.policy, email: alice.email, password: alice.password)
            let sent = try await b.submit(page, form: "emailSendForm", [:])
            let code = try #require(try await MFATests.outbox(t).first?["code"]?.stringValue)
            let verified = try await b.submit(sent, form: "emailVerifyForm", ["ReadOnlyEmail_ver_input": code])
            _ = try await b.submit(verified, form: "attributeVerification", [:])
            let html = [("Accept", "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8")]
            let list = try await t.get("/_admin/journeys", headers: html)
            #expect(list.status == 200 && list.body.contains("<table"))
            #expect(list.headers.first(name: "content-type")?.hasPrefix("text/html") == true)
            let ids = try await t.admin(.GET, "/journeys").json["journeys"]?.arrayValue?.compactMap { $0["id"]?.stringValue } ?? []
            #expect(ids.count == 2)
            for id in ids { #expect(list.body.contains("/_admin/journeys/\(id)")) }
            let done = try #require(ids.first)
            let journey = try await t.get("/_admin/journeys/\(done)", headers: html)
            #expect(journey.status == 200 && !journey.body.contains("<script"), "\(journey.body.prefix(300))")
            var at = journey.body.startIndex
            for step in ["authorize", "signin", "MFA asked", "code sent", "preTokenIssuance", "token issuance", "tokens"] {
                let found = try #require(journey.body.range(of: step, range: at..<journey.body.endIndex), "\(step) in order")
                at = found.upperBound
            }
            #expect(journey.body.contains("href=\"#message-1\"") && journey.body.contains("id=\"message-1\""))
            #expect(journey.body.contains(code), "the code is in the page's messages, as in the outbox")
            #expect(journey.body.contains("href=\"#callout-1\"") && journey.body.contains("id=\"callout-1\""))
            // The first journey carried the hostile hint: in the page, escaped.
            let first = try await t.get("/_admin/journeys/\(ids[1])", headers: html)
            #expect(first.body.contains("&lt;img src=x onerror=alert(1)&gt;") && !first.body.contains("<img src=x"), "\(first.body)")
            // A page's own request (a script's fetch) is refused, as for the rest of the admin surface.
            let scripted = try await t.get("/_admin/journeys", headers: html + [("Sec-Fetch-Site", "same-origin")])
            #expect(scripted.status == 403)
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

    @Test func aForgottenPasswordEndsWithItsCode() async throws {
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
