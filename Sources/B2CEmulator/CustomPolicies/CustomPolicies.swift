import Foundation
import GRDB
import NIOConcurrencyHelpers

/// The tenant's custom policies: those of `serve --custom-policies DIR`, then those uploaded through Graph (kept in the
/// state, so an upload survives a restart), each checked in its chain as B2C checks an upload.
public final class CustomPolicies: Sendable {
    private let policies: NIOLockedValueBox<PolicySet>
    /// Effective policies by id, made once per change of the set (a page of a journey reads its policy at every step).
    private let merged = NIOLockedValueBox<[String: EffectivePolicy]>([:])
    /// What each relying party sets of its authority (page layouts, token settings), made with its effective policy.
    private let traits = NIOLockedValueBox<[String: Traits]>([:])
    private struct Traits {
        var pageLayouts: EmulatorSeed.PageLayouts
        var tokens: JwtIssuerSettings
    }
    private let db: any DatabaseWriter
    private let clock: EmulatorClock

    init(tenant: String, policyKeys: [String], store: EmulatorStore, clock: EmulatorClock) throws {
        (policies, db, self.clock) = (NIOLockedValueBox(PolicySet(tenant: tenant, policyKeys: policyKeys)), store.db, clock)
        try reloadUploads()
    }

    /// The uploads of earlier runs, in their order; one the tenant no longer takes (a changed seed) is left out and said.
    private func reloadUploads() throws {
        let rows = try db.read { try Row.fetchAll($0, sql: "SELECT id, xml FROM custom_policies ORDER BY seq") }
        for row in rows {
            do {
                let file = try PolicyFile(xml: row["xml"], source: "uploaded through Graph", tenant: policies.withLockedValue { $0.tenant })
                try policies.withLockedValue { _ = try $0.upload(file) }
            } catch {
                FileHandle.standardError.write(
                    Data("b2c-emulator: the uploaded policy \(row["id"] as String) is left out: \(error)\n".utf8))
            }
        }
    }

    /// Every policy file of a folder (`serve --custom-policies DIR`), base before child; the first refusal is the error.
    public func load(directory: URL) throws {
        let (tenant, keys) = policies.withLockedValue { ($0.tenant, $0.policyKeys.map { Array($0) }) }
        let loaded = try PolicySet.load(directory: directory, tenant: tenant, policyKeys: keys)
        try policies.withLockedValue { current in
            for id in try Self.baseFirst(loaded) { _ = try current.upload(loaded.file(id)!) }
        }
        forgetMerged()
    }

    /// The ids of a set, each after its base.
    private static func baseFirst(_ s: PolicySet) throws -> [String] {
        var out: [String] = []
        for id in s.ids { for f in try s.chain(id) where !out.contains(f.policyId) { out.append(f.policyId) } }
        return out
    }

    private func forgetMerged() {
        merged.withLockedValue { $0 = [:] }
        traits.withLockedValue { $0 = [:] }
    }

    public var ids: [String] { policies.withLockedValue { $0.ids } }
    func file(_ id: String) -> PolicyFile? { policies.withLockedValue { $0.file(id) } }
    func effective(_ id: String) throws -> EffectivePolicy {
        if let known = merged.withLockedValue({ $0[id.uppercased()] }) { return known }
        let made = try policies.withLockedValue { try $0.effective(id) }
        merged.withLockedValue { $0[id.uppercased()] = made }
        return made
    }

    /// The loaded relying parties, each with the role its journey's name suggests (`ProfileEdit` → edit profile,
    /// `PasswordReset` → reset; otherwise sign-up or sign-in): what `--config-out` lists for b2c.
    var relyingParties: [(id: String, role: EmulatorSeed.PolicyKind)] {
        policies.withLockedValue { set in
            set.ids.compactMap { id -> (String, EmulatorSeed.PolicyKind)? in
                guard let rp = set.file(id)?.root.child("RelyingParty") else { return nil }
                let journey = (rp.child("DefaultUserJourney")?["ReferenceId"] ?? "").lowercased()
                let role: EmulatorSeed.PolicyKind =
                    journey.contains("profileedit") || journey.contains("editprofile")
                    ? .editProfile : journey.contains("passwordreset") || journey.contains("resetpassword") ? .resetPassword : .signUpSignIn
                return (set.file(id)?.policyId ?? id, role)
            }
        }
    }

    /// The policy a request names: a loaded relying party (over a seed policy of the same id, whose token settings it
    /// keeps), else the seed's.
    func authority(_ name: String, seed: EmulatorSeed) -> EmulatorSeed.Policy? {
        guard let id = relyingPartyID(name) else { return seed.policy(named: name) }
        var p = seed.policy(named: id) ?? EmulatorSeed.Policy.customPolicy(id)
        (p.type, p.kind, p.runsCustomPolicy) = (.custom, .signUpSignIn, true)
        let own = traits(id)
        if !own.pageLayouts.isEmpty { p.pageLayouts = own.pageLayouts }
        own.tokens.apply(to: &p)
        return p
    }

