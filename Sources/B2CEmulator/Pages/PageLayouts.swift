import AsyncHTTPClient
import B2CProtocol
import Foundation
import Hummingbird
import NIOConcurrencyHelpers
import NIOCore

/// Custom page layouts (reference: b2c-journeys.md §0.1, §5): the tenant's page fragment — its `<div id="api">` — goes
/// into the first empty `<div id="api">` of the developer's template, whose head and CSS stay; the template's scripts
/// (and its forms and iframes, which B2C does not support) are taken out unless JavaScript is enabled for a page with a
/// contract data URI; `<html lang>` is the page's language.
enum PageLayoutTemplates {
    /// B2C's three layouts by name: the structure, ids and classes of its own templates, with our CSS modelled on their
    /// look (`PageStyles`); the logo and background are drawn in the page.
    static let builtIn: [String: String] = [
        "classic": """
        <!DOCTYPE html>
        <html><head><title>Sign in</title><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
        <style>\(PageStyles.content)\(PageStyles.branding)\(PageStyles.classic)</style></head>
        <body><div id="background_branding_container" data-tenant-branding-background-color="true">
        <img id="background_background_image" data-tenant-branding-background="true" alt="" aria-hidden="true"
        src="\(PageStyles.classicBackground)"></div>
        <div class="panel" id="panel"><table class="panel_layout" role="presentation"><tbody><tr class="panel_layout_row">
        <td id="panel_left"></td><td id="panel_center"><div class="inner_container"><div class="api_container normaltext">
        <img class="companyLogo" data-tenant-branding-logo="true" alt="Company Logo" src="\(PageStyles.logo)">
        <div id="api" role="main"></div>
        </div></div></td></tr></tbody></table></div></body></html>
        """,
        "oceanBlue": """
        <!DOCTYPE html>
        <html><head><title>Sign in</title><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
        <style>\(PageStyles.content)\(PageStyles.branding)\(PageStyles.oceanBlue)</style></head>
        <body><div id="background_branding_container" data-tenant-branding-background-color="true">
        <img data-tenant-branding-background="true" alt="" aria-hidden="true" src="\(PageStyles.oceanBlueBackground)"></div>
        <div class="container unified_container" role="presentation"><div class="row"><div class="col-lg-6">
        <div class="panel panel-default"><div class="panel-body">
        <img class="companyLogo" data-tenant-branding-logo="true" alt="Company Logo" src="\(PageStyles.logo)">
        <div id="api" role="main"></div>
        </div></div></div></div></div></body></html>
        """,
        "slateGray": """
        <!DOCTYPE html>
        <html><head><title>Sign in</title><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
        <style>\(PageStyles.content)\(PageStyles.branding)\(PageStyles.slateGray)</style></head>
        <body><div id="background_branding_container" data-tenant-branding-background-color="true">
        <img data-tenant-branding-background="true" alt="" aria-hidden="true" src="\(PageStyles.slateGrayBackground)"></div>
        <div class="container unified_container" role="presentation"><div class="row"><div class="col-lg-6">
        <div class="panel panel-default"><div class="panel-body">
        <img class="companyLogo" data-tenant-branding-logo="true" alt="Company Logo" src="\(PageStyles.logo)">
        <div id="api" role="main"></div>
        </div></div></div></div></div></body></html>
        """,
    ]

