import Foundation

/// A relying party's token settings, from the metadata of the issuer profile its journey's `SendClaims` step names
/// (`CpimIssuerTechnicalProfileReferenceId`, the starter pack's `JwtIssuer`). Reference: b2c-protocol.md §4.4 and §13.4
/// (DOC-JWTISSUER). An item the profile does not set leaves the authority's own value: the seed policy of the same id,
/// else B2C's defaults (`EmulatorSeed.Policy.customPolicy`).
struct JwtIssuerSettings: Equatable {
    var accessTokenLifetime: Int?
    var idTokenLifetime: Int?
    var refreshTokenLifetime: Int?
    /// `rolling_refresh_token_lifetime_secs`; `.some(nil)` when `allow_infinite_rolling_refresh_token` is true.
    var slidingWindow: Int??
    var issuerPattern: String?
    /// `acr`, or `""` for `AuthenticationContextReferenceClaimPattern` `None` (no policy claim but what the relying
    /// party outputs itself, such as `trustFrameworkPolicy` as `tfp`).
    var policyClaim: String?
    var numbersAsStrings: Bool?

    /// The lifetimes B2C takes, in seconds (DOC-JWTISSUER): an upload outside them is refused.
    static let ranges: [String: ClosedRange<Int>] = [
        "token_lifetime_secs": 300...86400, "id_token_lifetime_secs": 300...86400,
        "refresh_token_lifetime_secs": 86400...7_776_000, "rolling_refresh_token_lifetime_secs": 86400...31_536_000,
    ]

    /// The issuer profile of `policy`'s relying party, when its default journey (or a sub-journey it invokes) ends in
    /// `SendClaims` by a profile the policy declares.
    static func issuerProfile(of policy: EffectivePolicy) -> TechnicalProfile? {
        guard let journeyID = policy.relyingParty?.child("DefaultUserJourney")?["ReferenceId"],
            let journey = policy.element(.userJourney, journeyID)
        else { return nil }
        var journeys = [journey]
        for step in PolicyRun.steps(of: journey) where step["Type"] == "InvokeSubJourney" {
            if let sub = step.at("JourneyList/Candidate")?["SubJourneyReferenceId"], let node = policy.element(.subJourney, sub) {
                journeys.append(node)
            }
        }
        for j in journeys {
            for step in PolicyRun.steps(of: j) where step["Type"] == "SendClaims" {
                if let id = step["CpimIssuerTechnicalProfileReferenceId"], let profile = try? TechnicalProfile.named(id, in: policy) {
                    return profile
                }
            }
        }
        return nil
    }

    /// The settings `profile` states; a value B2C would not take throws, naming the item.
    init(_ profile: TechnicalProfile?) throws {
        guard let profile else { return }
        func seconds(_ key: String) throws -> Int? {
            guard let text = profile.metadata(key) else { return nil }
            guard let n = Int(text), let range = Self.ranges[key], range.contains(n) else {
                let range = Self.ranges[key]!
                throw Refusal(
                    item: key,
                    reason: "The metadata item \"\(key)\" of technical profile \"\(profile.id)\" is \"\(text)\"; B2C takes a whole "
                        + "number of seconds from \(range.lowerBound) to \(range.upperBound).")
            }
            return n
        }
        func choice(_ key: String, _ allowed: [String: String]) throws -> String? {
            guard let text = profile.metadata(key) else { return nil }
            guard let value = allowed.first(where: { $0.key.caseInsensitiveCompare(text) == .orderedSame })?.value else {
                throw Refusal(
                    item: key,
                    reason: "The metadata item \"\(key)\" of technical profile \"\(profile.id)\" is \"\(text)\"; B2C takes "
                        + allowed.keys.sorted().map { "\"\($0)\"" }.joined(separator: " or ") + ".")
            }
            return value
        }
        accessTokenLifetime = try seconds("token_lifetime_secs")
        idTokenLifetime = try seconds("id_token_lifetime_secs")
        refreshTokenLifetime = try seconds("refresh_token_lifetime_secs")
        if try choice("allow_infinite_rolling_refresh_token", ["true": "true", "false": "false"]) == "true" {
            slidingWindow = .some(nil)
        } else if let rolling = try seconds("rolling_refresh_token_lifetime_secs") {
            slidingWindow = rolling
        }
        issuerPattern = try choice("IssuanceClaimPattern", ["AuthorityAndTenantGuid": "tenantGuid", "AuthorityWithTfp": "tfp"])
        policyClaim = try choice("AuthenticationContextReferenceClaimPattern", ["PolicyId": "acr", "None": ""])
        numbersAsStrings = try choice("SendTokenResponseBodyWithJsonNumbers", ["true": "numbers", "false": "strings"]).map {
            $0 == "strings"
        }
    }

    init() {}

    /// A metadata value B2C refuses at upload.
    struct Refusal: Error {
        var item: String
        var reason: String
    }

    /// The authority with these settings over its own.
    func apply(to p: inout EmulatorSeed.Policy) {
        if let v = accessTokenLifetime { p.accessTokenLifetime = v }
        if let v = idTokenLifetime { p.idTokenLifetime = v }
        if let v = refreshTokenLifetime { p.refreshTokenLifetime = v }
        if let v = slidingWindow { p.slidingWindow = v }
        if let v = issuerPattern { p.issuerPattern = v }
        if let v = policyClaim { p.policyClaim = v }
        if let v = numbersAsStrings { p.numbersAsStrings = v }
    }
}
