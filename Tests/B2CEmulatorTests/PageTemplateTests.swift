import B2CProtocol
import Foundation
import Testing

@testable import B2CEmulator

/// The tenant's templates (`Sources/B2CEmulator/Pages`): every value escaped by the one scalar-safe escaper, wherever in
/// a template it lands — the page frame, an inherited block, a partial, a repeated section, a `MustacheParent`.
@Suite struct PageTemplateTests {
    /// A quote followed by a combining acute: one Swift `Character`, which an escaper walking `Character`s writes raw.
    static let breakout = "x\"\u{301} onfocus=alert(1)"

    /// Whether `body` holds `needle` as bytes (grapheme-blind, as a browser's tokenizer reads it).
    static func holds(_ body: String, _ needle: String) -> Bool {
        Array(body.utf8).firstRange(of: Array(needle.utf8)) != nil
    }

    static func transaction(_ id: String = breakout, segment: String = breakout, language: String = breakout) -> AuthorizeTransaction {
        let request = AppRequest(
            clientId: "c", redirectUri: "http://localhost", redirectType: .publicClient, responseType: ["code"], responseMode: "query",
            scope: "openid", prompt: [], clientInfo: false, language: language)
        return AuthorizeTransaction(id: id, policy: "B2C_1_susi", tenantSegment: segment, origin: "http://localhost", request: request)
    }

    static let renderer = PageRenderer(tenantName: breakout, clock: try! EmulatorClock(store: try! .inMemory()), seed: .default)

    static func html(_ name: String) async throws -> String {
        let pages = renderer
        var social = EmulatorSeed.default.policy(named: "B2C_1_susi_social")!
        social.oidcProviders = [.init(id: breakout, name: breakout, discovery: "x", clientId: "c")]
        social.attributes.append(.init(name: "city", label: breakout))
        var tx = transaction()
        tx.request.loginHint = breakout
        let response =
            switch name {
            case "page frame (lang), inherited block (tenant, value), parent (action), section (providers)":
                pages.signInPage(tx, policy: social, error: breakout)
            case "partial (attribute), error slot":
                pages.signUpPage(tx, policy: social, error: breakout, form: ["email": breakout, "city": breakout])
            case "repeated section (fields)":
                HTML.autoPostPage(to: breakout, [(breakout, breakout)], goingBackTo: "back")
            default:
                pages.mockProviderPage(.google, redirectURI: breakout, state: breakout, loginHint: breakout)
            }
        return try await PageLayoutMiddleware.collect(response)
    }

    @Test(arguments: [
        "page frame (lang), inherited block (tenant, value), parent (action), section (providers)", "partial (attribute), error slot",
        "repeated section (fields)", "the emulator's own page",
    ])
    func aQuoteWithACombiningMarkStaysInsideItsAttribute(_ path: String) async throws {
        let body = try await Self.html(path)
        // (Needles are built outside #expect: its expansion cannot carry a combining mark after a quote.)
        let raw = "\"" + "\u{301} onfocus"
        let escaped = "x&quot;" + "\u{301} onfocus=alert(1)"
        let leaked = Self.holds(body, raw)
        let kept = Self.holds(body, escaped)
        #expect(!leaked, "a raw quote ended an attribute: \(body)")
        #expect(kept, "\(body)")
    }

    @Test func theSAMLMessagesEscapeTheirValuesToo() {
        let metadata = PageTemplates.render("saml-metadata", ["entityID": Self.breakout, "assertionConsumer": Self.breakout])
        let request = PageTemplates.render(
            "saml-authnrequest",
            ["id": "_1", "instant": "2024-01-01T00:00:00Z", "destination": Self.breakout, "assertionConsumer": "a", "entityID": "<e>"])
        let raw = "\"" + "\u{301}"
        let leaked = Self.holds(metadata, raw) || Self.holds(request, raw)
        #expect(!leaked)
        #expect(request.contains("<saml:Issuer>&lt;e&gt;</saml:Issuer>"))
        #expect(metadata.hasPrefix("<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<EntityDescriptor "))
    }

    /// Every template compiles and renders (a missing value renders empty, never a crash).
    @Test func everyTemplateRenders() {
        let names = PageTemplates.all.flatMap(\.keys)
        #expect(Set(names).count == names.count, "names are unique")
        for name in names {
            let out = PageTemplates.render(name, [:])
            #expect(!out.isEmpty, "\(name)")
            #expect(!out.contains("{{"), "\(name): a tag was not parsed")
        }
    }

    /// A page's words come from `PageStrings` in the transaction's language, and its URLs from the transaction.
    @Test func wordsAndURLsComeFromTheTransaction() async throws {
        var tx = Self.transaction("t 1", segment: "contoso.onmicrosoft.com", language: "fr")
        tx.request.loginHint = "a@b.c"
        let body = try await PageLayoutMiddleware.collect(
            Self.renderer.signInPage(tx, policy: EmulatorSeed.default.policy(named: "B2C_1_susi")!))
        #expect(body.contains("<html lang=\"fr\">"))
        #expect(body.contains(">\(PageStrings(language: "fr")["button_signin"])</button>"))
        #expect(body.contains("action=\"/contoso.onmicrosoft.com/b2c_1_susi/emulator/signin\""))
        #expect(body.contains("href=\"/contoso.onmicrosoft.com/b2c_1_susi/emulator/cancel?tx=t%201\""))
        #expect(body.contains("<input type=\"hidden\" name=\"tx\" value=\"t 1\">"))
        #expect(body.contains("value=\"a@b.c\""))
    }
}
