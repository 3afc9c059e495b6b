import B2CKit
import Foundation
import Testing

@testable import B2CEmulator

/// Entra External ID's custom authentication extensions (reference: b2c-journeys.md §4) against a real local endpoint
/// that verifies each callout's bearer token with PyJWT, as extension code does.
@Suite(.serialized) struct AuthenticationExtensionTests {
    static let appID = "7d3f9a1c-2b4e-4c6d-8e0f-1a2b3c4d5e6f"

    /// Entra's longest timeout by default: a loaded test machine answers slower than a real endpoint must.
    static func seed(
        _ e: ConnectorEndpoint, events: [EmulatorSeed.AuthenticationExtension.Event], timeoutMs: Int = 2000
    )
        -> EmulatorSeed
    {
        var seed = EmulatorSeed.default
        seed.tenant.externalId = true
        seed.tenant.extensionsAppId = APIConnectorTests.appID
        var p = seed.policies[seed.policies.firstIndex { $0.id == "B2C_1_susi" }!]
        p.attributes += [.init(name: "city", label: "City"), .init(name: "extension_LoyaltyId", label: "Loyalty id")]
        seed.policies[seed.policies.firstIndex { $0.id == "B2C_1_susi" }!] = p
        seed.authenticationExtensions = events.map { event in
            .init(
                event: event, url: e.http + "/extension/\(event.rawValue)?aud=\(appID)", appId: appID,
                claims: event == .onTokenIssuanceStart ? ["loyaltyTier", "CustomRoles", "sub"] : [], timeoutMs: timeoutMs)
        }
        return seed
    }

    static func action(_ event: String, _ type: String, _ payload: [String: JSONValue] = [:]) -> JSONValue {
        var action = payload
        action["@odata.type"] = .string(type)
        return [
            "body": ["data": ["@odata.type": .string("microsoft.graph.\(event)ResponseData"), "actions": [.object(action)]]]
        ]
    }

