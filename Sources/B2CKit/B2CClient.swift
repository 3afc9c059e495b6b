import Foundation

/// The façade: configuration + store + network, and the flows on top of them.
public final class B2CClient: Sendable {
    public let config: ClientConfiguration
    public let store: TokenStore
    public let transport: HTTPTransport
    public let metadata: MetadataProvider
    /// The app's client secret, for app-only tokens and confidential apps; asked for only when a request needs it.
    public let secrets: ClientSecretSource
    let clock: @Sendable () -> Int

    public init(
        config: ClientConfiguration, store: TokenStore, timeoutSeconds: Int = 30, trace: (@Sendable (String) -> Void)? = nil,
        secrets: ClientSecretSource = ClientSecretSource(), clock: @escaping @Sendable () -> Int = { Int(Date().timeIntervalSince1970) }
    ) throws {
        self.config = config
        self.store = store
        self.secrets = secrets
        do {
            transport = try HTTPTransport(
                caFile: config.caFile, caHosts: config.hostNames, timeoutSeconds: timeoutSeconds, trace: trace)
        } catch let e
            as NetworkError
        {
            throw B2CError(.configuration, e.description)
        }
        metadata = MetadataProvider(store: store, transport: transport, config: config)
        self.clock = clock
    }

    public func shutdown() async { await transport.shutdown() }

    /// The client's clock (epoch seconds).
    public func now() -> Int { clock() }

    public func policy(_ name: String) throws -> ClientConfiguration.Policy {
        if config.tenantType == .externalId {
            throw B2CError(
                .usage,
                "\(config.source) is an External ID tenant: it has no policies (its user flow is attached to the app)",
                remedy: .leaveOutPolicy(name))
        }
        guard let p = config.policy(named: name) else {
            let known = config.policies.map(\.name) + (config.nativeAuth.map { [$0.name] } ?? [])
            throw B2CError(.configuration, "the policy '\(name)' is not in \(config.source) (known: \(known.joined(separator: ", ")))")
        }
        return p
    }

    /// The default sign-in policy: the first of role signUpSignIn, else signIn.
    public func defaultPolicy() throws -> ClientConfiguration.Policy {
        guard let p = config.policies(role: .signUpSignIn).first ?? config.policies(role: .signIn).first else {
            throw B2CError(
                .configuration, "\(config.source) has no policy of role signUpSignIn or signIn",
                remedy: .namePolicy(candidates: config.policies.map(\.name)))
        }
        return p
    }

    /// Resource scopes for a request: explicit scopes, or an API's, or the first API's.
    public func resourceScopes(api: String?, scopes: [String]) throws -> [String] {
        if !scopes.isEmpty { return scopes }
        if let api {
            guard let a = config.api(named: api) else {
                throw B2CError(
                    .configuration, "no API named '\(api)' in \(config.source) (known: \(config.apis.map(\.name).joined(separator: ", ")))")
            }
            return a.scopes
        }
        if let first = config.apis.first { return first.scopes }
        // No API: on B2C a token for the app itself (its client id as the scope, `aud` = the client id), as MSAL's B2C
        // samples ask; External ID has no such scope, so its sign-in asks for none.
        return config.tenantType == .b2c ? [config.clientID] : []
    }

    /// The scopes of a token the person asked for: as `resourceScopes`, and none is an error that names the fix.
    public func tokenScopes(api: String?, scopes: [String]) throws -> [String] {
        let resource = try resourceScopes(api: api, scopes: scopes)
        guard resource.isEmpty else { return resource }
        throw B2CError(
            .configuration,
            "\(config.source) names no API, and an External ID tenant gives no token for the app itself: name the scope with "
                + "--scope (such as api://<API app id>/<scope>), or add the API to \"apis\" (b2c init --api NAME --api-url URL "
                + "--scope SCOPE)")
    }

    /// How to sign in to a policy (or the native-auth name) again, as a remedy.
    public func signInRemedy(policy: String, loginHint: String? = nil) -> Remedy {
        if let n = config.nativeAuth, n.name.caseInsensitiveCompare(policy) == .orderedSame, config.policy(named: policy) == nil {
            return .signIn(policy: n.name, method: .native, loginHint: loginHint)
        }
        let method: Remedy.SignInMethod
        switch config.policy(named: policy)?.role {
        case .ropc?: method = .password
        case .editProfile?: method = .editProfile
        case .resetPassword?: method = .resetPassword
        default: method = .browser
        }
        return .signIn(policy: config.policy(named: policy)?.name ?? policy, method: method, loginHint: loginHint)
    }

    /// A name under which accounts are held: a policy of the configuration, or the native-auth configuration's name.
    public struct Target: Sendable {
        public var name: String
        public var authority: Authority
        public var policy: ClientConfiguration.Policy?
        /// The part of the store this target's accounts live in.
        public var scope: AccountScope
    }

    /// The policy (or native-auth name) a command acts on; nil means the default sign-in policy. Every command resolves
    /// its `--policy` here, so a policy and the native-auth name mean the same thing everywhere.
    public func target(_ name: String?) throws -> Target {
        if let external = config.externalIdAuthority {
            // One name for an External ID tenant: its browser and native sign-ins are the same account.
            if let name, name.caseInsensitiveCompare(external.policy) != .orderedSame,
                config.nativeAuth.map({ name.caseInsensitiveCompare($0.name) != .orderedSame }) ?? true
            {
                _ = try policy(name)
            }
            return Target(name: external.policy, authority: external, policy: nil, scope: scope(of: external))
        }
        if let name, let n = config.nativeAuthority, n.policy.caseInsensitiveCompare(name) == .orderedSame,
            config.policy(named: name) == nil
        {
            return Target(name: n.policy, authority: n, policy: nil, scope: scope(of: n))
        }
        let p = try name.map { try policy($0) } ?? defaultPolicy()
        let authority = config.authority(for: p)
        return Target(name: p.name, authority: authority, policy: p, scope: scope(of: authority))
    }

    /// The store scope of an authority of this configuration: its host, the client id, and the tenant GUID when known.
    public func scope(of authority: Authority) -> AccountScope {
        AccountScope(environment: authority.hostAndPort, clientID: config.clientID, tenantID: config.tenantID)
    }

    /// Every scope this configuration's accounts can live in (the authority host, and the native-auth host).
    public var scopes: [AccountScope] {
        if let external = config.externalIdAuthority {
            var out = [scope(of: external)]
            if let n = config.nativeAuthority, !out.contains(scope(of: n)) { out.append(scope(of: n)) }
            return out
        }
        var out = [
            AccountScope(environment: Authority.hostAndPort(of: config.authorityHost), clientID: config.clientID, tenantID: config.tenantID)
        ]
        if let n = config.nativeAuthority, !out.contains(scope(of: n)) { out.append(scope(of: n)) }
        return out
    }
}
