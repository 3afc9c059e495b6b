import B2CProtocol
import CTokenSigning
import Crypto
import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import Synchronization
import _CryptoExtras

/// One signing key's RS256 signatures, made by the system's libcrypto: OpenSSL's RSA signs as fast as swift-crypto's on
/// the processors measured and more than twice as fast where AVX-512 IFMA is there (bench/README.md, "Signing at the
/// machine's limit"), and a token is one signature per answer. The key stays where it was (the state's `signing_keys`);
/// libcrypto holds copies in memory only, made from swift-crypto's (one per signing thread, up to 16: threads sharing
/// one RSA object sign a tenth slower, CTokenSigning), and frees them with this signer.
///
/// The two are held to the same answer: RSASSA-PKCS1-v1_5 is deterministic, so at load libcrypto signs a probe and its
/// signature must be swift-crypto's, byte for byte; a key libcrypto cannot read or answers differently is signed by
/// swift-crypto (`usesLibcrypto` says which). Public for `b2c-bench sign-bound`, which measures the bound it signs at.
///
/// The signatures that wait on one event loop at the same moment are made together in one pass of the processor's lanes:
/// with AVX-512 IFMA up to four, eight 1024-bit exponentiations side by side (CTokenSigning's rsa_ifma.c; on an AMD EPYC
/// of family 26 2.2 times libcrypto's rate one at a time, bench/README.md, "Eight exponentiations at once"), else with
/// AVX2 up to two (rsa_avx2.c). A pass costs the same whatever it holds, so the first time two signatures wait together
/// the first key of each kind of lanes times one against a signature made alone, and batches smaller than it pays for
/// are signed one at a time (`smallestBatch`; on an AMD EPYC of family 25, whose 512-bit registers do half as much per
/// instruction, IFMA's batches of three and four pay, or of four only, as the probe reads it). The tokens are the same
/// bytes. `B2C_EMULATOR_RSA_BATCHES=0` signs one at a time, and `B2C_EMULATOR_RSA_LANES` picks the lanes (`avx2` or
/// `avx512ifma`; the fastest the processor has by default).
public final class RS256Signer: @unchecked Sendable {
    // @unchecked: `native` is set once and never changed; the batching state is behind its lock; it signs from several
    // threads at once (each with the copy and blinding of its slot, CTokenSigning); a loop's batch is touched on that
    // loop's thread only.

    public let key: _RSA.Signing.PrivateKey
    private let native: OpaquePointer?

    /// Whether this key's waiting signatures are made together, and how. A signer the environment lets batch starts
    /// `unprobed`: its lanes are enabled and probed (`probeBatches`) the first time two signatures wait together, by the
    /// thread that finds them, so that a start pays nothing for them (the probe's passes and timings were most of a
    /// restart's extra CPU) and a tenant that never sees two requests at once never probes. While another thread probes,
    /// signatures are made alone; no thread but the prober touches the lanes until the state says `on`.
    private enum Batching {
        case unprobed(Lanes)
        case probing
        case on(smallest: Int, perPass: Int, lanes: String)
        /// No batches: not wanted, no lanes, wrong here, or none pays (`probed`: the lanes timed, if any).
        case off(probed: String?)
    }
    private let batching: Mutex<Batching>

    /// Whether signatures waiting together are made together (lanes, the key two primes of 1024 bits, and a pass cheaper
    /// than the signatures it holds made alone). False until the first probe (`probeBatches`).
    public var signsInBatches: Bool { smallestBatch > 0 }
    /// The fewest waiting signatures made in one pass; fewer are made one at a time. 0 without batches.
    public var smallestBatch: Int { settled?.smallest ?? 0 }
    /// The lanes the batches run in (`avx512ifma` or `avx2`), nil without batches.
    public var lanes: String? { settled?.lanes }
    /// The most signatures one pass makes (4 with IFMA, 2 with AVX2; 1 without batches).
    public var perPass: Int { settled?.perPass ?? 1 }

    private var settled: (smallest: Int, perPass: Int, lanes: String)? {
        if case let .on(smallest, perPass, lanes) = current { (smallest, perPass, lanes) } else { nil }
    }

    /// The batching state as it is now (it changes once, from `unprobed` through `probing` to `on` or `off`).
    private var current: Batching { batching.withLock { $0 } }

    private let batches = NIOLockedValueBox<[ObjectIdentifier: Batch]>([:])
    /// Signatures the event loops' batches made, with others in one pass and alone, and the passes with others.
    private let together = Atomic<Int>(0), alone = Atomic<Int>(0), passes = Atomic<Int>(0)

