import Foundation

/// A policy of the configuration (or its native-auth name, or an External ID tenant's one authority) resolved to the
/// authority it signs in at and the part of the store its accounts live in.
public struct ResolvedPolicy: Sendable {
    /// The name accounts are held under: the policy's, the native-auth configuration's, or an External ID tenant's.
    public var name: String
    /// The authority it signs in at.
    public var authority: Authority
    /// The configured policy; nil for a native-auth name or an External ID tenant.
    public var policy: ClientConfiguration.Policy?
    /// The part of the store this name's accounts live in.
    public var scope: AccountScope
}

/// Which policy, scopes and remedy a request means: rules of the configuration alone, the same for every flow.
extension ClientConfiguration {
    /// The configured policy of that name (case-insensitive); an External ID tenant has none.
    public func policy(_ name: String) throws -> Policy {
        if tenantType == .externalId {
            throw B2CError(
                .usage, "\(source) is an External ID tenant: it has no policies (its user flow is attached to the app)",
                remedy: .leaveOutPolicy(name))
        }
        guard let p = policy(named: name) else {
            let known = policies.map(\.name) + (nativeAuth.map { [$0.name] } ?? [])
            throw B2CError(.configuration, "the policy '\(name)' is not in \(source) (known: \(known.joined(separator: ", ")))")
        }
        return p
    }

    /// The default sign-in policy: the first of role signUpSignIn, else signIn.
    public func defaultPolicy() throws -> Policy {
        guard let p = policies(role: .signUpSignIn).first ?? policies(role: .signIn).first else {
            throw B2CError(
                .configuration, "\(source) has no policy of role signUpSignIn or signIn",
                remedy: .namePolicy(candidates: policies.map(\.name)))
        }
        return p
    }

    /// The policy (or native-auth name) a command acts on; nil means the default sign-in policy. Every command resolves
    /// its `--policy` here, so a policy and the native-auth name mean the same thing everywhere.
    public func resolve(policy name: String?) throws -> ResolvedPolicy {
        if let external = externalIdAuthority {
            // One name for an External ID tenant: its browser and native sign-ins are the same account.
            if let name, name.caseInsensitiveCompare(external.policy) != .orderedSame,
                nativeAuth.map({ name.caseInsensitiveCompare($0.name) != .orderedSame }) ?? true
            {
                _ = try policy(name)
            }
            return ResolvedPolicy(name: external.policy, authority: external, policy: nil, scope: scope(of: external))
        }
        if let name, let n = nativeAuthority, n.policy.caseInsensitiveCompare(name) == .orderedSame, policy(named: name) == nil {
            return ResolvedPolicy(name: n.policy, authority: n, policy: nil, scope: scope(of: n))
        }
        let p = try name.map { try policy($0) } ?? defaultPolicy()
        let authority = authority(for: p)
        return ResolvedPolicy(name: p.name, authority: authority, policy: p, scope: scope(of: authority))
    }

    /// A policy of one role: the one named (which must have that role), else the first of the role.
    public func policy(_ name: String?, role: Role) throws -> Policy {
        if let name {
            let p = try policy(name)
            guard p.role == role else {
                throw B2CError(.usage, "\(p.name) has role \(p.role.rawValue) in \(source), not \(role.rawValue)")
            }
            return p
        }
        guard let p = policies(role: role).first else {
            throw B2CError(.configuration, "\(source) has no policy of role \(role.rawValue); add one to \"policies\"")
        }
        return p
    }

    /// The policy a password sign-in uses: the one named, which must have role ropc, else the configuration's first ropc policy.
    public func passwordPolicy(_ name: String?) throws -> Policy {
        let ropc = policies(role: .ropc)
        guard let name else {
            guard let first = ropc.first else {
                throw B2CError(
                    .configuration,
                    "a password sign-in needs a policy of role ropc, and \(source) has none; sign in in the browser, or with native auth")
            }
            return first
        }
        let policy = try self.policy(name)
        guard policy.role == .ropc else {
            throw B2CError(
                .usage,
                "a password sign-in needs a policy of role ropc; \(policy.name) has role \(policy.role.rawValue)"
                    + (ropc.isEmpty ? " and \(source) has none" : " (use \(ropc.map(\.name).joined(separator: " or ")))"))
        }
        return policy
    }

    /// The policy whose token endpoint app-only requests go to: the one named, else the configuration's
    /// `clientCredentials` policy, else the default sign-in policy (B2C serves them at any policy); External ID: its
    /// policy-less authority.
    public func appPolicy(_ name: String?) throws -> ResolvedPolicy {
        if name == nil, let p = policies(role: .clientCredentials).first { return try resolve(policy: p.name) }
        return try resolve(policy: name)
    }