    @Test func aSignUpThroughEveryEventWithTheirActions() async throws {
        let e = try await ConnectorEndpoint()
        defer { e.stop() }
        let seed = Self.seed(e, events: [.onAttributeCollectionStart, .onOtpSend, .onAttributeCollectionSubmit, .onTokenIssuanceStart])
        try await TestTenant.with(seed: seed) { t in
            try await e.queue(
                t,
                [
                    Self.action(
                        "onAttributeCollectionStart", "microsoft.graph.attributeCollectionStart.setPrefillValues",
                        [
                            "inputs": [
                                "city": "Lyon",
                                "extension_\(APIConnectorTests.appID.replacingOccurrences(of: "-", with: ""))_LoyaltyId": "L-1",
                            ]
                        ]),
                    Self.action("OnOtpSend", "microsoft.graph.OtpSend.continueWithDefaultBehavior"),
                    Self.action(
                        "onAttributeCollectionSubmit", "microsoft.graph.attributeCollectionSubmit.showValidationError",
                        [
                            "message": "Please fix the below errors to proceed.",
                            "attributeErrors": ["city": "City cannot contain any numbers"],
                        ]),
                    Self.action(
                        "onAttributeCollectionSubmit", "microsoft.graph.attributeCollectionSubmit.modifyAttributeValues",
                        ["attributes": ["displayName": "Nina (modified)"]]),
                    Self.action(
                        "onTokenIssuanceStart", "microsoft.graph.tokenIssuanceStart.provideClaimsForToken",
                        ["claims": ["loyaltyTier": "gold", "CustomRoles": ["Writer", "Editor"], "unmapped": "x", "sub": "forged"]]),
                ])
            let b = Browser(t)
            let pkce = PKCE()
            let page = try await b.follow(try await b.get(authorizeURL(pkce: pkce)), link: "createAccount")
            #expect(page.body.contains("value=\"Lyon\"") && page.body.contains("value=\"L-1\""), "pre-filled: \(page.body.prefix(300))")
            let verified = try await SignUpTests.verify(t, b, page, email: "nina@contoso.com")
            var fields = APIConnectorTests.fields
            fields["city"] = "Lyon 3"
            let refused = try await b.submit(verified, form: "attributeVerification", fields)
            #expect(
                refused.body.contains("Please fix the below errors to proceed.")
                    && refused.body.contains("City: City cannot contain any numbers"))
            let answer = try await b.submit(refused, form: "attributeVerification", fields)
            let code = try #require(answer.redirectParams["code"], "\(answer.status) \(answer.body.prefix(400))")
            let c = try claims(
                try await t.token("B2C_1_susi", redeemForm(code: code, verifier: pkce.verifier)).json["id_token"]?.stringValue)
            #expect(c["name"] == "Nina (modified)" && c["loyaltyTier"] == "gold" && c["CustomRoles"] == ["Writer", "Editor"], "\(c)")
            #expect(c["unmapped"] == nil && c["sub"] != "forged", "only the mapped claims, never a protocol claim: \(c)")
            // Each callout carried a token of this tenant for the extension's app, which PyJWT verified.
            let calls = try await e.received(t)
            #expect(calls.count == 5)
            for call in calls {
                #expect(call["token"]?["valid"] == true && call["token"]?["azp"] == "99045fe1-7639-4a75-9d4a-577b6ca3810f", "\(call)")
                #expect(call["token"]?["aud"] == .string(Self.appID) && call["token"]?["idtyp"] == "app")
            }
            let types = calls.map { $0["body"]?["type"]?.stringValue ?? "" }
            #expect(
                types
                    == [
                        "attributeCollectionStart", "emailOtpSend", "attributeCollectionSubmit", "attributeCollectionSubmit",
                        "tokenIssuanceStart",
                    ]
                    .map { "microsoft.graph.authenticationEvent.\($0)" })
            let otp = try #require(calls[1]["body"]?["data"]?["otpContext"])
            let sentCode = try await t.latestCode(to: "nina@contoso.com")
            #expect(otp["identifier"] == "nina@contoso.com" && otp["oneTimeCode"] == .string(sentCode))
            let submitted = try #require(calls[2]["body"]?["data"]?["userSignUpInfo"]?["attributes"])
            #expect(submitted["city"]?["value"] == "Lyon 3" && submitted["city"]?["attributeType"] == "builtIn")
            #expect(submitted["givenName"]?["@odata.type"] == "microsoft.graph.stringDirectoryAttributeValue")
            #expect(calls[4]["body"]?["data"]?["authenticationContext"]?["user"]?["mail"] == "nina@contoso.com")
            #expect(calls[4]["body"]?["source"] == .string("/tenants/\(tenantID)/applications/\(clientID)"))
        }
    }

    @Test func everyWayATokenIssuanceAnswerIsWrongEndsWithEntrasCode() async throws {
        let e = try await ConnectorEndpoint()
        defer { e.stop() }
        try await TestTenant.with(seed: Self.seed(e, events: [.onTokenIssuanceStart])) { t in
            let ok = Self.action(
                "onTokenIssuanceStart", "microsoft.graph.tokenIssuanceStart.provideClaimsForToken", ["claims": ["loyaltyTier": "gold"]])
            var twoActions = ok
            twoActions = [
                "body": [
                    "data": [
                        "@odata.type": "microsoft.graph.onTokenIssuanceStartResponseData",
                        "actions": .array(
                            (ok["body"]?["data"]?["actions"]?.arrayValue ?? []) + (ok["body"]?["data"]?["actions"]?.arrayValue ?? [])),
                    ]
                ]
            ]
            let big = Self.action(
                "onTokenIssuanceStart", "microsoft.graph.tokenIssuanceStart.provideClaimsForToken",
                ["claims": ["loyaltyTier": .string(String(repeating: "x", count: 4000))]])
            let cases: [(JSONValue, String)] = [
                (["status": 500, "body": ok["body"]!], "AADSTS1003002"),
                (["body": ok["body"]!, "contentType": "text/plain"], "AADSTS1003006"),
                (["body": ""], "AADSTS1003009"),
                (twoActions, "AADSTS1003010"),
                (Self.action("onTokenIssuanceStart", "microsoft.graph.tokenIssuanceStart.provideSomethingElse"), "AADSTS1003012"),
                (Self.action("onTokenIssuanceStart", "microsoft.graph.tokenIssuanceStart.provideClaimsForToken"), "AADSTS1003007"),
                (big, "AADSTS1003025"),
                (Self.action("onAttributeCollectionStart", "microsoft.graph.tokenIssuanceStart.provideClaimsForToken"), "AADSTS1003003"),
            ]
            for (answer, code) in cases {
                try await e.queue(t, [answer])
                let r = try await Browser(t).signIn(email: alice.email, password: alice.password)
                #expect(r.redirectParams["error"] == "server_error", "\(code): \(r.status) \(r.location ?? "")")
                #expect(r.redirectParams["error_description"]?.contains(code) == true, "\(code): \(r.redirectParams)")
            }
            // No answer within the timeout, twice (the retry): 1003005 — at a tenant with Entra's shortest timeout.
            try await TestTenant.with(seed: Self.seed(e, events: [.onTokenIssuanceStart], timeoutMs: 200)) { t2 in
                try await e.queue(t2, [["delayMs": 2500], ["delayMs": 2500]])
                let late = try await Browser(t2).signIn(email: alice.email, password: alice.password)
                #expect(late.redirectParams["error_description"]?.contains("AADSTS1003005") == true, "\(late.redirectParams)")
                let last = try #require(try await t2.admin(.GET, "/callouts").json["callouts"]?.arrayValue?.last)
                #expect(last["attempts"] == 2 && last["outcome"] == "1003005" && last["kind"] == "authenticationExtension")
            }
            // A good answer after all that: the claim is in the token.
            try await e.queue(t, [ok])
            let pkce = PKCE()
            let good = try await Browser(t).signIn(email: alice.email, password: alice.password, pkce: pkce)
            let code = try #require(good.redirectParams["code"])
            let c = try claims(
                try await t.token("B2C_1_susi", redeemForm(code: code, verifier: pkce.verifier)).json["id_token"]?.stringValue)
            #expect(c["loyaltyTier"] == "gold")
        }
    }

    /// Native authentication ends in tokens through the same OnTokenIssuanceStart as the browser: its claims are in the
    /// token, and a failing extension mints none (the continuation token is spent, as the browser's transaction is).
    @Test func nativeAuthenticationsTokensGoThroughTokenIssuanceStart() async throws {
        let e = try await ConnectorEndpoint()
        defer { e.stop() }
        try await TestTenant.with(seed: Self.seed(e, events: [.onTokenIssuanceStart])) { t in
            let base = "/contoso.onmicrosoft.com/oauth2/v2.0"
            func signIn() async throws -> (TestResponse, String) {
                let start = try await t.post(
                    "\(base)/initiate", ["client_id": clientID, "challenge_type": "password redirect", "username": alice.email])
                let ct1 = try #require(start.json["continuation_token"]?.stringValue, "\(start.body)")
                let ch = try await t.post(
                    "\(base)/challenge", ["client_id": clientID, "challenge_type": "password redirect", "continuation_token": ct1])
                let ct2 = try #require(ch.json["continuation_token"]?.stringValue, "\(ch.body)")
                let form = [
                    "client_id": clientID, "grant_type": "password", "continuation_token": ct2, "password": alice.password,
                    "scope": "openid offline_access",
                ]
                return (try await t.post("\(base)/token", form), ct2)
            }
            try await e.queue(
                t,
                [
                    Self.action(
                        "onTokenIssuanceStart", "microsoft.graph.tokenIssuanceStart.provideClaimsForToken",
                        ["claims": ["loyaltyTier": "gold", "sub": "forged"]])
                ])
            let (ok, _) = try await signIn()
            #expect(ok.status == 200, "\(ok.body)")
            let c = try claims(ok.json["id_token"]?.stringValue)
            #expect(c["loyaltyTier"] == "gold" && c["sub"] != "forged", "\(c)")
            let call = try #require(try await e.received(t).last)
            #expect(call["body"]?["type"] == "microsoft.graph.authenticationEvent.tokenIssuanceStart" && call["token"]?["valid"] == true)
            #expect(call["body"]?["data"]?["authenticationContext"]?["user"]?["mail"] == .string(alice.email))
            try await e.queue(t, [["status": 500, "body": "no"]])
            let (refused, spent) = try await signIn()
            #expect(refused.status >= 400 && refused.json["access_token"] == nil, "\(refused.status) \(refused.body.prefix(300))")
            #expect(refused.body.contains("AADSTS1003002"), "\(refused.body.prefix(300))")
            let again = try await t.post(
                "\(base)/token", ["client_id": clientID, "grant_type": "password", "continuation_token": spent, "password": alice.password])
            #expect(again.json["error_codes"]?.arrayValue?.first?.lenientInt == 55113, "\(again.body)")
        }
    }

    /// Native authentication's email code goes to OnOtpSend too (and to the outbox); an answer over 1 MiB is 1003024.
    @Test func nativeAuthenticationsCodeGoesToTheExtension() async throws {
        let e = try await ConnectorEndpoint()
        defer { e.stop() }
        var seed = Self.seed(e, events: [.onOtpSend])
        seed.policies[seed.policies.firstIndex { $0.id == "B2C_1_susi" }!].signInMethod = .emailOtp  // code sign-in
        try await TestTenant.with(seed: seed) { t in
            let base = "/contoso.onmicrosoft.com/oauth2/v2.0"
            func challenge() async throws -> TestResponse {
                let start = try await t.post(
                    "\(base)/initiate", ["client_id": clientID, "challenge_type": "oob redirect", "username": alice.email])
                let token = try #require(start.json["continuation_token"]?.stringValue, "\(start.body)")
                return try await t.post(
                    "\(base)/challenge", ["client_id": clientID, "challenge_type": "oob redirect", "continuation_token": token])
            }
            try await e.queue(t, [Self.action("OnOtpSend", "microsoft.graph.OtpSend.continueWithDefaultBehavior")])
            let sent = try await challenge()
            #expect(sent.json["challenge_type"] == "oob", "\(sent.body)")
            let call = try #require(try await e.received(t).last)
            let code = try await t.latestCode(to: alice.email)
            #expect(call["body"]?["data"]?["otpContext"]?["oneTimeCode"] == .string(code) && code.count == 8)
            #expect(call["body"]?["data"]?["authenticationContext"]?["requestType"] == "signIn" && call["token"]?["valid"] == true)
            try await e.queue(t, [["body": .string(String(repeating: "x", count: 1_100_000))]])
            let refused = try await challenge()
            #expect(refused.status >= 400 && refused.body.contains("AADSTS1003024"), "\(refused.status) \(refused.body.prefix(300))")
        }
    }

    @Test func blockPagesAtTheAttributePage() async throws {
        let e = try await ConnectorEndpoint()
        defer { e.stop() }
        try await TestTenant.with(seed: Self.seed(e, events: [.onAttributeCollectionStart])) { t in
            try await e.queue(
                t,
                [
                    Self.action(
                        "onAttributeCollectionStart", "microsoft.graph.attributeCollectionStart.showBlockPage", ["message": "Closed."])
                ])
            let b = Browser(t)
            let page = try await b.follow(try await b.get(authorizeURL()), link: "createAccount")
            #expect(
                page.body.contains("id=\"claimVerificationServerError\"") && page.body.contains("Closed.") && !page.body.contains("<form"))
        }
    }

    @Test func theSeedReadsExtensions() throws {
        func refusal(_ ext: String, tenantType: String = "externalId") -> String? {
            let json = """
                {"tenant": {"name": "contoso.onmicrosoft.com", "id": "\(tenantID)", "tenantType": "\(tenantType)"},
                 "policies": [{"id": "B2C_1_x", "kind": "signUpSignIn"}],
                 "apps": [{"clientId": "\(clientID)", "redirectUris": ["http://localhost"]}],
                 "authenticationExtensions": [\(ext)]}
                """
            do {
                _ = try EmulatorSeed.parse(Data(json.utf8))
                return nil
            } catch { return "\(error)" }
        }
        let good = #"{"event": "onTokenIssuanceStart", "url": "https://api.contoso.test/claims", "appId": "\#(Self.appID)"}"#
        #expect(refusal(good) == nil)
        #expect(refusal(good, tenantType: "b2c")?.contains("apiConnectors instead") == true)
        #expect(refusal(#"{"event": "onSignIn", "url": "https://x/y", "appId": "\#(Self.appID)"}"#)?.contains("onSignIn") == true)
        #expect(
            refusal(#"{"event": "onOtpSend", "url": "http://api.contoso.test/x", "appId": "\#(Self.appID)"}"#)?.contains("https") == true)
        #expect(
            refusal(#"{"event": "onOtpSend", "url": "https://x/y", "appId": "\#(Self.appID)", "timeoutMs": 5000}"#)?.contains("timeoutMs")
                == true)
        var seed = EmulatorSeed.default
        seed.tenant.externalId = true
        seed.authenticationExtensions = [.init(event: .onOtpSend, url: "http://127.0.0.1:9/otp", appId: Self.appID, maximumRetries: 0)]
        #expect(try EmulatorSeed.parse(Data(seed.json.serialized().utf8)).authenticationExtensions == seed.authenticationExtensions)
    }
}
