import B2CKit
import Foundation
import Testing

@testable import B2CEmulator

/// The developer's endpoint (`Tests/interop/connector_endpoint.py`): plain HTTP checking Basic and Bearer credentials,
/// HTTPS requiring a client certificate of its own CA; it answers from a queue and keeps every call it received.
final class ConnectorEndpoint: Sendable {
    let service: PythonService
    let directory: URL
    var http: String { service.started["http"]?.stringValue ?? "" }
    var https: String { service.started["https"]?.stringValue ?? "" }
    var ca: String { service.started["ca"]?.stringValue ?? "" }
    var clientCert: String { service.started["clientCert"]?.stringValue ?? "" }
    var clientKey: String { service.started["clientKey"]?.stringValue ?? "" }

    init() async throws {
        directory = temporaryDirectory()
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        service = try await PythonService("connector_endpoint.py", [directory.path])
    }

    func stop() {
        service.stop()
        try? FileManager.default.removeItem(at: directory)
    }

    func queue(_ t: TestTenant, _ answers: JSONValue) async throws {
        let r = try await t.request(.POST, http + "/_answers", json: answers)
        #expect(r.status == 200)
    }

    func received(_ t: TestTenant) async throws -> [JSONValue] { try await t.get(http + "/_requests").json.arrayValue ?? [] }
}

/// B2C's API connectors (reference: b2c-journeys.md §3) against a real local endpoint: the body B2C sends, each answer
/// of the contract, each way an answer breaks it, and the credentials really sent.
@Suite(.serialized) struct APIConnectorTests {
    static let policy = "B2C_1_connectors"
    static let appID = "5c4a2f8e-9d1b-4e6f-8a3c-2b7d9e0f1a4b"

    static func seed(_ e: ConnectorEndpoint, timeoutSeconds: Int = 20) throws -> EmulatorSeed {
        var seed = EmulatorSeed.default
        seed.tenant.extensionsAppId = appID
        var p = seed.policy(named: "B2C_1_susi")!
        p.id = policy
        p.emailVerification = .off
        p.identityProviders = [.local, .google]
        p.attributes += [.init(name: "city", label: "City"), .init(name: "extension_LoyaltyId", label: "Loyalty id")]
        p.apiConnectors = .init(
            postFederationSignup: .init(url: e.http + "/none/federation"),
            postAttributeCollection: .init(
                url: e.http + "/basic/attributes", auth: .basic(username: "connector", password: "s3cret-Passw0rd"),
                timeoutSeconds: timeoutSeconds),
            preTokenIssuance: .init(url: e.http + "/bearer/token", auth: .bearer(token: "static-connector-token")))
        seed.policies.append(p)
        return seed
    }

    static func signUpPage(_ b: Browser, pkce: PKCE = PKCE()) async throws -> TestResponse {
        try await b.follow(try await b.get(authorizeURL(policy: policy, pkce: pkce)), link: "createAccount")
    }

    static let fields = [
        "email": "nina@contoso.com", "newPassword": "Nina-dev-2026!", "reenterPassword": "Nina-dev-2026!", "givenName": "Nina",
        "surname": "Ng", "displayName": "", "extension_LoyaltyId": "L-7",
    ]

