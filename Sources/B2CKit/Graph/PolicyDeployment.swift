import Foundation

/// A custom-policy file to deploy: its ids, its base, and its text with the environment's values put in.
public struct PolicyFile: Sendable, Equatable {
    public var path: String
    public var policyId: String
    public var tenantId: String?
    public var basePolicyId: String?
    public var xml: String
    /// The `{Settings:Name}` placeholders filled, name → value.
    public var substitutions: [String: String] = [:]
}

/// Custom policies as a deployment reads them (`b2c policy upload`): each file's `PolicyId` and `BasePolicy`, the files in
/// inheritance order (base before child), and per-environment values in the shape of the B2C extension for VS Code
/// (`appsettings.json`: `Environments[].Name`, `Tenant`, `PolicySettings`), whose `{Settings:Tenant}` and
/// `{Settings:<key>}` placeholders are filled; one left unfilled refuses the deployment.
public enum PolicyDeployment {
    public struct Failure: Error, CustomStringConvertible {
        public var description: String
    }

    /// The value of the root element's attribute `name` (`PolicyId="…"`), and of the base's `<PolicyId>`.
    static func ids(_ xml: String, path: String) throws -> (policy: String, tenant: String?, base: String?) {
        guard let root = xml.range(of: "<TrustFrameworkPolicy") else {
            throw Failure(description: "\(path) is not a custom policy: it has no <TrustFrameworkPolicy> element")
        }
        let tagEnd = xml[root.upperBound...].firstIndex(of: ">") ?? xml.endIndex
        let tag = String(xml[root.upperBound..<tagEnd])
        func attribute(_ name: String) -> String? {
            guard let r = tag.range(of: "\(name)=\"") else { return nil }
            let rest = tag[r.upperBound...]
            return rest.firstIndex(of: "\"").map { String(rest[..<$0]) }
        }
        guard let policy = attribute("PolicyId"), !policy.isEmpty else {
            throw Failure(description: "\(path): <TrustFrameworkPolicy> has no PolicyId")
        }
        var base: String?
        if let b = xml.range(of: "<BasePolicy>"), let end = xml.range(of: "</BasePolicy>", range: b.upperBound..<xml.endIndex) {
            let inner = xml[b.upperBound..<end.lowerBound]
            if let p = inner.range(of: "<PolicyId>"), let q = inner.range(of: "</PolicyId>", range: p.upperBound..<inner.endIndex) {
                base = inner[p.upperBound..<q.lowerBound].trimmingCharacters(in: .whitespacesAndNewlines)
            }
        }
        return (policy, attribute("TenantId"), base)
    }

    /// One environment's values: `Tenant` and `PolicySettings` of `Environments[Name == name]`.
    public static func settings(_ data: Data, environment: String, path: String) throws -> [String: String] {
        guard let environments = (try? JSONValue.parse(data))?["Environments"]?.arrayValue else {
            throw Failure(description: "\(path) has no \"Environments\" array (the B2C extension's appsettings.json)")
        }
        guard let env = environments.first(where: { $0["Name"]?.stringValue?.caseInsensitiveCompare(environment) == .orderedSame }) else {
            let names = environments.compactMap { $0["Name"]?.stringValue }
            throw Failure(description: "\(path) has no environment '\(environment)' (it has: \(names.joined(separator: ", ")))")
        }
        var values: [String: String] = [:]
        if let tenant = env["Tenant"]?.stringValue { values["Tenant"] = tenant }
        for (k, v) in env["PolicySettings"]?.objectValue ?? [:] { values[k] = v.stringValue ?? v.serialized() }
        return values
    }

    /// `{Settings:Name}` placeholders filled from `values`; any left is an error naming it and the file.
    static func fill(_ xml: String, _ values: [String: String]?, path: String) throws -> (String, [String: String]) {
        var out = "", used: [String: String] = [:], missing: [String] = []
        var rest = xml[...]
        while let open = rest.range(of: "{Settings:") {
            out += rest[..<open.lowerBound]
            guard let close = rest[open.upperBound...].firstIndex(of: "}") else { break }
            let name = String(rest[open.upperBound..<close])
            if let value = values?[name] {
                out += value
                used[name] = value
            } else {
                out += rest[open.lowerBound...close]
                if !missing.contains(name) { missing.append(name) }
            }
            rest = rest[rest.index(after: close)...]
        }
        out += rest
        guard missing.isEmpty else {
            throw Failure(
                description: "\(path) has placeholders no environment fills: "
                    + missing.map { "{Settings:\($0)}" }.joined(separator: ", ")
                    + (values == nil ? " (give --env NAME and the settings file)" : " (add them to the environment's PolicySettings)"))
        }
        return (out, used)
    }

