import B2CKit
import B2CProtocol
import ChildProcess
import Foundation
import Hummingbird
import Testing

@testable import B2CEmulator

/// The journey engine: each user flow's ordered steps built from its settings, the runner entering the steps whose
/// conditions hold (and recording the others as skipped), and the step types the last wave's features became — the
/// callouts, the directory read, social sign-up — each entered and resumed in-process.
@Suite struct JourneyEngineTests {
    typealias T = JourneyStepTypeTests

    static func steps(_ p: EmulatorSeed.Policy, tokenExtension: Bool = false) -> [Journey.Step] {
        Journey(p, tokenExtension: tokenExtension).steps.map(\.step)
    }

    @Test func eachUserFlowBuildsItsJourneyFromItsSettings() throws {
        let seed = EmulatorSeed.default
        let susi = try #require(seed.policy(named: "B2C_1_susi"))
        #expect(Self.steps(susi) == [.combinedSignIn, .signUp, .secondFactor, .directoryRead, .tokenIssuance])
        #expect(
            Self.steps(try #require(seed.policy(named: "B2C_1_signin")))
                == [.combinedSignIn, .secondFactor, .directoryRead, .tokenIssuance])
        #expect(
            Self.steps(try #require(seed.policy(named: "B2C_1_edit_profile")))
                == [.combinedSignIn, .directoryRead, .profileEdit, .tokenIssuance])
        #expect(Self.steps(try #require(seed.policy(named: "B2C_1_reset"))) == [.passwordReset, .directoryRead, .tokenIssuance])
        // Providers, connectors and an extension add their steps, each where B2C runs it.
        var social = susi
        social.identityProviders = [.local, .google]
        social.apiConnectors = .init(
            postFederationSignup: .init(url: "http://127.0.0.1:1/f"), preTokenIssuance: .init(url: "http://127.0.0.1:1/t"))
        #expect(
            Self.steps(social, tokenExtension: true) == [
                .combinedSignIn, .federation, .postFederationConnector, .socialSignUp, .signUp, .secondFactor, .directoryRead,
                .preTokenConnector, .tokenIssuanceExtension, .tokenIssuance,
            ])
        var signUp = social
        signUp.kind = .signUp
        #expect(Self.steps(signUp).prefix(4) == [.signUp, .federation, .postFederationConnector, .socialSignUp])
        // The conditions: the first page only while nobody is known, the sign-up page only when its link was followed.
        let journey = Journey(social)
        #expect(journey.steps[0].when == [.noUser] && journey.steps[4].when == [.noUser, .signUpChosen])
        var claims = JourneyClaims()
        #expect(Journey.Condition.noUser.holds(claims) && !Journey.Condition.userKnown.holds(claims))
        claims.signedIn("oid", at: 1)
        #expect(!Journey.Condition.noUser.holds(claims) && Journey.Condition.userKnown.holds(claims) && claims.newSession)
    }

    /// The runner: an SSO session's claims skip the first page and the second factor it already did; each skip is
    /// recorded with its reason; a step the journey does not have is refused.
    @Test func theRunnerEntersTheStepsWhoseConditionsHold() async throws {
        try await TestTenant.with { t in
            let runner = JourneyRunner(t.emulator.authorize)
            let policy = try #require(t.emulator.seed.policy(named: "B2C_1_susi"))
            var tx = try await T.transaction(t, policy: "B2C_1_susi")
            tx.claims.fromSession(alice.oid, authTime: 7, mfa: true)
            let answer = try await runner.start(tx, policy: policy, T.visit(t))
            #expect(FirstPageStepTests.code(answer) != nil)
            let events = t.emulator.store.journeys.journey(tx.id)?.events ?? []
            let skipped = events.filter { $0.kind == .decision && $0.name.contains("skipped") }
            #expect(skipped.map(\.name) == ["step 1 skipped: combinedSignIn", "step 2 skipped: signUp"], "\(events.map(\.name))")
            #expect(skipped.first?.detail["because"] == "a person is already known")
            #expect(events.contains { $0.name == "MFA not asked" && $0.detail["why"] == "the session already did it" })
            // No new session: the SSO session answered.
            #expect(!answer.headers[values: .setCookie].contains { $0.contains("x-ms-cpim-sso") })
            let reset = try #require(t.emulator.seed.policy(named: "B2C_1_reset"))
            await #expect(throws: PageError.self) { try await runner.proceed(.next(tx), after: .socialSignUp, policy: reset, T.visit(t)) }
        }
    }

    /// The directory read: the person the claims name must still exist when the journey reaches the tokens.
    @Test func theDirectoryReadEndsTheJourneyOfAPersonDeletedMeanwhile() async throws {
        try await TestTenant.with { t in
            let policy = try #require(t.emulator.seed.policy(named: "B2C_1_susi"))
            let step = DirectoryReadStep(t.emulator.authorize)
            var tx = try await T.transaction(t, policy: "B2C_1_susi")
            tx.claims.signedIn(alice.oid, at: 1)
            #expect(try T.next(try await step.enter(tx, T.visit(t), policy: policy)).claims.oid == alice.oid)
            let read = t.emulator.store.journeys.journey(tx.id)?.events.last { $0.name == "directory read" }
            #expect(read?.detail["email"] == .string(alice.email))
            tx.claims.oid = "00000000-0000-4000-8000-000000000000"
            do {
                _ = try await step.enter(tx, T.visit(t), policy: policy)
                Issue.record("a person who is not in the directory got through")
            } catch let e as PageError {
                #expect(e.code == "AADB2C99002")
            }
        }
    }

    /// The API connector steps: "before sending the token" writes its claims into the bag; "after federating" changes the
    /// first-time person's names, or stops the journey with its block page.
    @Test func theConnectorStepsWriteTheirAnswersIntoTheClaims() async throws {
        let e = try await ConnectorEndpoint()
        defer { e.stop() }
        try await TestTenant.with(seed: try APIConnectorTests.seed(e)) { t in
            let policy = try #require(t.emulator.seed.policy(named: APIConnectorTests.policy))
            var tx = try await T.transaction(t, policy: APIConnectorTests.policy)
            tx.claims.signedIn(alice.oid, at: 1)
            try await e.queue(t, [["body": ["version": "1.0.0", "action": "Continue", "loyaltyTier": "gold"]]])
            let preToken = ConnectorCalloutStep(parts: t.emulator.authorize.parts, point: .preTokenIssuance)
            let after = try T.next(try await preToken.enter(tx, T.visit(t), policy: policy))
            #expect(after.claims.extraClaims["loyaltyTier"] == "gold")

            var first = try await T.transaction(t, policy: APIConnectorTests.policy)
            first.claims.firstTimeIdentity = FederatedIdentity(provider: .google, subject: "g-1", email: "gina@gmail.com", name: "G")
            let federation = ConnectorCalloutStep(parts: t.emulator.authorize.parts, point: .postFederationSignup)
            try await e.queue(t, [["body": ["version": "1.0.0", "action": "Continue", "displayName": "Gina Gee"]]])
            let renamed = try T.next(try await federation.enter(first, T.visit(t), policy: policy))
            #expect(renamed.claims.firstTimeIdentity?.name == "Gina Gee")
            try await e.queue(t, [["body": ["version": "1.0.0", "action": "ShowBlockPage", "userMessage": "Not today."]]])
            let blocked = try await T.body(federation.enter(first, T.visit(t), policy: policy))
            #expect(blocked.contains("Not today."))
        }
    }

    /// Social sign-up: entered with the first-time identity of the claims bag, resumed by its page into a new linked user.
    @Test func socialSignUpMakesALinkedUserFromTheBagsIdentity() async throws {
        try await TestTenant.with { t in
            let policy = try #require(t.emulator.seed.policy(named: "B2C_1_susi_social"))
            let step = SocialSignUpStep(t.emulator.authorize)
            var tx = try await T.transaction(t, policy: "B2C_1_susi_social")
            #expect(try T.next(try await step.enter(tx, T.visit(t), policy: policy)).claims.oid == nil, "no identity: nothing to do")
            tx.claims.firstTimeIdentity = FederatedIdentity(provider: .google, subject: "g-2", email: "gus@gmail.com", name: "Gus")
            let page = try await T.body(step.enter(tx, T.visit(t), policy: policy))
            #expect(page.contains("gus@gmail.com"))
            let waiting = try #require(try t.emulator.store.transaction(id: tx.id, now: t.emulator.clock.now()))
            #expect(waiting.step.accepts == ["socialsignup", "cancel"])
            let empty = try await T.body(step.resume(["displayName": ""], waiting, policy: policy))
            #expect(try t.emulator.store.user(email: "gus@gmail.com") == nil && empty.contains("gus@gmail.com"))
            let made = try T.next(try await step.resume(["displayName": "Gus G"], waiting, policy: policy))
            let gus = try #require(try t.emulator.store.user(email: "gus@gmail.com"))
            #expect(made.claims.oid == gus.oid && made.claims.newUser && gus.displayName == "Gus G")
        }
    }

    /// OnTokenIssuanceStart as a step: its claims go into the bag; a failure answers the app with Entra's code and no
    /// token. The journey of an app without the extension has no such step.
    @Test func theTokenExtensionStepAddsItsClaimsOrEndsTheJourney() async throws {
        let e = try await ConnectorEndpoint()
        defer { e.stop() }
        try await TestTenant.with(seed: AuthenticationExtensionTests.seed(e, events: [.onTokenIssuanceStart])) { t in
            let policy = try #require(t.emulator.seed.policy(named: "B2C_1_susi"))
            var tx = try await T.transaction(t, policy: "B2C_1_susi")
            #expect(JourneyRunner(t.emulator.authorize).journey(tx, policy: policy).contains(.tokenIssuanceExtension))
            tx.claims.signedIn(alice.oid, at: 1)
            try await e.queue(
                t,
                [
                    AuthenticationExtensionTests.action(
                        "onTokenIssuanceStart", "microsoft.graph.tokenIssuanceStart.provideClaimsForToken",
                        ["claims": ["loyaltyTier": "gold", "unmapped": "x"]]),
                    ["status": 500, "body": "no"],
                ])
            let step = TokenExtensionStep(t.emulator.authorize)
            let after = try T.next(try await step.enter(tx, T.visit(t), policy: policy))
            #expect(after.claims.extraClaims == ["loyaltyTier": "gold"], "only the claims the extension's list names")
            let failed = try T.response(try await step.enter(tx, T.visit(t), policy: policy))
            let location = try #require(failed.headers[.location])
            #expect(location.contains("error=server_error") && location.contains("AADSTS1003"), "\(location)")
            #expect(try t.emulator.store.transaction(id: tx.id, now: t.emulator.clock.now()) == nil, "the journey ended")
        }
        // Without the extension, the journey has no such step.
        try await TestTenant.with { t in
            let policy = try #require(t.emulator.seed.policy(named: "B2C_1_susi"))
            let tx = try await T.transaction(t, policy: "B2C_1_susi")
            #expect(!JourneyRunner(t.emulator.authorize).journey(tx, policy: policy).contains(.tokenIssuanceExtension))
        }
    }
}
