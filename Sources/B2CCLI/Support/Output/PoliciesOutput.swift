import B2CKit
import Foundation

extension Output {
    /// `policies`: each policy with its role and authority.
    static func writePolicies(_ config: ClientConfiguration, format: OutputFormat, caProblem: String?) {
        let rows = config.policies.map { p -> (ClientConfiguration.Policy, Authority, Bool) in
            let a = config.authority(for: p)
            return (p, a, config.isKnown(a.hostAndPort))
        }
        switch format {
        case .json:
            var o: [String: JSONValue] = [
                "config": .string(config.source), "clientId": .string(config.clientID),
                "policies": .array(
                    rows.map { p, a, known in
                        [
                            "name": .string(p.name), "role": .string(p.role.rawValue), "authority": .string(a.url.absoluteString),
                            "discovery": .string(a.discoveryURL.absoluteString), "knownAuthority": .bool(known),
                        ]
                    }),
            ]
            if let ca = config.caFile { o["caFile"] = ["path": .string(ca), "readable": .bool(caProblem == nil)] }
            writeOut(JSONValue.object(o).serialized(pretty: true))
        case .table:
            var text = table(
                [["POLICY", "ROLE", "AUTHORITY", "KNOWN"]]
                    + rows.map { [$0.0.name, $0.0.role.rawValue, $0.1.url.absoluteString, $0.2 ? "yes" : "NO"] })
            if let ca = config.caFile { text += "\nCA file: \(ca)" + (caProblem == nil ? "" : " (MISSING)") }
            writeOut(text)
        }
    }

    /// `policies --check`: each policy's verdict.
    static func writeChecks(_ checks: [PolicyCheck], config: ClientConfiguration, format: OutputFormat) {
        func verdict(_ c: PolicyCheck) -> (status: String, detail: String) {
            switch c.outcome {
            case .ok(let keys): ("ok", "\(keys) signing key\(keys == 1 ? "" : "s")" + c.notes.map { "; \($0)" }.joined())
            case .configuration(let why): ("misconfigured", why)
            case .network(let why): ("unreachable", why)
            }
        }
        switch format {
        case .json:
            writeOut(
                JSONValue.object([
                    "config": .string(config.source),
                    "policies": .array(
                        checks.map { c in
                            let v = verdict(c)
                            return [
                                "name": .string(c.name), "role": .string(c.role), "discovery": .string(c.discovery.absoluteString),
                                "status": .string(v.status), "detail": .string(v.detail),
                            ]
                        }),
                ]).serialized(pretty: true))
        case .table:
            writeOut(
                table(
                    [["POLICY", "ROLE", "STATUS", "DETAIL"]]
                        + checks.map { c in
                            let v = verdict(c)
                            return [c.name, c.role, v.status.uppercased() == "OK" ? "OK" : v.status.uppercased(), v.detail]
                        }))
        }
    }
}

extension Output {
}
