import Foundation

/// A token checked against its tenant the way an API would check it, each check with what it found in B2C terms
/// (`b2c jwt verify`): the signature against the policy's key set, `iss`, `aud`, the time window, the policy claim.
public struct TokenVerification: Sendable {
    /// One check of the token: what was checked, whether it passed, and what it found.
    public struct Check: Sendable {
        /// What was checked, such as `token`, `signature`, `iss`, `aud`, `exp`, `nbf`, the policy claim (`tfp`, `acr`).
        public var name: String
        /// Whether the token passed it.
        public var ok: Bool
        /// What was found, or what is wrong, in B2C terms.
        public var detail: String
    }

    /// Whose token it is: a person's (issued at a sign-in), or the app's own (client credentials).
    public enum Subject: String, Sendable {
        case person
        case app

        /// An app-only token carries no person: Entra marks it `idtyp: app`, or gives `roles` without `scp`; a B2C one
        /// (reference §13.2) has the calling app in `azp` and none of the claims every sign-in gives (`auth_time`, names,
        /// emails, a nonce).
        public init(_ jwt: JWT) {
            if let idtyp = jwt.string("idtyp") {
                self = idtyp == "app" ? .app : .person
            } else if jwt.claims["roles"] != nil && jwt.claims["scp"] == nil {
                self = .app
            } else {
                let personal = ["auth_time", "name", "given_name", "family_name", "emails", "email", "preferred_username", "nonce"]
                self = jwt.string("azp") != nil && personal.allSatisfy { jwt.claims[$0] == nil } ? .app : .person
            }
        }

        /// "an app-only token", "a person's token": what `b2c jwt verify` says it checked.
        public var phrase: String { self == .app ? "an app-only token" : "a person's token" }
    }

    /// The policy (or External ID authority) the token was checked against.
    public var policy: String
    /// Whether it is a person's token or the app's own, as its claims tell.
    public var subject: Subject = .person
    /// The key set the signature was checked with: its fetch time, and whether it came from the store's cache.
    public var keysFetchedAt: Int?
    /// Whether that key set was read from the store's cache rather than fetched.
    public var keysFromCache = false
    /// The tenant could not be reached (why): the cached discovery document and key set were used, whatever their age.
    public var tenantUnreachable: String?
    /// Every check made, in order.
    public var checks: [Check] = []
    /// The token's claims, decoded (trusted only when `valid`).
    public var claims: [String: JSONValue]
    /// Whether every check passed.
    public var valid: Bool { checks.allSatisfy(\.ok) }

    mutating func add(_ name: String, _ ok: Bool, _ detail: String) { checks.append(Check(name: name, ok: ok, detail: detail)) }
}

extension B2CClient {
    /// Checks a token against the policy it names (or `policyName`, or the default policy): fetches discovery and the
    /// key set, and explains each failure — a key of the other policy type, an issuer on another host or in the `tfp`
    /// form, an id token where an access token was expected, a clock off by more than 5 minutes.
    public func verifyToken(_ token: String, policyName: String?, api: String?, audience: String?) async throws -> TokenVerification {
        let jwt: JWT
        do { jwt = try JWT.decode(token) } catch { throw B2CError(.failed, "\(error)") }
        let policyClaim = jwt.string("tfp") ?? jwt.string("acr")
        let (name, authority) = try verificationTarget(policyName: policyName, claimed: policyClaim)
        var result = TokenVerification(policy: name, subject: TokenVerification.Subject(jwt), claims: jwt.claims)
        result.add("token", true, subjectDetail(jwt, result.subject))
        // With the tenant down, the cached documents (of any age) still let a token be checked; the result says so.
        let (meta, discovered) = try await metadata.discovery(for: authority, now: clock(), offline: true)
        result.tenantUnreachable = discovered.unreachable
        try await checkSignature(jwt, token: token, name: name, meta: meta, into: &result)
        checkIssuer(jwt.string("iss"), expected: meta.issuer, into: &result)
        checkAudience(jwt, api: api, audience: audience, subject: result.subject, into: &result)
        checkTimes(jwt, into: &result)
        if authority.native {
            let ver = jwt.string("ver")
            result.add("ver", ver == "2.0", ver == "2.0" ? "2.0 (External ID)" : "is \(ver ?? "missing"); External ID tokens are 2.0")
        } else if let policyClaim {
            let same = policyClaim.caseInsensitiveCompare(name) == .orderedSame
            result.add(
                jwt.string("tfp") != nil ? "tfp" : "acr", same,
                same ? policyClaim : "names \(policyClaim), but the token was checked against \(name)")
        } else {
            result.add(
                "policy", true,
                "the token names no policy (tfp/acr), as app-only tokens may not; checked against \(name), whose keys sign it")
        }
        return result
    }

