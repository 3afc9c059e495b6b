import B2CEmulator
import B2CFastPath
import B2CProtocol
@testable import B2CKit
import Crypto
import Foundation
import Testing
import _CryptoExtras

@Suite struct JSONTests {
    @Test func parsesAndSerialisesStably() throws {
        let v = try JSONValue.parse(#"{"b": [1, 2.5, "x\n\u00e9\ud83d\ude00"], "a": {"t": true, "f": false, "n": null}, "e": -1e3}"#)
        #expect(v["b"]?.arrayValue?.count == 3)
        #expect(v["b"]?.arrayValue?[2].stringValue == "x\né😀")
        #expect(v["e"]?.lenientInt == -1000)
        #expect(v.serialized() == #"{"a":{"f":false,"n":null,"t":true},"b":[1,2.5,"x\né😀"],"e":-1000}"#)
        #expect(try JSONValue.parse(v.serialized()) == v)
    }

    /// JSON is written as bytes, with a vectorised scan for strings that need no escape: on random strings it writes
    /// what a plain loop over the scalars writes, the byte and string forms agree, and every value reads back.
    @Test func escapingAgreesWithAScalarLoop() throws {
        func reference(_ s: String) -> String {
            var out = "\""
            for scalar in s.unicodeScalars {
                switch scalar {
                case "\"": out += "\\\""
                case "\\": out += "\\\\"
                case "\n": out += "\\n"
                case "\r": out += "\\r"
                case "\t": out += "\\t"
                default:
                    if scalar.value < 0x20 || (0x7F..<0xA0).contains(scalar.value) {
                        let hex = String(scalar.value, radix: 16)
                        out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                    } else {
                        out.unicodeScalars.append(scalar)
                    }
                }
            }
            return out + "\""
        }
        var generator = SystemRandomNumberGenerator()
        let pool: [Unicode.Scalar] = Array(
            "aZ09 -._~+/=\"\\\n\r\t\u{0}\u{1F}\u{7F}\u{80}\u{85}\u{9F}\u{A0}\u{A9}\u{BF}\u{C0}é€😀日\u{301}".unicodeScalars)
        var samples = ["", "plain", String(repeating: "eyJhbGciOiJSUzI1NiJ9.", count: 90), String(repeating: "x", count: 63) + "\""]
        for _ in 0..<3_000 {
            // Lengths past a vector's width, with the one byte to escape anywhere in a long plain run.
            let length = Int.random(in: 0...80, using: &generator)
            samples.append(String(String.UnicodeScalarView((0..<length).map { _ in pool.randomElement(using: &generator)! })))
            samples.append(String(repeating: "a", count: length) + String(pool.randomElement(using: &generator)!) + "b")
        }
        for s in samples {
            var bytes: [UInt8] = []
            JSONText.escape(s, into: &bytes)
            var text = ""
            JSONText.escape(s, into: &text)
            #expect(String(decoding: bytes, as: UTF8.self) == reference(s), "\(s.debugDescription)")
            #expect(text == reference(s), "\(s.debugDescription)")
            #expect(try JSONValue.parse(Data(bytes)) == .string(s), "\(s.debugDescription)")
        }
        let document: JSONValue = ["b": [1, "x\u{1}"], "a": ["c": .null, "d": true]]
        #expect(String(decoding: document.serializedBytes(pretty: true), as: UTF8.self) == document.serialized(pretty: true))
        #expect(
            document.serialized(pretty: true)
                == "{\n  \"a\": {\n    \"c\": null,\n    \"d\": true\n  },\n  \"b\": [\n    1,\n    \"x\\u0001\"\n  ]\n}")
        var streamed = "["
        document.serialize(into: &streamed, pretty: false, indent: 0)
        #expect(streamed == "[" + document.serialized())
    }

