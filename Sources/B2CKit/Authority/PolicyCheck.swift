import Foundation

/// One policy of the configuration checked against the tenant: its discovery document and key set fetched fresh, and
/// what is wrong with them in B2C terms (an unknown policy, an issuer on another host, an endpoint off the known hosts).
public struct PolicyCheck: Sendable {
    /// How the check went: the policy works, or what is wrong and whose fault it is.
    public enum Outcome: Sendable, Equatable {
        /// Discovery and the key set are fine; `keys` counts the keys.
        case ok(keys: Int)
        /// The configuration is wrong (exit 3): an unknown policy, a host missing from knownAuthorities, an unreadable CA.
        case configuration(String)
        /// The tenant could not be reached or answered badly (exit 5).
        case network(String)
    }

    /// The policy id, or the External ID or native-auth name.
    public var name: String
    /// The policy's role (`signUpSignIn`, …), or `externalId` or `nativeAuth`.
    public var role: String
    /// The discovery document's URL.
    public var discovery: URL
    /// What the check found.
    public var outcome: Outcome
    /// Said even when the policy works: e.g. the issuer's host differs from the authority host (a custom domain).
    public var notes: [String] = []
}

extension B2CClient {
    /// Fetches every policy's discovery document and JWKS (never from the cache) and reports each.
    public func checkPolicies() async -> [PolicyCheck] {
        var checked: [(String, String, Authority)] = config.policies.map { ($0.name, $0.role.rawValue, config.authority(for: $0)) }
        if let external = config.externalIdAuthority { checked.append((external.policy, "externalId", external)) }
        if let native = config.nativeAuthority, native != config.externalIdAuthority {
            checked.append((native.policy, "nativeAuth", native))
        }
        var checks: [PolicyCheck] = []
        for (name, role, authority) in checked {
            var check = PolicyCheck(name: name, role: role, discovery: authority.discoveryURL, outcome: .ok(keys: 0))
            if name.uppercased().hasPrefix("B2C_1A_") {
                // B2C's naming: B2C_1A_ is a custom policy (Identity Experience Framework), B2C_1_ a user flow.
                check.notes.append("a custom policy: its tokens carry the claims its relying-party file names, not a user flow's")
            }
            do {
                let meta = try await metadata.metadata(for: authority, now: clock(), refresh: true)
                let keys = try await metadata.keys(meta, now: clock(), refresh: true)
                let issuerHost = URL(string: meta.issuer).map(Authority.hostAndPort(of:))
                let issuerProblem = issuerHost.flatMap { host -> String? in
                    guard host != authority.hostAndPort else { return nil }
                    // External ID may name the tenant GUID's own ciamlogin host; tokens are checked against it by name.
                    if config.isKnown(host) || host.hasSuffix(".ciamlogin.com") {
                        check.notes.append(
                            "the issuer is on \(host), not the authority host \(authority.hostAndPort): tokens name \(host)")
                        return nil
                    }
                    return "the issuer is on \(host), not the authority host \(authority.hostAndPort), and \(host) is not in "
                        + "knownAuthorities: tokens would be refused. Add \(host) to knownAuthorities (a custom domain or b2clogin.com)"
                }
                if let issuerProblem {
                    check.outcome = .configuration(issuerProblem)
                } else if keys.keys.isEmpty {
                    check.outcome = .network("the key set at \(HTTPTransport.redacted(meta.jwksURI)) has no keys")
                } else {
                    check.outcome = .ok(keys: keys.keys.count)
                }
            } catch let e as B2CError {
                check.outcome = e.kind == .network ? .network(e.message) : .configuration(e.message)
            } catch {
                check.outcome = .network("\(error)")
            }
            checks.append(check)
        }
        return checks
    }
}
