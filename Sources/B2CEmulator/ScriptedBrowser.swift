import AsyncHTTPClient
import B2CProtocol
import Foundation
import NIOCore
import NIOSSL

/// A scripted user agent for the emulator's pages: it opens a URL, fills the pages like a person would and
/// follows redirects until the answer goes to another origin (the app's loopback listener), which it delivers.
/// Cookies are kept per host and port (optionally in a jar file), so the SSO session works as in a browser.
/// Used by the README's demo (`b2c demo`) and, through `b2c-test-agent`, by the end-to-end tests.
public final class ScriptedBrowser: @unchecked Sendable {
    public enum Action: String, Sendable, CaseIterable {
        /// `cancel` presses Cancel on the first page; `cancel-signup` follows "Sign up now" and cancels the sign-up
        /// page; `cancel-reset-code` asks for a reset code and cancels the page where the code is typed.
        case signin, cancel, forgot
        case wrongThenRight = "wrong-then-right"
        case cancelSignup = "cancel-signup"
        case cancelResetCode = "cancel-reset-code"
        /// Types a wrong second-factor code every time (three wrong phone or authenticator codes end the sign-in).
        case wrongCodes = "wrong-codes"
        /// Follows "Sign up now" and creates the account: the email verified with the code from the outbox, the password,
        /// the names and `attributes`.
        case signup
    }

    /// Who is at the keyboard and what they do.
    public struct Persona: Sendable {
        public var email: String
        public var password: String
        public var action: Action = .signin
        public var newPassword: String?
        public var displayName: String?
        public var givenName: String?
        public var surname: String?
        /// The number entered when a phone factor is registered (E.164).
        public var phone: String?
        /// The authenticator's secret, for a person whose app was registered elsewhere (the seed); one registered in this
        /// browser is remembered in its jar.
        public var totpSecret: String?
        /// Signs in with this social provider (`google`, `facebook`, …) instead of a local account: its button, then its
        /// (mock) page as `email`.
        public var idp: String?
        /// Checks "Keep me signed in" on the sign-in page.
        public var keepSignedIn = false
        /// The code a device shows (the device authorization grant), typed at the verification page before the sign-in.
        public var deviceCode: String?
        /// What the sign-up page asks beyond the names (`city`, `extension_LoyaltyId`, …; a Boolean as "true").
        public var attributes: [String: String] = [:]
        public init(
            email: String, password: String, action: Action = .signin, newPassword: String? = nil,
            displayName: String? = nil, givenName: String? = nil, surname: String? = nil, phone: String? = nil, totpSecret: String? = nil
        ) {
            self.email = email; self.password = password; self.action = action; self.newPassword = newPassword
            self.displayName = displayName; self.givenName = givenName; self.surname = surname; self.phone = phone
            self.totpSecret = totpSecret
        }
    }

    public struct Failure: Error, CustomStringConvertible {
        public let description: String
        /// The page wants something only an option can give (a display name, an attribute): a usage error.
        public var needsOption = false
        /// The tenant's admin surface (outbox, clock) refused the browser (401 or 403): it wants the admin token.
        public var adminRefused = false
    }

    struct Page { var status: Int; var location: String?; var body: String; var url: URL }

    let client: HTTPClient
    let jarPath: String?
    /// Sent to the tenant's admin surface only (`Authorization: Bearer`), for a tenant that requires it (a container's).
    let adminToken: String?
    let lock = NSLock()
    var jar: [String: String]
    /// What the last run did, page by page (paths only), for a demo to show.
    public private(set) var steps: [String] = []

    public init(caFile: String?, jarPath: String? = nil, adminToken: String? = nil) throws {
        var tls = TLSConfiguration.makeClientConfiguration()
        if let caFile { tls.trustRoots = .certificates(try NIOSSLCertificate.fromPEMFile(caFile)) }
        client = HTTPClient(
            eventLoopGroupProvider: .singleton, configuration: .init(tlsConfiguration: tls, redirectConfiguration: .disallow))
        self.jarPath = jarPath
        self.adminToken = adminToken
        jar =
            jarPath.flatMap { try? Data(contentsOf: URL(fileURLWithPath: $0)) }
            .flatMap { try? JSONValue.parse($0).objectValue?.compactMapValues(\.stringValue) } ?? [:]
    }

    public func shutdown() async { try? await client.shutdown() }

    /// Forgets every cookie (the tenant's session included), so that the next visit meets the sign-in page again, as a
    /// fresh browser would. The jar file, if any, is left as it is.
    public func forgetCookies() { lock.withLock { jar = [:] } }

    func saveJar() {
        guard let jarPath else { return }
        let snapshot = lock.withLock { jar }
        try? JSONValue.object(snapshot.mapValues { .string($0) }).serialized().write(toFile: jarPath, atomically: true, encoding: .utf8)
    }

