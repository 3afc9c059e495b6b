import Foundation

/// What B2C checks when a policy is uploaded, against the policy as its chain makes it: every reference names an element
/// the chain declares, every protocol is one B2C has, every pattern is a regular expression. The first failure is the
/// refusal, naming the file and the element.
struct PolicyChecks {
    let policy: EffectivePolicy
    let leaf: PolicyFile
    let tenant: String
    /// The tenant's policy keys (upper case); nil: not checked.
    var policyKeys: Set<String>? = nil

    /// The protocol names of `<Protocol Name=…>` and the handlers of `Proprietary` ones (the class, before the assembly).
    static let protocols: Set = ["OAuth1", "OAuth2", "SAML2", "OpenIdConnect", "Proprietary", "None"]
    static let handlers: Set = [
        "Web.TPEngine.Providers.SelfAssertedAttributeProvider", "Web.TPEngine.Providers.AzureActiveDirectoryProvider",
        "Web.TPEngine.Providers.ClaimsTransformationProtocolProvider", "Web.TPEngine.Providers.PhoneFactorProtocolProvider",
        "Web.TPEngine.Providers.OneTimePasswordProtocolProvider", "Web.TPEngine.Providers.AadSsprProtocolProvider",
        "Web.TPEngine.Providers.RestfulProvider", "Web.TPEngine.SSO.NoopSSOSessionProvider",
        "Web.TPEngine.SSO.DefaultSSOSessionProvider", "Web.TPEngine.SSO.ExternalLoginSSOSessionProvider",
        "Web.TPEngine.SSO.OAuthSSOSessionProvider", "Web.TPEngine.SSO.SamlSSOSessionProvider",
    ]

    func run() throws {
        for (kind, all) in [
            EffectivePolicy.Kind.technicalProfile, .claimsTransformation, .userJourney, .subJourney, .claimType, .contentDefinition,
        ]
        .map({ ($0, policy.all($0)) }) {
            for (id, node) in all.sorted(by: { $0.key < $1.key }) {
                try references(in: node, owner: "\(kind.rawValue) \"\(id)\"", file: policy.file(of: kind, id))
            }
        }
        if let rp = policy.relyingParty { try references(in: rp, owner: "RelyingParty", file: leaf.source) }
        for (id, tp) in policy.all(.technicalProfile) { try protocolOf(tp, id) }
        for (id, claim) in policy.all(.claimType) { try patterns(claim, id) }
        try subJourneyCycles()
        try includeCycles()
        try transformationMethods()
        if let rp = policy.relyingParty, rp.child("DefaultUserJourney") == nil {
            throw refuse("The relying party has no DefaultUserJourney.", rp, file: leaf.source)
        }
        try issuerMetadata()
        for (id, tp) in policy.all(.technicalProfile).sorted(by: { $0.key < $1.key }) {
            guard let item = tp.child("Metadata")?.all("Item").last(where: { $0["Key"] == "XmlSignatureAlgorithm" }) else { continue }
            guard SAMLRelyingParty.SignatureAlgorithm(named: item.trimmedText) != nil else {
                throw refuse(
                    "The metadata item \"XmlSignatureAlgorithm\" of technical profile \"\(id)\" is \"\(item.trimmedText)\"; B2C takes "
                        + "Sha1, Sha256, Sha384 or Sha512.", item, file: policy.file(of: .technicalProfile, id))
            }
        }
    }

    /// The token settings of the relying party's issuer profile, in the ranges and words B2C takes.
    private func issuerMetadata() throws {
        guard policy.relyingParty != nil, let issuer = JwtIssuerSettings.issuerProfile(of: policy) else { return }
        do { _ = try JwtIssuerSettings(issuer) } catch let r as JwtIssuerSettings.Refusal {
            let item = issuer.node.child("Metadata")?.all("Item").last { $0["Key"] == r.item } ?? issuer.node
            throw refuse(r.reason, item, file: policy.file(of: .technicalProfile, issuer.id))
        }
    }

    private func refuse(_ reason: String, _ node: PolicyNode, file: String?) -> PolicyLoadError {
        PolicyLoadError(policyId: leaf.policyId, tenant: tenant, reason: reason, file: file, element: node.described)
    }

