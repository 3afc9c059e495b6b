import B2CProtocol
import Crypto
import _CryptoExtras
import Foundation
import Hummingbird
import NIOConcurrencyHelpers

/// A local Azure AD B2C tenant. Create one, then `start` it on a port (see `EmulatorServer`).
public final class B2CEmulator: Sendable {
    public let seed: EmulatorSeed
    /// What a path's tenant segment may say, lower-cased: the tenant's name, its id and the name's first label.
    let tenantSegmentNames: [String]
    public let store: EmulatorStore
    public let clock: EmulatorClock
    let keys: SigningKeys
    let faults = NIOLockedValueBox<[Fault]>([])
    /// `host:port` names this emulator is reachable under; filled in when servers start.
    let servedHosts = NIOLockedValueBox<Set<String>>([])
    /// The host names (not addresses) a request's Host may carry: `localhost`, the seed's host aliases, the name the
    /// server listens on, the names of its TLS certificate, and those added with `answer(to:)`.
    private let hostNames = NIOLockedValueBox<Set<String>>(["localhost"])
    /// The origin clients use when it is not the one they connect to (a container's published port, a proxy):
    /// `--public-url`. It names the issuer and every endpoint; a request's Host never does then.
    private let publicOriginBox = NIOLockedValueBox<String?>(nil)
    /// A token that opens the admin surface to peers that are not this machine (`--admin-token-file`); nil: loopback only.
    private let adminTokenBox = NIOLockedValueBox<String?>(nil)
    /// Loopback peers need the token too (`--admin-token-required`; the container image): a port forwarder may hand the
    /// host's connections in from a loopback address.
    private let adminTokenRequiredBox = NIOLockedValueBox(false)

    // The endpoints, each holding what it uses.
    let issuer: TokenIssuer
    let pages: PageRenderer
    let discovery: DiscoveryEndpoint
    let authorize: AuthorizeEndpoint
    let token: TokenEndpoint
    let nativeAuth: NativeAuthEndpoint
    let logout: LogoutEndpoint
    let sampleAPI: SampleAPI
    let graph: GraphEndpoint
    /// The custom policies of `--custom-policies` and of Graph uploads.
    public let customPolicies: CustomPolicies
    let userInfo: UserInfoEndpoint
    let admin: AdminEndpoint
    let identityProviders: MockIdentityProviders
    let deviceAuthorization: DeviceAuthorization

    public convenience init(seed: EmulatorSeed = .default, store: EmulatorStore) throws {
        try self.init(seed: seed, store: store, clock: nil)
    }

    /// The two sides of a twin seed (`EmulatorSeed.twin`) over one store: the same people and clock; each side its own
    /// apps, signing keys and (once served on a listener of its own) host and issuer.
    public static func twin(seed: EmulatorSeed, store: EmulatorStore) throws -> (b2c: B2CEmulator, externalId: B2CEmulator) {
        guard let sides = seed.twinSides else {
            throw TwinError(message: "the seed has no twin (its External ID side's apps) or no sign-up-or-sign-in user flow")
        }
        let b2c = try B2CEmulator(seed: sides.b2c, store: store, clock: nil)
        return (b2c, try B2CEmulator(seed: sides.externalId, store: store, clock: b2c.clock))
    }

    public struct TwinError: Error, CustomStringConvertible {
        public var message: String
        public var description: String { message }
    }

