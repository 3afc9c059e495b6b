import B2CKit
import ChildProcess
import Foundation
import Testing

@testable import B2CEmulator

/// A test service in a Python process of its own (`Tests/interop/<script>` in the interop venv), on ephemeral loopback
/// ports: what it printed first (one JSON line) says where it listens.
final class PythonService: Sendable {
    let process: ChildProcess
    let started: JSONValue

    init(_ script: String, _ arguments: [String] = []) async throws {
        let (p, line) = try await ChildProcess.startServing(
            packageRoot.appendingPathComponent("Tests/interop/run.sh"), [script] + arguments)
        guard let json = try? JSONValue.parse(Data(line.utf8)), json.objectValue != nil else {
            p.killGroup()
            throw ScriptedBrowser.Failure(description: "\(script) did not start: \(line)")
        }
        process = p
        started = json
    }

    /// SIGKILL to its group: run.sh and the Python program it started.
    func stop() {
        process.killGroup()
        process.waitUntilExit()
    }
}

/// A SAML 2.0 identity provider (`Tests/interop/saml_idp.py`: lxml, and signxml for XML signatures); `mode` says how its
/// next answers are made.
final class SAMLTestIdP: Sendable {
    let service: PythonService
    let base: String
    let entityID: String

    init() async throws {
        service = try await PythonService("saml_idp.py")
        base = service.started["base"]?.stringValue ?? ""
        entityID = service.started["entityID"]?.stringValue ?? ""
    }

    func stop() { service.stop() }

    func mode(_ t: TestTenant, _ name: String, email: String? = nil) async throws {
        let r = try await t.get(base + "/mode?name=\(name)" + (email.map { "&email=\($0)" } ?? ""))
        #expect(r.status == 200, "\(r.body)")
    }
}

/// Federated sign-in with a SAML identity provider (reference: b2c-journeys.md §2.3): the tenant as service provider
/// against a third-party signer, and every way an answer can be wrong refused with B2C's `AADB2C90273` page.
@Suite(.serialized) struct SAMLFederationTests {
    static let policy = "B2C_1_saml"

    static func seed(_ idp: SAMLTestIdP) -> EmulatorSeed {
        var seed = EmulatorSeed.default
        var p = seed.policy(named: "B2C_1_susi")!
        p.id = policy
        p.samlProviders = [.init(id: "ContosoSAML", name: "Contoso SAML", metadata: idp.base + "/metadata", domainHint: "saml.test")]
        seed.policies.append(p)
        return seed
    }

    /// Through the tenant's page to the provider and back, as a browser goes, with the provider's answer given by hand:
    /// the tenant's answer to it.
    static func answer(_ t: TestTenant, replay: Bool = false) async throws -> (first: TestResponse, again: TestResponse?) {
        let b = Browser(t)
        let chosen = try await b.submit(try await b.get(authorizeURL(policy: policy)), form: "idp_ContosoSAML", [:])
        let idpPage = try await t.get(try #require(chosen.location, "not sent to the provider: \(chosen.body.prefix(300))"))
        let form = try #require(PageParser.samlResponseForm(in: idpPage.body), "\(idpPage.body.prefix(400))")
        let first = try await t.post(form.action, form.fields)
        return (first, replay ? try await t.post(form.action, form.fields) : nil)
    }

    @Test func aSAMLProviderSignsAPersonUpAndInAndItsRequestIsWhatAnIdPExpects() async throws {
        let idp = try await SAMLTestIdP()
        defer { idp.stop() }
        try await TestTenant.with(seed: Self.seed(idp)) { t in
            let page = try await t.get(authorizeURL(policy: Self.policy))
            #expect(page.body.contains("id=\"ContosoSAMLExchange\"") && page.body.contains(">Contoso SAML</button>"))
            var sam = ScriptedBrowser.Persona(email: "sam@saml.test", password: "unused")
            sam.idp = "ContosoSAML"
            let pkce = PKCE()
            let code = try await scriptedCode(t.base + authorizeURL(policy: Self.policy, pkce: pkce), as: sam)
            let c = try claims(
                try await t.token(Self.policy, redeemForm(code: code, verifier: pkce.verifier)).json["id_token"]?.stringValue)
            #expect(c["idp"] == .string(idp.entityID) && c["newUser"] == true, "\(c)")
            #expect(c["emails"] == ["sam@saml.test"] && c["name"] == "Sam Ml" && c["given_name"] == "Sam", "\(c)")
            // What the provider received: an AuthnRequest from this policy's entity id, answered by POST to its ACS.
            let last = try await t.get(idp.base + "/last").json
            let acs = t.base + "/contoso.onmicrosoft.com/b2c_1_saml/samlp/sso/assertionconsumer"
            #expect(last["issuer"] == .string(t.base + "/contoso.onmicrosoft.com/B2C_1_saml") && last["acs"] == .string(acs), "\(last)")
            #expect(
                last["binding"] == "urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST" && last["destination"] == .string(idp.base + "/sso"))
            // The metadata an IdP administrator imports names the same entity id and ACS.
            let md = try await t.get("/contoso.onmicrosoft.com/B2C_1_saml/samlp/metadata?idptp=ContosoSAML")
            let root = try XMLElement.parse(Data(md.body.utf8))
            #expect(root.attribute("entityID") == last["issuer"]?.stringValue)
            let service = root.descendants.first { $0.localName == "AssertionConsumerService" }
            #expect(service?.attribute("Location") == acs && service?.attribute("Binding") == SAMLRelyingParty.postBinding)
            #expect(try await t.get("/contoso.onmicrosoft.com/B2C_1_saml/samlp/metadata?idptp=nobody").status == 404)
            // Returning, by domain_hint, with the assertion signed instead of the response: the same person, not new.
            try await idp.mode(t, "sign-assertion")
            let pkce2 = PKCE()
            let code2 = try await scriptedCode(
                t.base + authorizeURL(policy: Self.policy, pkce: pkce2, extra: ["domain_hint": "saml.test"]), as: sam)
            let c2 = try claims(
                try await t.token(Self.policy, redeemForm(code: code2, verifier: pkce2.verifier)).json["id_token"]?.stringValue)
            #expect(c2["newUser"] == nil && c2["oid"] == c["oid"] && c2["idp"] == .string(idp.entityID))
        }
    }