    /// `--policy`, else the policy the token names (configured or not: the tenant is asked), else the default.
    private func verificationTarget(policyName: String?, claimed: String?) throws -> (String, Authority) {
        if let external = config.externalIdAuthority { return (try config.resolve(policy: policyName).name, external) }
        if let policyName { let t = try config.resolve(policy: policyName); return (t.name, t.authority) }
        if let claimed {
            if let p = config.policy(named: claimed) { return (p.name, config.authority(for: p)) }
            if PolicyID.isValid(claimed) {
                return (claimed, config.authority(for: ClientConfiguration.Policy(name: claimed, role: .signIn)))
            }
        }
        let t = try config.resolve(policy: nil)
        return (t.name, t.authority)
    }

    private func checkSignature(
        _ jwt: JWT, token: String, name: String, meta: OpenIDMetadata, into result: inout TokenVerification
    ) async throws {
        guard jwt.algorithm == "RS256" else {
            return result.add("signature", false, "is '\(jwt.algorithm ?? "none")'; B2C signs with RS256")
        }
        var keys = try await metadata.keySet(meta, now: clock(), refresh: false, offline: true)
        if let kid = jwt.kid, keys.set.key(kid: kid) == nil {
            keys = try await metadata.keySet(meta, now: clock(), refresh: true, offline: true)
        }
        result.keysFetchedAt = keys.source.fetchedAt
        result.keysFromCache = keys.source.fromCache
        result.tenantUnreachable = result.tenantUnreachable ?? keys.source.unreachable
        let down = keys.source.unreachable == nil ? "" : "; the tenant could not be reached"
        let source = keys.source.fromCache ? " (cached, fetched \(JWTError.date(keys.source.fetchedAt))\(down))" : " (fetched now)"
        guard let kid = jwt.kid, keys.set.key(kid: kid) == nil else {
            do {
                try await SignatureCheck.verify(token, decoded: jwt, keys: keys.set, document: keys.document)
                return result.add("signature", true, "RS256 with key \(jwt.kid ?? "(the only key)") of \(name)'s key set" + source)
            } catch {
                return result.add(
                    "signature", false, "does not verify with key \(jwt.kid ?? "(the only key)") of \(name)'s key set" + source)
            }
        }
        if keys.source.unreachable != nil {
            return result.add(
                "signature", false,
                "key \(kid) is not in \(name)'s key set as cached \(JWTError.date(keys.source.fetchedAt)), and the tenant could not be "
                    + "reached for the current one: a key added since, or a token this tenant did not issue; check again when it answers")
        }
        result.add("signature", false, try await whereIsKey(kid, notIn: name))
    }

    /// Which configured policy publishes a key that `name`'s key set lacks, in words.
    private func whereIsKey(_ kid: String, notIn name: String) async throws -> String {
        let custom = name.lowercased().hasPrefix("b2c_1a_")
        for p in config.policies where p.name.lowercased().hasPrefix("b2c_1a_") != custom {
            guard let m = try? await metadata.metadata(for: config.authority(for: p), now: clock()),
                let other = try? await metadata.keys(m, now: clock(), refresh: false), other.key(kid: kid) != nil
            else { continue }
            let (mine, theirs) = custom ? ("custom policies", "user flows") : ("user flows", "custom policies")
            return "key \(kid) belongs to \(p.name) (\(theirs)), not to \(name): \(theirs) and \(mine) sign with different keys, so an "
                + "API configured with one type's metadata refuses the other's tokens (IDX10501). Verify it against \(p.name)'s metadata"
        }
        return "key \(kid) is in no key set of this tenant's policies: a token from another tenant or environment, a key retired "
            + "since, or a token that was not issued by B2C"
    }

