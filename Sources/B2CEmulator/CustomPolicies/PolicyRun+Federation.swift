import B2CProtocol
import Foundation

/// A custom policy's federation profiles (reference: b2c-custom-policies.md, OAuth2, OpenID Connect and SAML technical
/// profiles): the tenant's mock of a social provider the profile names, an OpenID Connect provider of your own, or a
/// SAML identity provider; and what the provider's answer puts in the claims bag.
extension PolicyRun {
    /// The tenant's mock of the provider a federation profile names, by its endpoints' host or its `ProviderName`
    /// (`www.facebook.com/dialog/oauth` → Facebook).
    static func mockProvider(_ profile: TechnicalProfile) -> EmulatorSeed.IdentityProvider? {
        let named = [profile.metadata("authorization_endpoint"), profile.metadata("METADATA"), profile.metadata("ProviderName")]
            .compactMap { $0?.lowercased() }
        return EmulatorSeed.IdentityProvider.allCases.first { p in
            p != .local && named.contains { $0.contains(p.domain.split(separator: ".").first.map(String.init) ?? p.rawValue) }
        }
    }

    /// What a provider's answer says of the person, under the partner names the providers use (Facebook's `id`,
    /// `first_name`; OpenID Connect's `sub`, `given_name`), for the profile's output claims to pick from.
    static func federatedClaims(_ identity: FederatedIdentity) -> [String: ClaimValue] {
        var c: [String: ClaimValue] = ["id": .string(identity.subject), "sub": .string(identity.subject), "email": .string(identity.email)]
        if let v = identity.givenName { (c["first_name"], c["given_name"]) = (.string(v), .string(v)) }
        if let v = identity.surname { (c["last_name"], c["family_name"]) = (.string(v), .string(v)) }
        if let v = identity.name { c["name"] = .string(v) }
        if let v = identity.accessToken { c["access_token"] = .string(v) }
        // SAML's names: the subject, and the attributes B2C's SAML profiles map (the WS-Federation claim URIs).
        c["assertionSubjectName"] = .string(identity.subject)
        let ws = "http://schemas.xmlsoap.org/ws/2005/05/identity/claims/"
        for (uri, name) in [("emailaddress", "email"), ("givenname", "given_name"), ("surname", "family_name"), ("name", "name")] {
            if let v = c[name] { c[ws + uri] = v }
        }
        return c
    }

    /// A `SAML2` profile (reference: saml-identity-provider-technical-profile.md): its `PartnerEntity` metadata (an http(s)
    /// URL or a file) makes the tenant that provider's service provider, as for a user flow's SAML provider.
    static func samlProvider(_ profile: TechnicalProfile) -> EmulatorSeed.SAMLProvider? {
        guard profile.handler == .saml, let metadata = profile.metadata("PartnerEntity"), !metadata.isEmpty else { return nil }
        var provider = EmulatorSeed.SAMLProvider(
            id: profile.id, name: profile.node.child("DisplayName")?.trimmedText ?? profile.id, metadata: metadata)
        // B2C signs unless the profile says WantsSignedRequests false; XmlSignatureAlgorithm is Sha1 unless set
        // (saml-identity-provider-technical-profile.md). An unknown algorithm name keeps Sha1 (the upload checks it).
        provider.signsRequests = profile.metadata("WantsSignedRequests")?.lowercased() != "false"
        provider.requestSignature =
            profile.metadata("XmlSignatureAlgorithm").flatMap(SAMLRelyingParty.SignatureAlgorithm.init(named:)) ?? .sha1
        return provider
    }

