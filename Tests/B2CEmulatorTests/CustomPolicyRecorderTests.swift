import B2CKit
import B2CProtocol
import Foundation
import Testing

@testable import B2CEmulator

/// The journey recorder for a custom policy, as `GET /_admin/journeys/{id}` and `b2c-emulator journeys --id` show it: a
/// sign-in that fails — a validation profile's refusal on the page, a step a precondition skips, the claims bag after each
/// technical profile, and the exact `AADB2C` error the journey ends with.
@Suite(.serialized) struct CustomPolicyRecorderTests {
    static let policy = "B2C_1A_recorded"

    /// Over the example set: the local sign-in, the sign-up its precondition skips for a known person, the directory read,
    /// then the app's REST API (whose 409 ends the journey).
    static func recordedPolicy(_ url: String) -> String {
        CustomPolicyOrchestrationTests.relyingParty(
            policy,
            blocks: """
                <ClaimsSchema>
                  <ClaimType Id="loyaltyNumber"><DisplayName>Loyalty number</DisplayName><DataType>string</DataType></ClaimType>
                </ClaimsSchema>
                """,
            profiles: """
                <TechnicalProfile Id="REST-GetLoyalty">
                  <Protocol Name="Proprietary" Handler="\(CustomPolicyOrchestrationTests.handler("RestfulProvider"))" />
                  <Metadata><Item Key="ServiceUrl">\(url)/none/loyalty</Item><Item Key="AuthenticationType">None</Item></Metadata>
                  <InputClaims><InputClaim ClaimTypeReferenceId="objectId" PartnerClaimType="userId" /></InputClaims>
                  <OutputClaims><OutputClaim ClaimTypeReferenceId="loyaltyNumber" PartnerClaimType="number" /></OutputClaims>
                </TechnicalProfile>
                """,
            steps: CustomPolicyOrchestrationTests.localSignIn + """
                <OrchestrationStep Order="2" Type="ClaimsExchange">
                  <Preconditions><Precondition Type="ClaimsExist" ExecuteActionsIf="true"><Value>objectId</Value>
                    <Action>SkipThisOrchestrationStep</Action></Precondition></Preconditions>
                  <ClaimsExchanges>
                    <ClaimsExchange Id="SignUp" TechnicalProfileReferenceId="LocalAccountSignUpWithLogonEmail" />
                  </ClaimsExchanges>
                </OrchestrationStep>
                <OrchestrationStep Order="3" Type="ClaimsExchange">
                  <ClaimsExchanges><ClaimsExchange Id="Read" TechnicalProfileReferenceId="AAD-UserReadUsingObjectId" /></ClaimsExchanges>
                </OrchestrationStep>
                <OrchestrationStep Order="4" Type="ClaimsExchange">
                  <ClaimsExchanges><ClaimsExchange Id="Loyalty" TechnicalProfileReferenceId="REST-GetLoyalty" /></ClaimsExchanges>
                </OrchestrationStep>
                <OrchestrationStep Order="5" Type="SendClaims" CpimIssuerTechnicalProfileReferenceId="JwtIssuer" />
                """)
    }