    /// The files (a folder's `*.xml`, or files), read and filled, in upload order: a policy after its base. A base that
    /// is not among them must be in the tenant already (`external`).
    public static func plan(paths: [String], values: [String: String]?) throws -> (files: [PolicyFile], external: [String]) {
        var files: [PolicyFile] = []
        for path in paths {
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
                throw Failure(description: "\(path) does not exist")
            }
            let list =
                isDirectory.boolValue
                ? ((try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []).filter { $0.lowercased().hasSuffix(".xml") }.sorted()
                    .map { (path as NSString).appendingPathComponent($0) } : [path]
            for file in list {
                guard let data = FileManager.default.contents(atPath: file), let text = String(data: data, encoding: .utf8) else {
                    throw Failure(description: "\(file) cannot be read as UTF-8 text")
                }
                let (xml, used) = try fill(text, values, path: file)
                let ids = try ids(xml, path: file)
                if let other = files.first(where: { $0.policyId.caseInsensitiveCompare(ids.policy) == .orderedSame }) {
                    throw Failure(description: "\(file) and \(other.path) are both \(ids.policy)")
                }
                files.append(
                    PolicyFile(
                        path: file, policyId: ids.policy, tenantId: ids.tenant, basePolicyId: ids.base, xml: xml, substitutions: used))
            }
        }
        guard !files.isEmpty else { throw Failure(description: "no policy files (*.xml) in \(paths.joined(separator: ", "))") }
        // Base before child: repeatedly take the files whose base is uploaded already or not among them.
        var ordered: [PolicyFile] = [], left = files, external: [String] = []
        func known(_ id: String) -> Bool { files.contains { $0.policyId.caseInsensitiveCompare(id) == .orderedSame } }
        while !left.isEmpty {
            let ready = left.filter { f in
                guard let base = f.basePolicyId else { return true }
                return !known(base) || ordered.contains { $0.policyId.caseInsensitiveCompare(base) == .orderedSame }
            }
            guard !ready.isEmpty else {
                throw Failure(description: "the policies' BasePolicy chain loops: \(left.map(\.policyId).joined(separator: ", "))")
            }
            for f in ready {
                if let base = f.basePolicyId, !known(base), !external.contains(base) { external.append(base) }
            }
            ordered += ready
            left.removeAll { f in ready.contains { $0.path == f.path } }
        }
        return (ordered, external)
    }
}

extension B2CClient {
    /// `PUT …/beta/trustFramework/policies/{id}/$value`: uploads one policy (B2C's checks run; its refusal is the error,
    /// naming the element). True when it was new.
    public func uploadPolicy(_ file: PolicyFile) async throws -> Bool {
        let a = try await graphCalls().send(
            .PUT, "beta/trustFramework/policies/\(file.policyId)/$value", body: Data(file.xml.utf8), contentType: "application/xml")
        guard a.status == 200 || a.status == 201 else { throw GraphCalls.failure(a, doing: "uploading \(file.policyId) (\(file.path))") }
        return a.status == 201
    }

    /// The tenant's custom policies' ids.
    public func listPolicies() async throws -> [String] {
        try await graphCalls().list("beta/trustFramework/policies", query: [], limit: nil, doing: "listing custom policies")
            .compactMap { $0["id"]?.stringValue }
    }

    /// A custom policy's XML; nil when the tenant has none of that id.
    public func downloadPolicy(_ id: String) async throws -> Data? {
        let a = try await graphCalls().send(.GET, "beta/trustFramework/policies/\(id)/$value")
        if a.status == 404 { return nil }
        guard a.status == 200 else { throw GraphCalls.failure(a, doing: "downloading \(id)") }
        return a.body
    }

    /// Deletes a custom policy; false when there was none.
    public func deletePolicy(_ id: String) async throws -> Bool {
        let a = try await graphCalls().send(.DELETE, "beta/trustFramework/policies/\(id)")
        if a.status == 404 { return false }
        guard a.status == 204 || a.status == 200 else { throw GraphCalls.failure(a, doing: "deleting \(id)") }
        return true
    }
}