    @Test func everyWayAnAnswerCanBeWrongIsRefused() async throws {
        let idp = try await SAMLTestIdP()
        defer { idp.stop() }
        try await TestTenant.with(seed: Self.seed(idp)) { t in
            // Signed in either place or both, with SHA-256 or SHA-1: a first-time person's social sign-up page.
            for mode in ["sign-both", "sha1", "sign-response"] {
                try await idp.mode(t, mode)
                let r = try await Self.answer(t).first
                #expect(r.body.contains("id=\"attributeVerification\"") && !r.body.contains("AADB2C"), "\(mode): \(r.body.prefix(300))")
            }
            let refusals = [
                ("unsigned", "neither the SAML response"), ("tampered", "does not match"),
                ("other-key", "not made by the identity provider"),
                ("wrong-audience", "another audience"), ("expired", "expired at"), ("wrapped", "neither the SAML response"),
            ]
            for (mode, words) in refusals {
                try await idp.mode(t, mode)
                let r = try await Self.answer(t).first
                #expect(r.body.contains("AADB2C90273") && r.body.contains(words), "\(mode): \(r.body.prefix(600))")
                #expect(!r.body.contains("mallory"), "\(mode): the page must not take the forged person")
            }
            // A replayed answer finds no sign-in under way.
            try await idp.mode(t, "sign-response")
            let replayed = try await Self.answer(t, replay: true)
            #expect(replayed.again?.body.contains("AADB2C90208") == true, "\(replayed.again?.body.prefix(300) ?? "")")
            // The provider says no: the app hears access_denied with AADB2C90273, as for an OpenID Connect provider.
            try await idp.mode(t, "denied")
            let denied = try await Self.answer(t).first
            #expect(denied.redirectParams["error"] == "access_denied", "\(denied.status) \(denied.body.prefix(300))")
            #expect(denied.redirectParams["error_description"]?.contains("AADB2C90273") == true)
            #expect(denied.redirectParams["error_description"]?.contains("Responder/AuthnFailed") == true)
            // A signed assertion carried into another sign-in, its (unsigned) response rewritten to answer the new request:
            // the assertion's own confirmation names the old request.
            try await idp.mode(t, "sign-assertion")
            _ = try await Self.answer(t)
            let captured = try #require(try await t.get(idp.base + "/last").json["samlResponse"]?.stringValue)
            let oldRequest = try #require(try await t.get(idp.base + "/last").json["id"]?.stringValue)
            let b = Browser(t)
            let chosen = try await b.submit(try await b.get(authorizeURL(policy: Self.policy)), form: "idp_ContosoSAML", [:])
            let idpPage = try await t.get(try #require(chosen.location))
            let fresh = try #require(PageParser.samlResponseForm(in: idpPage.body))
            let newRequest = try #require(try await t.get(idp.base + "/last").json["id"]?.stringValue)
            let xml = String(decoding: try #require(Data(base64Encoded: captured)), as: UTF8.self)
            var forged = fresh.fields
            forged["SAMLResponse"] = Data(Self.onlyResponseRewritten(xml, old: oldRequest, new: newRequest).utf8).base64EncodedString()
            let carried = try await t.post(fresh.action, forged)
            #expect(
                carried.body.contains("AADB2C90273") && carried.body.contains("does not answer this sign-in"), "\(carried.body.prefix(500))"
            )
        }
    }

    /// Metadata from a file (what an IdP administrator mails): the same request to the same single sign-on service.
    @Test func metadataMayBeAFile() async throws {
        let idp = try await SAMLTestIdP()
        defer { idp.stop() }
        let file = temporaryDirectory().appendingPathComponent("idp-metadata.xml")
        var seed = Self.seed(idp)
        try await TestTenant.with(seed: seed) { t in try Data(try await t.get(idp.base + "/metadata").body.utf8).write(to: file) }
        seed.policies[seed.policies.count - 1].samlProviders[0].metadata = file.path
        try await TestTenant.with(seed: seed) { t in
            let b = Browser(t)
            let chosen = try await b.submit(try await b.get(authorizeURL(policy: Self.policy)), form: "idp_ContosoSAML", [:])
            #expect(chosen.location?.hasPrefix(idp.base + "/sso?SAMLRequest=") == true, "\(chosen.location ?? chosen.body)")
            let form = try #require(PageParser.samlResponseForm(in: try await t.get(chosen.location ?? "").body))
            let r = try await t.post(form.action, form.fields)
            #expect(r.body.contains("id=\"attributeVerification\""), "\(r.body.prefix(400))")
        }
    }

    /// The captured response with only its own `InResponseTo` (the `samlp:Response` start tag) pointed at another request.
    static func onlyResponseRewritten(_ xml: String, old: String, new: String) -> String {
        guard let start = xml.range(of: "<samlp:Response"), let end = xml[start.upperBound...].range(of: ">") else { return xml }
        let tag = String(xml[start.lowerBound..<end.upperBound]).replacingOccurrences(of: old, with: new)
        return xml.replacingCharacters(in: start.lowerBound..<end.upperBound, with: tag)
    }

    @Test func aProviderWhoseMetadataCannotBeReadIsSaidOnThePage() async throws {
        var seed = EmulatorSeed.default
        var p = seed.policy(named: "B2C_1_susi")!
        p.id = Self.policy
        p.samlProviders = [.init(id: "Gone", name: "Gone", metadata: "http://127.0.0.1:9/metadata")]
        seed.policies.append(p)
        try await TestTenant.with(seed: seed) { t in
            let b = Browser(t)
            let r = try await b.submit(try await b.get(authorizeURL(policy: Self.policy)), form: "idp_Gone", [:])
            #expect(r.body.contains("AADB2C90273") && r.body.contains("could not be reached"), "\(r.body.prefix(500))")
        }
    }

    @Test func theSeedReadsSAMLProviders() throws {
        let file = temporaryDirectory().appendingPathComponent("idp-metadata.xml")
        try Data("<x/>".utf8).write(to: file)
        let p = try parsePolicySeed(
            #""identityProviders": ["local", {"type": "saml", "id": "Corp", "metadata": "https://idp.example/md", "domainHint": "corp"}, "#
                + #"{"type": "saml", "id": "File", "name": "From a file", "metadata": "\#(file.path)"}]"#)
        #expect(
            p.samlProviders.map(\.id) == ["Corp", "File"] && p.samlProviders[0].name == "Corp"
                && p.samlProviders[0].exchangeID == "CorpExchange")
        var whole = EmulatorSeed.default
        whole.policies.append(p)
        #expect(try EmulatorSeed.parse(Data(whole.json.serialized().utf8)).policy(named: "B2C_1_x")?.samlProviders == p.samlProviders)
        func refusal(_ providers: String) -> String? {
            do {
                _ = try parsePolicySeed(#""identityProviders": [\#(providers)]"#)
                return nil
            } catch { return "\(error)" }
        }
        #expect(refusal(#"{"type": "saml", "id": "A", "metadata": "/nonexistent/md.xml"}"#)?.contains("cannot be read") == true)
        #expect(refusal(#"{"type": "saml", "id": "A", "metadata": "ftp://x/md"}"#)?.contains("neither an http(s) URL") == true)
        #expect(refusal(#"{"type": "saml", "id": "A", "metadata": "http://idp.example/md"}"#)?.contains("must be https") == true)
        #expect(refusal(#"{"type": "saml", "id": "A", "metadata": "https://x/md", "cert": "x"}"#)?.contains("cert") == true)
        #expect(refusal(#"{"type": "ws-fed", "id": "A"}"#)?.contains("\"oidc\" or \"saml\"") == true)
        #expect(
            refusal(
                #"{"type": "saml", "id": "A", "metadata": "https://x/md"}, "#
                    + #"{"type": "oidc", "id": "a", "discovery": "https://y", "clientId": "c"}"#
            )?
            .contains("names another provider") == true)
    }
}

/// Exclusive canonicalization and the XML reader, on cases whose canonical form is known (W3C xml-exc-c14n §2.2 and
/// XML 1.0's normalization rules).
@Suite struct ExclusiveC14NTests {
    static func c14n(_ xml: String, apex: String? = nil) throws -> String {
        let root = try XMLElement.parse(Data(xml.utf8))
        let element = apex.flatMap { name in ([root] + root.descendants).first { $0.localName == name } } ?? root
        return String(decoding: ExclusiveC14N.canonicalize(element), as: UTF8.self)
    }