    /// The policy a browser sign-in may recover a call with when it needs interaction: only a sign-up-or-sign-in or
    /// sign-in policy signs a person in; a profile, reset, ROPC or native policy cannot stand in for one. Nil: none.
    public func browserRecoveryPolicy(_ name: String?) throws -> String? {
        let t = try resolve(policy: name)
        return t.policy?.role == .signUpSignIn || t.policy?.role == .signIn ? t.name : nil
    }

    /// Resource scopes for a request: explicit scopes, or an API's, or the first API's.
    public func resourceScopes(api: String?, scopes: [String]) throws -> [String] {
        if !scopes.isEmpty { return scopes }
        if let api { return try self.api(api).scopes }
        if let first = apis.first { return first.scopes }
        // No API: on B2C a token for the app itself (its client id as the scope, `aud` = the client id), as MSAL's B2C
        // samples ask; External ID has no such scope, so its sign-in asks for none.
        return tenantType == .b2c ? [clientID] : []
    }

    /// The scopes of a token the person asked for: as `resourceScopes`, and none is an error that names the fix.
    public func tokenScopes(api: String?, scopes: [String]) throws -> [String] {
        let resource = try resourceScopes(api: api, scopes: scopes)
        guard resource.isEmpty else { return resource }
        throw B2CError(
            .configuration,
            "\(source) names no API, and an External ID tenant gives no token for the app itself", remedy: .nameScopeOrAddAPI)
    }

    /// The configured API of that name.
    public func api(_ name: String) throws -> API {
        guard let a = api(named: name) else {
            throw B2CError(.configuration, "no API named '\(name)' in \(source) (known: \(apis.map(\.name).joined(separator: ", ")))")
        }
        return a
    }

    /// The resource of an app-only request: `scope` (which must be `<App ID URI>/.default`), else the named (or first)
    /// API's App ID URI with `/.default`, taken from its first scope.
    public func appResource(api: String?, scope: String?) throws -> String {
        if let scope {
            guard scope.hasSuffix("/.default"), scope.count > "/.default".count else {
                throw B2CError(
                    .usage,
                    "the scope \(scope) cannot be asked for in an app-only token: it takes one '<App ID URI>/.default' "
                        + "(such as https://contoso.onmicrosoft.com/api/.default)", remedy: .nameAppResource)
            }
            return scope
        }
        let chosen: API
        if let api {
            chosen = try self.api(api)
        } else {
            guard let a = apis.first else { throw B2CError(.configuration, "\(source) names no API", remedy: .nameAppResource) }
            chosen = a
        }
        guard let first = chosen.scopes.first, let slash = first.lastIndex(of: "/"), first.contains("://") else {
            throw B2CError(
                .configuration, "the scopes of the API '\(chosen.name)' are not full URIs, so its App ID URI is unknown",
                remedy: .nameAppResource)
        }
        return String(first[..<slash]) + "/.default"
    }

    /// How to sign in to a policy (or the native-auth name) again, as a remedy.
    public func signInRemedy(policy: String, loginHint: String? = nil) -> Remedy {
        if let n = nativeAuth, n.name.caseInsensitiveCompare(policy) == .orderedSame, self.policy(named: policy) == nil {
            return .signIn(policy: n.name, method: .native, loginHint: loginHint)
        }
        let method: Remedy.SignInMethod
        switch self.policy(named: policy)?.role {
        case .ropc?: method = .password
        case .editProfile?: method = .editProfile
        case .resetPassword?: method = .resetPassword
        default: method = .browser
        }
        return .signIn(policy: self.policy(named: policy)?.name ?? policy, method: method, loginHint: loginHint)
    }

    /// The store scope of an authority of this configuration: its host, the client id, and the tenant GUID when known.
    public func scope(of authority: Authority) -> AccountScope {
        AccountScope(environment: authority.hostAndPort, clientID: clientID, tenantID: tenantID)
    }

    /// Every scope this configuration's accounts can live in (the authority host, and the native-auth host).
    public var scopes: [AccountScope] {
        var out: [AccountScope]
        if let external = externalIdAuthority {
            out = [scope(of: external)]
        } else {
            out = [AccountScope(environment: Authority.hostAndPort(of: authorityHost), clientID: clientID, tenantID: tenantID)]
        }
        if let n = nativeAuthority, !out.contains(scope(of: n)) { out.append(scope(of: n)) }
        return out
    }
}
