import B2CProtocol
import Crypto
import Foundation
import TestSupport
import Testing
import _CryptoExtras

@testable import B2CEmulator

/// The tenant's tokens are signed by libcrypto (RS256Signer): RSASSA-PKCS1-v1_5 is deterministic, so libcrypto's
/// signature of any input must be swift-crypto's byte for byte — for RFC 7515's key and known answer, for fresh keys of
/// each size and inputs of each length, from many tasks at once on one key, and for the tokens a tenant issues.
@Suite struct RS256SignerTests {
    static func swiftCrypto(_ input: String, _ key: _RSA.Signing.PrivateKey) throws -> String {
        try JWT.signature(signingInput: input, key: key)
    }

    @Test func libcryptoGivesRFC7515sKnownAnswer() throws {
        let k = RFC7515A2.self
        let key = try _RSA.Signing.PrivateKey(
            n: Base64URL.decode(k.n)!, e: Base64URL.decode(k.e)!, d: Base64URL.decode(k.d)!, p: Base64URL.decode(k.p)!,
            q: Base64URL.decode(k.q)!)
        let signer = RS256Signer(key)
        #expect(signer.usesLibcrypto)
        #expect(try signer.signature(signingInput: k.signingInput) == k.signature)
    }

    /// Garner's step takes p - q's sign for granted only as far as both primes have as many bits: the same key with its
    /// primes swapped (q > p, and q^-1 mod p another number) gives the same known answer.
    @Test func aKeyWhosePrimesAreTheOtherWayRoundSignsAlike() throws {
        let k = RFC7515A2.self
        let key = try _RSA.Signing.PrivateKey(
            n: Base64URL.decode(k.n)!, e: Base64URL.decode(k.e)!, d: Base64URL.decode(k.d)!, p: Base64URL.decode(k.q)!,
            q: Base64URL.decode(k.p)!)
        for (batches, lanes) in Self.aloneAndEachLanes {
            let signer = RS256Signer(key, batches: batches, lanes: lanes)
            #expect(signer.usesLibcrypto)
            #expect(signer.lanes == lanes?.rawValue)
            #expect(try signer.signature(signingInput: k.signingInput) == k.signature)
            #expect(try signer.signatures(signingInputs: [k.signingInput, k.signingInput]) == [k.signature, k.signature])
        }
    }

    /// A blinding factor is used 32 times (squared between uses) and then drawn again: 100 signatures in a row with one
    /// key, made alone and four at a time (in each kind of lanes the processor has), cross three draws, and each is
    /// swift-crypto's.
    @Test func signaturesAcrossNewBlindingFactorsAreSwiftCryptos() throws {
        let key = try _RSA.Signing.PrivateKey(keySize: .bits2048)
        for (batches, lanes) in Self.aloneAndEachLanes {
            let signer = RS256Signer(key, batches: batches, lanes: lanes)
            let inputs = (0..<100).map { "token \($0) of a hundred" }
            let signed = try stride(from: 0, to: inputs.count, by: 4).flatMap { start in
                try signer.signatures(signingInputs: Array(inputs[start..<min(start + 4, inputs.count)]))
            }
            let alone = try inputs.map { try signer.signature(signingInput: $0) }
            let expected = try inputs.map { try Self.swiftCrypto($0, key) }
            #expect(signed == expected && alone == expected, "batches \(batches) \(lanes?.rawValue ?? "")")
            #expect(signer.batchFallbacks == 0)
        }
    }

    /// A pass of the lanes costs the same whatever it holds: the batches made are those one pass (of four signatures with
    /// IFMA, two with AVX2) is cheaper for than signing them one at a time, and a tie goes to one at a time.
    @Test(
        arguments: [
            (0.0, 4, nil), (1.0, 4, 2), (1.5, 4, 2), (2.0, 4, 3), (2.9, 4, 3), (3.6, 4, 4), (3.99, 4, 4), (4.0, 4, nil), (7.5, 4, nil),
            (0.0, 2, nil), (1.0, 2, 2), (1.5, 2, 2), (1.99, 2, 2), (2.0, 2, nil), (3.9, 2, nil), (1.5, 1, nil),
        ] as [(Double, Int, Int?)])
    func theSmallestBatchIsTheFirstAPassPaysFor(_ cost: Double, _ perPass: Int, _ smallest: Int?) {
        #expect(RS256Signer.smallestPayingBatch(passCost: cost, perPass: perPass) == smallest)
    }