    /// The page as B2C serves it with a template: `page` is the tenant's own page, which carries its `<div id="api">`.
    /// Nil when the template has no empty `<div id="api">` (the caller says so on the error page).
    static func apply(page: String, template: String, lang: String, javascript: Bool) -> String? {
        guard let fragment = apiFragment(of: page) else { return page }
        var t = javascript ? template : sanitized(template)
        // The first empty <div id="api" …></div>: its attributes (role, class) join the fragment's own (data-name).
        guard let slot = t.range(of: #"(?is)<div\b[^>]*\bid\s*=\s*["']api["'][^>]*>\s*</div\s*>"#, options: .regularExpression) else {
            return nil
        }
        let slotTag = String(t[slot].prefix { $0 != ">" })
        let extra = attributes(of: slotTag).filter { name, _ in
            name != "id" && !name.hasPrefix("on") && !fragment.openingTag.contains(" \(name)=")
        }
        .map { " \($0)=\"\(HTML.escape($1))\"" }.joined()
        let merged = fragment.openingTag.dropLast() + extra + ">" + fragment.inner + "</div>"
        t.replaceSubrange(slot, with: merged)
        // <html lang="…">: the page's language, whatever the template said.
        if let html = t.range(of: #"(?i)<html\b[^>]*>"#, options: .regularExpression) {
            let tag = String(t[html]).replacingOccurrences(
                of: #"(?i)\s+lang\s*=\s*("[^"]*"|'[^']*')"#, with: "", options: .regularExpression)
            t.replaceSubrange(html, with: tag.dropLast() + " lang=\"\(HTML.escape(lang))\">")
        }
        return t
    }

    /// A template as B2C shows it without JavaScript: `script`, `iframe`, `form`, `object` and `embed` elements (B2C supports
    /// no forms or frames in a template), `<base>`, `on…` event attributes and `javascript:` URLs removed, so the page
    /// looks as it will. This is not what stops a template's script: regular expressions are not an HTML parser (an
    /// entity-encoded `javascript:` or an `onerror` after a `/` pass them). The page's Content-Security-Policy is
    /// (`HTML.contentSecurityPolicy`): no script but the tenant's own runs unless the policy enables JavaScript.
    static func sanitized(_ template: String) -> String {
        var t = template
        for _ in 0..<8 {
            let before = t
            for element in ["script", "iframe", "form", "object", "embed", "base"] {
                t = t.replacingOccurrences(of: "(?is)<\(element)\\b.*?</\(element)[^>]*>", with: "", options: .regularExpression)
                t = t.replacingOccurrences(of: "(?is)</?\(element)\\b[^>]*>", with: "", options: .regularExpression)
            }
            t = t.replacingOccurrences(of: #"(?i)\s+on[a-z]+\s*=\s*("[^"]*"|'[^']*'|[^\s>]+)"#, with: "", options: .regularExpression)
            t = t.replacingOccurrences(
                of:
                    #"(?i)\b(href|src|action|formaction|xlink:href)\s*=\s*"#
                    + #"("\s*javascript:[^"]*"|'\s*javascript:[^']*'|javascript:[^\s>]*)"#,
                with: "$1=\"#\"", options: .regularExpression)
            if t == before { break }
        }
        return t
    }

    /// The tenant page's `<div id="api" …>…</div>`: its opening tag and what is inside (matched by counting divs).
    static func apiFragment(of page: String) -> (openingTag: String, inner: String)? {
        guard let start = page.range(of: "<div id=\"api\""), let tagEnd = page[start.lowerBound...].firstIndex(of: ">") else {
            return nil
        }
        var depth = 1
        var i = page.index(after: tagEnd)
        while i < page.endIndex {
            if page[i...].hasPrefix("<div") {
                depth += 1
            } else if page[i...].hasPrefix("</div>") {
                depth -= 1
                if depth == 0 {
                    return (String(page[start.lowerBound...tagEnd]), String(page[page.index(after: tagEnd)..<i]))
                }
            }
            i = page.index(after: i)
        }
        return nil
    }

    private static func attributes(of tag: String) -> [(String, String)] {
        let pattern = try! NSRegularExpression(pattern: #"([A-Za-z_:][-A-Za-z0-9_:.]*)\s*=\s*("([^"]*)"|'([^']*)')"#)
        let ns = tag as NSString
        return pattern.matches(in: tag, range: NSRange(location: 0, length: ns.length)).map { m in
            let value = m.range(at: 3).location != NSNotFound ? ns.substring(with: m.range(at: 3)) : ns.substring(with: m.range(at: 4))
            return (ns.substring(with: m.range(at: 1)).lowercased(), value)
        }
    }

    /// The largest template the tenant reads (a page layout is a page, not a download).
    static let maximumBytes = 256 * 1024

    /// The page type of a tenant page, by its `<div id="api" data-name=…>` (B2C's page markers).
    static func pageType(of page: String) -> EmulatorSeed.PageLayouts.PageType? {
        guard let fragment = apiFragment(of: page) else { return nil }
        let tag = fragment.openingTag
        if tag.contains("data-name=\"Unified\"") { return .unifiedssp }
        if tag.contains("data-name=\"Phonefactor\"") { return .multifactor }
        if tag.contains("data-name=\"GlobalException\"") { return .globalexception }
        if tag.contains("data-name=\"IdpSelections\"") { return .providerselection }
        return .selfasserted
    }

    /// The template of a page: a built-in layout, a file, or fetched over HTTP (`{Culture:RFC5646}` and
    /// `{Culture:LanguageName}` substituted); with `strictCors`, the host must allow the tenant's origin as a browser checks.
    static func template(
        _ page: EmulatorSeed.PageLayouts.Page, lang: String, origin: String, strictCors: Bool
    ) async throws(PageError)
        -> String
    {
        if let builtIn = builtIn[page.loadUri] { return builtIn }
        let uri = page.loadUri.replacingOccurrences(of: "{Culture:RFC5646}", with: lang)
            .replacingOccurrences(of: "{Culture:LanguageName}", with: String(lang.prefix { $0 != "-" }))
        guard let u = URL(string: uri), ["http", "https"].contains(u.scheme ?? "") else {
            guard let data = FileManager.default.contents(atPath: uri) else {
                throw PageError(code: "AADB2C90002", message: "The CORS resource '\(uri)' returned a 404 not found.", status: 404)
            }
            guard data.count <= maximumBytes else {
                throw PageError(code: "AADB2C90223", message: "An error has occurred sanitizing the CORS resource: it is over 256 KiB.")
            }
            return String(decoding: data, as: UTF8.self)
        }
        var request = HTTPClientRequest(url: uri)
        request.headers.add(name: "Origin", value: origin)
        let response: HTTPClientResponse
        let body: ByteBuffer
        do {
            let deadline = NIODeadline.now() + .seconds(10)
            response = try await HTTPClient.shared.execute(request, deadline: deadline)
            body = try await CalloutHTTP.collect(response.body, upTo: maximumBytes, before: deadline)
        } catch {
            throw PageError(code: "AADB2C90002", message: "The CORS resource '\(uri)' could not be loaded.", status: 404)
        }
        guard response.status == .ok else {
            let what = response.status.code == 404 ? "a 404 not found" : "HTTP \(response.status.code)"
            throw PageError(code: "AADB2C90002", message: "The CORS resource '\(uri)' returned \(what).", status: 404)
        }
        if strictCors {
            let allowed = response.headers.first(name: "access-control-allow-origin")
            guard allowed == "*" || allowed?.lowercased() == origin.lowercased() else {
                throw PageError(
                    code: "AADB2C90002",
                    message:
                        "The CORS resource '\(uri)' does not allow the origin \(origin) "
                        + "(Access-Control-Allow-Origin: \(allowed ?? "none")).",
                    status: 404)
            }
        }
        return String(buffer: body)
    }
}

/// Applies a policy's page layouts to the pages its endpoints answer (the error page included).
struct PageLayoutMiddleware: RouterMiddleware {
    typealias Context = EmulatorRequestContext
    let emulator: B2CEmulator

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let response = try await next(request, context)
        guard let policy = context.authority?.policy, !policy.pageLayouts.isEmpty,
            response.headers[.contentType]?.hasPrefix("text/html") == true
        else { return response }
        let html = try await Self.collect(response)
        guard let type = PageLayoutTemplates.pageType(of: html), let layout = policy.pageLayouts.pages[type] else {
            return Self.replacingBody(response, html)
        }
        let lang = html.range(of: #"(?<=<html lang=")[^"]*"#, options: .regularExpression).map { String(html[$0]) } ?? "en"
        do {
            let template = try await PageLayoutTemplates.template(
                layout, lang: lang, origin: context.origin, strictCors: policy.pageLayouts.strictCors)
            let javascript = policy.pageLayouts.javascript && layout.dataUri.contains(":contract:")
            guard let page = PageLayoutTemplates.apply(page: html, template: template, lang: lang, javascript: javascript) else {
                throw PageError(
                    code: "AADB2C90223", message: "An error has occurred sanitizing the CORS resource: it has no empty <div id=\"api\">.")
            }
            let laidOut = Self.replacingBody(response, page)
            return javascript ? laidOut.withHeader("Content-Security-Policy", HTML.contentSecurityPolicyWithScripts) : laidOut
        } catch let e as PageError {
            return emulator.pages.errorPage(e)  // the error page itself, without the layout that failed
        }
    }

    static func collect(_ response: Response) async throws -> String {
        let box = NIOLockedValueBox(ByteBuffer())
        try await response.body.write(CollectingWriter(box: box))
        return String(buffer: box.withLockedValue { $0 })
    }

    static func replacingBody(_ response: Response, _ html: String) -> Response {
        var headers = response.headers
        headers[.contentLength] = nil
        return Response(status: response.status, headers: headers, body: .init(byteBuffer: ByteBuffer(string: html)))
    }

    /// A response body's bytes, gathered (the tenant's own pages: small, and complete before they are sent).
    struct CollectingWriter: ResponseBodyWriter {
        let box: NIOLockedValueBox<ByteBuffer>
        mutating func write(_ buffer: ByteBuffer) async throws {
            var b = buffer
            _ = box.withLockedValue { $0.writeBuffer(&b) }
        }
        consuming func finish(_ trailingHeaders: HTTPFields?) async throws {}
    }
}

/// A policy's page rendered offline, for a designer (`b2c-emulator page`): the tenant's page of that type with a sample
/// transaction, inside the layout (`layout` overrides the policy's; none: the tenant's plain page).
public enum PagePreview {
    public struct Failure: Error, CustomStringConvertible { public var description: String }

    public static func render(
        seed: EmulatorSeed, policy policyName: String, pageType: String, layout: String?, language: String = "en"
    ) async throws -> String {
        guard let policy = seed.policy(named: policyName) else {
            throw Failure(description: "the seed has no policy '\(policyName)' (it has \(seed.policies.map(\.id).joined(separator: ", ")))")
        }
        let typeName = pageType == "error" ? "globalexception" : pageType
        guard let type = EmulatorSeed.PageLayouts.PageType(rawValue: typeName), type != .providerselection else {
            let names = EmulatorSeed.PageLayouts.PageType.userFlowPages.map(\.rawValue).joined(separator: ", ")
            throw Failure(description: "'\(pageType)' is not a page type; expected one of \(names) (or error)")
        }
        let pages = PageRenderer(tenantName: seed.tenant.name, clock: try EmulatorClock(store: try .inMemory()), seed: seed)
        let request = AppRequest(
            clientId: seed.apps.first?.clientId ?? "", redirectUri: "http://localhost", redirectType: .publicClient,
            responseType: ["code"], responseMode: "query", scope: "openid", prompt: [], clientInfo: false, language: language)
        let tx = AuthorizeTransaction(
            id: "preview", policy: policy.id, tenantSegment: seed.tenant.name, origin: "http://localhost", request: request)
        let response =
            switch type {
            case .unifiedssp, .providerselection: pages.signInPage(tx, policy: policy)  // a user flow has no selection page
            case .selfasserted: pages.signUpPage(tx, policy: policy)
            case .multifactor: pages.phoneFactorPage(tx, registered: nil)
            case .globalexception:
                pages.errorPage(PageError(code: "AADB2C90000", message: "A sample of the error page.", status: 400))
            }
        let html = try await PageLayoutMiddleware.collect(response)
        let page = layout.map { EmulatorSeed.PageLayouts.Page(loadUri: $0, dataUri: type.defaultDataUri) } ?? policy.pageLayouts.pages[type]
        guard let page else { return html }
        let template: String
        do { template = try await PageLayoutTemplates.template(page, lang: language, origin: "http://localhost", strictCors: false) } catch
        {
            throw Failure(description: "the layout '\(page.loadUri)' cannot be loaded: \(error.message) (\(error.code ?? ""))")
        }
        guard
            let out = PageLayoutTemplates.apply(
                page: html, template: template, lang: language,
                javascript: policy.pageLayouts.javascript && page.dataUri.contains(":contract:"))
        else { throw Failure(description: "the layout '\(page.loadUri)' has no empty <div id=\"api\"></div> for the page") }
        return out
    }
}