    @Test(arguments: [
        "", "{", "{\"a\":}", "[1,]", "{\"a\":1 \"b\":2}", "\"\\x\"", "01", "1.", "tru", "{\"a\":1}{", "\"\u{01}\"",
        "{\"a\":1,\"a\":2}", String(repeating: "[", count: 600),
    ])
    func rejectsMalformedJSONWithAPosition(_ text: String) {
        #expect(throws: JSONPathError.self) { try JSONValue.parse(text) }
        do { _ = try JSONValue.parse(text) } catch let e as JSONPathError { #expect(e.message.contains("line")) } catch {}
    }

    @Test func lenientIntegersAcceptStrings() {
        #expect(JSONValue.string("3600").lenientInt == 3600)
        #expect(JSONValue.number(3600).lenientInt == 3600)
        #expect(JSONValue.number(1.5).lenientInt == nil)
        #expect(JSONValue.string("soon").lenientInt == nil)
    }

    @Test func readerNamesPaths() throws {
        let r = try JSONObjectReader(JSONValue.parse(#"{"list": [{"n": 1}], "s": 2}"#))
        #expect(throws: JSONPathError(path: "$.s", message: "must be a string, found a number")) { try r.string("s") }
        #expect(throws: JSONPathError(path: "$.missing", message: "is required (a string)")) { try r.string("missing") }
        let item = try r.objects("list")[0]
        #expect(throws: JSONPathError.self) { try item.rejectUnknownKeys(allowed: ["m"]) }
        do { try item.rejectUnknownKeys(allowed: ["m"]) } catch let e as JSONPathError { #expect(e.path == "$.list[0].n") }
    }

    @Test func randomBytesNeverCrashTheParser() {
        var rng = SystemRandomNumberGenerator()
        let alphabet = Array("{}[],:\"\\ntrufalse0123456789.-eE \u{0}é".utf8)
        for _ in 0..<20_000 {
            let bytes = (0..<Int.random(in: 0...40, using: &rng)).map { _ in alphabet.randomElement(using: &rng)! }
            _ = try? JSONValue.parse(Data(bytes))
        }
    }
}

@Suite struct EncodingTests {
    @Test func base64URL() {
        #expect(Base64URL.encode(Data([0xfb, 0xff, 0xfe])) == "-__-")
        #expect(Base64URL.decode("-__-") == Data([0xfb, 0xff, 0xfe]))
        #expect(Base64URL.decode("a") == nil)
        #expect(Base64URL.decode("ab+c") == nil)
        #expect(Base64URL.decode("YQ==") == Data("a".utf8))
        #expect(Base64URL.decode("") == Data())
        #expect(Base64URL.encode("b2c é😀") == Base64URL.encode(Data("b2c é😀".utf8)))
        // Against Foundation's base64 on random data of every length up to 70 bytes.
        var rng = SystemRandomNumberGenerator()
        for length in 0...70 {
            let data = Data((0..<length).map { _ in UInt8.random(in: 0...255, using: &rng) })
            let foundation = data.base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            #expect(Base64URL.encode(data) == foundation.replacingOccurrences(of: "=", with: ""), "\(length) bytes")
            #expect(Base64URL.encode([UInt8](data)) == Base64URL.encode(data), "an array of \(length) bytes")
            #expect(Base64URL.decode(foundation) == data, "padded, \(length) bytes")
            #expect(Base64URL.decode(Base64URL.encode(data)) == data, "unpadded, \(length) bytes")
        }
    }

    /// The byte decoder against Foundation's on random strings of the alphabet, '=' and a few bytes outside it: the same
    /// bytes where Foundation decodes (its padding rules are stricter: only where it succeeds is it the reference), and nil
    /// exactly where a character is outside the alphabet or the length is one no encoding produces.
    @Test func base64URLDecodesAsFoundationDoes() {
        var rng = SystemRandomNumberGenerator()
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)
        for _ in 0..<5_000 {
            var text = (0..<Int.random(in: 0...40, using: &rng)).map { _ in alphabet.randomElement(using: &rng)! }
            if Bool.random(using: &rng) { text += [UInt8](repeating: UInt8(ascii: "="), count: Int.random(in: 1...2, using: &rng)) }
            if Int.random(in: 0..<8, using: &rng) == 0 { text.insert(Array("+/ .\u{0}é".utf8).randomElement(using: &rng)!, at: 0) }
            let string = String(decoding: text, as: UTF8.self)
            let sextets = text.filter { $0 != UInt8(ascii: "=") }
            let decodable = sextets.allSatisfy(alphabet.contains) && sextets.count % 4 != 1
            let ours = Base64URL.decodeBytes(string)
            #expect((ours != nil) == decodable, "\(string)")
            #expect(Base64URL.decode(string[...]) == ours.map { Data($0) }, "a substring decodes alike")
            let standard = String(decoding: sextets, as: UTF8.self).replacingOccurrences(of: "-", with: "+")
                .replacingOccurrences(of: "_", with: "/")
            if decodable, let foundation = Data(base64Encoded: standard + String(repeating: "=", count: (4 - sextets.count % 4) % 4)) {
                #expect(ours == [UInt8](foundation), "\(string)")
            }
        }
    }

    /// Canonical decoding takes the one encoding of each byte string: every encoder's output, and not the spellings whose
    /// last character sets bits the bytes do not use (which the lenient decoder maps to the same bytes).
    @Test func base64URLCanonicalDecodingTakesOneSpellingOfEachByteString() {
        func canonical(_ s: String) -> [UInt8]? {
            Array(s.utf8).withUnsafeBufferPointer { Base64URL.decode(buffer: $0, canonical: true) }
        }
        for length in 0...20 {
            let bytes = Random.bytes(length), encoded = Base64URL.encode(bytes)
            #expect(canonical(encoded) == bytes, "\(length) bytes")
            guard length % 3 != 0, let last = encoded.utf8.last else { continue }
            let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)
            let value = alphabet.firstIndex(of: last)!
            for spare in 1..<(length % 3 == 1 ? 16 : 4) {
                let other = String(decoding: encoded.utf8.dropLast() + [alphabet[value ^ spare]], as: UTF8.self)
                #expect(Base64URL.decodeBytes(other) == bytes && canonical(other) == nil, "\(other)")
            }
        }
    }

    /// The tenant's AES-256-GCM (libcrypto's low-level interface) and swift-crypto's are one cipher: each opens what the
    /// other sealed, for every length up to three blocks and a half, and neither opens a changed byte.
    @Test func aes256GCMSealsAndOpensAsSwiftCryptoDoes() throws {
        for length in 0...56 {
            let key = Random.bytes(32), nonce = Random.bytes(12), aad = Random.bytes(length % 7), plain = Random.bytes(length)
            let (ciphertext, tag) = try #require(AES256GCM.seal(plain, key: key, nonce: nonce, aad: aad))
            let theirs = try AES.GCM.seal(plain, using: SymmetricKey(data: key), nonce: AES.GCM.Nonce(data: nonce), authenticating: aad)
            #expect(ciphertext == [UInt8](theirs.ciphertext) && tag == [UInt8](theirs.tag), "\(length) bytes")
            #expect(AES256GCM.open(ciphertext, tag: tag, key: key, nonce: nonce, aad: aad) == plain)
            var altered = tag
            altered[length % 16] ^= 1
            #expect(AES256GCM.open(ciphertext, tag: altered, key: key, nonce: nonce, aad: aad) == nil)
            #expect(AES256GCM.open(ciphertext, tag: tag, key: key, nonce: nonce, aad: aad + [0]) == nil)
            if length > 0 {
                var changed = ciphertext
                changed[length / 2] ^= 0x80
                #expect(AES256GCM.open(changed, tag: tag, key: key, nonce: nonce, aad: aad) == nil)
            }
        }
        #expect(AES256GCM.seal([1], key: Random.bytes(16), nonce: Random.bytes(12), aad: []) == nil)
    }

    /// Random bytes from one kernel call per 256 bytes: every length comes back whole, across the calls' seams, and draws
    /// differ (a buffer left as it was made, all zeros, would pass a length check alone).
    @Test func randomBytes() {
        for count in [0, 1, 7, 8, 32, 255, 256, 257, 512, 1000] {
            // The kernel's call, and the system generator that stands in where it fails.
            for draw in [Random.bytes, Random.generatorBytes] {
                let a = draw(count), b = draw(count)
                #expect(a.count == count && b.count == count, "\(count) bytes")
                if count >= 8 {
                    #expect(a != b, "two draws of \(count) bytes")
                    #expect(a.contains { $0 != 0 }, "\(count) bytes are not all zero")
                }
            }
        }
        let token = Random.token()
        #expect(token.utf8.count == 43 && Base64URL.decode(token)?.count == 32)
        #expect(Set((0..<100).map { _ in Random.token() }).count == 100)
    }

    /// The byte comparison decides as Foundation's `caseInsensitiveCompare`, on ASCII and non-ASCII strings alike.
    @Test func equalsIgnoringCase() {
        #expect("B2C_1_SUSI".equalsIgnoringCase("b2c_1_susi"))
        #expect(!"B2C_1_susi".equalsIgnoringCase("B2C_1_susi2"))
        #expect(!"a@".equalsIgnoringCase("A`"), "@ and ` are not a letter pair")
        #expect("ÄRGER".equalsIgnoringCase("ärger"))
        // Letters at the ends of both ranges, their neighbours, non-ASCII letters, a combining mark, the Kelvin sign (folds to k).
        let alphabet = Array("aAzZkK@`[{_09-\u{e4}\u{c4}\u{df}\u{301}\u{212a}")
        var rng = SystemRandomNumberGenerator()
        for _ in 0..<5_000 {
            let a = String((0..<Int.random(in: 0...4, using: &rng)).map { _ in alphabet.randomElement(using: &rng)! })
            let b = String((0..<Int.random(in: 0...4, using: &rng)).map { _ in alphabet.randomElement(using: &rng)! })
            for (x, y) in [(a, b), (a, a.uppercased()), (a.lowercased(), a)] {
                let expected = x.caseInsensitiveCompare(y) == .orderedSame
                #expect(x.equalsIgnoringCase(y) == expected, "\(x) \(y)")
                // A substring, not starting at its base's first byte, takes the same contiguous path.
                #expect(("<" + x + ">").dropFirst().dropLast().equalsIgnoringCase(y) == expected, "\(x) \(y)")
            }
        }
    }

    @Test func markerCounting() {
        let marker = "-----BEGIN CERTIFICATE-----"
        #expect(countOccurrences(of: marker, in: Data()) == 0)
        #expect(countOccurrences(of: marker, in: Data(marker.utf8)) == 1)
        #expect(countOccurrences(of: marker, in: Data(("x" + marker + "\n--" + marker + "-----BEGIN CERT").utf8)) == 2)
        #expect(countOccurrences(of: "aa", in: Data("aaaa".utf8)) == 2, "occurrences do not overlap")
        if let bundle = FileManager.default.contents(atPath: "/etc/ssl/certs/ca-certificates.crt") {
            let foundation = String(decoding: bundle, as: UTF8.self).components(separatedBy: marker).count - 1
            #expect(countOccurrences(of: marker, in: bundle) == foundation)
        }
    }

    @Test(arguments: [
        ("[::1]", "::1"), ("LocalHost", "localhost"), ("[[fe80::1]]", "fe80::1"), ("]a[", "a"), ("[", ""), ("", ""),
        ("Ünï.Example", "ünï.example"), ("127.0.0.1", "127.0.0.1"), ("a[b]c", "a[b]c"),
    ])
    func aHostIsComparedWithoutBracketsInLowerCase(_ written: String, _ bare: String) {
        #expect(Loopback.bareHost(written) == bare)
        #expect(Loopback.bareHost(written[...]) == bare)
    }

    /// A Host field's and a CONNECT's authority: an IPv6 address in brackets (its colons would otherwise read as a port's),
    /// the port only where one is given.
    @Test(
        arguments: [
            ("::1", 8443, "[::1]:8443"), ("fe80::1", nil, "[fe80::1]"), ("127.0.0.1", 443, "127.0.0.1:443"),
            ("contoso.b2clogin.com", nil, "contoso.b2clogin.com"),
        ] as [(String, Int?, String)])
    func anAuthorityBracketsAnIPv6AddressAndAddsAGivenPort(_ host: String, _ port: Int?, _ authority: String) {
        #expect(Loopback.authority(host, port: port) == authority)
    }

    @Test func hashedCANamesAreCountedAsCRehashWritesThem() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("hashed-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let names = [
            "02265526.0", "abcdef01.12", "ABCDEF01.1", "0226552.0", "02265526.x", "02265526.0.bak", "ca.pem", "02265526.", "g2265526.0",
        ]
        for name in names { #expect(FileManager.default.createFile(atPath: directory.appendingPathComponent(name).path, contents: Data())) }
        #expect(HTTPTransport.hashedEntries(directory.path) == 3)
        #expect(HTTPTransport.hashedEntries(directory.appendingPathComponent("absent").path) == nil)
    }

    /// `isBlank` decides as Foundation's trimming of `.whitespaces` does, on ASCII and Unicode spaces alike.
    @Test func isBlankAgreesWithFoundation() {
        let alphabet = Array(" \t\n\r\u{0b}\u{0c}a.\u{a0}\u{2003}\u{3000}\u{301}\u{85}\u{2028}\u{e9}")
        var rng = SystemRandomNumberGenerator()
        #expect("".isBlank && " \t".isBlank && !" a ".isBlank && !"\n".isBlank && "\u{a0}".isBlank)
        for _ in 0..<5_000 {
            let s = String((0..<Int.random(in: 0...4, using: &rng)).map { _ in alphabet.randomElement(using: &rng)! })
            #expect(s.isBlank == s.trimmingCharacters(in: .whitespaces).isEmpty, "\(s.unicodeScalars.map { $0.value })")
        }
    }

    @Test func formEncoding() throws {
        #expect(try FormEncoding.parse("a=1&b=x+y&c=%2F%20&a=2&=z&d") == ["a": "1", "b": "x y", "c": "/ ", "d": ""])
        #expect(throws: FormEncoding.MalformedError.self) { try FormEncoding.parse("a=%zz") }
        #expect(throws: FormEncoding.MalformedError.self) { try FormEncoding.parse("a=%4") }
        #expect(throws: FormEncoding.MalformedError.self) { try FormEncoding.parse("a=%FF") }
        #expect(try FormEncoding.parse("n=%C3%A9t%C3%A9&k=caf%c3%a9+au+lait") == ["n": "été", "k": "café au lait"])
        // `&` and `=` separate as bytes, even before a combining mark (splitting on Characters kept them joined).
        #expect(try FormEncoding.parse("a=1&\u{301}b=2") == ["a": "1", "\u{301}b": "2"])
        #expect(throws: FormEncoding.MalformedError.self) { try FormEncoding.parse(String(repeating: "é", count: 50) + "=%zz") }
        // A body's bytes that are not UTF-8, with and without escapes beside them.
        #expect(throws: FormEncoding.MalformedError.self) { try FormEncoding.parse(bytes: Array("a=".utf8) + [0xff]) }
        #expect(throws: FormEncoding.MalformedError.self) { try FormEncoding.parse(bytes: [0xc3] + Array("=%41".utf8)) }
        #expect(try FormEncoding.parse(bytes: Array("&&x=1&&y&".utf8)) == ["x": "1", "y": ""])
    }

    /// OAuth's space-delimited lists split on the space byte: empty items dropped, and a space before a combining mark
    /// still separates (a split on Characters kept `" \u{301}"` whole, and walked grapheme clusters to do it).
    @Test func spaceSeparatedLists() {
        #expect(SpaceList.items(" openid  offline_access ") == ["openid", "offline_access"])
        #expect(SpaceList.items("").isEmpty && SpaceList.items("   ").isEmpty)
        #expect(SpaceList.items("a \u{301}b") == ["a", "\u{301}b"])
        #expect(
            SpaceList.items("https://contoso.onmicrosoft.com/helloapi/.default") == ["https://contoso.onmicrosoft.com/helloapi/.default"])
        var rng = SystemRandomNumberGenerator()
        let alphabet = Array("ab ./:")
        for _ in 0..<2_000 {
            let s = String((0..<Int.random(in: 0...12, using: &rng)).map { _ in alphabet.randomElement(using: &rng)! })
            #expect(SpaceList.items(s) == s.split(separator: " "), "\(s.debugDescription)")
        }
    }

    /// The form parser decodes bytes itself; Foundation's percent decoding (what it replaced) gives the same answer for
    /// every form made of the pieces that matter: separators, `+`, `%` with and without hex digits, non-UTF-8 bytes.
    @Test func formEncodingAgreesWithFoundationsDecoding() {
        func foundation(_ text: String) -> [String: String]? {
            var out: [String: String] = [:]
            for pair in text.split(separator: "&") {
                let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                guard let key = String(parts[0]).replacingOccurrences(of: "+", with: " ").removingPercentEncoding,
                    let value = parts.count > 1 ? String(parts[1]).replacingOccurrences(of: "+", with: " ").removingPercentEncoding : ""
                else { return nil }
                if !key.isEmpty && out[key] == nil { out[key] = value }
            }
            return out
        }
        let pieces = ["a", "b", "=", "&", "+", "%", "%2", "%2B", "%3d", "%26", "%zz", "%C3%A9", "%FF", "%00", "é", " ", "%"]
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<5000 {
            let text = (0..<Int.random(in: 0...10, using: &generator)).map { _ in pieces.randomElement(using: &generator)! }.joined()
            #expect((try? FormEncoding.parse(text)) == foundation(text), "\(text)")
        }
        #expect(
            FormEncoding.encode([("scope", "openid offline_access"), ("r", "http://x/?a=b")])
                == "scope=openid%20offline_access&r=http%3A%2F%2Fx%2F%3Fa%3Db")
    }