    func fetch(_ url: URL, form: [String: String]? = nil, bearer: String? = nil) async throws -> Page {
        var req = HTTPClientRequest(url: url.absoluteString)
        if let bearer { req.headers.add(name: "Authorization", value: "Bearer \(bearer)") }
        let prefix = "\(url.host ?? ""):\(url.port ?? 0):"
        let cookies = lock.withLock { jar.filter { $0.key.hasPrefix(prefix) } }
        if !cookies.isEmpty {
            req.headers.add(
                name: "Cookie", value: cookies.map { "\($0.key.dropFirst(prefix.count))=\($0.value)" }.sorted().joined(separator: "; "))
        }
        if let form {
            req.method = .POST
            req.headers.add(name: "Content-Type", value: "application/x-www-form-urlencoded")
            req.body = .bytes(ByteBuffer(string: FormEncoding.encode(form.sorted { $0.key < $1.key })))
        }
        let res = try await client.execute(req, timeout: .seconds(30))
        lock.withLock {
            for c in res.headers["set-cookie"] {
                let kv = c.split(separator: ";")[0].split(separator: "=", maxSplits: 1)
                let key = prefix + kv[0]
                if kv.count < 2 || kv[1].isEmpty || c.contains("Max-Age=0") { jar[key] = nil } else { jar[key] = String(kv[1]) }
            }
        }
        let body = String(buffer: try await res.body.collect(upTo: 4 << 20))
        steps.append("\(form == nil ? "GET" : "POST") \(url.path) → \(res.status.code)")
        return Page(status: Int(res.status.code), location: res.headers.first(name: "location"), body: body, url: url)
    }

    /// A step between the tenant and an identity provider on another origin: an OpenID Connect provider's authorize
    /// endpoint or a SAML provider's single sign-on service, or the tenant's `authresp` or assertion consumer its answer
    /// goes to — not the app's redirect URI.
    static func isIdentityProviderStep(_ url: URL) -> Bool {
        url.path.hasSuffix("/oauth2/v2.0/authorize") || url.path.hasSuffix("/oauth2/authresp")
            || url.path.hasSuffix("/samlp/sso/assertionconsumer") || (url.query ?? "").contains("SAMLRequest=")
    }

    static func form(_ page: Page, _ id: String) -> (action: URL, fields: [String: String])? {
        guard let f = PageParser.form(id, in: page.body), let action = URL(string: f.action, relativeTo: page.url) else { return nil }
        return (action.absoluteURL, f.fields)
    }

    static func samlAnswer(_ page: Page) -> (action: URL, fields: [String: String])? {
        guard let f = PageParser.samlResponseForm(in: page.body), let action = URL(string: f.action, relativeTo: page.url) else {
            return nil
        }
        return (action.absoluteURL, f.fields)
    }

    static func link(_ page: Page, _ id: String) -> URL? {
        PageParser.link(id, in: page.body).flatMap { URL(string: $0, relativeTo: page.url)?.absoluteURL }
    }

    /// Runs one visit: from `start` until the answer is delivered to another origin. Returns the delivered URL.
    /// With `deliver` false, the answer is not sent: the URL is returned, as a person on another machine would copy it.
    /// `onAnswer` sees the answer's URL before the app does (what it records is there when the app goes on), delivered or not.
    @discardableResult
    public func run(
        _ start: URL, as persona: Persona, deliver: Bool = true, onAnswer: @Sendable (URL) -> Void = { _ in }
    ) async throws -> URL {
        steps = []
        var page = try await fetch(start)
        var wrongTried = false
        var previous: Page?
        for _ in 0..<24 {
            // The same complaint twice on a self-asserted page: stop and say what it wants (a persona that types wrong
            // codes on purpose is told the same thing each time).
            if let previous, persona.action != .wrongCodes { try Self.refuseRepeatedPage(previous, page) }
            previous = page
            if page.status == 302 || page.status == 303, let loc = page.location,
                let next = URL(string: loc, relativeTo: page.url)?.absoluteURL
            {
                if next.host != start.host || next.port != start.port, !Self.isIdentityProviderStep(next) {
                    onAnswer(next)
                    guard deliver else { return next }
                    // The jar is on disk before the app has its answer: an app may open the next visit at once (the
                    // sign-in resumed after a password reset), and that visit reads the jar this one leaves.
                    saveJar()
                    _ = try await fetch(next)  // the app's loopback listener receives the answer
                    steps[steps.count - 1] = "the answer to the app at \(next.host ?? ""):\(next.port ?? 0)"
                    return next
                }
                page = try await fetch(next)
                continue
            }
            guard page.status == 200 else {
                throw Failure(description: "unexpected HTTP \(page.status) at \(page.url.path): \(Self.said(page.body))")
            }
            // A form_post answer: the page a browser submits on its own — to the app, or (an identity provider's) to the tenant.
            if let answer = Self.form(page, "hiddenform") ?? Self.samlAnswer(page) {
                if (answer.action.host == start.host && answer.action.port == start.port) || Self.isIdentityProviderStep(answer.action) {
                    page = try await fetch(answer.action, form: answer.fields)
                    continue
                }
                onAnswer(answer.action)
                guard deliver else { return answer.action }
                saveJar()  // before the answer, as above
                _ = try await fetch(answer.action, form: answer.fields)
                steps[steps.count - 1] = "the answer to the app (form_post) at \(answer.action.host ?? ""):\(answer.action.port ?? 0)"
                return answer.action
            }
            // The device authorization grant: the code typed at the verification page; its last page is the journey's end.
            if let code = persona.deviceCode, let f = Self.form(page, "deviceCode") {
                guard !page.body.contains("class=\"error pageLevel\"") else {
                    throw Failure(description: "the verification page refused the code \(code): \(Self.said(page.body))")
                }
                page = try await fetch(f.action, form: f.fields.merging(["otc": code, "answer": "next"]) { $1 })
                continue
            }
            if page.body.contains("id=\"deviceDone\"") {
                guard page.body.contains("data-outcome=\"signedin\"") else {
                    throw Failure(description: "the verification page says: \(Self.said(page.body))")
                }
                saveJar()
                return page.url
            }
            if persona.action == .signup, let next = try await signUp(page, start: start, as: persona) {
                page = next
                continue
            }
            if let idp = persona.idp, let f = Self.form(page, "idp_\(idp)") {
                page = try await fetch(f.action, form: f.fields)
                continue
            }
            if let f = Self.form(page, "idpSignIn") {
                var fields = f.fields
                fields["email"] = persona.email
                // The person the mock provider vouches for has a name, as a real account does: the one given, else one
                // made from the address (carol.gee@… → Carol Gee), which the social sign-up page then shows.
                fields["name"] = persona.displayName ?? Self.name(fromEmail: persona.email)
                if let v = persona.givenName { fields["givenName"] = v }
                if let v = persona.surname { fields["surname"] = v }
                page = try await fetch(f.action, form: fields)
                continue
            }
            page = try await localAccountPage(page, start: start, as: persona, wrongTried: &wrongTried)
        }
        throw Failure(description: "too many steps without reaching the app")
    }

