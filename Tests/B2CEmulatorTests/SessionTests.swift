import B2CKit
import Foundation
import Testing

@testable import B2CEmulator

/// "Keep me signed in" and session behaviour (reference: b2c-journeys.md §7): the `.rememberMe` checkbox, persistent vs
/// browser-session cookies, lifetimes on the tenant clock (rolling or absolute), the four SSO scopes, and the admin's view.
@Suite struct SessionTests {
    static var seed: EmulatorSeed {
        var s = EmulatorSeed.default
        let susi = s.policy(named: "B2C_1_susi")!
        func flow(_ id: String, _ change: (inout EmulatorSeed.SessionSettings) -> Void) -> EmulatorSeed.Policy {
            var p = susi
            p.id = id
            p.session.lifetimeMinutes = 60
            change(&p.session)
            return p
        }
        s.policies += [
            flow("B2C_1_kmsi") { $0.kmsiDays = 30 }, flow("B2C_1_absolute") { $0.rolling = false },
            flow("B2C_1_perpolicy") { $0.scope = .policy }, flow("B2C_1_perapp") { $0.scope = .application },
            flow("B2C_1_suppressed") { $0.scope = .suppressed },
        ]
        return s
    }

    static func cookie(_ r: TestResponse) -> String { r.headers["set-cookie"].first { $0.hasPrefix("x-ms-cpim-sso") } ?? "" }

    /// The next authorize in this browser: answered by the session (302 with a code) or the sign-in page (200).
    static func answeredBySession(
        _ b: Browser, _ policy: String, client: String = clientID, redirectURI: String = redirect
    ) async throws
        -> Bool
    {
        let r = try await b.get(authorizeURL(policy: policy, redirectURI: redirectURI, client: client))
        return r.status == 302 && r.redirectParams["code"] != nil
    }

    @Test func keepMeSignedInMakesAPersistentCookieForItsDays() async throws {
        try await TestTenant.with(seed: Self.seed) { t in
            let page = try await Browser(t).get(authorizeURL(policy: "B2C_1_kmsi"))
            #expect(page.body.contains("class=\"rememberMe\"") && page.body.contains("id=\"rememberMe\""))
            #expect(page.body.contains("Keep me signed in"))
            #expect(!(try await Browser(t).get(authorizeURL(policy: "B2C_1_susi"))).body.contains("rememberMe"))
            let kept = Browser(t)
            // Without the box checked: a browser-session cookie.
            let unchecked = try await kept.signIn(policy: "B2C_1_kmsi", email: alice.email, password: alice.password)
            #expect(!Self.cookie(unchecked).contains("Max-Age") && !Self.cookie(unchecked).isEmpty, "\(Self.cookie(unchecked))")
            let b = Browser(t)
            let first = try await b.get(authorizeURL(policy: "B2C_1_kmsi"))
            let signedIn = try await b.submit(
                first, form: "localAccountForm", ["logonIdentifier": alice.email, "password": alice.password, "rememberMe": "true"])
            #expect(Self.cookie(signedIn).contains("Max-Age=2592000"), "\(Self.cookie(signedIn))")
            // Past the 60-minute lifetime the persistent session still answers; past 30 days it does not.
            try await t.advanceClock(2 * 3600)
            #expect(try await Self.answeredBySession(b, "B2C_1_kmsi"))
            #expect(!(try await Self.answeredBySession(kept, "B2C_1_kmsi")), "the browser-session one ended after 60 minutes")
            try await t.advanceClock(31 * 86_400)
            #expect(!(try await Self.answeredBySession(b, "B2C_1_kmsi")))
            let listed = try await t.admin(.GET, "/sessions").json["sessions"]?.arrayValue ?? []
            #expect(listed.contains { $0["keepMeSignedIn"] == true && $0["live"] == false })
        }
    }