    @Test func pkceMatchesRFC7636AppendixB() {
        #expect(PKCE.s256Challenge(for: "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk") == "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM")
        #expect(PKCE.isValidVerifier(PKCE().verifier))
        #expect(!PKCE.isValidVerifier("short"))
        #expect(!PKCE.isValidVerifier(String(repeating: "a", count: 42) + "!"))
    }

    @Test func b2cErrorDescriptions() {
        let text = B2CErrorDescription.format(
            code: "AADB2C90118", message: "The user has forgotten their password.", correlationID: "c-1",
            at: Date(timeIntervalSince1970: 0))
        #expect(text == "AADB2C90118: The user has forgotten their password.\r\nCorrelation ID: c-1\r\nTimestamp: 1970-01-01 00:00:00Z\r\n")
        let parsed = B2CErrorDescription.parse(text)
        #expect(parsed.code == "AADB2C90118" && parsed.message == "The user has forgotten their password." && parsed.correlationID == "c-1")
        #expect(B2CErrorDescription.parse("invalid_grant: see AADB2C90080 now").code == "AADB2C90080")
        #expect(B2CErrorDescription.parse("nothing here").code == nil)
    }

    /// The timestamp is written from `gmtime_r`'s fields: the same text as the `DateFormatter` it replaced, for dates
    /// across centuries, fractions of a second (truncated) and the seconds before 1970.
    @Test func errorTimestampsReadAsDateFormattersDid() {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyy-MM-dd HH:mm:ss'Z'"
        var rng = SystemRandomNumberGenerator()
        let named: [TimeInterval] = [0, -1, -0.5, 0.999, 59.999, 951_782_400, 4_102_444_799.9, 1_764_571_234.25, -2_208_988_800]
        for seconds in named + (0..<2_000).map({ _ in Double.random(in: -2_000_000_000...5_000_000_000, using: &rng) }) {
            let date = Date(timeIntervalSince1970: seconds)
            #expect(B2CErrorDescription.timestampString(date) == formatter.string(from: date), "\(seconds)")
        }
    }