    @Test(arguments: [_RSA.Signing.KeySize.bits2048, .bits3072, .bits4096])
    func libcryptoSignsAsSwiftCryptoDoes(_ size: _RSA.Signing.KeySize) throws {
        let key = try _RSA.Signing.PrivateKey(keySize: size)
        let signer = RS256Signer(key)
        #expect(signer.usesLibcrypto)
        for length in [0, 1, 55, 56, 64, 1_000, 65_537] {
            let input = String((0..<length).map { _ in "abcdefghijklmnopqrstuvwxyz.-_0123456789".randomElement()! })
            #expect(try signer.signature(signingInput: input) == Self.swiftCrypto(input, key), "\(length) bytes")
        }
        // A token made through either signer is the same token, and verifies against the published key.
        let claims: JSONValue = ["iss": "https://contoso.b2clogin.com/x/v2.0/", "sub": "someone", "exp": 4_102_444_800]
        let token = try signer.sign(claims, kid: "k1")
        #expect(token == (try JWT.sign(claims: claims, kid: "k1", key: key)))
        try JWT.decode(token).verifySignature(with: JWKSet(keys: [try JWK(publicKey: key.publicKey, kid: "k1")]))
    }

    @Test func oneKeySignsFromManyTasksAtOnce() async throws {
        let key = try _RSA.Signing.PrivateKey(keySize: .bits2048)
        let signer = RS256Signer(key)
        let inputs = (0..<64).map { "input-\($0)-" + String(repeating: "x", count: $0 * 17) }
        let signed = try await withThrowingTaskGroup(of: (String, String).self) { group in
            for input in inputs { group.addTask { (input, try signer.signature(signingInput: input)) } }
            return try await group.reduce(into: [:]) { $0[$1.0] = $1.1 }
        }
        for input in inputs { #expect(signed[input] == (try Self.swiftCrypto(input, key))) }
    }

    /// Each signing thread signs with a copy of the key of its own (CTokenSigning keeps 16); 40 threads at once share
    /// some, and each thread signs with both of two keys alive at once: no key answers with the other's copy (both stay
    /// with libcrypto, whose probe at load would otherwise have sent one back to swift-crypto).
    @Test func moreThreadsThanCopiesSignAlike() throws {
        let keys = try (0..<2).map { _ in try _RSA.Signing.PrivateKey(keySize: .bits2048) }
        let signers = keys.map { RS256Signer($0) }
        #expect(signers.allSatisfy { $0.usesLibcrypto })
        let threads = 40
        final class Results: @unchecked Sendable {  // @unchecked: `signed` is read and written under `lock` only
            let lock = NSLock()
            var signed: [String: String] = [:]
        }
        let results = Results()
        let done = DispatchGroup()
        for index in 0..<threads {
            done.enter()
            let thread = Thread {
                defer { done.leave() }
                for which in [index % 2, 1 - index % 2] {
                    let input = "thread-\(index)-key-\(which)"
                    let signature = (try? signers[which].signature(signingInput: input)) ?? "refused"
                    results.lock.withLock { results.signed[input] = signature }
                }
            }
            thread.start()
        }
        done.wait()
        let signed = results.lock.withLock { results.signed }
        #expect(signed.count == threads * 2)
        for index in 0..<threads {
            for which in 0..<2 {
                let input = "thread-\(index)-key-\(which)"
                let expected = try Self.swiftCrypto(input, keys[which])
                #expect(signed[input] == expected, "\(input)")
            }
        }
    }

    @Test func theTenantsTokensAreLibcryptosSignaturesOfItsKeys() async throws {
        try await TestTenant.with { t in
            let userFlowKey = try t.emulator.keys.current(.userFlow)
            let customKey = try t.emulator.keys.current(.custom)
            #expect(userFlowKey.signer.usesLibcrypto && customKey.signer.usesLibcrypto)
            let tokens = try await signInAndRedeem(t)
            for name in ["id_token", "access_token"] {
                let token = try #require(tokens[name]?.stringValue, "\(name)")
                let parts = token.split(separator: ".", omittingEmptySubsequences: false)
                let input = parts[0] + "." + parts[1]
                #expect(String(parts[2]) == (try Self.swiftCrypto(String(input), userFlowKey.key)), "\(name)")
                try JWT.decode(token).verifySignature(with: t.emulator.keys.jwks(.userFlow))
            }
        }
    }

    /// The lanes this processor has (/proc/cpuinfo's flags): each must sign in batches where asked, so that the lanes are
    /// what these tests check (elsewhere the batch API signs one at a time, and is checked the same way).
    static let lanesHere: [RS256Signer.Lanes] = {
        let text = (try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8)) ?? ""
        let flags = text.split(separator: "\n").first { $0.hasPrefix("flags") }?.split(separator: " ").map(String.init) ?? []
        return [RS256Signer.Lanes.avx2, .avx512ifma].filter { flags.contains($0.rawValue) }
    }()

    /// One at a time, and in batches in each kind of lanes this processor has.
    static var aloneAndEachLanes: [(Bool, RS256Signer.Lanes?)] { [(false, nil)] + lanesHere.map { (true, $0) } }

