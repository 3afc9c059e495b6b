import Foundation

/// A technical profile as it runs (reference: b2c-custom-policies.md, technical profiles): its element after the chain's
/// merge (`EffectivePolicy`) and its `IncludeTechnicalProfile` chain (the included profile first, this one over it), with
/// the handler its protocol names.
struct TechnicalProfile: Sendable {
    let id: String
    let node: PolicyNode
    let handler: Handler

    /// The protocol handlers (reference §technical profiles). B2C names most by a .NET type in `Handler`; the emulator
    /// keys on the type's short name.
    enum Handler: String, CaseIterable {
        case selfAsserted = "SelfAssertedAttributeProvider"
        case directory = "AzureActiveDirectoryProvider"
        case claimsTransformation = "ClaimsTransformationProtocolProvider"
        case openIdConnect = "OpenIdConnect"
        case oauth2 = "OAuth2"
        case restful = "RestfulProvider"
        case phoneFactor = "PhoneFactorProtocolProvider"
        case oneTimePassword = "OneTimePasswordProtocolProvider"
        case sspr = "AadSsprProtocolProvider"
        case saml = "SAML2"
        case none = "None"
        case noopSession = "NoopSSOSessionProvider"
        case defaultSession = "DefaultSSOSessionProvider"
        case externalLoginSession = "ExternalLoginSSOSessionProvider"
        case oauthSession = "OAuthSSOSessionProvider"
        case samlSession = "SamlSSOSessionProvider"

        /// The handler a `<Protocol>` element names: `Name="Proprietary"` with a `Handler` type, or the protocol's name.
        static func of(_ protocolNode: PolicyNode?) -> Handler? {
            guard let p = protocolNode, let name = p["Name"] else { return nil }
            if name == "Proprietary" {
                let type = (p["Handler"] ?? "").split(separator: ",").first.map(String.init) ?? ""
                let short = type.split(separator: ".").last.map(String.init) ?? type
                return Handler(rawValue: short)
            }
            return Handler(rawValue: name)
        }

        var isSession: Bool {
            [.noopSession, .defaultSession, .externalLoginSession, .oauthSession, .samlSession].contains(self)
        }
    }

    /// The profile `id` of `policy`, its includes resolved; nil when the policy declares none of that id.
    static func named(_ id: String, in policy: EffectivePolicy) throws -> TechnicalProfile? {
        try policy.resolvedProfiles.profile(id) { try resolve(id, in: policy) }
    }

    private static func resolve(_ id: String, in policy: EffectivePolicy) throws -> TechnicalProfile? {
        guard let node = try resolved(id, policy, seen: []) else { return nil }
        guard let handler = Handler.of(node.child("Protocol")) else {
            let named = node.child("Protocol").map { $0["Handler"] ?? $0["Name"] ?? "" } ?? "none"
            throw CustomPolicyError(
                code: "AADB2C90250", message: "The technical profile '\(id)' uses a protocol the local tenant does not run: \(named).")
        }
        return TechnicalProfile(id: id, node: node, handler: handler)
    }

    private static func resolved(_ id: String, _ policy: EffectivePolicy, seen: Set<String>) throws -> PolicyNode? {
        guard let own = policy.element(.technicalProfile, id) else { return nil }
        guard let included = own.child("IncludeTechnicalProfile")?["ReferenceId"] else { return own }
        guard !seen.contains(included) else {
            throw CustomPolicyError(code: "AADB2C90250", message: "The technical profile '\(id)' includes itself through '\(included)'.")
        }
        guard let base = try resolved(included, policy, seen: seen.union([id])) else {
            throw CustomPolicyError(
                code: "AADB2C90250", message: "The technical profile '\(id)' includes '\(included)', which the policy does not declare.")
        }
        return EffectivePolicy.merge(base, own)
    }

    /// A `Metadata/Item` by key.
    func metadata(_ key: String) -> String? {
        node.child("Metadata")?.all("Item").last { $0["Key"] == key }?.trimmedText
    }

    func claims(_ container: String, _ element: String) -> [PolicyNode] { node.child(container)?.all(element) ?? [] }
    var inputClaims: [PolicyNode] { claims("InputClaims", "InputClaim") }
    var outputClaims: [PolicyNode] { claims("OutputClaims", "OutputClaim") }
    var persistedClaims: [PolicyNode] { claims("PersistedClaims", "PersistedClaim") }
    var displayClaims: [PolicyNode] { claims("DisplayClaims", "DisplayClaim") }
    func transformations(_ container: String) -> [String] {
        claims(container, container.hasPrefix("Input") ? "InputClaimsTransformation" : "OutputClaimsTransformation").compactMap {
            $0["ReferenceId"]
        }
    }
    var validationProfiles: [PolicyNode] { claims("ValidationTechnicalProfiles", "ValidationTechnicalProfile") }
    var sessionManager: String? { node.child("UseTechnicalProfileForSessionManagement")?["ReferenceId"] }
}

/// A custom policy stopped its journey: B2C's code and message (the page shows the message; the app gets both).
struct CustomPolicyError: Error, Equatable {
    var code: String
    var message: String
    /// The message belongs on the self-asserted page that asked (a validation profile's error), not on an error page.
    var onPage = false
}