    @Test func clientInfo() throws {
        let ci = ClientInfo(uid: "OID-b2c_1_susi", utid: "TID")
        #expect(try ClientInfo.decode(ci.encoded) == ci)
        #expect(ci.homeAccountID == "oid-b2c_1_susi.tid")
        #expect(throws: JSONPathError.self) { try ClientInfo.decode("!!") }
        #expect(throws: JSONPathError.self) { try ClientInfo.decode(Base64URL.encode("{\"uid\": 1}")) }
    }
}

@Suite struct JWTTests {
    static let key = try! _RSA.Signing.PrivateKey(keySize: .bits2048)

    @Test func signVerifyAndValidate() throws {
        let jwk = try JWK(publicKey: Self.key.publicKey)
        let set = JWKSet(keys: [jwk])
        let token = try JWT.sign(claims: ["iss": "https://i/", "aud": "a", "exp": 2000, "nbf": 1000], kid: jwk.kid, key: Self.key)
        let jwt = try JWT.decode(token)
        try jwt.verifySignature(with: set)
        try jwt.validateClaims(issuers: ["https://i/"], audience: "a", now: 1500)
        #expect(throws: JWTError.expired(exp: 2000, now: 2000)) {
            try jwt.validateClaims(issuers: ["https://i/"], audience: "a", now: 2000)
        }
        #expect(throws: JWTError.notYetValid(nbf: 1000, now: 900)) {
            try jwt.validateClaims(issuers: ["https://i/"], audience: "a", now: 900)
        }
        #expect(throws: JWTError.self) { try jwt.validateClaims(issuers: ["https://other/"], audience: "a", now: 1500) }
        #expect(throws: JWTError.self) { try jwt.validateClaims(issuers: ["https://i/"], audience: "b", now: 1500) }
        // A kid that is not in the set is reported as such (a client refetches the JWKS).
        let other = try JWK(publicKey: _RSA.Signing.PrivateKey(keySize: .bits2048).publicKey)
        #expect(throws: JWTError.unknownKey(kid: jwk.kid)) { try jwt.verifySignature(with: JWKSet(keys: [other])) }
        // Round trip through the JWKS document.
        let parsed = try JWKSet.parse(set.json.data)
        #expect(parsed == set)
        try jwt.verifySignature(with: parsed)
    }

    @Test func malformedTokens() throws {
        for bad in ["", "a.b", "a.b.c.d", "!!.e30.sig", "e30.!!.sig", "WzFd.e30.c2ln", "e30.e30.%%"] {
            #expect(throws: JWTError.self, "\(bad)") { try JWT.decode(bad) }
        }
        let none = Base64URL.encode("{\"alg\":\"none\"}") + "." + Base64URL.encode("{}") + "."
        let jwt = try JWT.decode(none)
        #expect(throws: JWTError.unsupportedAlgorithm("none")) { try jwt.verifySignature(with: JWKSet(keys: [])) }
    }
}