    /// Signatures made together (up to four in one pass of eight exponentiations with IFMA, two in one of four with AVX2)
    /// are swift-crypto's byte for byte: for batches of one to nine (passes and a remainder), inputs of every length class,
    /// three fresh keys, each kind of lanes the processor has, and the same key with batches turned off.
    @Test(arguments: [RS256Signer.Lanes.avx2, .avx512ifma])
    func signaturesMadeTogetherAreSwiftCryptosSignatures(_ lanes: RS256Signer.Lanes) throws {
        for _ in 0..<3 {
            let key = try _RSA.Signing.PrivateKey(keySize: .bits2048)
            let batched = RS256Signer(key, batches: true, lanes: lanes), single = RS256Signer(key, batches: false)
            let here = Self.lanesHere.contains(lanes)
            #expect(batched.signsInBatches == here)
            #expect(batched.lanes == (here ? lanes.rawValue : nil))
            #expect(batched.perPass == (here ? (lanes == .avx2 ? 2 : 4) : 1))
            #expect(!single.signsInBatches)
            for count in 1...9 {
                let inputs = (0..<count).map { i in
                    String(
                        (0..<[0, 1, 55, 64, 700, 5_000][(count + i) % 6]).map { _ in
                            "abcdefghijklmnopqrstuvwxyz.-_0123456789".randomElement()!
                        })
                }
                let expected = try inputs.map { try Self.swiftCrypto($0, key) }
                #expect(try batched.signatures(signingInputs: inputs) == expected, "\(count) together")
                #expect(try single.signatures(signingInputs: inputs) == expected, "\(count) one at a time")
            }
            // Every signature made together checked with the public key the first time: none was made again alone.
            #expect(batched.batchFallbacks == 0)
        }
    }

    /// A signer the environment lets batch probes its lanes only when asked (the event loops ask when two signatures first
    /// wait together): until then it signs alone, with no pass cost; after, it batches exactly where a pass pays.
    @Test func theLanesAreProbedWhenFirstNeededNotAtLoad() throws {
        let key = try _RSA.Signing.PrivateKey(keySize: .bits2048)
        let signer = RS256Signer(key)
        #expect(!signer.signsInBatches && signer.passCost == nil && signer.lanes == nil)
        let inputs = ["one", "two", "three"]
        let expected = try inputs.map { try Self.swiftCrypto($0, key) }
        #expect(try signer.signatures(signingInputs: inputs) == expected)
        #expect(signer.passCost == nil, "a batch call before the probe probed")
        signer.probeBatches()
        let cost = signer.passCost
        #expect((cost != nil) == !Self.lanesHere.isEmpty)
        let perPass = Self.lanesHere.contains(.avx512ifma) ? 4 : 2
        let pays = cost.flatMap { RS256Signer.smallestPayingBatch(passCost: $0, perPass: perPass) }
        #expect(signer.smallestBatch == (pays ?? 0) && signer.signsInBatches == (pays != nil))
        #expect(try signer.signatures(signingInputs: inputs) == expected)
        #expect(signer.batchFallbacks == 0)
    }

    /// Keys the lanes do not fit (3072 and 4096 bits; RFC 7515's key, whose primes are 1024 bits, does) sign one at a time
    /// through the same call.
    @Test func keysOfOtherSizesSignOneAtATimeThroughTheBatchCall() throws {
        for size in [_RSA.Signing.KeySize.bits3072, .bits4096] {
            let key = try _RSA.Signing.PrivateKey(keySize: size)
            let signer = RS256Signer(key, batches: true)
            #expect(!signer.signsInBatches)
            let inputs = ["a", "b", "c"]
            #expect(try signer.signatures(signingInputs: inputs) == inputs.map { try Self.swiftCrypto($0, key) })
        }
    }

    /// From many threads at once, each signing batches with the same key (each thread its copy and blinding): every
    /// signature is still swift-crypto's, in each kind of lanes.
    @Test(arguments: [RS256Signer.Lanes.avx2, .avx512ifma])
    func batchesFromManyThreadsAtOnce(_ lanes: RS256Signer.Lanes) throws {
        let key = try _RSA.Signing.PrivateKey(keySize: .bits2048)
        let signer = RS256Signer(key, batches: true, lanes: lanes)
        final class Results: @unchecked Sendable {  // @unchecked: `signed` is read and written under `lock` only
            let lock = NSLock()
            var signed: [String: String] = [:]
        }
        let results = Results()
        let done = DispatchGroup()
        for index in 0..<20 {
            done.enter()
            Thread {
                defer { done.leave() }
                let inputs = (0..<4).map { "thread-\(index)-\($0)" }
                let signatures = (try? signer.signatures(signingInputs: inputs)) ?? []
                results.lock.withLock { for (i, s) in zip(inputs, signatures) { results.signed[i] = s } }
            }.start()
        }
        done.wait()
        let signed = results.lock.withLock { results.signed }
        #expect(signed.count == 80)
        for (input, signature) in signed { #expect(signature == (try Self.swiftCrypto(input, key)), "\(input)") }
    }
}
