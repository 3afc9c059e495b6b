import Foundation

/// A page's words from the policy's `Localization` (reference: localization.md): the content definition's
/// `LocalizedResourcesReference` for the page's language (`ui_locales`; else its primary subtag; else the policy's
/// `SupportedLanguages/@DefaultLanguage`; else the first), and in it the `LocalizedString`s: `UxElement` strings replace
/// the page's own by `StringId` (`button_signin`, `createaccount_one_link`, `ver_but_send`, …), `ClaimType` strings a
/// claim's `DisplayName`, `UserHelpText` or `PatternHelpText`.
struct PolicyLocalization {
    var ux: [String: String] = [:]
    /// By claim type id, then `StringId`.
    var claims: [String: [String: String]] = [:]

    init() {}

    init(_ policy: EffectivePolicy, contentDefinition id: String?, language: String) {
        guard let definition = id.flatMap({ policy.element(.contentDefinition, $0) }) else { return }
        let references = definition.at("LocalizedResourcesReferences")?.all("LocalizedResourcesReference") ?? []
        guard !references.isEmpty else { return }
        let wanted = language.lowercased(), primary = PageStrings.primary(language)
        let fallback = policy.chain.reversed().lazy.compactMap {
            $0.root.at("BuildingBlocks/Localization/SupportedLanguages")?["DefaultLanguage"]
        }
        .first?.lowercased()
        let chosen =
            references.first { $0["Language"]?.lowercased() == wanted }
            ?? references.first { $0["Language"].map(PageStrings.primary) == primary }
            ?? references.first { $0["Language"]?.lowercased() == fallback } ?? references[0]
        guard let resources = chosen["LocalizedResourcesReferenceId"].flatMap({ policy.element(.localizedResources, $0) }) else { return }
        for string in resources.at("LocalizedStrings")?.all("LocalizedString") ?? [] {
            guard let stringId = string["StringId"] else { continue }
            switch string["ElementType"] ?? "" {
            case "UxElement": ux[stringId] = string.trimmedText
            case "ClaimType":
                if let claim = string["ElementId"] {
                    claims[policy.declaredID(.claimType, claim), default: [:]][stringId] = string.trimmedText
                }
            default: break
            }
        }
    }
}
