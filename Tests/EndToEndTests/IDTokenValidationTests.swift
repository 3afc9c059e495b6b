@testable import B2CEmulator
@testable import B2CKit
import Foundation
import Testing
import _CryptoExtras

/// The client's id-token checks, against the emulator's real discovery and JWKS over HTTPS.
@Suite struct IDTokenValidationTests {
    @Test func everyClaimIsChecked() async throws {
        try await World.with { w in
            try await w.withLibraryClient { client in
                let config = client.config
                let authority = config.authority(for: config.policy(named: "B2C_1_susi")!)
                let now = Int(Date().timeIntervalSince1970)
                let meta = try await client.metadata.metadata(for: authority, now: now)
                let emulator = w.server.emulator
                let good: [String: JSONValue] = [
                    "iss": .string(meta.issuer), "aud": .string(config.clientID), "exp": JSONValue(now + 600),
                    "nbf": JSONValue(now), "nonce": "n1", "tfp": "B2C_1_susi", "oid": .string(alice.oid), "sub": .string(alice.oid),
                ]
                func token(
                    _ change: (inout [String: JSONValue]) -> Void, key: _RSA.Signing.PrivateKey? = nil, kid: String? = nil
                ) throws -> String {
                    var c = good
                    change(&c)
                    return try JWT.sign(
                        claims: .object(c), kid: kid ?? emulator.jwk.kid, key: key ?? (try emulator.keys.current(.userFlow)).key)
                }
                func validate(_ t: String) async throws {
                    _ = try await client.metadata.validateIDToken(t, authority: authority, metadata: meta, nonce: "n1", now: now)
                }
                try await validate(try token { _ in })
                let failures: [(String, String)] = [
                    (try token { $0["iss"] = .string("https://evil.example/\(tenantID)/v2.0/") }, "iss"),
                    (try token { $0["aud"] = "00000000-0000-0000-0000-000000000000" }, "aud"),
                    (try token { $0["nonce"] = "other" }, "nonce"),
                    (try token { $0["tfp"] = "B2C_1_edit_profile" }, "policy 'B2C_1_edit_profile'"),
                    (try token { $0["exp"] = JSONValue(now - 400) }, "expired"),
                    (try token({ _ in }, key: try _RSA.Signing.PrivateKey(keySize: .bits2048), kid: "not-in-the-jwks"), "not-in-the-jwks"),
                    (try token({ _ in }, key: try _RSA.Signing.PrivateKey(keySize: .bits2048)), "signature"),
                    ("a.b.c", "unusable"),
                ]
                for (t, expected) in failures {
                    do {
                        try await validate(t)
                        Issue.record("accepted a token with a bad \(expected)")
                    } catch let e as B2CError {
                        #expect(e.description.contains(expected), "\(e)")
                    }
                }
                // A tampered payload under a valid signature.
                let parts = try token { _ in }.split(separator: ".").map(String.init)
                var claims = good
                claims["oid"] = "mallory"
                let tampered = parts[0] + "." + Base64URL.encode(JSONValue.object(claims).serialized()) + "." + parts[2]
                await #expect(throws: B2CError.self) { try await validate(tampered) }
            }
        }
    }

    /// Key rollover: after the tenant rotates its user-flow key, b2c meets a `kid` its cached JWKS lacks, refetches the
    /// key set once and accepts the token signed with the new key.
    @Test func aTokenSignedWithARotatedKeyIsAcceptedAfterOneJWKSRefetch() async throws {
        try await World.with { w in
            func keyFetches(_ r: Run) -> Int {
                r.stderr.split(separator: "\n").filter { $0.contains("GET ") && $0.contains("/discovery/v2.0/keys") }.count
            }
            #expect(try await w.b2c(["signin"], as: alice).status == 0)
            let cached = try await w.b2c(["signin", "--prompt", "login", "--verbose"], as: alice)
            #expect(cached.status == 0 && keyFetches(cached) == 0, "the cached key set serves a known kid:\n\(cached.stderr)")
            let rotated = try await w.admin("POST", "/keys/rotate", ["policyType": "userFlow"])
            #expect(
                try rotated["kid"]?.stringValue == w.server.emulator.keys.current(.userFlow).kid, "new sign-ins are signed with \(rotated)")
            let again = try await w.b2c(["signin", "--prompt", "login", "--verbose"], as: alice)
            #expect(again.status == 0, "\(again.stderr)")
            #expect(keyFetches(again) == 1, "the key set is fetched once, on the unknown kid:\n\(again.stderr)")
        }
    }

    @Test func theListenerTakesOneRedirectWithItsStateAndIgnoresOthers() async throws {
        let listener = try await LoopbackListener.start(port: 0, path: "/", expectedState: "s")
        func get(_ query: String) async throws -> String {
            try await run(
                URL(fileURLWithPath: "/usr/bin/curl"),
                ["-s", "-o", "/dev/null", "-w", "%{http_code}", "http://127.0.0.1:\(listener.port)/?\(query)"],
                environment: ProcessInfo.processInfo.environment
            ).stdout
        }
        #expect(try await get("code=old&state=another-sign-in") == "400", "an answer with another state is refused and not taken")
        #expect(try await get("code=c") == "400", "an answer without state is refused")
        #expect(try await get("code=c&state=s") == "200")
        let params = await listener.waitForRedirect(until: .now + .seconds(5))
        #expect(params == ["code": "c", "state": "s"])
        #expect(try await get("code=x&state=s") == "409", "a second answer to the listener is refused")
        await listener.stop()
    }

    /// A browser that answers with a forged state.
    struct ForgingUI: InteractionUI {
        func present(url: URL, purpose: String) async {
            let redirect =
                URLComponents(url: url, resolvingAgainstBaseURL: false)?.queryItems?.first { $0.name == "redirect_uri" }?.value ?? ""
            let target = redirect.replacingOccurrences(of: "localhost", with: "127.0.0.1") + "/?code=stolen&state=forged"
            _ = try? await run(URL(fileURLWithPath: "/usr/bin/curl"), ["-s", target], environment: ProcessInfo.processInfo.environment)
        }
        func progress(_ text: String) {}
    }

    @Test func aRedirectWithAnotherStateIsRefusedAndNothingStored() async throws {
        try await World.with { w in
            try await w.withLibraryClient { client in
                let store = client.store
                do {
                    _ = try await client.signInInteractively(
                        policyName: "B2C_1_susi", options: InteractiveOptions(timeoutSeconds: 3), ui: ForgingUI())
                    Issue.record("a forged state was accepted")
                } catch let e as B2CError {
                    #expect(
                        e.message.contains("no answer from the browser within 3 s"),
                        "the forged answer is ignored and the wait goes on: \(e)")
                }
                #expect(try store.accounts(scope: nil).isEmpty)
            }
        }
    }
}
