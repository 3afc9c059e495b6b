import B2CKit
import Foundation
import Testing

/// Random-corpus fuzzing of every parser we wrote: valid samples mutated byte- and structure-wise, random JSON
/// built from the keys the parsers look for, and random bytes. The property: each parser returns or throws an
/// error that says something — it never crashes, hangs or traps. Deterministic (seeded); the corpus size per
/// target is B2C_FUZZ_ITERATIONS (default 3,000; the long run uses 200,000), the seed B2C_FUZZ_SEED.
@Suite struct FuzzTests {
    static let iterations = Int(ProcessInfo.processInfo.environment["B2C_FUZZ_ITERATIONS"] ?? "") ?? 3_000
    static let seed = UInt64(ProcessInfo.processInfo.environment["B2C_FUZZ_SEED"] ?? "") ?? 0xB2C_F022

    /// SplitMix64: small, fast, reproducible.
    struct Rng: RandomNumberGenerator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }

    static let vocabulary = [
        "tenant", "name", "id", "authorityHost", "authorityForm", "clientId", "redirectUri", "knownAuthorities",
        "policies", "role", "apis", "baseUrl", "scopes", "nativeAuth", "authority", "challengeTypes", "caFile",
        "deviceMode", "access_token", "id_token", "refresh_token", "expires_in", "expires_on", "not_before",
        "refresh_token_expires_in", "id_token_expires_in", "token_type", "scope", "client_info", "error",
        "error_description", "error_codes", "suberror", "continuation_token", "challenge_type", "code_length",
        "challenge_target_label", "alg", "kid", "typ", "iss", "aud", "exp", "nbf", "iat", "tfp", "oid", "sub",
        "emails", "keys", "kty", "n", "e", "use", "uid", "utid",
    ]
    static let atoms: [String] = [
        "null", "true", "false", "0", "-1", "1e308", "-0.0", "3600", "\"3600\"", "\"\"", "\"x\"", "[]", "{}",
        "\"https://h/t/p\"", "\"http://localhost\"", "\"signUpSignIn\"", "\"ropc\"", "\"shared\"", "\"Bearer\"",
        "\"invalid_grant\"", "\"invalid_oob_value\"", "[50034]", "[50126]", "[50196]", "\"AADB2C90118: x\\r\\nCorrelation ID: y\"",
        "\"eyJhbGciOiJSUzI1NiJ9.e30.c2ln\"", "\"\\u0000\"", "\"\\ud800\"", "123456789012345678901234567890",
    ]

    static func randomJSON(_ r: inout Rng, depth: Int = 0) -> String {
        let pick = Int.random(in: 0..<10, using: &r)
        if depth > 4 || pick < 4 { return atoms.randomElement(using: &r)! }
        if pick < 7 {
            let items = (0..<Int.random(in: 0...4, using: &r)).map { _ in randomJSON(&r, depth: depth + 1) }
            return "[" + items.joined(separator: ",") + "]"
        }
        let items = (0..<Int.random(in: 0...6, using: &r)).map { _ in
            "\"\(vocabulary.randomElement(using: &r)!)\":" + randomJSON(&r, depth: depth + 1)
        }
        return "{" + items.joined(separator: ",") + "}"
    }

    static func mutate(_ sample: [UInt8], _ r: inout Rng) -> [UInt8] {
        var b = sample
        for _ in 0..<Int.random(in: 1...8, using: &r) {
            switch Int.random(in: 0..<7, using: &r) {
            case 0 where !b.isEmpty: b[Int.random(in: 0..<b.count, using: &r)] = UInt8.random(in: 0...255, using: &r)
            case 1 where !b.isEmpty: b.remove(at: Int.random(in: 0..<b.count, using: &r))
            case 2: b.insert(Array("{}[]\":,\\0.-eE\u{7f}".utf8).randomElement(using: &r)!, at: Int.random(in: 0...b.count, using: &r))
            case 3 where !b.isEmpty: b = Array(b.prefix(Int.random(in: 0..<b.count, using: &r)))
            case 4 where b.count > 2:
                let i = Int.random(in: 0..<b.count, using: &r), j = Int.random(in: i..<b.count, using: &r)
                b.insert(contentsOf: b[i..<j], at: Int.random(in: 0...b.count, using: &r))
            case 5: b.insert(contentsOf: Array(randomJSON(&r).utf8), at: Int.random(in: 0...b.count, using: &r))
            default: b = Array(repeating: UInt8(ascii: "["), count: Int.random(in: 1...2000, using: &r)) + b
            }
        }
        return b
    }

    /// Feeds `iterations` inputs derived from `samples` to `body`; counts how many were accepted.
    static func fuzz(_ name: String, samples: [String], _ body: (Data) throws -> Void) -> (accepted: Int, rejected: Int) {
        var r = Rng(state: seed ^ name.utf8.reduce(UInt64(0)) { $0 &* 31 &+ UInt64($1) })
        var accepted = 0, rejected = 0
        let started = ContinuousClock.now
        let bytes = samples.map { Array($0.utf8) }
        for i in 0..<iterations {
            let input: [UInt8]
            switch i % 4 {
            case 0: input = bytes.randomElement(using: &r).map { mutate($0, &r) } ?? []
            case 1: input = Array(randomJSON(&r).utf8)
            case 2: input = (0..<Int.random(in: 0...256, using: &r)).map { _ in UInt8.random(in: 0...255, using: &r) }
            default: input = mutate(mutate(bytes.randomElement(using: &r) ?? [], &r), &r)
            }
            do {
                try body(Data(input))
                accepted += 1
            } catch {
                // A message a person can act on: more than a bare type name or code.
                let message = "\(error)"
                #expect(message.count >= 12 && message.contains(" "), "\(name): an error without a message: \(message)")
                rejected += 1
            }
        }
        print(
            "fuzz \(name): \(iterations) inputs (seed \(seed)), \(accepted) accepted, \(rejected) rejected with a message, in "
                + "\(ContinuousClock.now - started)"
        )
        return (accepted, rejected)
    }

    static var exampleConfig: String {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        return (try? String(contentsOf: root.appendingPathComponent("policies.example.json"), encoding: .utf8)) ?? "{}"
    }

    @Test func configurationParser() {
        let r = Self.fuzz("config", samples: [Self.exampleConfig]) { _ = try ClientConfiguration.parse($0, source: "fuzz.json") }
        #expect(r.accepted + r.rejected == Self.iterations)
        #expect(r.rejected > 0)
    }

    @Test func redirectQueryParser() {
        let samples = [
            "code=eyJraWQiOiJjcGltY29yZV8wOTI1MjAyMCIsInZlciI6IjEuMCJ9&state=abc&client_info=eyJ1aWQiOiJ4In0",
            "error=access_denied&error_description=AADB2C90118%3a+The+user+has+forgotten+their+password.%0d%0aCorrelation+ID%3a+x&state=s",
            "a=%zz&b=%&c&=d&&e=%E2%82%AC+%2B",
        ]
        _ = Self.fuzz("query", samples: samples) { data in
            _ = try FormEncoding.parse(String(decoding: data, as: UTF8.self))
        }
    }

    @Test func tokenResponseAndOAuthErrors() {
        let samples = [
            #"{"access_token":"a.b.c","id_token":"x.y.z","token_type":"Bearer","not_before":"1795270000","expires_in":"3600","#
                + #""expires_on":"1795273600","resource":"r","id_token_expires_in":"3600","profile_info":"","#
                + #""scope":"https://t/api/demo.read openid offline_access","refresh_token":"r","refresh_token_expires_in":"1209600","#
                + #""client_info":"eyJ1aWQiOiJhLWIyY18xX3N1c2kiLCJ1dGlkIjoidCJ9"}"#,
            #"{"error":"invalid_grant","error_description":"AADB2C90080: The provided grant has expired.\r\nCorrelation ID: "#
                + #"x\r\nTimestamp: 2026-11-21 10:00:00Z\r\n"}"#,
        ]
        _ = Self.fuzz("token", samples: samples) { data in
            _ = OAuthError.parse(status: 400, data)
            _ = try TokenResponse.parse(data)
        }
        _ = Self.fuzz(
            "b2c-description", samples: ["AADB2C90118: The user has forgotten their password.\r\nCorrelation ID: 1\r\nTimestamp: 2"]
        ) { data in
            _ = B2CErrorDescription.parse(String(decoding: data, as: UTF8.self))
        }
    }

    @Test func jwtHeaderPayloadKeySetsAndClientInfo() {
        let header = Base64URL.encode(Data(#"{"alg":"RS256","kid":"k1","typ":"JWT"}"#.utf8))
        let payload = Base64URL.encode(
            Data(#"{"iss":"https://h/t/v2.0/","aud":"c","exp":1,"nbf":0,"tfp":"B2C_1_susi","emails":["a@b"]}"#.utf8))
        _ = Self.fuzz("jwt", samples: ["\(header).\(payload).c2lnbmF0dXJl", #"{"alg":"none"}"#]) { data in
            let text = String(decoding: data, as: UTF8.self)
            _ = try JWT.decode(text)
            // Also the header and payload as base64url of the mutated JSON.
            _ = try? JWT.decode("\(Base64URL.encode(data)).\(Base64URL.encode(data)).c2ln")
        }
        _ = Self.fuzz("jwks", samples: [#"{"keys":[{"kid":"k1","use":"sig","kty":"RSA","e":"AQAB","n":"sXch"}]}"#]) {
            _ = try JWKSet.parse($0)
        }
        _ = Self.fuzz("client_info", samples: ["eyJ1aWQiOiJhLWIyY18xX3N1c2kiLCJ1dGlkIjoidCJ9"]) { data in
            _ = try ClientInfo.decode(String(decoding: data, as: UTF8.self))
            _ = try? ClientInfo.decode(Base64URL.encode(data))
        }
        _ = Self.fuzz(
            "authority",
            samples: [
                "https://contoso.b2clogin.com/contoso.onmicrosoft.com/B2C_1_susi", "https://h/tfp/t/p",
                "https://h/t/oauth2/v2.0/authorize?p=B2C_1_x", "http://[::1]:8080/t/p",
            ]
        ) { data in
            _ = try Authority.parse(String(decoding: data, as: UTF8.self))
        }
    }

    @Test func nativeAuthAnswers() {
        let samples = [
            #"{"continuation_token":"uY29","challenge_type":"oob","binding_method":"prompt","challenge_channel":"email","#
                + #""challenge_target_label":"c***r@co**o**o.com","code_length":8}"#,
            #"{"error":"invalid_grant","error_description":"AADSTS50181: Unable to validate the otp.","error_codes":[50181],"#
                + #""suberror":"invalid_oob_value"}"#,
            #"{"error":"expired_token","error_description":"AADSTS55112: The continuation_token is expired.","error_codes":[552003]}"#,
            #"{"challenge_type":"redirect","redirect_reason":"x"}"#,
        ]
        var statuses = Rng(state: Self.seed)
        let r = Self.fuzz("native", samples: samples) { data in
            let status = [200, 400, 401, 500, 503].randomElement(using: &statuses)!
            switch NativeAnswer.classify(status: status, body: data) {
            case .notJSON: throw FuzzRejected(kind: "not JSON")
            case .notAnObject: throw FuzzRejected(kind: "JSON, but not an object")
            default: break
            }
        }
        #expect(r.accepted > 0 && r.rejected > 0)
    }

    struct FuzzRejected: Error, CustomStringConvertible {
        let kind: String
        var description: String { "the native-auth answer is \(kind)" }
    }
}
