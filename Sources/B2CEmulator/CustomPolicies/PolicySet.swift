import Foundation

/// A custom policy refused, in B2C's words (`Validation failed: 1 validation error(s) found in policy "…" of tenant
/// "…".` and the reason), with what B2C leaves out: the file, and the element with its line.
public struct PolicyLoadError: Error, Equatable, CustomStringConvertible {
    var policyId: String
    var tenant: String
    var reason: String
    var file: String?
    var element: String?

    public var description: String {
        let whereText = [file.map { $0.lowercased().hasSuffix(".xml") ? "file \($0)" : $0 }, element].compactMap { $0 }.joined(
            separator: ", ")
        return "Validation failed: 1 validation error(s) found in policy \"\(policyId.uppercased())\" of tenant \"\(tenant)\". "
            + reason + (whereText.isEmpty ? "" : " (\(whereText))")
    }
}

/// One policy file as uploaded: its ids, its base, its elements.
struct PolicyFile: Sendable {
    var policyId: String
    var tenantId: String
    var basePolicyId: String?
    var root: PolicyNode
    /// Where it came from: a file name, or `uploaded through Graph`.
    var source: String
    var xml: Data

    /// Reads the file's root and its ids; refuses what is not a policy of this tenant.
    init(xml: Data, source: String, tenant: String) throws {
        let root: PolicyNode
        do { root = try PolicyXML.parse(xml) } catch let f as PolicyXML.Failure {
            throw PolicyLoadError(
                policyId: Self.sniffedId(xml) ?? source, tenant: tenant, reason: "The policy cannot be read: \(f.reason).", file: source,
                element: f.line.map { "line \($0)" })
        }
        let id = root["PolicyId"] ?? ""
        func refuse(_ reason: String, _ node: PolicyNode? = nil) -> PolicyLoadError {
            PolicyLoadError(
                policyId: id.isEmpty ? source : id, tenant: tenant, reason: reason, file: source, element: (node ?? root).described)
        }
        guard root.name == "TrustFrameworkPolicy" else {
            throw refuse("The root element is <\(root.name)>; a policy's root is <TrustFrameworkPolicy>.")
        }
        guard !id.isEmpty else { throw refuse("The policy has no PolicyId attribute.") }
        guard id.uppercased().hasPrefix("B2C_1A_") else {
            throw refuse("The policy id '\(id)' does not start with 'B2C_1A_', the prefix of every custom policy.")
        }
        guard let declared = root["TenantId"], declared.caseInsensitiveCompare(tenant) == .orderedSame else {
            throw refuse(
                "The policy's TenantId is '\(root["TenantId"] ?? "")'; this tenant is '\(tenant)'. Replace yourtenant.onmicrosoft.com "
                    + "in every file with the tenant's name.")
        }
        let base = root.child("BasePolicy")
        if let base, base.child("TenantId")?.trimmedText.caseInsensitiveCompare(tenant) != .orderedSame {
            throw refuse("The base policy's TenantId is '\(base.child("TenantId")?.trimmedText ?? "")'; it must be '\(tenant)'.", base)
        }
        (policyId, tenantId, basePolicyId, self.root, self.source, self.xml) = (
            id, tenant, base?.child("PolicyId")?.trimmedText, root, source, xml
        )
    }

    /// The PolicyId of a file that cannot be parsed, for its error's first words.
    private static func sniffedId(_ xml: Data) -> String? {
        let text = String(decoding: xml.prefix(4096), as: UTF8.self)
        guard let r = text.range(of: #"PolicyId="([^"]+)""#, options: .regularExpression) else { return nil }
        return String(text[r].dropFirst("PolicyId=\"".count).dropLast())
    }
}

/// The tenant's custom policies: files by policy id, each checked in the context of its inheritance chain as B2C checks
/// an upload, and merged along that chain into what a journey runs.
struct PolicySet: Sendable {
    let tenant: String
    /// The tenant's policy keys (upper case), which `CryptographicKeys` must name; nil: not checked.
    let policyKeys: Set<String>?
    private(set) var files: [String: PolicyFile] = [:]

    init(tenant: String, policyKeys: [String]? = nil) {
        self.tenant = tenant
        self.policyKeys = policyKeys.map { Set($0.map { $0.uppercased() }) }
    }

    func file(_ id: String) -> PolicyFile? { files[id.uppercased()] }
    var ids: [String] { files.values.map(\.policyId).sorted { $0.uppercased() < $1.uppercased() } }