    /// What the event loops' batches have signed so far: `/_admin/stats`' `signing`.
    public var batchCounts: (together: Int, alone: Int, passes: Int) {
        (together.load(ordering: .relaxed), alone.load(ordering: .relaxed), passes.load(ordering: .relaxed))
    }

    /// `batches`: nil for the environment's choice (`B2C_EMULATOR_RSA_BATCHES`: on unless `0`; `serve` refuses a value
    /// other than 0 or 1) and batches only of the sizes that pay on this processor, probed when two signatures first wait
    /// together; true for every batch of two or more wherever the lanes work, probed at once (the tests, which hold the
    /// lanes to libcrypto's signatures on any processor). `lanes`: nil for the environment's choice
    /// (`B2C_EMULATOR_RSA_LANES`), else which (`avx2`, `avx512ifma`).
    public init(_ key: _RSA.Signing.PrivateKey, batches: Bool? = nil, lanes: Lanes? = nil) {
        self.key = key
        native = Self.libcryptoKey(key)
        let environment = ProcessInfo.processInfo.environment
        let wanted = batches ?? (environment["B2C_EMULATOR_RSA_BATCHES"] != "0")
        let choice = lanes ?? environment["B2C_EMULATOR_RSA_LANES"].flatMap(Lanes.init(rawValue:)) ?? .fastest
        batching = Mutex(wanted && native != nil ? .unprobed(choice) : .off(probed: nil))
        if batches == true { probeBatches(whateverTheyCost: true) }
    }

    /// Enables and probes the lanes now if they wait for a probe (`signsInBatches` then says whether they pay); the event
    /// loops do it themselves when two signatures first wait together. Returns at once while another thread probes.
    public func probeBatches() { probeBatches(whateverTheyCost: false) }

    private func probeBatches(whateverTheyCost: Bool) {
        let choice: Lanes? = batching.withLock { state in
            guard case let .unprobed(choice) = state else { return nil }
            state = .probing
            return choice
        }
        guard let choice, let native else { return }
        let made = Self.enableBatches(native, choice: choice, whateverTheyCost: whateverTheyCost)
        batching.withLock { state in
            if let made, let smallest = made.smallest {
                state = .on(smallest: smallest, perPass: made.perPass, lanes: made.lanes)
            } else {
                state = .off(probed: made?.lanes)
            }
        }
    }

    /// Whether a signature may wait for others on its event loop: batches are on or not yet probed.
    private var mayBatch: Bool { if case .off = current { false } else { true } }

    /// Which lanes a signer may use: the fastest the processor has, or one of them.
    public enum Lanes: String, Sendable, CaseIterable {
        case fastest = "", avx2, avx512ifma

        fileprivate var choice: Int32 {
            switch self {
            case .fastest: Int32(B2C_LANES_BEST)
            case .avx2: Int32(B2C_LANES_AVX2)
            case .avx512ifma: Int32(B2C_LANES_IFMA)
            }
        }
    }

    /// Lanes for this key where the processor has them, and the smallest batch they make: a probe of two signed together
    /// must be libcrypto's signatures one at a time (which `libcryptoKey` held to swift-crypto's, at a quarter of
    /// swift-crypto's cost at every start), and neither may have needed libcrypto's second try (the check of every batch
    /// signature would otherwise hide lanes that go wrong here, at the price of two signatures). The probe's passes are
    /// timed: the first key of the process signs it together twice, and the lesser of the two against libcrypto's
    /// exponentiations for one signature gives what a pass costs (`passCost`). nil without lanes; a nil `smallest` where the
    /// lanes are turned off again (wrong here, or no batch pays).
    private static func enableBatches(
        _ native: OpaquePointer, choice: Lanes, whateverTheyCost: Bool
    ) -> (smallest: Int?, perPass: Int, lanes: String)? {
        let perPass = Int(b2c_rsa_key_enable_lanes(native, choice.choice))
        guard perPass > 1, let name = b2c_rsa_key_lanes(native).map({ String(cString: $0) }) else {
            b2c_rsa_key_disable_lanes(native)
            return nil
        }
        let probes = ["b2c local tenant: signed together", "b2c local tenant: and alike"].map { Array($0.utf8) }
        let first = passCostMeasured(lanes: name) == nil
        let expected = probes.compactMap { try? sign($0, with: native) }
        // Only the first key's passes are timed (each timed pass is followed by a timed pair of libcrypto's): the others
        // read its cost.
        if first { b2c_rsa_key_time_passes(native, 1) }
        let together = try? sign(probes, with: native)
        let again = first ? try? sign(probes, with: native) : together
        if first { b2c_rsa_key_time_passes(native, 0) }
        let smallest = whateverTheyCost ? 2 : smallestPayingBatch(passCost: passCost(native, lanes: name), perPass: perPass)
        guard together == expected, again == expected, b2c_rsa_key_fallbacks(native) == 0, let smallest else {
            b2c_rsa_key_disable_lanes(native)
            return (nil, perPass, name)
        }
        return (smallest, perPass, name)
    }