    @Test func namespacesAreRenderedWhereUsedAndAttributesSorted() throws {
        // The W3C example: n1's declaration is not carried into n2's subtree, which does not use it.
        let xml =
            #"<n0:local xmlns:n0="foo:bar" xmlns:n3="ftp://example.org"><n1:elem2 xmlns:n1="http://example.net" "#
            + #"xml:lang="en"><n3:stuff xmlns:n3="ftp://example.org"/></n1:elem2></n0:local>"#
        #expect(
            try Self.c14n(xml, apex: "elem2")
                == #"<n1:elem2 xmlns:n1="http://example.net" xml:lang="en"><n3:stuff xmlns:n3="ftp://example.org"></n3:stuff></n1:elem2>"#)
        #expect(
            try Self.c14n(#"<a xmlns="urn:d" z="1" b:y="2" a="3" xmlns:b="urn:b"><c xmlns=""/></a>"#)
                == #"<a xmlns="urn:d" xmlns:b="urn:b" a="3" z="1" b:y="2"><c xmlns=""></c></a>"#)
    }

    @Test func textAndAttributesAreEscapedOneWay() throws {
        #expect(
            try Self.c14n("<a t=\"x&#9;y\n&quot;&lt;&gt;\">1 &lt; 2 &amp;&amp; 3 > 2<![CDATA[<&>]]><!-- gone --><?pi data?></a>")
                == "<a t=\"x&#x9;y &quot;&lt;>\">1 &lt; 2 &amp;&amp; 3 &gt; 2&lt;&amp;&gt;<?pi data?></a>")
        #expect(try Self.c14n("<a>\r\nline\rtwo</a>") == "<a>\nline\ntwo</a>")
        #expect(try Self.c14n("<a><?pi    d  e?><?empty   ?></a>") == "<a><?pi d  e?><?empty?></a>")
    }