    /// Adds or replaces one file after B2C's checks (its base must be here already); true when it is new.
    @discardableResult
    mutating func upload(_ file: PolicyFile) throws -> Bool {
        var next = self
        next.files[file.policyId.uppercased()] = file
        try next.check(file.policyId)
        let created = files[file.policyId.uppercased()] == nil
        self = next
        return created
    }

    /// Removes a policy; one that another policy names as its base stays (B2C refuses to leave an orphan).
    mutating func delete(_ id: String) throws -> Bool {
        if let child = files.values.first(where: { $0.basePolicyId?.uppercased() == id.uppercased() }) {
            throw PolicyLoadError(
                policyId: id, tenant: tenant,
                reason: "Policy \"\(child.policyId)\" has \"\(id)\" as its base policy; delete or change it first.")
        }
        return files.removeValue(forKey: id.uppercased()) != nil
    }

    /// Every `*.xml` of a folder, uploaded base before child as a deployment does; the first refusal stops the load.
    static func load(directory: URL, tenant: String, policyKeys: [String]? = nil) throws -> PolicySet {
        let names = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.lowercased().hasSuffix(".xml") }
            .sorted()
        var pending: [PolicyFile] = []
        for name in names {
            let url = directory.appendingPathComponent(name)
            let size = (try? FileManager.default.attributesOfItem(atPath: url.path)[.size] as? Int) ?? 0
            guard size <= PolicyXML.maximumBytes else {
                throw PolicyLoadError(
                    policyId: name, tenant: tenant,
                    reason:
                        "The policy cannot be read: the file has \(size) bytes; a policy file may have at most \(PolicyXML.maximumBytes).",
                    file: name)
            }
            let file = try PolicyFile(xml: try Data(contentsOf: url), source: name, tenant: tenant)
            if let other = pending.first(where: { $0.policyId.uppercased() == file.policyId.uppercased() }) {
                throw PolicyLoadError(
                    policyId: file.policyId, tenant: tenant, reason: "Two files declare this policy id: \(other.source) and \(name).",
                    file: name)
            }
            pending.append(file)
        }
        var set = PolicySet(tenant: tenant, policyKeys: policyKeys)
        // Base before child: each round uploads the files whose base is loaded (or that have none).
        while !pending.isEmpty {
            let ready = pending.filter { f in f.basePolicyId.map { set.file($0) != nil } ?? true }
            guard !ready.isEmpty else {
                let f = pending[0]
                let inFolder = pending.contains { $0.policyId.uppercased() == f.basePolicyId?.uppercased() }
                throw PolicyLoadError(
                    policyId: f.policyId, tenant: tenant,
                    reason: inFolder
                        ? "The base policies form a cycle: \(f.policyId) → \(f.basePolicyId ?? "") → … → \(f.policyId)."
                        : "The base policy \"\(f.basePolicyId ?? "")\" of tenant \"\(tenant)\" does not exist.",
                    file: f.source, element: f.root.child("BasePolicy")?.described)
            }
            for f in ready { try set.upload(f) }
            pending.removeAll { f in ready.contains { $0.policyId == f.policyId } }
        }
        return set
    }

    /// The chain from the base-most policy to `id`.
    func chain(_ id: String) throws -> [PolicyFile] {
        var out: [PolicyFile] = []
        var next: String? = id
        while let current = next {
            guard let f = file(current) else {
                let child = out.last
                throw PolicyLoadError(
                    policyId: child?.policyId ?? id, tenant: tenant,
                    reason: "The base policy \"\(current)\" of tenant \"\(tenant)\" does not exist.", file: child?.source,
                    element: child?.root.child("BasePolicy")?.described)
            }
            guard !out.contains(where: { $0.policyId.uppercased() == f.policyId.uppercased() }) else {
                throw PolicyLoadError(
                    policyId: id, tenant: tenant, reason: "The base policies form a cycle through \"\(f.policyId)\".", file: f.source)
            }
            out.append(f)
            next = f.basePolicyId
        }
        return out.reversed()
    }

    /// The policy `id` with its chain merged, element by id, the child's over the base's.
    func effective(_ id: String) throws -> EffectivePolicy {
        try EffectivePolicy(chain: chain(id), tenant: tenant)
    }

    /// B2C's checks of a policy in its chain: ids unique in each file, every reference declared somewhere in the chain,
    /// protocols known, patterns that compile.
    func check(_ id: String) throws {
        let chain = try chain(id)
        guard let leaf = chain.last else { return }
        let merged = try EffectivePolicy(chain: chain, tenant: tenant)
        try PolicyChecks(policy: merged, leaf: leaf, tenant: tenant, policyKeys: policyKeys).run()
    }
}