    /// The smallest batch one pass is cheaper for than signing it one at a time, given what a pass costs in signatures
    /// made alone; nil when not even a full pass (`perPass`) is. A tie goes to one at a time.
    public static func smallestPayingBatch(passCost: Double, perPass: Int) -> Int? {
        guard passCost > 0, perPass >= 2 else { return nil }
        return (2...perPass).first { Double($0) > passCost }
    }

    /// A pass's cost in signatures made alone, as the first key with these lanes timed it (every such key is RSA-2048
    /// with two primes, and costs the same): the lesser of its probe's two passes against the lesser of two of
    /// libcrypto's pairs of exponentiations, one timed right after each pass, so that both see the same load of the
    /// machine's other threads. Timing the probe's own passes costs the first probe one pass and two pairs; one try of
    /// each was far less steady (bench/README.md, "Issue 43 on an AMD EPYC of family 25").
    private static func passCost(_ native: OpaquePointer, lanes: String) -> Double {
        measuredPassCosts.withLock { measured in
            if let cost = measured[lanes] { return cost }
            let cost = b2c_rsa_key_pass_cost(native)
            if cost > 0 { measured[lanes] = cost }
            return cost
        }
    }

    private static let measuredPassCosts = Mutex<[String: Double]>([:])

    /// What a pass of these lanes cost in signatures made alone, where this process timed one.
    public static func passCostMeasured(lanes: String) -> Double? { measuredPassCosts.withLock { $0[lanes] } }

    /// What a pass of the lanes this key was probed in cost in signatures made alone (`/_admin/stats`), whether or not
    /// it paid; nil without lanes or timing, and before the probe.
    public var passCost: Double? {
        let probed: String? =
            switch current {
            case let .on(_, _, lanes): lanes
            case let .off(probed): probed
            case .unprobed, .probing: nil
            }
        return probed.flatMap { Self.passCostMeasured(lanes: $0) }
    }

    /// Batch signatures that did not check and were made again by libcrypto alone (0 unless the lanes go wrong).
    public var batchFallbacks: Int { native.map { Int(b2c_rsa_key_fallbacks($0)) } ?? 0 }

    deinit { if let native { b2c_rsa_key_free(native) } }

    /// Whether libcrypto makes this key's signatures.
    public var usesLibcrypto: Bool { native != nil }

    /// The RS256 signature of a JWS signing input, base64url.
    public func signature(signingInput: String) throws -> String {
        guard let native else { return try JWT.signature(signingInput: signingInput, key: key) }
        return Base64URL.encode(try Self.sign(Array(signingInput.utf8), with: native))
    }

    /// A signed token (`typ`, `alg`, `kid` in its header) of these claims.
    public func sign(_ claims: JSONValue, kid: String) throws -> String {
        try JWT.sign(claims: claims, kid: kid) { try signature(signingInput: $0) }
    }

    /// The RS256 signatures of several signing inputs, base64url, in their order: made together where the signer signs
    /// in batches, one at a time otherwise (and while its lanes wait for their probe or are being probed).
    public func signatures(signingInputs: [String]) throws -> [String] {
        guard let native else { return try signingInputs.map { try JWT.signature(signingInput: $0, key: key) } }
        guard settledOrOff else { return try signingInputs.map { try signature(signingInput: $0) } }
        return try Self.sign(signingInputs.map { Array($0.utf8) }, with: native).map { Base64URL.encode($0) }
    }

    /// Whether the lanes are settled (on, or off for good): only then may a thread other than the prober use the batch
    /// call, which reads the key's lanes.
    private var settledOrOff: Bool {
        switch current {
        case .on, .off: true
        case .unprobed, .probing: false
        }
    }

    /// The RS256 signature of a JWS signing input, base64url, made with the others that wait on this event loop at the
    /// same moment: the first to wait asks the loop to sign once what it has run so far, and each waits for its own. Off
    /// an event loop, or without batches, it signs at once.
    public func batchedSignature(signingInput: String) async throws -> String {
        guard let loop = MultiThreadedEventLoopGroup.currentEventLoop, mayBatch else {
            return try signature(signingInput: signingInput)
        }
        let batch = batch(of: loop)
        let input = Array(signingInput.utf8)
        let signature = try await withCheckedThrowingContinuation { (waiting: CheckedContinuation<[UInt8], any Error>) in
            batch.waiting.append((input, waiting))
            if batch.waiting.count == 1 { loop.execute { self.signWaiting(batch) } }
        }
        return Base64URL.encode(signature)
    }