    @Test func documentsSAMLNeverCarriesAreRefused() {
        for (xml, words) in [
            (#"<!DOCTYPE a [<!ENTITY x SYSTEM "file:///etc/passwd">]><a>&x;</a>"#, "DTD"), ("<a><b></a>", "closes"),
            ("<p:a/>", "not declared"), ("<a>&unknown;</a>", "predefines"), ("<a x='1' x='2'/>", "twice"), ("<a/><b/>", "after"),
            ("<?>", "not closed"), ("<a><?></a>", "not closed"), ("<a>&#0;</a>", "predefines"), ("<a>&#+65;</a>", "predefines"),
            ("<a>&#x1;</a>", "predefines"),
        ] {
            #expect(throws: XMLElement.ParseError.self, "\(xml)") { try XMLElement.parse(Data(xml.utf8)) }
            #expect((try? XMLElement.parse(Data(xml.utf8))) == nil)
            do { _ = try XMLElement.parse(Data(xml.utf8)) } catch { #expect("\(error)".contains(words), "\(xml): \(error)") }
        }
        let deep = String(repeating: "<a>", count: 100) + String(repeating: "</a>", count: 100)
        #expect(throws: XMLElement.ParseError.self) { try XMLElement.parse(Data(deep.utf8)) }
    }
}