    private init(seed: EmulatorSeed, store: EmulatorStore, clock shared: EmulatorClock?) throws {
        self.seed = seed
        let name = seed.tenant.name.lowercased()
        tenantSegmentNames = [name, seed.tenant.id, String(name.prefix { $0 != "." })]
        self.store = store
        let clock = try shared ?? EmulatorClock(store: store)
        self.clock = clock
        // A twin's External ID side signs with keys of its own, as Entra's endpoints do beside B2C's.
        let externalSide = seed.twin != nil && seed.tenant.externalId
        keys = try SigningKeys(store: store, now: clock.now(), setting: externalSide ? "signing_keys_external_id" : "signing_keys")
        try store.seedUsers(seed.users, now: clock.now())
        // Hosts served in earlier runs: tokens issued there stay valid at the sample API after a restart.
        if let saved = try store.setting("served_hosts"), let list = try? JSONValue.parse(saved).arrayValue {
            servedHosts.withLockedValue { $0.formUnion(list.compactMap(\.stringValue)) }
        }
        issuer = TokenIssuer(seed: seed, store: store, clock: clock, keys: keys)
        let customPolicies = try CustomPolicies(
            tenant: seed.tenant.name, policyKeys: seed.tenant.allPolicyKeys, store: store, clock: clock)
        self.customPolicies = customPolicies
        pages = PageRenderer(tenantName: seed.tenant.name, clock: clock, seed: seed)
        let sessions = Sessions(store: store, tenantID: seed.tenant.id)
        discovery = DiscoveryEndpoint(seed: seed, issuer: issuer, pages: pages)
        authorize = AuthorizeEndpoint(
            parts: JourneyParts(
                seed: seed, store: store, clock: clock, issuer: issuer, pages: pages, sessions: sessions, customPolicies: customPolicies))
        token = TokenEndpoint(seed: seed, store: store, clock: clock, issuer: issuer, customPolicies: customPolicies)
        nativeAuth = NativeAuthEndpoint(seed: seed, store: store, clock: clock, issuer: issuer)
        logout = LogoutEndpoint(seed: seed, store: store, sessions: sessions, pages: pages)
        admin = AdminEndpoint(seed: seed, store: store, clock: clock, faults: faults, keys: keys)
        identityProviders = MockIdentityProviders(store: store, clock: clock, tenantName: seed.tenant.name, pages: pages)
        deviceAuthorization = DeviceAuthorization(seed: seed, store: store, clock: clock, pages: pages)
        let served = servedHosts, issuer = issuer, names = hostNames
        // The hosts served so far, and the origin of the token's own issuer when the tenant answers to its name (a tenant
        // behind `--host-name contoso.b2clogin.com`: its tokens name that host, on whatever port the client used).
        let trusted: @Sendable (String?) -> Set<String> = { iss in
            // The seed's policies and the loaded relying parties (whose issuer form their JwtIssuer may set).
            let policies =
                seed.policies
                + customPolicies.ids.compactMap { id in
                    customPolicies.relyingPartyID(id).flatMap { customPolicies.authority($0, seed: seed) }
                }
            var out = Self.trustedIssuers(seed: seed, policies: policies, served: served, issuer: issuer)
            if let iss, let u = URL(string: iss), let scheme = u.scheme, ["http", "https"].contains(scheme), let host = u.host,
                HostHeader.isAddress(HostHeader.name(of: host)) || names.withLockedValue({ $0.contains(host.lowercased()) })
            {
                let origin = "\(scheme)://\(host.contains(":") ? "[\(host)]" : host)" + (u.port.map { ":\($0)" } ?? "")
                out.insert(issuer.issuer(origin: origin, policy: nil))
                for p in policies { out.insert(issuer.issuer(origin: origin, policy: p)) }
            }
            return out
        }
        sampleAPI = SampleAPI(seed: seed, clock: clock, keys: keys, trustedIssuers: trusted)
        userInfo = UserInfoEndpoint(seed: seed, store: store, clock: clock, keys: keys, trustedIssuers: trusted)
        graph = GraphEndpoint(
            seed: seed, store: store, clock: clock, keys: keys, trustedIssuers: trusted, customPolicies: customPolicies)
        answer(to: seed.tenant.hostAliases)
    }

    public var tenantID: String { seed.tenant.id }

    /// The policy a request names: a loaded custom policy's relying party (over a seed policy of the same id), else the
    /// seed's.
    func policy(named name: String) -> EmulatorSeed.Policy? {
        customPolicies.authority(name, seed: seed)
    }
    public var tenantName: String { seed.tenant.name }
    /// The user flows' current signing key, as published.
    public var jwk: JWK { (try? keys.current(.userFlow).jwk) ?? JWK(kid: "", n: "", e: "") }

    /// The tenant as its clients reach it: the issuer, discovery's endpoints and the pages' links use this origin
    /// (scheme, host and port of `url`), whatever Host a request carries; its host name is answered.
    public func serve(publicURL url: URL) {
        guard let scheme = url.scheme?.lowercased(), let host = url.host?.lowercased() else { return }
        let bracketed = host.contains(":") ? "[\(host)]" : host
        let origin = "\(scheme)://\(bracketed)" + (url.port.map { ":\($0)" } ?? "")
        publicOriginBox.withLockedValue { $0 = origin }
        answer(to: [host])
        addServedHosts([String(origin.dropFirst(scheme.count + 3))])
    }

    public var publicOrigin: String? { publicOriginBox.withLockedValue { $0 } }

    /// Opens the admin surface to other machines' requests that carry `Authorization: Bearer <token>`.
    public func openAdmin(token: String) { adminTokenBox.withLockedValue { $0 = token } }