    @Test func aSignUpIsCheckedCorrectedAndEnrichedByTheDevelopersEndpoint() async throws {
        let e = try await ConnectorEndpoint()
        defer { e.stop() }
        try await TestTenant.with(seed: try Self.seed(e)) { t in
            let b = Browser(t)
            try await e.queue(
                t,
                [
                    [
                        "status": 400,
                        "body": ["version": "1.0.0", "status": 400, "action": "ValidationError", "userMessage": "Loyalty id unknown."],
                    ],
                    [
                        "status": 200,
                        "body": [
                            "version": "1.0.0", "action": "Continue", "displayName": "Nina from the API",
                            "extension_5c4a2f8e9d1b4e6f8a3c2b7d9e0f1a4b_LoyaltyId": "L-42", "email": "evil@contoso.com",
                        ],
                    ],
                    ["status": 200, "body": ["version": "1.0.0", "action": "Continue", "extension_Tier": "gold", "city": "Lyon"]],
                ])
            let pkce = PKCE()
            let page = try await Self.signUpPage(b, pkce: pkce)
            let corrected = try await b.submit(page, form: "attributeVerification", Self.fields)
            #expect(
                corrected.body.contains("Loyalty id unknown.") && corrected.body.contains("value=\"L-7\""), "\(corrected.body.prefix(600))")
            let answer = try await b.submit(corrected, form: "attributeVerification", Self.fields)
            let code = try #require(answer.redirectParams["code"], "\(answer.status) \(answer.body.prefix(400))")
            let tok = try await t.token(Self.policy, redeemForm(code: code, verifier: pkce.verifier))
            let c = try claims(tok.json["id_token"]?.stringValue)
            #expect(c["name"] == "Nina from the API" && c["extension_LoyaltyId"] == "L-42" && c["emails"] == ["nina@contoso.com"], "\(c)")
            #expect(c["extension_Tier"] == "gold" && c["city"] == "Lyon", "the token step's claims: \(c)")
            // What the endpoint received: B2C's body, Basic credentials, the token step's bearer token.
            let calls = try await e.received(t)
            #expect(calls.count == 3)
            let first = try #require(calls.first?["body"])
            #expect(calls.first?["authorization"] == .string("Basic " + Data("connector:s3cret-Passw0rd".utf8).base64EncodedString()))
            #expect(first["step"] == "PostAttributeCollection" && first["client_id"] == .string(clientID) && first["ui_locales"] == "en")
            #expect(first["email"] == "nina@contoso.com" && first["givenName"] == "Nina" && first["surname"] == "Ng")
            #expect(
                first["identities"]
                    == [["signInType": "emailAddress", "issuer": "contoso.onmicrosoft.com", "issuerAssignedId": "nina@contoso.com"]])
            #expect(first["extension_5c4a2f8e9d1b4e6f8a3c2b7d9e0f1a4b_LoyaltyId"] == "L-7")
            #expect(first["displayName"] == nil && first["city"] == nil, "empty claims are not sent: \(first)")
            let token = try #require(calls.last)
            #expect(token["authorization"] == "Bearer static-connector-token" && token["body"]?["step"] == "PreTokenApplicationClaims")
            #expect(token["body"]?["clientId"] == .string(clientID) && token["body"]?["objectId"] == c["oid"])
            // The admin surface explains each call.
            let log = try await t.admin(.GET, "/callouts").json["callouts"]?.arrayValue ?? []
            #expect(log.map { $0["outcome"]?.stringValue ?? "" } == ["validationError", "continue", "continue"], "\(log)")
            #expect(log.first?["status"] == 400 && log.first?["attempts"] == 1 && log.first?["request"]?["email"] == "nina@contoso.com")
            #expect(log.allSatisfy { $0["request"]?["authorization"] == nil && !$0.serialized().contains("s3cret") }, "no credentials")
            // And one line each in the request log.
            let requests = try await t.admin(.GET, "/log").json["requests"]?.arrayValue ?? []
            let callouts = requests.filter { $0["endpoint"] == "callout" }.map { $0["grantType"]?.stringValue ?? "" }
            #expect(callouts == ["postAttributeCollection", "postAttributeCollection", "preTokenIssuance"], "\(requests)")
        }
    }

    @Test func aBlockPageEndsTheSignUp() async throws {
        let e = try await ConnectorEndpoint()
        defer { e.stop() }
        try await TestTenant.with(seed: try Self.seed(e)) { t in
            let b = Browser(t)
            try await e.queue(t, [["body": ["version": "1.0.0", "action": "ShowBlockPage", "userMessage": "Sign-ups are closed."]]])
            let page = try await Self.signUpPage(b)
            let blocked = try await b.submit(page, form: "attributeVerification", Self.fields)
            #expect(blocked.body.contains("id=\"claimVerificationServerError\"") && blocked.body.contains("Sign-ups are closed."))
            #expect(blocked.form("attributeVerification") == nil && !blocked.body.contains("<form"), "no way on")
            #expect(try await t.admin(.GET, "/users").json["users"]?.arrayValue?.contains { $0["email"] == "nina@contoso.com" } == false)
            let again = try await b.submit(page, form: "attributeVerification", Self.fields)
            #expect(again.body.contains("AADB2C90208"), "the sign-in ended: \(again.body.prefix(300))")
        }
    }

    @Test func everyWayAnAnswerBreaksTheContractIsB2CsErrorPage() async throws {
        let e = try await ConnectorEndpoint()
        defer { e.stop() }
        try await TestTenant.with(seed: try Self.seed(e)) { t in
            let cases: [(JSONValue, String)] = [
                (["status": 500, "body": ["error": "boom"]], "AADB2C90075"),
                (["status": 400, "body": ["version": "1.0.0", "action": "ValidationError", "userMessage": "x"]], "AADB2C90261"),
                (["status": 200, "body": ["version": "1.0.0", "action": "ValidationError", "userMessage": "x"]], "AADB2C90261"),
                (["status": 200, "body": "not json"], "AADB2C90261"),
                (["status": 200, "body": ["action": "Continue"]], "AADB2C90261"),
                (["status": 200, "body": ["version": "1.0.0", "action": "ShowBlockPage"]], "AADB2C90261"),
            ]
            for (answer, code) in cases {
                try await e.queue(t, [answer])
                let b = Browser(t)
                let r = try await b.submit(try await Self.signUpPage(b), form: "attributeVerification", Self.fields)
                #expect(r.body.contains(code), "\(answer): \(r.body.prefix(400))")
            }
            // No answer within the timeout, twice: B2C's one retry, then its timeout message (at a tenant that waits 1 s).
            try await TestTenant.with(seed: try Self.seed(e, timeoutSeconds: 1)) { t1 in
                try await e.queue(t1, [["delayMs": 3000], ["delayMs": 3000]])
                let b = Browser(t1)
                let r = try await b.submit(try await Self.signUpPage(b), form: "attributeVerification", Self.fields)
                #expect(r.body.contains("AADB2C90075") && r.body.contains("within timeout limit 1 seconds"), "\(r.body.prefix(400))")
                let last = try #require(try await t1.admin(.GET, "/callouts").json["callouts"]?.arrayValue?.last)
                #expect(last["attempts"] == 2 && last["outcome"] == "AADB2C90075" && last["status"] == nil, "\(last)")
            }
            // Wrong Basic credentials: the endpoint's 401 is an HTTP error response.
            var seed = try Self.seed(e)
            seed.policies[seed.policies.count - 1].apiConnectors.postAttributeCollection?.auth = .basic(
                username: "connector", password: "no")
            try await TestTenant.with(seed: seed) { t2 in
                let b2 = Browser(t2)
                let refused = try await b2.submit(try await Self.signUpPage(b2), form: "attributeVerification", Self.fields)
                #expect(refused.body.contains("AADB2C90075") && refused.body.contains("Unauthorized"), "\(refused.body.prefix(400))")
            }
        }
    }

    /// A first-time Google person: the connector pre-fills the social sign-up page; a certificate-authenticated one
    /// (HTTPS, the endpoint's CA trusted by `caFile`) checks the person before the user is made.
    @Test func afterFederationTheConnectorPrefillsAndACertificateAuthenticates() async throws {
        let e = try await ConnectorEndpoint()
        defer { e.stop() }
        var seed = try Self.seed(e)
        seed.policies[seed.policies.count - 1].apiConnectors.postAttributeCollection = .init(
            url: e.https + "/certificate/attributes", auth: .certificate(certificateFile: e.clientCert, keyFile: e.clientKey),
            caFile: e.ca)
        seed.policies[seed.policies.count - 1].apiConnectors.preTokenIssuance = nil
        try await TestTenant.with(seed: seed) { t in
            try await e.queue(t, [["body": ["version": "1.0.0", "action": "Continue", "displayName": "Gus (checked)"]]])
            let b = Browser(t)
            let chosen = try await b.submit(try await b.get(authorizeURL(policy: Self.policy)), form: "idp_google", [:])
            let social = try await FederationTests.providerPage(b, chosen, email: "gus@gmail.com", name: "Gus")
            #expect(social.body.contains("value=\"Gus (checked)\""), "\(social.body.prefix(500))")
            let answer = try await b.submit(social, form: "attributeVerification", [:])
            #expect(answer.redirectParams["code"] != nil, "\(answer.status) \(answer.body.prefix(400))")
            let calls = try await e.received(t)
            #expect(calls.first?["body"]?["step"] == "PostFederationSignup" && calls.first?["authorization"] == .null)
            #expect(calls.first?["body"]?["identities"]?.arrayValue?.first?["signInType"] == "federated")
            #expect(calls.last?["clientCN"] == "b2c-emulator-connector-client" && calls.last?["body"]?["step"] == "PostAttributeCollection")
        }
    }

    @Test func theSeedReadsConnectors() throws {
        let p = try parsePolicySeed(
            #""apiConnectors": {"postAttributeCollection": {"url": "http://127.0.0.1:9/x", "auth": "#
                + #"{"type": "basic", "username": "u", "password": "p"}, "timeoutSeconds": 5}}"#)
        #expect(
            p.apiConnectors.postAttributeCollection
                == .init(url: "http://127.0.0.1:9/x", auth: .basic(username: "u", password: "p"), timeoutSeconds: 5))
        var whole = EmulatorSeed.default
        whole.policies.append(p)
        #expect(try EmulatorSeed.parse(Data(whole.json.serialized().utf8)).policy(named: "B2C_1_x")?.apiConnectors == p.apiConnectors)
        func refusal(_ members: String, kind: String = "signUpSignIn") -> String? {
            do {
                _ = try parsePolicySeed(members, kind: kind)
                return nil
            } catch { return "\(error)" }
        }
        #expect(refusal(#""apiConnectors": {"preSignIn": {"url": "http://x"}}"#)?.contains("preSignIn") == true)
        #expect(refusal(#""apiConnectors": {"preTokenIssuance": {"url": "ftp://x"}}"#)?.contains("not an http(s) URL") == true)
        #expect(refusal(#""apiConnectors": {"preTokenIssuance": {"url": "http://x"}}"#, kind: "signIn")?.contains("not signIn") == true)
        #expect(
            refusal(
                #""apiConnectors": {"preTokenIssuance": {"url": "http://x", "auth": "#
                    + #"{"type": "certificate", "certificateFile": "a", "keyFile": "b"}}}"#
            )?
            .contains("must be https") == true)
        #expect(
            refusal(#""apiConnectors": {"preTokenIssuance": {"url": "http://x", "auth": {"type": "digest"}}}"#)?.contains("digest") == true)
        #expect(
            refusal(#""apiConnectors": {"preTokenIssuance": {"url": "http://api.test/x", "auth": {"type": "bearer", "token": "t"}}}"#)?
                .contains("must be https to carry bearer credentials") == true)
    }
}