    @Test func aFailedSignInShowsTheRefusalTheSkippedStepTheClaimsBagAndTheError() async throws {
        let endpoint = try await ConnectorEndpoint()
        defer { endpoint.stop() }
        try await CustomPolicyOrchestrationTests.withTenant(["Recorded.xml": Self.recordedPolicy(endpoint.http)]) { t in
            try await endpoint.queue(t, [["status": 409, "body": ["version": "1.0.0", "status": 409, "userMessage": "No loyalty here."]]])
            let b = Browser(t)
            let page = try await b.get(authorizeURL(policy: Self.policy))
            let wrong = try await b.submit(page, form: "localAccountForm", ["signInName": alice.email, "password": "Not-her-2026!"])
            #expect(wrong.body.contains("Your password is incorrect"), "\(wrong.body.prefix(600))")
            let failed = try await b.submit(wrong, form: "localAccountForm", ["signInName": alice.email, "password": alice.password])
            #expect(
                failed.redirectParams["code"] == nil && failed.body.contains("No loyalty here."),
                "\(failed.status) \(failed.body.prefix(600))")

            let list = try await t.admin(.GET, "/journeys?policy=\(Self.policy)").json
            let summary = try #require(list["journeys"]?.arrayValue?.first, "\(list)")
            #expect(summary["outcome"] == "AADB2C90075" && summary["policy"] == .string(Self.policy), "\(summary)")
            let id = try #require(summary["id"]?.stringValue)
            let journey = try await t.admin(.GET, "/journeys/\(id)").json
            let events = journey["events"]?.arrayValue ?? []
            func event(_ name: String) -> JSONValue? { events.first { $0["name"]?.stringValue == name } }
            // The validation profile that refused the page, with B2C's code and the profile's message; the page said so.
            let refusal = try #require(event("validation profile login-NonInteractive failed"), "\(events.map { $0["name"] ?? "" })")
            #expect(
                refusal["detail"]?["error"] == "AADB2C90225" && refusal["detail"]?["message"] == "Your password is incorrect", "\(refusal)")
            #expect(event("page refused")?["detail"]?["error"] == "AADB2C90225")
            // The sign-up a precondition skipped, and why.
            let skipped = try #require(event("orchestration step 2 skipped: ClaimsExchange"))
            #expect(skipped["detail"]?["because"] == "SkipThisOrchestrationStep: ClaimsExist objectId is true", "\(skipped)")
            // The claims bag after the directory read: what it added, beside what the page and the password check gave.
            let read = try #require(event("technical profile AAD-UserReadUsingObjectId"))
            let bag = try #require(read["detail"]?["claims"]?.objectValue, "\(read)")
            #expect(read["detail"]?["handler"] == "AzureActiveDirectoryProvider", "\(read)")
            #expect(bag["objectId"] == .string(alice.oid) && bag["email"] == .string(alice.email) && bag["givenName"] == "Alice", "\(bag)")
            #expect(bag["signInName"] == .string(alice.email) && bag["password"] == "••••", "\(bag)")
            // The exact error the journey ended with: REST-GetLoyalty's 409, as B2C's AADB2C90075 and the API's message.
            let end = try #require(events.last)
            #expect(end["kind"] == "end" && end["name"] == "AADB2C90075" && end["detail"]?["message"] == "No loyalty here.", "\(end)")
            let names = events.compactMap { $0["name"]?.stringValue }
            let order = [
                "validation profile login-NonInteractive failed", "page refused", "technical profile login-NonInteractive",
                "orchestration step 2 skipped: ClaimsExchange", "orchestration step 3: ClaimsExchange",
                "technical profile AAD-UserReadUsingObjectId", "orchestration step 4: ClaimsExchange", "AADB2C90075",
            ]
            #expect(order.compactMap { names.firstIndex(of: $0) } == order.compactMap { names.firstIndex(of: $0) }.sorted(), "\(names)")
            #expect(order.allSatisfy(names.contains), "\(names)")
            #expect(!journey.serialized().contains(alice.password) && !journey.serialized().contains("Not-her-2026!"))

            // The same on a terminal: each of those lines, in order, with its details; the bag whole, the password masked.
            let timeline = try await runOffThePool(JourneyRecorderTests.emulatorBinary, ["journeys", "--url", t.base, "--id", id])
            #expect(timeline.status == 0, "\(timeline.stderr)")
            let lines = timeline.stdout.split(separator: "\n").map(String.init)
            #expect(lines.first?.contains("\(Self.policy)") == true && lines.first?.hasSuffix("AADB2C90075") == true, "\(timeline.stdout)")
            let expected = [
                "validation profile login-NonInteractive failed  error=AADB2C90225 message=Your password is incorrect",
                "page refused  error=AADB2C90225",
                "orchestration step 2 skipped: ClaimsExchange  because=SkipThisOrchestrationStep: ClaimsExist objectId is true",
                "technical profile AAD-UserReadUsingObjectId  claims={",
                "AADB2C90075  message=No loyalty here.",
            ]
            var at = 0
            for line in lines where at < expected.count && line.contains(expected[at]) { at += 1 }
            #expect(at == expected.count, "the timeline in order, up to '\(at < expected.count ? expected[at] : "")': \(timeline.stdout)")
            let readLine = try #require(lines.first { $0.contains("technical profile AAD-UserReadUsingObjectId") })
            for claim in ["email=\(alice.email)", "givenName=Alice", "objectId=\(alice.oid)", "password=••••", "surname=Example"] {
                #expect(readLine.contains(claim), "\(claim) in \(readLine)")
            }
            #expect(!timeline.stdout.contains(alice.password) && !timeline.stdout.contains("Not-her-2026!"))
        }
    }
}