    /// A signed token of these claims, its signature made with the others waiting on this event loop.
    public func batchedSign(_ claims: JSONValue, kid: String) async throws -> String {
        let input = JWT.signingInput(claims: claims, kid: kid)
        return input + "." + (try await batchedSignature(signingInput: input))
    }

    /// The signatures waiting on one event loop; touched on that loop's thread only.
    private final class Batch: @unchecked Sendable {
        var waiting: [(input: [UInt8], continuation: CheckedContinuation<[UInt8], any Error>)] = []
    }

    private func batch(of loop: any EventLoop) -> Batch {
        batches.withLockedValue { all in
            if let batch = all[ObjectIdentifier(loop)] { return batch }
            let made = Batch()
            all[ObjectIdentifier(loop)] = made
            return made
        }
    }

    private func signWaiting(_ batch: Batch) {
        let waiting = batch.waiting
        batch.waiting = []
        guard let native else {  // unreachable: only a signer with libcrypto's key signs in batches
            for one in waiting { one.continuation.resume(throwing: SigningFailure()) }
            return
        }
        // Two waiting at once: the first time, this thread probes the lanes (the others sign alone meanwhile).
        if waiting.count > 1 { probeBatches() }
        let (smallestBatch, perPass) = settled.map { ($0.smallest, $0.perPass) } ?? (Int.max, 1)
        for start in stride(from: 0, to: waiting.count, by: perPass) {
            let part = waiting[start..<min(start + perPass, waiting.count)]
            guard part.count >= smallestBatch else {
                alone.add(part.count, ordering: .relaxed)
                for one in part { one.continuation.resume(with: Result { try Self.sign(one.input, with: native) }) }
                continue
            }
            together.add(part.count, ordering: .relaxed)
            passes.add(1, ordering: .relaxed)
            do {
                let signatures = try Self.sign(part.map(\.input), with: native)
                for (one, signature) in zip(part, signatures) { one.continuation.resume(returning: signature) }
            } catch {
                for one in part { one.continuation.resume(throwing: error) }
            }
        }
    }

    private static func libcryptoKey(_ key: _RSA.Signing.PrivateKey) -> OpaquePointer? {
        var der = [UInt8](key.derRepresentation)
        defer { der.withUnsafeMutableBytes { if let base = $0.baseAddress { _ = memset(base, 0, $0.count) } } }
        guard let native = der.withUnsafeBufferPointer({ b2c_rsa_key_from_der($0.baseAddress, $0.count) }) else { return nil }
        let probe = Array("b2c local tenant: libcrypto and swift-crypto sign alike".utf8)
        guard let ours = try? sign(probe, with: native),
            let theirs = try? key.signature(for: Data(probe), padding: .insecurePKCS1v1_5).rawRepresentation,
            ours == [UInt8](theirs)
        else {
            b2c_rsa_key_free(native)
            return nil
        }
        return native
    }

    /// Several signatures in one call: the inputs side by side in one buffer, the signatures written into another.
    private static func sign(_ inputs: [[UInt8]], with native: OpaquePointer) throws -> [[UInt8]] {
        let size = b2c_rsa_key_size(native)
        let joined = inputs.flatMap { $0 }
        var out = [UInt8](repeating: 0, count: size * inputs.count)
        let written = joined.withUnsafeBufferPointer { data in
            out.withUnsafeMutableBufferPointer { signatures in
                var starts: [UnsafePointer<UInt8>?] = []
                var offset = 0
                for input in inputs {
                    starts.append(data.baseAddress.map { $0 + offset })
                    offset += input.count
                }
                let targets = (0..<inputs.count).map { i in signatures.baseAddress.map { $0 + i * size } }
                return b2c_rsa_sign_sha256_batch(native, inputs.count, starts, inputs.map(\.count), targets)
            }
        }
        guard written == size else { throw SigningFailure() }
        return (0..<inputs.count).map { Array(out[$0 * size..<($0 + 1) * size]) }
    }

    private static func sign(_ input: [UInt8], with native: OpaquePointer) throws -> [UInt8] {
        var signature = [UInt8](repeating: 0, count: b2c_rsa_key_size(native))
        let written = input.withUnsafeBufferPointer { data in
            signature.withUnsafeMutableBufferPointer { b2c_rsa_sign_sha256(native, data.baseAddress, data.count, $0.baseAddress) }
        }
        guard written == signature.count else { throw SigningFailure() }
        return signature
    }

    /// libcrypto refused to sign (it does not, for a key it read): the token is not issued.
    struct SigningFailure: Error, CustomStringConvertible {
        var description: String { "the tenant's signing key could not sign (libcrypto refused)" }
    }
}