    /// Whether a request from another machine carries the admin token (compared in constant time).
    func adminTokenMatches(_ authorization: String?) -> Bool {
        guard let expected = adminTokenBox.withLockedValue({ $0 }), let authorization, authorization.hasPrefix("Bearer ") else {
            return false
        }
        let given = Array(authorization.dropFirst("Bearer ".count).utf8), wanted = Array(expected.utf8)
        guard given.count == wanted.count else { return false }
        return zip(given, wanted).reduce(UInt8(0)) { $0 | ($1.0 ^ $1.1) } == 0
    }

    var adminIsOpen: Bool { adminTokenBox.withLockedValue { $0 != nil } }

    /// Every request to the admin surface needs the token, loopback ones included; with no token (`openAdmin(token:)`)
    /// the surface answers no one.
    public func requireAdminToken() { adminTokenRequiredBox.withLockedValue { $0 = true } }

    var adminTokenRequired: Bool { adminTokenRequiredBox.withLockedValue { $0 } }

    /// Lets requests name the tenant under these host names (`host` or `host:port`; the port is ignored).
    public func answer(to names: [String]) {
        let bare = names.map { HostHeader.name(of: $0) }.filter { !$0.isEmpty && !HostHeader.isAddress($0) }
        hostNames.withLockedValue { $0.formUnion(bare) }
    }

    /// The names a request's Host may carry, sorted (addresses are always answered).
    var answeredNames: [String] { hostNames.withLockedValue { $0 }.sorted() }

    /// An IP literal is answered (no page can rebind one); a name only when it is one of ours.
    func answers(toHost host: String) -> Bool {
        let name = HostHeader.name(of: host)
        return HostHeader.isAddress(name) || hostNames.withLockedValue { $0.contains(name) }
    }

    func addServedHosts(_ hosts: [String]) {
        let all = servedHosts.withLockedValue { set -> [String] in
            set.formUnion(hosts.map { $0.lowercased() })
            return set.sorted()
        }
        try? store.setSetting("served_hosts", JSONValue(Array(all.suffix(300))).serialized())
    }

    /// Every issuer the sample API trusts: each served host, both schemes' patterns, every policy.
    static func trustedIssuers(
        seed: EmulatorSeed, policies: [EmulatorSeed.Policy], served: NIOLockedValueBox<Set<String>>, issuer: TokenIssuer
    ) -> Set<String> {
        var hosts = served.withLockedValue { $0 }
        hosts.formUnion(seed.tenant.hostAliases.map { $0.lowercased() })
        var out: Set<String> = []
        for h in hosts {
            for scheme in ["https", "http"] {
                let origin = "\(scheme)://\(h)"
                out.insert(issuer.issuer(origin: origin, policy: nil))
                for p in policies { out.insert(issuer.issuer(origin: origin, policy: p)) }
            }
        }
        return out
    }
}

/// The name part of a Host header (`name[:port]`, `[v6]:port`), lower-cased and without brackets.
enum HostHeader {
    /// (On the bytes, and lower-cased only when there is an upper-case letter: every request asks.)
    static func name(of host: String) -> String {
        let h = host.utf8.contains { $0 >= UInt8(ascii: "A") && $0 <= UInt8(ascii: "Z") || $0 >= 0x80 } ? host.lowercased() : host
        let bytes = h.utf8
        if bytes.first == UInt8(ascii: "["), let end = bytes.firstIndex(of: UInt8(ascii: "]")) {
            return String(Substring(bytes[bytes.index(after: bytes.startIndex)..<end]))
        }
        var name = bytes[...]
        if let colon = bytes.lastIndex(of: UInt8(ascii: ":")), bytes.firstIndex(of: UInt8(ascii: ":")) == colon {
            name = bytes[..<colon]
        }
        if name.last == UInt8(ascii: ".") { name = name.dropLast() }
        return String(Substring(name))
    }

    /// An IPv4 or IPv6 address (bracketless), as inet_pton reads one.
    static func isAddress(_ name: String) -> Bool { IPBytes.isAddress(name) }
}

/// The request pipeline's questions to the tenant: the next injected fault of an endpoint, and whether a path's tenant
/// segment names this tenant.
extension B2CEmulator {
    /// Takes one of the faults queued for `endpoint` (`POST /_admin/faults`).
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

    /// The tenant by its name, its id, or its name's first label (`contoso` for contoso.onmicrosoft.com), in any case.
    func tenantMatches(_ segment: Substring) -> Bool {
        tenantSegmentNames.contains { AuthorityPrefixMiddleware.isLowercased(segment, $0) }
    }
}

/// What every endpoint knows of its tenant.
protocol TenantPart: Sendable {
    var seed: EmulatorSeed { get }
}

extension TenantPart {
    var tenantName: String { seed.tenant.name }
    var tenantID: String { seed.tenant.id }
}