@Suite struct SeedTests {
    @Test func defaultSeedRoundTrips() throws {
        #expect(try EmulatorSeed.parse(EmulatorSeed.default.json.data) == EmulatorSeed.default)
        #expect(
            EmulatorSeed.default.policies.map(\.id) == [
                "B2C_1_susi", "B2C_1_signin", "B2C_1_edit_profile", "B2C_1_reset", "B2C_1_ROPC_Auth", "B2C_1A_signup_signin",
                "B2C_1_susi_mfa", "B2C_1_susi_social",
            ])
    }

    @Test(arguments: [
        (#"{"tenant": {"name": "x.onmicrosoft.com", "id": "nope"}, "policies": [], "apps": []}"#, "$.tenant.id"),
        (
            #"{"tenant": {"name": "x.onmicrosoft.com", "id": "8f2c6d4e-1a3b-4c5d-9e7f-0a1b2c3d4e5f"}, "policies": [{"id": "B2C_1_x", "#
                + #""kind": "magic"}], "apps": []}"#,
            "$.policies[0].kind"
        ),
        (
            #"{"tenant": {"name": "x.onmicrosoft.com", "id": "8f2c6d4e-1a3b-4c5d-9e7f-0a1b2c3d4e5f"}, "policies": [], "apps": [], "#
                + #""extra": 1}"#,
            "$.extra"
        ),
        (
            #"{"tenant": {"name": "x.onmicrosoft.com", "id": "8f2c6d4e-1a3b-4c5d-9e7f-0a1b2c3d4e5f"}, "policies": "all", "apps": []}"#,
            "$.policies"
        ),
        (
            #"{"tenant": {"name": "x.onmicrosoft.com", "id": "8f2c6d4e-1a3b-4c5d-9e7f-0a1b2c3d4e5f"}, "policies": [{"id": "susi", "#
                + #""kind": "signIn"}], "apps": []}"#,
            "$.policies[0].id"
        ),
        (
            #"{"tenant": {"name": "x.onmicrosoft.com", "id": "8f2c6d4e-1a3b-4c5d-9e7f-0a1b2c3d4e5f"}, "policies": [{"id": "B2C_1_a", "#
                + #""kind": "signIn", "refreshTokenLifetime": 86400, "slidingWindow": 3600}], "apps": []}"#,
            "$.policies[0].slidingWindow"
        ),
        (
            #"{"tenant": {"name": "x.onmicrosoft.com", "id": "8f2c6d4e-1a3b-4c5d-9e7f-0a1b2c3d4e5f"}, "policies": [], "apps": "#
                + #"[{"clientId": "8f2c6d4e-1a3b-4c5d-9e7f-0a1b2c3d4e5f", "redirectUris": ["http://localhost"], "apiPermissions": "#
                + #"["https://x/api/read"]}]}"#,
            "$.apps[0].apiPermissions[0]"
        ),
        (
            #"{"tenant": {"name": "x.onmicrosoft.com", "id": "8f2c6d4e-1a3b-4c5d-9e7f-0a1b2c3d4e5f"}, "policies": [], "apps": [], "#
                + #""users": [{"email": "a@b.c", "password": 5}]}"#,
            "$.users[0].password"
        ),
        (#"[1]"#, "$"),
    ])
    func malformedSeedsNameTheJSONPath(_ json: String, _ path: String) {
        do {
            _ = try EmulatorSeed.parse(Data(json.utf8))
            Issue.record("accepted: \(json)")
        } catch let e as JSONPathError {
            #expect(e.path == path, "\(e)")
        } catch {
            Issue.record("unexpected \(error)")
        }
    }
}

/// The form and query encoding every request's parameters go through: a byte loop that must say what Foundation's
/// `addingPercentEncoding` said with RFC 3986's unreserved set, for every kind of character.
@Suite struct FormEscapeTests {
    @Test func escapesAsFoundationDid() {
        var unreserved = CharacterSet.alphanumerics.intersection(CharacterSet(charactersIn: Unicode.Scalar(0)...Unicode.Scalar(127)))
        unreserved.insert(charactersIn: "-._~")
        var generator = SystemRandomNumberGenerator()
        let pool: [Character] = Array("aZ09-._~ +&=%/?#[]@!$'()*,;:\"<>\\^`{|}\n\t\u{0}é€😀ß日本\u{7F}\u{80}")
        var samples = ["", "plain", "a b+c&d=e", "https://contoso.b2clogin.com/x?y=1", "é😀", "~_.-"]
        for _ in 0..<2_000 {
            samples.append(String((0..<Int.random(in: 0...24, using: &generator)).map { _ in pool.randomElement(using: &generator)! }))
        }
        for s in samples {
            #expect(FormEncoding.escape(s) == s.addingPercentEncoding(withAllowedCharacters: unreserved), "\(s.debugDescription)")
        }
        #expect(FormEncoding.escape("a b/é") == "a%20b%2F%C3%A9")
    }
}

/// The environment as the client reads it (`ProcessEnvironment`, a loop over `environ`): what Foundation reads.
@Suite struct ProcessEnvironmentTests {
    @Test func readsWhatFoundationReads() {
        let ours = ProcessEnvironment.current()
        #expect(!ours.isEmpty)
        #expect(ours == ProcessInfo.processInfo.environment)
    }
}
