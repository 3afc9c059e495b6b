import B2CKit
import Foundation
import Testing

@testable import B2CEmulator

/// Custom page layouts (reference: b2c-journeys.md §0.1, §5): the tenant's fragment in the developer's template, served
/// over HTTP (the connector endpoint serves templates too), from a file, or built in.
@Suite(.serialized) struct PageLayoutTests {
    static let policy = "B2C_1_layouts"

    static func seed(_ e: ConnectorEndpoint, _ layouts: EmulatorSeed.PageLayouts) -> EmulatorSeed {
        var seed = EmulatorSeed.default
        var p = seed.policy(named: "B2C_1_susi")!
        p.id = policy
        p.pageLayouts = layouts
        seed.policies.append(p)
        return seed
    }

    static func page(_ uri: String, _ type: EmulatorSeed.PageLayouts.PageType, contract: Bool = true) -> EmulatorSeed.PageLayouts.Page {
        .init(loadUri: uri, dataUri: contract ? type.defaultDataUri : "urn:com:microsoft:aad:b2c:elements:\(type.rawValue):1.2.0")
    }

    @Test func theTenantsPagesLiveInTheDevelopersTemplate() async throws {
        let e = try await ConnectorEndpoint()
        defer { e.stop() }
        let errorTemplate = temporaryDirectory().appendingPathComponent("error.html")
        try Data("<html><head><title>Oops</title></head><body><p id=\"brand\">Contoso help</p><div id=\"api\"></div></body></html>".utf8)
            .write(to: errorTemplate)
        defer { try? FileManager.default.removeItem(at: errorTemplate) }
        var layouts = EmulatorSeed.PageLayouts()
        layouts.pages = [
            .unifiedssp: Self.page(e.http + "/layout/{Culture:RFC5646}/unified.html", .unifiedssp),
            .selfasserted: Self.page("oceanBlue", .selfasserted), .globalexception: Self.page(errorTemplate.path, .globalexception),
        ]
        try await TestTenant.with(seed: Self.seed(e, layouts)) { t in
            let b = Browser(t)
            let pkce = PKCE()
            let page = try await b.get(authorizeURL(policy: Self.policy, pkce: pkce, extra: ["ui_locales": "fr"]))
            #expect(page.body.contains("data-path=\"/layout/fr/unified.html\""), "the culture in the URI: \(page.body.prefix(400))")
            #expect(page.body.contains("<html lang=\"fr\">") && page.body.contains("<title>Contoso layout</title>"))
            #expect(page.body.contains("<div id=\"api\" data-name=\"Unified\" role=\"main\" class=\"contoso-panel\">"))
            #expect(!page.body.contains("<script") && !page.body.contains("<iframe"), "no script without JavaScript enabled")
            #expect(page.body.components(separatedBy: "id=\"api\"").count == 2, "one #api")
            // B2C's ids work through the template: sign in.
            let answer = try await b.submit(page, form: "localAccountForm", ["logonIdentifier": alice.email, "password": alice.password])
            #expect(answer.redirectParams["code"] != nil, "\(answer.status) \(answer.body.prefix(300))")
            // The sign-up page in a built-in layout.
            let signUp = try await Browser(t).follow(try await Browser(t).get(authorizeURL(policy: Self.policy)), link: "createAccount")
            #expect(signUp.body.contains("class=\"companyLogo\"") && signUp.body.contains("id=\"attributeVerification\""))
            // The error page in its own.
            let stale = try await t.post("/contoso.onmicrosoft.com/\(Self.policy)/emulator/signin", ["tx": "gone"])
            #expect(stale.body.contains("Contoso help") && stale.body.contains("AADB2C90208") && stale.body.contains("GlobalException"))
        }
    }

    @Test func javascriptOnlyWithAContractAndTheSwitch() async throws {
        let e = try await ConnectorEndpoint()
        defer { e.stop() }
        var layouts = EmulatorSeed.PageLayouts(javascript: true)
        layouts.pages = [.unifiedssp: Self.page(e.http + "/layout/unified.html", .unifiedssp)]
        try await TestTenant.with(seed: Self.seed(e, layouts)) { t in
            let page = try await t.get(authorizeURL(policy: Self.policy))
            #expect(page.body.contains("<script src=\"https://cdn.contoso.test/app.js\"></script>"))
        }
        layouts.pages = [.unifiedssp: Self.page(e.http + "/layout/unified.html", .unifiedssp, contract: false)]
        try await TestTenant.with(seed: Self.seed(e, layouts)) { t in
            let page = try await t.get(authorizeURL(policy: Self.policy))
            #expect(!page.body.contains("<script"))
        }
    }