    @Test func rollingSessionsLiveOnAndAbsoluteOnesEnd() async throws {
        try await TestTenant.with(seed: Self.seed) { t in
            let rolling = Browser(t)
            _ = try await rolling.signIn(policy: "B2C_1_kmsi", email: alice.email, password: alice.password)
            let absolute = Browser(t)
            _ = try await absolute.signIn(policy: "B2C_1_absolute", email: bob.email, password: bob.password)
            try await t.advanceClock(50 * 60)
            #expect(try await Self.answeredBySession(rolling, "B2C_1_kmsi"))
            #expect(try await Self.answeredBySession(absolute, "B2C_1_absolute"))
            try await t.advanceClock(50 * 60)
            #expect(try await Self.answeredBySession(rolling, "B2C_1_kmsi"), "used 50 minutes ago: still alive")
            #expect(!(try await Self.answeredBySession(absolute, "B2C_1_absolute")), "100 minutes after its start: gone")
        }
    }

    @Test(arguments: [
        ("B2C_1_perpolicy", "another user flow", false), ("B2C_1_perapp", "another app", false), ("B2C_1_suppressed", "suppressed", false),
        ("B2C_1_susi", "the tenant", true),
    ])
    func theSSOScopeDecidesWhichSignInsASessionAnswers(_ policy: String, _ what: String, _ answersAnotherFlow: Bool) async throws {
        try await TestTenant.with(seed: Self.seed) { t in
            let b = Browser(t)
            _ = try await b.signIn(policy: "B2C_1_susi", email: alice.email, password: alice.password)
            let sameFlowOtherApp = try await b.get(
                authorizeURL(policy: policy, redirectURI: "http://localhost/signin-oidc", client: EmulatorSeed.defaultWebAppID))
            let sameApp = try await Self.answeredBySession(b, policy)
            switch policy {
            case "B2C_1_perapp": #expect(sameApp && sameFlowOtherApp.status == 200, "\(what)")
            case "B2C_1_perpolicy", "B2C_1_suppressed": #expect(!sameApp, "\(what)")
            default: #expect(sameApp == answersAnotherFlow, "\(what)")
            }
        }
    }

    @Test func theAdminListsAndEndsSessions() async throws {
        try await TestTenant.with(seed: Self.seed) { t in
            let a = Browser(t)
            _ = try await a.signIn(policy: "B2C_1_susi", email: alice.email, password: alice.password)
            let b = Browser(t)
            _ = try await b.signIn(policy: "B2C_1_susi", email: bob.email, password: bob.password)
            let listed = try await t.admin(.GET, "/sessions").json["sessions"]?.arrayValue ?? []
            #expect(listed.count == 2 && listed.allSatisfy { $0["policy"] == "b2c_1_susi" && $0["clientId"] == .string(clientID) })
            #expect(try await t.admin(.DELETE, "/sessions?user=\(alice.email)").json["ended"] == 1)
            #expect(!(try await Self.answeredBySession(a, "B2C_1_susi")))
            #expect(try await Self.answeredBySession(b, "B2C_1_susi"))
            #expect(try await t.admin(.DELETE, "/sessions?user=nobody@x.test").status == 404)
        }
    }

    @Test func theSeedSaysWhatIsWrongWithSessionSettings() {
        func parse(_ extra: String, kind: String = "signUpSignIn") -> String? {
            do { _ = try parsePolicySeed(extra, kind: kind) } catch { return "\(error)" }
            return nil
        }
        #expect(
            parse(#""kmsi": {"enabled": true, "days": 7}, "session": {"lifetimeMinutes": 30, "timeout": "absolute", "sso": "policy"}"#)
                == nil)
        #expect(parse(#""kmsi": {"days": 91}"#)?.contains("$.policies[0].kmsi.days") == true)
        #expect(parse(#""kmsi": {"days": 7}"#, kind: "passwordReset")?.contains("$.policies[0].kmsi") == true)
        #expect(parse(#""session": {"sso": "galaxy"}"#)?.contains("$.policies[0].session.sso") == true)
        #expect(parse(#""session": {"lifetimeMinutes": 5}"#)?.contains("lifetimeMinutes") == true)
    }
}