    /// An `OpenIdConnect` profile to a provider of your own (reference: openid-connect-technical-profile.md): its
    /// `METADATA` discovery document, `client_id`, `scope` (default `openid`) and the `client_secret` key's value from
    /// the tenant's policy keys. The tenant signs in there with the code flow and PKCE, as for a user flow's OpenID
    /// Connect provider; nil when the profile names no discovery document.
    func oidcProvider(_ profile: TechnicalProfile) throws -> EmulatorSeed.OIDCProvider? {
        guard profile.handler == .openIdConnect, let discovery = profile.metadata("METADATA"),
            discovery.hasPrefix("https://") || discovery.hasPrefix("http://")
        else { return nil }
        guard let clientId = profile.metadata("client_id") else {
            throw CustomPolicyError(code: "AADB2C90250", message: "The technical profile '\(profile.id)' has no client_id.")
        }
        let secretKey = profile.node.child("CryptographicKeys")?.all("Key").first { $0["Id"] == "client_secret" }?["StorageReferenceId"]
        let secret = try secretKey.map { try policyKeyValue($0, sentBy: profile) }
        return EmulatorSeed.OIDCProvider(
            id: profile.id, name: profile.metadata("ProviderName") ?? profile.node.child("DisplayName")?.trimmedText ?? profile.id,
            discovery: discovery, clientId: clientId, clientSecret: secret, scope: profile.metadata("scope") ?? "openid")
    }

    func passwordCheck(_ profile: TechnicalProfile, _ inputs: [String: ClaimValue]) throws -> [String: ClaimValue] {
        try checkPasswordGrantApps(profile, inputs)
        let username = inputs["username"]?.text ?? "", password = inputs["password"]?.text ?? ""
        switch try store.passwordCheck(email: username, password: password) {
        case .noUser:
            throw CustomPolicyError(
                code: "AADB2C99002",
                message: profile.metadata("UserMessageIfClaimsPrincipalDoesNotExist") ?? "We can't seem to find your account.",
                onPage: true)
        case .wrongPassword:
            throw CustomPolicyError(
                code: "AADB2C90225", message: profile.metadata("UserMessageIfInvalidPassword") ?? "Your password is incorrect.",
                onPage: true)
        case .user(let user):
            return [
                "oid": .string(user.oid), "sub": .string(user.oid), "tid": .string(tenantName), "given_name": .string(user.givenName),
                "family_name": .string(user.surname), "name": .string(user.displayName), "upn": .string("\(user.oid)@\(tenantName)"),
            ]
        }
    }

    /// What Entra checks of the starter pack's password grant before the password, as B2C's custom-policy setup describes
    /// it: the `client_id` (ProxyIdentityExperienceFramework) is an app of the tenant and a public client, the resource
    /// (`resource_id`, the IdentityExperienceFramework app) is an API of the tenant, and the proxy app was granted a
    /// permission on it. A pack whose placeholders were not filled, or an app set up half-way, gets Entra's error on the
    /// sign-in page, as in B2C.
    func checkPasswordGrantApps(_ profile: TechnicalProfile, _ inputs: [String: ClaimValue]) throws {
        guard let (apps, apis) = registrations else { return }
        func refuse(_ text: String) -> CustomPolicyError { CustomPolicyError(code: "AADB2C90225", message: text, onPage: true) }
        let clientID = inputs["client_id"]?.text ?? profile.metadata("client_id") ?? ""
        guard let app = apps.first(where: { $0.clientId.equalsIgnoringCase(clientID) }) else {
            throw refuse(
                "AADSTS700016: Application with identifier '\(clientID)' was not found in the directory '\(tenantName)'. This can "
                    + "happen if the application has not been installed by the administrator of the tenant or consented to by any "
                    + "user in the tenant. You may have sent your authentication request to the wrong tenant.")
        }
        guard app.redirects.contains(where: { $0.type == .publicClient }) else {
            throw refuse("AADSTS7000218: The request body must contain the following parameter: 'client_assertion' or 'client_secret'.")
        }
        let resource = inputs["resource"]?.text ?? profile.metadata("IdTokenAudience") ?? ""
        guard let api = apis.first(where: { $0.appId.equalsIgnoringCase(resource) || $0.identifierUri == resource }) else {
            throw refuse(
                "AADSTS500011: The resource principal named \(resource) was not found in the tenant named \(tenantName). This can "
                    + "happen if the application has not been installed by the administrator of the tenant or consented to by any "
                    + "user in the tenant. You might have sent your authentication request to the wrong tenant.")
        }
        guard app.apiPermissions.contains(where: { $0.hasPrefix(api.identifierUri + "/") }) else {
            throw refuse(
                "AADSTS65001: The user or administrator has not consented to use the application with ID '\(app.clientId)' named "
                    + "'\(app.name)'. Send an interactive authorization request for this user and resource.")
        }
    }
}