    @Test func aTemplateThatCannotBeLoadedIsB2CsCORSError() async throws {
        let e = try await ConnectorEndpoint()
        defer { e.stop() }
        var layouts = EmulatorSeed.PageLayouts()
        layouts.pages = [.unifiedssp: Self.page(e.http + "/layout/missing.html", .unifiedssp)]
        try await TestTenant.with(seed: Self.seed(e, layouts)) { t in
            let page = try await t.get(authorizeURL(policy: Self.policy))
            #expect(page.body.contains("AADB2C90002") && page.body.contains("returned a 404 not found"), "\(page.body.prefix(600))")
        }
        // Strict CORS: a host that does not allow the tenant's origin is refused as a browser would; one that does serves.
        layouts.strictCors = true
        layouts.pages = [.unifiedssp: Self.page(e.http + "/layout/unified.html", .unifiedssp)]
        try await TestTenant.with(seed: Self.seed(e, layouts)) { t in
            let refused = try await t.get(authorizeURL(policy: Self.policy))
            #expect(
                refused.body.contains("AADB2C90002") && refused.body.contains("does not allow the origin"), "\(refused.body.prefix(600))")
        }
        layouts.pages = [.unifiedssp: Self.page(e.http + "/layout/cors/unified.html", .unifiedssp)]
        try await TestTenant.with(seed: Self.seed(e, layouts)) { t in
            let page = try await t.get(authorizeURL(policy: Self.policy))
            #expect(page.body.contains("class=\"contoso-panel\""))
        }
    }

    @Test func aDesignerRendersAPageOffline() async throws {
        let html = try await PagePreview.render(seed: .default, policy: "B2C_1_susi", pageType: "multifactor", layout: "slateGray")
        #expect(html.contains("data-name=\"Phonefactor\"") && html.contains("class=\"companyLogo\"") && html.contains("id=\"countryCode\""))
        let error = try await PagePreview.render(seed: .default, policy: "B2C_1_susi", pageType: "error", layout: "classic")
        #expect(error.contains("class=\"error-page-content\" data-name=\"GlobalException\""))
        await #expect(throws: PagePreview.Failure.self) {
            try await PagePreview.render(seed: .default, policy: "B2C_1_susi", pageType: "unifiedssp", layout: "/nonexistent.html")
        }
    }

    /// What the docs promise a template without JavaScript: nothing of it runs code or sends the page elsewhere.
    @Test func aTemplatesCodeIsTakenOutWhateverItsSpelling() throws {
        let hostile = [
            "<script>alert(1)</script/>", "<script>alert(2)</script x>", "<scr<script></script>ipt>alert(3)</scr<script></script>ipt>",
            "<img src=x onerror=\"alert(4)\">", "<a href=\"javascript:alert(5)\">x</a>", "<base href=\"https://evil.test/\">",
            "<SCRIPT SRC=//evil.test/x.js></SCRIPT>", "<iframe src=https://evil.test></iframe>", "<object data=x></object>",
        ]
        let template =
            "<html><head>" + hostile.joined() + "</head><body><div id=\"api\" onclick=\"alert(6)\" class=\"c\"></div></body></html>"
        let page = "<html lang=\"en\"><body><div id=\"api\" data-name=\"Unified\"><form id=\"localAccountForm\"></form></div></body></html>"
        let out = try #require(PageLayoutTemplates.apply(page: page, template: template, lang: "en", javascript: false))
        for word in ["<script", "<SCRIPT", "javascript:", "<base", "evil.test", "<iframe", "<object", "onerror", "onclick"] {
            #expect(!out.contains(word), "\(word) survived: \(out)")
        }
        #expect(out.contains("<div id=\"api\" data-name=\"Unified\" class=\"c\"><form id=\"localAccountForm\">"), "\(out)")
        // What is left of the nested case is inert text; quick on a template of many unclosed script tags.
        _ = PageLayoutTemplates.sanitized(String(repeating: "<script>", count: 4000))
    }

    /// Numbers beyond an Int from a connector or an extension are values, not a crash.
    @Test func hugeNumbersFromTheDevelopersCodeAreNotACrash() throws {
        let policy = try parsePolicySeed(#""attributes": [{"name": "extension_Age", "type": "Int"}]"#)
        var (display, given, surname) = ("", "", "")
        var attributes: [String: JSONValue] = [:]
        SignUpStep.apply(
            ["extension_Age": .number(1e300)], policy: policy, displayName: &display, givenName: &given, surname: &surname,
            attributes: &attributes)
        #expect(attributes.isEmpty)
        SignUpStep.apply(
            ["extension_Age": 41], policy: policy, displayName: &display, givenName: &given, surname: &surname, attributes: &attributes)
        #expect(attributes["extension_Age"] == 41)
    }

    @Test func theSeedReadsLayouts() throws {
        let p = try parsePolicySeed(
            #""pageLayouts": {"unifiedssp": "oceanBlue", "error": {"loadUri": "https://cdn.contoso.test/error.html", "#
                + #""dataUri": "urn:com:microsoft:aad:b2c:elements:contract:globalexception:1.2.1"}, "javascript": true}"#)
        #expect(p.pageLayouts.pages[.unifiedssp]?.loadUri == "oceanBlue" && p.pageLayouts.javascript)
        #expect(p.pageLayouts.pages[.globalexception]?.dataUri.hasSuffix("globalexception:1.2.1") == true)
        var whole = EmulatorSeed.default
        whole.policies.append(p)
        #expect(try EmulatorSeed.parse(Data(whole.json.serialized().utf8)).policy(named: "B2C_1_x")?.pageLayouts == p.pageLayouts)
        func refusal(_ layouts: String) -> String? {
            do {
                _ = try parsePolicySeed(#""pageLayouts": \#(layouts)"#)
                return nil
            } catch { return "\(error)" }
        }
        #expect(refusal(#"{"signin": "classic"}"#)?.contains("signin") == true)
        #expect(refusal(#"{"unifiedssp": "/nonexistent.html"}"#)?.contains("cannot be read") == true)
        #expect(
            refusal(
                #"{"unifiedssp": {"loadUri": "classic", "dataUri": "urn:com:microsoft:aad:b2c:elements:contract:selfasserted:2.1.7"}}"#)?
                .contains("unifiedssp:<version>") == true)
    }
}
