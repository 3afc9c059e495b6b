import B2CProtocol
import Foundation

/// The admin surface for tests, at `/_admin`, answering loopback peers only.
extension B2CEmulator {
    private func adminError(_ status: Int, _ message: String) -> HTTPOutput {
        .json(["error": .string(status == 404 ? "not_found" : status == 403 ? "forbidden" : "bad_request"), "message": .string(message)], status: status)
    }

    private func adminBody(_ req: HTTPInput) throws -> JSONObjectReader {
        do { return try JSONObjectReader(JSONValue.parse(req.body.isEmpty ? Data("{}".utf8) : req.body)) } catch let e as JSONPathError {
            throw AdminError(message: "the request body \(e)")
        }
    }

    struct AdminError: Error { var message: String }

    func admin(_ req: HTTPInput) async throws -> HTTPOutput {
        guard req.peerIsLoopback else { return adminError(403, "The admin surface answers loopback clients only.") }
        do {
            return try await adminRoute(req)
        } catch let e as AdminError {
            return adminError(400, e.message)
        } catch let e as JSONPathError {
            return adminError(400, "the request body: \(e)")
        }
    }

    private func adminRoute(_ req: HTTPInput) async throws -> HTTPOutput {
        let s = Array(req.segments.dropFirst())
        let now = clock.now()
        switch (req.method, s) {
        case ("GET", []):
            return .json(["tenant": .string(tenantName), "tenantId": .string(tenantID),
                          "endpoints": ["GET /_admin/users", "POST /_admin/users", "DELETE /_admin/users/{email|oid}",
                                        "POST /_admin/users/{email|oid}/revoke", "GET /_admin/outbox[?to=email]",
                                        "GET /_admin/clock", "POST /_admin/clock {advanceSeconds|offsetSeconds}",
                                        "GET|POST|DELETE /_admin/faults", "GET|DELETE /_admin/log", "GET /_admin/stats",
                                        "GET /_admin/seed"]])
        case ("GET", ["seed"]):
            return .json(seed.json)
        case ("GET", ["users"]):
            return .json(["users": .array(try store.users().map(\.json))])
        case ("POST", ["users"]):
            let b = try adminBody(req)
            try b.rejectUnknownKeys(allowed: ["email", "password", "displayName", "givenName", "surname", "oid"])
            let email = try b.string("email")
            guard EmulatorSeed.isPlausibleEmail(email) else { throw AdminError(message: "$.email is not an email address") }
            let oid = try b.optionalString("oid") ?? UUID().uuidString.lowercased()
            guard UUID(uuidString: oid) != nil else { throw AdminError(message: "$.oid must be a GUID") }
            let given = try b.optionalString("givenName") ?? ""
            let surname = try b.optionalString("surname") ?? ""
            do {
                let u = try store.createUser(oid: oid.lowercased(), email: email, password: try b.string("password"),
                                             displayName: try b.optionalString("displayName") ?? ([given, surname].filter { !$0.isEmpty }.joined(separator: " ").nilIfEmpty ?? email),
                                             givenName: given, surname: surname, now: now)
                return .json(u.json, status: 201)
            } catch EmulatorStore.UserError.emailTaken {
                return adminError(409, "a user with email '\(email)' already exists")
            } catch EmulatorStore.UserError.oidTaken {
                return adminError(409, "a user with oid '\(oid)' already exists")
            }
        case ("DELETE", _) where s.count == 2 && s[0] == "users":
            let id = s[1]
            guard let u = try store.user(identifier: id) else { return adminError(404, "no user '\(id)'") }
            _ = try store.deleteUser(oid: u.oid)
            return HTTPOutput(status: 204)
        case ("POST", _) where s.count == 3 && s[0] == "users" && s[2] == "revoke":
            let id = s[1]
            guard let u = try store.user(identifier: id) else { return adminError(404, "no user '\(id)'") }
            let n = try store.revokeGrants(oid: u.oid, now: now)
            return .json(["oid": .string(u.oid), "revokedRefreshTokens": JSONValue(n), "tokensValidFrom": JSONValue(now)])
        case ("GET", ["outbox"]):
            return .json(["messages": .array(try store.outbox(to: req.query["to"]).map(\.json))])
        case ("GET", ["clock"]):
            return .json(["now": JSONValue(now), "offsetSeconds": JSONValue(clock.offsetSeconds)])
        case ("POST", ["clock"]):
            let b = try adminBody(req)
            try b.rejectUnknownKeys(allowed: ["advanceSeconds", "offsetSeconds"])
            if let adv = try b.int("advanceSeconds", default: nil, range: -315_360_000...315_360_000) {
                try clock.advance(by: adv)
            } else if let off = try b.int("offsetSeconds", default: nil, range: -315_360_000...315_360_000) {
                try clock.set(offset: off)
            } else {
                throw AdminError(message: "give advanceSeconds or offsetSeconds (a whole number)")
            }
            return .json(["now": JSONValue(clock.now()), "offsetSeconds": JSONValue(clock.offsetSeconds)])
        case ("GET", ["faults"]):
            return .json(["faults": .array(faults.withLockedValue { $0 }.map(\.json))])
        case ("POST", ["faults"]):
            let b = try adminBody(req)
            try b.rejectUnknownKeys(allowed: ["endpoint", "kind", "count", "delayMs"])
            let endpoint = try b.string("endpoint")
            guard Fault.endpoints.contains(endpoint) else {
                throw AdminError(message: "$.endpoint is '\(endpoint)'; expected one of \(Fault.endpoints.joined(separator: ", "))")
            }
            let kindName = try b.string("kind")
            guard let kind = Fault.Kind(rawValue: kindName) else {
                throw AdminError(message: "$.kind is '\(kindName)'; expected one of \(Fault.Kind.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            let fault = Fault(endpoint: endpoint, kind: kind, remaining: try b.int("count", default: 1, range: 1...100_000)!,
                              delayMilliseconds: try b.int("delayMs", default: kind == .delay ? 5000 : 0, range: 0...600_000)!)
            faults.withLockedValue { $0.append(fault) }
            return .json(fault.json, status: 201)
        case ("DELETE", ["faults"]):
            faults.withLockedValue { $0.removeAll() }
            return HTTPOutput(status: 204)
        case ("GET", ["log"]):
            return .json(["requests": .array(try store.tokenLog().map(\.json))])
        case ("DELETE", ["log"]):
            try store.clearTokenLog()
            return HTTPOutput(status: 204)
        case ("GET", ["stats"]):
            var counts: [String: JSONValue] = [:]
            for e in try store.tokenLog() {
                let key = "\(e.endpoint) \(e.grantType) \(e.policy.isEmpty ? "-" : e.policy) \(e.outcome)"
                counts[key] = JSONValue((counts[key]?.lenientInt ?? 0) + 1)
            }
            return .json(["tokenRequests": .object(counts)])
        default:
            return adminError(404, "no admin endpoint \(req.method) \(req.path); GET /_admin lists them")
        }
    }
}

extension String {
    var nilIfEmpty: String? { isEmpty ? nil : self }
}
