import Foundation
import NIOConcurrencyHelpers

/// A policy as its chain makes it (reference: b2c-custom-policies.md §1.1): "elements of the same type and name in the RP
/// file override those in the extensions, and extensions override base" — merged per element id, a technical profile's
/// metadata items by key and its claims by claim type, whatever `ClaimsProvider` a profile is declared under.
struct EffectivePolicy {
    /// What each kind of element is keyed by, where it is declared (below the policy's root).
    enum Kind: String, CaseIterable {
        case claimType = "ClaimType"
        case claimsTransformation = "ClaimsTransformation"
        case contentDefinition = "ContentDefinition"
        case predicate = "Predicate"
        case predicateValidation = "PredicateValidation"
        case displayControl = "DisplayControl"
        case technicalProfile = "TechnicalProfile"
        case userJourney = "UserJourney"
        case subJourney = "SubJourney"
        case localizedResources = "LocalizedResources"

        var containers: [String] {
            switch self {
            case .claimType: ["BuildingBlocks/ClaimsSchema"]
            case .claimsTransformation: ["BuildingBlocks/ClaimsTransformations"]
            case .contentDefinition: ["BuildingBlocks/ContentDefinitions"]
            case .predicate: ["BuildingBlocks/Predicates"]
            case .predicateValidation: ["BuildingBlocks/PredicateValidations"]
            case .displayControl: ["BuildingBlocks/DisplayControls"]
            case .technicalProfile: []  // below each ClaimsProvider's TechnicalProfiles
            case .userJourney: ["UserJourneys"]
            case .subJourney: ["SubJourneys"]
            case .localizedResources: ["BuildingBlocks/Localization"]
            }
        }

        /// The elements of this kind a file declares.
        func declared(in root: PolicyNode) -> [PolicyNode] {
            if self == .technicalProfile {
                return root.child("ClaimsProviders")?.all("ClaimsProvider").flatMap { $0.child("TechnicalProfiles")?.all(rawValue) ?? [] }
                    ?? []
            }
            return containers.flatMap { root.at($0)?.all(rawValue) ?? [] }
        }
    }

    let id: String
    let chain: [PolicyFile]
    /// Each kind's elements by id, merged along the chain.
    private(set) var elements: [Kind: [String: PolicyNode]] = [:]
    /// Each kind's ids by their lower case: a reference finds its element whatever the case (the starter pack's
    /// `surName` names the claim type `surname`, and B2C takes it).
    private var folded: [Kind: [String: String]] = [:]
    /// Which file declared each element last (for the errors that name it).
    private(set) var origin: [String: String] = [:]
    /// The leaf's relying party, if it has one.
    let relyingParty: PolicyNode?
    /// Technical profiles with their `IncludeTechnicalProfile` chains merged, made on first use: every run of the policy
    /// (each refresh grant runs the relying party's token journey) asks for the same ones.
    let resolvedProfiles = ResolvedProfiles()

    init(chain: [PolicyFile], tenant: String) throws {
        self.chain = chain
        id = chain.last?.policyId ?? ""
        relyingParty = chain.last?.root.child("RelyingParty")
        for file in chain {
            for kind in Kind.allCases {
                var seen: Set<String> = []
                for node in kind.declared(in: file.root) {
                    guard let key = node["Id"], !key.isEmpty else {
                        throw PolicyLoadError(
                            policyId: file.policyId, tenant: tenant, reason: "A \(kind.rawValue) has no Id.", file: file.source,
                            element: node.described)
                    }
                    guard seen.insert(key).inserted else {
                        throw PolicyLoadError(
                            policyId: file.policyId, tenant: tenant,
                            reason: "The \(kind.rawValue) with id \"\(key)\" is declared twice in this policy.", file: file.source,
                            element: node.described)
                    }
                    let merged = elements[kind]?[key].map { Self.merge($0, node) } ?? node.copy()
                    elements[kind, default: [:]][key] = merged
                    folded[kind, default: [:]][key.lowercased()] = folded[kind]?[key.lowercased()] ?? key
                    origin["\(kind.rawValue)/\(key)"] = file.source
                }
            }
        }
    }

    func element(_ kind: Kind, _ id: String) -> PolicyNode? { elements[kind]?[id] ?? elements[kind]?[declaredID(kind, id)] }
    /// The id as the policy declares it (`surName` → `surname`), or `id` when none is declared.
    func declaredID(_ kind: Kind, _ id: String) -> String { folded[kind]?[id.lowercased()] ?? id }
    func all(_ kind: Kind) -> [String: PolicyNode] { elements[kind] ?? [:] }
    func file(of kind: Kind, _ id: String) -> String? { origin["\(kind.rawValue)/\(id)"] }

    /// What identifies a child among its siblings, when anything does: its id, a metadata item's key, a claim's type, a
    /// step's order, a localized string's type and ids.
    static func identity(_ n: PolicyNode) -> String? {
        for attribute in ["Id", "Key", "ClaimTypeReferenceId", "Order", "TargetClaimsExchangeId", "ReferenceId"] {
            if let v = n[attribute] { return "\(n.name)/\(attribute)=\(v)" }
        }
        if n.name == "LocalizedString" {
            return "LocalizedString/\(n["ElementType"] ?? "")/\(n["ElementId"] ?? "")/\(n["StringId"] ?? "")"
        }
        return nil
    }

    /// `child` over `base`: attributes overridden, identified children merged with their namesake, a single unidentified
    /// container merged into the base's one, text replaced, anything else added after the base's.
    /// A list whose child says `MergeBehavior` (a claim type's `Restriction`, `SupportedLanguages`, a content definition's
    /// `LocalizedResourcesReferences`, a `LocalizedCollection`) takes the child's items after the base's (`Append`), before
    /// them (`Prepend`; the first of a language or value wins where both have it) or instead of them (`ReplaceAll`).
    static func merge(_ base: PolicyNode, _ child: PolicyNode) -> PolicyNode {
        let out = base.copy()
        out.attributes.merge(child.attributes) { _, new in new }
        if let behavior = child["MergeBehavior"]?.lowercased(), ["append", "prepend", "replaceall"].contains(behavior) {
            let added = child.children.map { $0.copy() }
            switch behavior {
            case "prepend": out.children = added + out.children
            case "replaceall": out.children = added
            default: out.children += added
            }
            return out
        }
        if !child.trimmedText.isEmpty { out.text = child.text }
        for c in child.children {
            if let key = identity(c), let i = out.children.firstIndex(where: { identity($0) == key }) {
                out.children[i] = merge(out.children[i], c)
            } else if identity(c) == nil, out.children.filter({ $0.name == c.name }).count == 1,
                let i = out.children.firstIndex(where: { $0.name == c.name })
            {
                out.children[i] = c.children.isEmpty ? c.copy() : merge(out.children[i], c)
            } else {
                out.children.append(c.copy())
            }
        }
        return out
    }
}

/// The technical profiles one effective policy has resolved, by id. The merged nodes are never changed afterwards, so a run
/// may share them.
final class ResolvedProfiles: Sendable {
    private let byID = NIOLockedValueBox<[String: TechnicalProfile]>([:])

    func profile(_ id: String, resolve: () throws -> TechnicalProfile?) rethrows -> TechnicalProfile? {
        if let known = byID.withLockedValue({ $0[id] }) { return known }
        guard let made = try resolve() else { return nil }
        byID.withLockedValue { $0[id] = made }
        return made
    }
}