    /// A relying party's traits, made once per change of the set (every request to its authority reads them).
    private func traits(_ id: String) -> Traits {
        if let known = traits.withLockedValue({ $0[id.uppercased()] }) { return known }
        let policy = try? effective(id)
        // The upload checked the issuer's metadata (`PolicyChecks`), so a refusal here cannot happen but leaves B2C's defaults.
        let made = Traits(
            pageLayouts: policy.map(Self.pageLayouts) ?? .init(),
            tokens: policy.flatMap { try? JwtIssuerSettings(JwtIssuerSettings.issuerProfile(of: $0)) } ?? .init())
        traits.withLockedValue { $0[id.uppercased()] = made }
        return made
    }

    /// A relying party's SAML identity providers: its `SAML2` technical profiles with a `PartnerEntity`.
    func samlProviders(_ id: String) -> [EmulatorSeed.SAMLProvider] {
        guard let policy = try? effective(id) else { return [] }
        return policy.all(.technicalProfile).keys.sorted().compactMap {
            (try? TechnicalProfile.named($0, in: policy)).flatMap { $0.flatMap(PolicyRun.samlProvider) }
        }
    }

    /// A relying party's page layouts (reference: contentdefinitions.md): each content definition whose `LoadUri` is the
    /// developer's own page (`https://…`, `http://…`) lays out the pages of its `DataUri`'s type — `unifiedssp`,
    /// `selfasserted`, `multifactor`, `globalexception`; the first definition of a type, in id order, when several share
    /// one (the emulator lays out by page type). `~/tenant/…` templates stay the tenant's own look. JavaScript stays in
    /// the layout when the relying party's `UserJourneyBehaviors/ScriptExecution` is `Allow`, as B2C requires.
    private static func pageLayouts(_ policy: EffectivePolicy) -> EmulatorSeed.PageLayouts {
        var made = EmulatorSeed.PageLayouts()
        for (_, definition) in policy.all(.contentDefinition).sorted(by: { $0.key < $1.key }) {
            guard let load = definition.child("LoadUri")?.trimmedText, load.hasPrefix("https://") || load.hasPrefix("http://"),
                let data = definition.child("DataUri")?.trimmedText,
                let type = EmulatorSeed.PageLayouts.PageType.allCases.first(where: { data.contains(":\($0.rawValue):") }),
                made.pages[type] == nil
            else { continue }
            made.pages[type] = .init(loadUri: load, dataUri: data)
        }
        made.javascript = policy.relyingParty?.at("UserJourneyBehaviors/ScriptExecution")?.trimmedText == "Allow"
        return made
    }

    /// The policy id (as its file spells it) when `name` is a loaded relying-party policy: an authority of the tenant.
    func relyingPartyID(_ name: String) -> String? {
        guard name.count > 6, name.prefix(6).uppercased() == "B2C_1A" else { return nil }
        return policies.withLockedValue { set in
            set.file(name).flatMap { $0.root.child("RelyingParty") != nil ? $0.policyId : nil }
        }
    }

    /// `PUT …/trustFramework/policies/{id}/$value`: checked, stored, kept; true when the policy is new.
    func upload(_ xml: Data, id: String) throws -> Bool {
        let tenant = policies.withLockedValue { $0.tenant }
        let file = try PolicyFile(xml: xml, source: "uploaded through Graph", tenant: tenant)
        guard file.policyId.caseInsensitiveCompare(id) == .orderedSame else {
            throw PolicyLoadError(
                policyId: id, tenant: tenant,
                reason: "The request is for policy \"\(id)\" and the file's PolicyId is \"\(file.policyId)\"; they must be the same.",
                file: file.source)
        }
        let created = try policies.withLockedValue { try $0.upload(file) }
        forgetMerged()
        let now = clock.now()
        try db.write {
            try $0.execute(
                sql: """
                    INSERT INTO custom_policies(id, xml, uploaded_at, seq)
                    VALUES (?, ?, ?, (SELECT coalesce(max(seq), 0) + 1 FROM custom_policies))
                    ON CONFLICT(id) DO UPDATE SET xml = excluded.xml, uploaded_at = excluded.uploaded_at
                    """, arguments: [file.policyId, xml, now])
        }
        return created
    }

    /// `DELETE …/trustFramework/policies/{id}`: false when there is no such policy.
    func delete(_ id: String) throws -> Bool {
        let removed = try policies.withLockedValue { try $0.delete(id) }
        forgetMerged()
        try db.write { try $0.execute(sql: "DELETE FROM custom_policies WHERE id = ?", arguments: [id]) }
        return removed
    }
}