    private func checkIssuer(_ iss: String?, expected: String, into result: inout TokenVerification) {
        guard let iss else { return result.add("iss", false, "is missing") }
        guard iss != expected else { return result.add("iss", true, iss) }
        guard let got = URL(string: iss), let want = URL(string: expected) else { return result.add("iss", false, "'\(iss)' is not a URL") }
        var why = "is \(iss); the tenant issues \(expected)"
        if Authority.hostAndPort(of: got) != Authority.hostAndPort(of: want) {
            why +=
                ". The host differs: a token names the host the app signed in on (a custom domain, or b2clogin.com), so an API "
                + "must trust the issuer of each host its apps use"
        } else if got.pathComponents.contains("tfp") != want.pathComponents.contains("tfp") {
            why +=
                ". One is the tfp form (https://host/tfp/<tenant>/<policy>/v2.0/): the policy's token compatibility setting "
                + "(issuer claim) differs from what this authority publishes"
        } else if let a = got.pathComponents.first(where: { UUID(uuidString: $0) != nil }),
            let b = want.pathComponents.first(where: { UUID(uuidString: $0) != nil }), a.lowercased() != b.lowercased()
        {
            why += ". It names the tenant \(a), not \(b): a token of another tenant"
        }
        result.add("iss", false, why)
    }

    private func subjectDetail(_ jwt: JWT, _ subject: TokenVerification.Subject) -> String {
        switch subject {
        case .app: "\(subject.phrase) (client credentials): the app \(jwt.string("azp") ?? jwt.string("appid") ?? "?") as itself, no person"
        case .person: "\(subject.phrase): \(jwt.string("oid") ?? jwt.string("sub") ?? "?"), signed in"
        }
    }

    private func checkAudience(
        _ jwt: JWT, api: String?, audience: String?, subject: TokenVerification.Subject, into result: inout TokenVerification
    ) {
        let aud = jwt.string("aud") ?? jwt.claims["aud"]?.arrayValue?.first?.stringValue ?? ""
        if let audience {
            return result.add("aud", aud.lowercased() == audience.lowercased(), aud == audience ? aud : "is \(aud), expected \(audience)")
        }
        let isIDToken = aud.lowercased() == config.clientID
        guard let api else {
            return result.add(
                "aud", !aud.isEmpty,
                isIDToken
                    ? "\(aud): this app's client id, so an id token (or a token the app asked for itself)" : "\(aud) (an API's app id)")
        }
        if isIDToken {
            return result.add(
                "aud", false,
                "is \(aud), this app's client id: this is an id token (or a token for the app itself), not an access token for the "
                    + "API '\(api)'; the API's access token is the one to send")
        }
        if subject == .app { return checkApplicationPermissions(jwt, api: api, aud: aud, into: &result) }
        let wanted = Set(config.api(named: api)?.scopes.map { $0.split(separator: "/").last.map(String.init) ?? $0 } ?? [])
        let granted = Set((jwt.string("scp") ?? "").split(separator: " ").map(String.init))
        let ok = !wanted.isDisjoint(with: granted)
        result.add(
            "scp", ok,
            ok
                ? "\(granted.sorted().joined(separator: " ")) (aud \(aud))"
                : "is '\(granted.sorted().joined(separator: " "))', none of the API '\(api)' scopes \(wanted.sorted())")
    }

    /// An app-only token holds application permissions (the API's app roles granted to the app), not the delegated scopes
    /// a person's token has: in `roles` (Entra), or in `scp` (B2C's client credentials, reference §13.2). The API checks
    /// them against its own app roles, which a client does not know: any granted is accepted, and shown.
    private func checkApplicationPermissions(_ jwt: JWT, api: String, aud: String, into result: inout TokenVerification) {
        let claim = jwt.claims["roles"] != nil ? "roles" : "scp"
        let granted =
            jwt.claims["roles"]?.arrayValue?.compactMap(\.stringValue)
            ?? (jwt.string(claim) ?? "").split(separator: " ").map(String.init)
        guard !granted.isEmpty else {
            return result.add(
                claim, false,
                "is empty: an app-only token for the API '\(api)' carries the application permissions (app roles) granted to the "
                    + "app, and this one has none")
        }
        result.add(claim, true, "\(granted.sorted().joined(separator: " ")): application permissions of the app (aud \(aud))")
    }

    private func checkTimes(_ jwt: JWT, into result: inout TokenVerification) {
        let now = clock()
        guard let exp = jwt.int("exp") else { return result.add("exp", false, "is missing") }
        let skew = 300
        if now >= exp + skew {
            result.add("exp", false, "expired \(JWTError.date(exp)), \(now - exp) s ago (5 minutes of clock skew allowed)")
        } else {
            result.add("exp", true, "\(JWTError.date(exp)) (in \(exp - now) s)")
        }
        if let nbf = jwt.int("nbf"), now + skew < nbf {
            result.add("nbf", false, "not valid before \(JWTError.date(nbf)), \(nbf - now) s from now: a clock is wrong")
        }
    }
}