    /// Each reference below `node` to a claim type, technical profile, claims transformation, content definition, display
    /// control, journey or exchange.
    private func references(in node: PolicyNode, owner: String, file: String?) throws {
        let exchanges = Set(node.descendants.filter { $0.name == "ClaimsExchange" }.compactMap { $0["Id"] })
        for n in node.descendants {
            var wanted: [(EffectivePolicy.Kind, String)] = []
            if let c = n["ClaimTypeReferenceId"] { wanted.append((.claimType, c)) }
            if let tp = n["TechnicalProfileReferenceId"] { wanted.append((.technicalProfile, tp)) }
            if let tp = n["CpimIssuerTechnicalProfileReferenceId"] { wanted.append((.technicalProfile, tp)) }
            if let cd = n["ContentDefinitionReferenceId"] { wanted.append((.contentDefinition, cd)) }
            if let sj = n["SubJourneyReferenceId"] { wanted.append((.subJourney, sj)) }
            if let ref = n["ReferenceId"] {
                switch n.name {
                case "ValidationTechnicalProfile", "UseTechnicalProfileForSessionManagement", "IncludeTechnicalProfile":
                    wanted.append((.technicalProfile, ref))
                case "InputClaimsTransformation", "OutputClaimsTransformation": wanted.append((.claimsTransformation, ref))
                case "DefaultUserJourney": wanted.append((.userJourney, ref))
                case "DisplayControl": wanted.append((.displayControl, ref))
                default: break
                }
            }
            if n.name == "Endpoint", let j = n["UserJourneyReferenceId"] { wanted.append((.userJourney, j)) }
            if n.name == "Item", n["Key"] == "ContentDefinitionReferenceId", !n.trimmedText.isEmpty {
                wanted.append((.contentDefinition, n.trimmedText))
            }
            if n.name == "DisplayClaim", let dc = n["DisplayControlReferenceId"] { wanted.append((.displayControl, dc)) }
            if n.name == "LocalizedResourcesReference", let r = n["LocalizedResourcesReferenceId"] {
                wanted.append((.localizedResources, r))
            }
            if n.name == "Key", let key = n["StorageReferenceId"], let keys = policyKeys, !keys.contains(key.uppercased()) {
                throw refuse(
                    "\(owner) makes a reference to the policy key \"\(key)\", which the tenant does not have (add it to the seed's "
                        + "tenant.policyKeys, as Identity Experience Framework → Policy keys does in B2C).", n, file: file)
            }
            if n.name == "Precondition", let claim = n.child("Value")?.trimmedText, !claim.isEmpty {
                wanted.append((.claimType, claim))
            }
            for (kind, id) in wanted where policy.element(kind, id) == nil {
                throw refuse(
                    "\(owner) makes a reference to \(kind.rawValue) with id \"\(id)\" but neither the policy nor any of its base "
                        + "policies contain such an element.", n, file: file)
            }
            if n.name == "ClaimsProviderSelection", let target = n["TargetClaimsExchangeId"], !exchanges.contains(target) {
                throw refuse(
                    "\(owner) has a ClaimsProviderSelection for the exchange \"\(target)\", and no step of it has a ClaimsExchange "
                        + "with that id.", n, file: file)
            }
        }
    }

    /// Sub-journeys that invoke one another in a circle (`A → B → A`) are refused, as base policies in a circle are.
    private func subJourneyCycles() throws {
        func invoked(_ node: PolicyNode) -> [String] {
            node.descendants.filter { $0.name == "Candidate" }.compactMap { $0["SubJourneyReferenceId"] }
        }
        func visit(_ id: String, _ path: [String]) throws {
            if let start = path.firstIndex(where: { $0.caseInsensitiveCompare(id) == .orderedSame }) {
                let circle = (path[start...] + [id]).joined(separator: " → ")
                throw refuse(
                    "The sub-journeys form a cycle: \(circle).", policy.element(.subJourney, id)!, file: policy.file(of: .subJourney, id))
            }
            guard let node = policy.element(.subJourney, id) else { return }
            for next in invoked(node) { try visit(next, path + [id]) }
        }
        for id in policy.all(.subJourney).keys.sorted() { try visit(id, []) }
    }

    /// Technical profiles that include one another in a circle (`A → B → A`) are refused at upload, not at the step
    /// that runs one.
    private func includeCycles() throws {
        func visit(_ id: String, _ path: [String]) throws {
            if let start = path.firstIndex(where: { $0.caseInsensitiveCompare(id) == .orderedSame }) {
                let circle = (path[start...] + [id]).joined(separator: " → ")
                throw refuse(
                    "The technical profiles include one another in a cycle: \(circle).", policy.element(.technicalProfile, id)!,
                    file: policy.file(of: .technicalProfile, id))
            }
            guard let node = policy.element(.technicalProfile, id) else { return }
            for next in node.all("IncludeTechnicalProfile").compactMap({ $0["ReferenceId"] }) { try visit(next, path + [id]) }
        }
        for id in policy.all(.technicalProfile).keys.sorted() { try visit(id, []) }
    }

    /// Every claims transformation names a method the tenant runs: one it does not is refused at upload (naming the
    /// element), where B2C would run it, rather than ending a journey later (docs/emulator.md lists the methods).
    private func transformationMethods() throws {
        for (id, ct) in policy.all(.claimsTransformation).sorted(by: { $0.key < $1.key }) {
            let method = ct["TransformationMethod"] ?? ""
            guard !ClaimsTransformations.methods.contains(method) else { continue }
            throw refuse(
                "The claims transformation \"\(id)\" has the TransformationMethod '\(method)', which the local tenant does not run "
                    + "(docs/emulator.md, \"Claims transformations\", lists the methods it runs).", ct,
                file: policy.file(of: .claimsTransformation, id))
        }
    }

    private func protocolOf(_ tp: PolicyNode, _ id: String) throws {
        guard let p = tp.child("Protocol") else { return }  // a profile may inherit its protocol (IncludeTechnicalProfile)
        let name = p["Name"] ?? ""
        guard Self.protocols.contains(name) else {
            throw refuse(
                "The technical profile \"\(id)\" has the protocol '\(name)'; B2C knows \(Self.protocols.sorted().joined(separator: ", ")).",
                p, file: policy.file(of: .technicalProfile, id))
        }
        if name == "Proprietary" {
            let handler = (p["Handler"] ?? "").split(separator: ",").first.map { $0.trimmingCharacters(in: .whitespaces) } ?? ""
            guard Self.handlers.contains(handler) else {
                throw refuse(
                    "The technical profile \"\(id)\" names the protocol handler '\(handler)', which is not one of B2C's.", p,
                    file: policy.file(of: .technicalProfile, id))
            }
        }
    }

    private func patterns(_ claim: PolicyNode, _ id: String) throws {
        for pattern in claim.descendants where pattern.name == "Pattern" {
            let regex = pattern["RegularExpression"] ?? ""
            guard PolicyRegex.compile(regex) != nil else {
                throw refuse(
                    "The claim type \"\(id)\" has a Pattern whose RegularExpression is not a regular expression.", pattern,
                    file: policy.file(of: .claimType, id))
            }
        }
    }
}
