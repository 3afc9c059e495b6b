// b2c-test-agent: a scripted user agent for end-to-end tests, used as $BROWSER.
// It opens the URL, fills the emulator's pages like a person would and follows redirects to the app's
// loopback listener. Cookies persist in a jar file between runs, so the SSO session works like a browser's.
//
// Environment: B2C_AGENT_EMAIL, B2C_AGENT_PASSWORD, B2C_AGENT_CA (PEM), B2C_AGENT_JAR (file),
// B2C_AGENT_ACTION = signin (default) | cancel | forgot | wrong-then-right,
// B2C_AGENT_DISPLAY_NAME / _GIVEN_NAME / _SURNAME (edit profile), B2C_AGENT_NEW_PASSWORD (reset).
import AsyncHTTPClient
import B2CKit
import Foundation
import NIOCore
import NIOSSL

let env = ProcessInfo.processInfo.environment
func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("b2c-test-agent: \(message)\n".utf8))
    exit(1)
}
guard CommandLine.arguments.count >= 2, let start = URL(string: CommandLine.arguments[1]) else { fail("usage: b2c-test-agent URL") }
let jarPath = env["B2C_AGENT_JAR"]
var jar: [String: String] = jarPath.flatMap { try? Data(contentsOf: URL(fileURLWithPath: $0)) }
    .flatMap { try? JSONValue.parse($0).objectValue?.compactMapValues(\.stringValue) } ?? [:]
@MainActor func saveJar() {
    guard let jarPath else { return }
    try? JSONValue.object(jar.mapValues { .string($0) }).serialized().write(toFile: jarPath, atomically: true, encoding: .utf8)
}

var tls = TLSConfiguration.makeClientConfiguration()
if let ca = env["B2C_AGENT_CA"] { tls.trustRoots = .certificates((try? NIOSSLCertificate.fromPEMFile(ca)) ?? []) }
let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: .init(tlsConfiguration: tls, redirectConfiguration: .disallow))

struct Page { var status: Int; var location: String?; var body: String; var url: URL }

@MainActor func fetch(_ url: URL, form: [String: String]? = nil) async throws -> Page {
    var req = HTTPClientRequest(url: url.absoluteString)
    let cookieNames = jar.keys.filter { $0.hasPrefix("\(url.host ?? ""):\(url.port ?? 0):") }
    if !cookieNames.isEmpty {
        req.headers.add(name: "Cookie", value: cookieNames.map { "\($0.split(separator: ":", maxSplits: 2)[2])=\(jar[$0]!)" }.joined(separator: "; "))
    }
    if let form {
        req.method = .POST
        req.headers.add(name: "Content-Type", value: "application/x-www-form-urlencoded")
        req.body = .bytes(ByteBuffer(string: FormEncoding.encode(form)))
    }
    let res = try await client.execute(req, timeout: .seconds(30))
    for c in res.headers["set-cookie"] {
        let kv = c.split(separator: ";")[0].split(separator: "=", maxSplits: 1)
        let key = "\(url.host ?? ""):\(url.port ?? 0):\(kv[0])"
        if kv.count < 2 || kv[1].isEmpty || c.contains("Max-Age=0") { jar[key] = nil } else { jar[key] = String(kv[1]) }
    }
    let body = String(buffer: try await res.body.collect(upTo: 4 << 20))
    return Page(status: Int(res.status.code), location: res.headers.first(name: "location"), body: body, url: url)
}

func attribute(_ name: String, _ html: Substring) -> String? {
    guard let r = html.range(of: " \(name)=\"") else { return nil }
    return String(html[r.upperBound...].prefix { $0 != "\"" }).replacingOccurrences(of: "&amp;", with: "&")
}

func form(_ page: Page, _ id: String) -> (action: URL, fields: [String: String])? {
    guard let s = page.body.range(of: "<form id=\"\(id)\"") else { return nil }
    let html = page.body[s.lowerBound...].prefix { _ in true }
    guard let end = html.range(of: "</form>") else { return nil }
    let f = html[..<end.upperBound]
    var fields: [String: String] = [:]
    for tag in f.components(separatedBy: "<input").dropFirst() {
        let t = Substring(tag.prefix { $0 != ">" })
        if let n = attribute("name", t) { fields[n] = attribute("value", t) ?? "" }
    }
    guard let action = attribute("action", f).flatMap({ URL(string: $0, relativeTo: page.url) }) else { return nil }
    return (action.absoluteURL, fields)
}

func link(_ page: Page, _ id: String) -> URL? {
    guard let r = page.body.range(of: "id=\"\(id)\" href=\"") else { return nil }
    let href = String(page.body[r.upperBound...].prefix { $0 != "\"" }).replacingOccurrences(of: "&amp;", with: "&")
    return URL(string: href, relativeTo: page.url)?.absoluteURL
}

let action = env["B2C_AGENT_ACTION"] ?? "signin"
var page = try await fetch(start)
var wrongTried = false
for _ in 0..<12 {
    if page.status == 302, let loc = page.location, let next = URL(string: loc, relativeTo: page.url)?.absoluteURL {
        if next.host != start.host || next.port != start.port {
            // The app's loopback listener: deliver the answer and stop.
            _ = try await fetch(next)
            saveJar()
            exit(0)   // the process ends here; nothing to shut down gracefully
        }
        page = try await fetch(next)
        continue
    }
    guard page.status == 200 else { fail("unexpected HTTP \(page.status) at \(page.url.path): \(page.body.prefix(300))") }
    if action == "cancel", let cancel = link(page, "cancel") {
        page = try await fetch(cancel)
    } else if let f = form(page, "localAccountForm") {
        if action == "forgot" && jar["reset-done"] == nil, let forgot = link(page, "forgotPassword") {
            page = try await fetch(forgot)
            continue
        }
        var fields = f.fields
        fields["logonIdentifier"] = env["B2C_AGENT_EMAIL"] ?? ""
        let password = jar["reset-done"] != nil ? (env["B2C_AGENT_NEW_PASSWORD"] ?? "") : (env["B2C_AGENT_PASSWORD"] ?? "")
        fields["password"] = action == "wrong-then-right" && !wrongTried ? "definitely-wrong" : password
        wrongTried = true
        page = try await fetch(f.action, form: fields)
    } else if let f = form(page, "attributeVerification") {
        var fields = f.fields
        if page.body.contains("id=\"sendCode\"") {
            fields["email"] = env["B2C_AGENT_EMAIL"] ?? ""
        } else if page.body.contains("id=\"verificationCode\"") {
            let outbox = try await fetch(URL(string: "/_admin/outbox?to=\(FormEncoding.escape(env["B2C_AGENT_EMAIL"] ?? ""))", relativeTo: start)!.absoluteURL)
            fields["verificationCode"] = (try? JSONValue.parse(outbox.body))?["messages"]?.arrayValue?.first?["code"]?.stringValue ?? ""
            fields["newPassword"] = env["B2C_AGENT_NEW_PASSWORD"] ?? ""
            fields["reenterPassword"] = env["B2C_AGENT_NEW_PASSWORD"] ?? ""
            jar["reset-done"] = "1"
        } else {
            if let v = env["B2C_AGENT_DISPLAY_NAME"] { fields["displayName"] = v }
            if let v = env["B2C_AGENT_GIVEN_NAME"] { fields["givenName"] = v }
            if let v = env["B2C_AGENT_SURNAME"] { fields["surname"] = v }
        }
        page = try await fetch(f.action, form: fields)
    } else {
        fail("no form to fill at \(page.url.path): \(page.body.prefix(300))")
    }
}
fail("too many steps")