    /// A self-asserted page sent back with the same complaint twice: what it wants is not ours to make up. Names the page,
    /// the complaint and the fields left empty, with the options that fill them.
    static func refuseRepeatedPage(_ before: Page, _ after: Page) throws {
        guard after.status == 200, let form = PageParser.form("attributeVerification", in: after.body),
            PageParser.form("attributeVerification", in: before.body) != nil, let complaint = pageComplaint(after),
            pageComplaint(before) == complaint
        else { return }
        let empty = form.fields.filter { $0.value.isEmpty && $0.key != "tx" }.keys.sorted()
        let options = empty.map { name -> String in
            switch name {
            case "displayName": "--display-name"
            case "givenName": "--given-name"
            case "surname": "--surname"
            default: "--attribute \(name)=VALUE"
            }
        }
        let page = PageParser.dataName(in: after.body) ?? "self-asserted"
        throw Failure(
            description: "the \(page) page at \(after.url.path) asks again: \"\(complaint)\"; the scripted browser could not fill "
                + (empty.isEmpty ? "what it asks" : empty.joined(separator: ", "))
                + (options.isEmpty ? "" : " — give \(options.joined(separator: " "))"),
            needsOption: true)
    }

    /// The page-level complaint a page shows (`#claimVerificationServerError`), if any.
    static func pageComplaint(_ page: Page) -> String? {
        guard let r = page.body.range(of: "id=\"claimVerificationServerError\" aria-hidden=\"false\">") else { return nil }
        let text = page.body[r.upperBound...].prefix(600).replacingOccurrences(of: "<[^>]*>", with: "", options: .regularExpression)
        let line = PageParser.unescape(String(text.prefix { $0 != "\n" })).trimmingCharacters(in: .whitespaces)
        return line.isEmpty ? nil : line
    }

    /// A display name made from an address's local part: `carol.gee+test@…` → "Carol Gee".
    static func name(fromEmail email: String) -> String {
        let local = email.split(separator: "@").first.map { $0.split(separator: "+").first ?? $0 } ?? Substring(email)
        let words = local.split(whereSeparator: { ".-_".contains($0) }).map { $0.prefix(1).uppercased() + $0.dropFirst() }
        return words.isEmpty ? email : words.joined(separator: " ")
    }
}

extension ScriptedBrowser {
    /// What an error page says, without its markup and styles: the text from its first `AADB2C` code (or its body's start).
    static func said(_ html: String) -> String {
        let body = html.range(of: "</style>").map { String(html[$0.upperBound...]) } ?? html
        let text = body.replacingOccurrences(of: "<[^>]+>", with: " ", options: .regularExpression)
            .replacingOccurrences(of: "\\s+", with: " ", options: .regularExpression)
        let from = text.range(of: "AADB2C").map { text[$0.lowerBound...] } ?? text[...]
        return String(from.prefix(300)).trimmingCharacters(in: .whitespaces)
    }
}
