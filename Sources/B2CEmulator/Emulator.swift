import B2CProtocol
import Crypto
import _CryptoExtras
import Foundation
import Hummingbird
import NIOConcurrencyHelpers

/// A local Azure AD B2C tenant. Create one, then `start` it on a port (see `EmulatorServer`).
public final class B2CEmulator: Sendable {
    public let seed: EmulatorSeed
    public let store: EmulatorStore
    let signingKey: _RSA.Signing.PrivateKey
    public let jwk: JWK
    public let clock: EmulatorClock
    let faults = NIOLockedValueBox<[Fault]>([])
    /// `host:port` names this emulator is reachable under; filled in when servers start.
    let servedHosts = NIOLockedValueBox<Set<String>>([])

    /// Authorization codes live 10 minutes (not configurable in B2C).
    static let codeLifetime = 600
    /// Native-auth continuation tokens and one-time codes.
    static let continuationLifetime = 600
    static let otpLength = 8
    static let maxOTPAttempts = 5

    public init(seed: EmulatorSeed = .default, store: EmulatorStore) throws {
        self.seed = seed
        self.store = store
        self.signingKey = try store.signingKey()
        self.jwk = try JWK(publicKey: signingKey.publicKey)
        self.clock = try EmulatorClock(store: store)
        try store.seedUsers(seed.users, now: clock.now())
        // Hosts served in earlier runs: tokens issued there stay valid at the sample API after a restart.
        if let saved = try store.setting("served_hosts"), let list = try? JSONValue.parse(saved).arrayValue {
            servedHosts.withLockedValue { $0.formUnion(list.compactMap(\.stringValue)) }
        }
    }

    public var tenantID: String { seed.tenant.id }
    public var tenantName: String { seed.tenant.name }
    public var jwks: JWKSet { JWKSet(keys: [jwk]) }

    func addServedHosts(_ hosts: [String]) {
        let all = servedHosts.withLockedValue { set -> [String] in
            set.formUnion(hosts.map { $0.lowercased() })
            return set.sorted()
        }
        try? store.setSetting("served_hosts", JSONValue(Array(all.suffix(300))).serialized())
    }

    // MARK: issuer

    func issuer(origin: String, policy: EmulatorSeed.Policy?) -> String {
        if let policy, policy.issuerPattern == "tfp" {
            return "\(origin)/tfp/\(tenantID)/\(policy.lowercasedID)/v2.0/"
        }
        return "\(origin)/\(tenantID)/v2.0/"
    }

    /// Every issuer the sample API trusts: each served host, both schemes' patterns, every policy.
    func trustedIssuers() -> Set<String> {
        var hosts = servedHosts.withLockedValue { $0 }
        hosts.formUnion(seed.tenant.hostAliases.map { $0.lowercased() })
        var out: Set<String> = []
        for h in hosts {
            for scheme in ["https", "http"] {
                let origin = "\(scheme)://\(h)"
                out.insert(issuer(origin: origin, policy: nil))
                for p in seed.policies { out.insert(issuer(origin: origin, policy: p)) }
            }
        }
        return out
    }
}

/// The emulator's clock: real time plus an offset that tests move forward through the admin surface.
public final class EmulatorClock: Sendable {
    let offset: NIOLockedValueBox<Int>
    let store: EmulatorStore

    init(store: EmulatorStore) throws {
        self.store = store
        self.offset = NIOLockedValueBox(Int(try store.setting("clock_offset") ?? "0") ?? 0)
    }

    public func now() -> Int { Int(Date().timeIntervalSince1970) + offset.withLockedValue { $0 } }
    public var date: Date { Date(timeIntervalSince1970: TimeInterval(now())) }
    public var offsetSeconds: Int { offset.withLockedValue { $0 } }

    public func advance(by seconds: Int) throws {
        let value = offset.withLockedValue { o -> Int in
            o += seconds; return o
        }
        try store.setSetting("clock_offset", String(value))
    }

    public func set(offset value: Int) throws {
        offset.withLockedValue { $0 = value }
        try store.setSetting("clock_offset", String(value))
    }
}

/// A fault to inject on the next requests of one endpoint.
struct Fault: Sendable {
    enum Kind: String, Sendable, CaseIterable { case delay, status500, status503, malformedJSON, wrongContentType, drop }
    var endpoint: String
    var kind: Kind
    var remaining: Int
    var delayMilliseconds: Int

    var json: JSONValue {
        [
            "endpoint": .string(endpoint), "kind": .string(kind.rawValue), "remaining": JSONValue(remaining),
            "delayMs": JSONValue(delayMilliseconds),
        ]
    }

    static let endpoints = ["any", "discovery", "keys", "authorize", "token", "logout", "initiate", "challenge", "hello", "pages"]
}

extension B2CEmulator {
    func takeFault(for endpoint: String) -> Fault? {
        faults.withLockedValue { list in
            guard let i = list.firstIndex(where: { ($0.endpoint == endpoint || $0.endpoint == "any") && $0.remaining > 0 }) else {
                return nil
            }
            list[i].remaining -= 1
            let f = list[i]
            if list[i].remaining == 0 { list.remove(at: i) }
            return f
        }
    }
}
