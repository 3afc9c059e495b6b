import B2CProtocol
import Foundation
import Testing

@testable import B2CEmulator

/// The Host header check every request passes, against the regular expression it replaced.
@Suite struct HostHeaderTests {
    static let pattern = #"^[A-Za-z0-9.\-]+(:\d{1,5})?$|^\[[0-9A-Fa-f:.]+\](:\d{1,5})?$"#

    static func byPattern(_ host: String) -> Bool { host.range(of: pattern, options: .regularExpression) != nil }

    @Test func namedCases() {
        let accepted = [
            "localhost", "127.0.0.1:8470", "contoso.b2clogin.com", "a-b.example.", "[::1]", "[::1]:443", "[fe80::1]:65535", "x:1",
            "ABC.def:12345",
        ]
        let refused = [
            "", ":80", "[]", "[::1", "::1", "host:", "host:123456", "host:8a", "ex ample.com", "exämple.com", "[::1]x", "[g::1]",
            "host/path", "host\n", "evil.com@127.0.0.1", "[::1]:", "a:1:2",
        ]
        for h in accepted { #expect(AuthorityPrefixMiddleware.isHostHeader(h), "\(h)") }
        for h in refused { #expect(!AuthorityPrefixMiddleware.isHostHeader(h), "\(h.debugDescription)") }
    }

    /// Random strings over the characters the two forms use (and a few they do not) decide as the expression does.
    @Test func agreesWithTheExpression() {
        let alphabet = Array("aZ09.-:[]fG /@_\u{e4}")
        var rng = SystemRandomNumberGenerator()
        for _ in 0..<5_000 {
            let host = String((0..<Int.random(in: 0...12, using: &rng)).map { _ in alphabet.randomElement(using: &rng)! })
            #expect(AuthorityPrefixMiddleware.isHostHeader(host) == Self.byPattern(host), "\(host.debugDescription)")
        }
    }

    /// The name part of a Host, as the rebinding guard compares it, written on the bytes: the same as the version on
    /// Characters it replaced, and an address where inet_pton reads one.
    @Test func nameOfAHost() {
        func byCharacters(_ host: String) -> String {
            var h = host.lowercased()
            if h.hasPrefix("["), let end = h.firstIndex(of: "]") { return String(h[h.index(after: h.startIndex)..<end]) }
            if let colon = h.lastIndex(of: ":"), h.filter({ $0 == ":" }).count == 1 { h = String(h[..<colon]) }
            return h.hasSuffix(".") ? String(h.dropLast()) : h
        }
        let named = [
            "127.0.0.1:8470": "127.0.0.1", "[::1]:443": "::1", "Contoso.B2CLogin.com.": "contoso.b2clogin.com", "::1": "::1",
            "a:1:2": "a:1:2", "[fe80::1": "[fe80::1", "localhost:": "localhost",
        ]
        for (host, name) in named { #expect(HostHeader.name(of: host) == name, "\(host)") }
        #expect(HostHeader.isAddress("127.0.0.1") && HostHeader.isAddress("::1") && HostHeader.isAddress("[::1]"))
        #expect(!HostHeader.isAddress("localhost") && !HostHeader.isAddress("127.0.0.1:80") && !HostHeader.isAddress(""))
        let alphabet = Array("aZ1.:[]")
        var rng = SystemRandomNumberGenerator()
        for _ in 0..<5_000 {
            let host = String((0..<Int.random(in: 0...10, using: &rng)).map { _ in alphabet.randomElement(using: &rng)! })
            let name = HostHeader.name(of: host)
            #expect(name == byCharacters(host), "\(host.debugDescription)")
            #expect(HostHeader.isAddress(name) == (IPBytes.parse(name) != nil), "\(name.debugDescription)")
        }
    }
}
