import B2CProtocol
import Foundation
import Hummingbird
import NIOConcurrencyHelpers

/// The admin surface for tests, at `/_admin`, answering loopback peers only (`AdminGuardMiddleware`).
struct AdminEndpoint: TenantPart {
    let seed: EmulatorSeed
    let store: EmulatorStore
    let clock: EmulatorClock
    let faults: NIOLockedValueBox<[Fault]>
    let keys: SigningKeys

    struct AdminError: Error { var status = 400; var message: String }

    static let adminEndpoints: JSONValue = [
        "GET /_admin/users", "POST /_admin/users", "DELETE /_admin/users/{email|oid}", "POST /_admin/users/{email|oid}/revoke",
        "GET /_admin/outbox[?to=email]", "GET /_admin/clock", "POST /_admin/clock {advanceSeconds|offsetSeconds}",
        "GET|POST|DELETE /_admin/faults", "GET|DELETE /_admin/log", "GET /_admin/stats", "GET /_admin/seed", "GET /_admin/keys",
        "POST /_admin/keys/rotate {policyType}", "POST /_admin/keys/retire {policyType}",
        "GET|POST /_admin/mfa {fixedCode, unreachable, throttled}",
        "GET|POST /_admin/users/{email|oid}/mfa {risky, required, phone, totpSecret, email, reset}",
        "GET|POST|DELETE /_admin/idp/{provider}/next {sub, email, name, givenName, surname} | {error, errorDescription}",
        "GET /_admin/sessions", "DELETE /_admin/sessions[?user=email|oid]", "GET|DELETE /_admin/callouts[?step=name]",
        "GET|DELETE /_admin/journeys[?user=email&policy=id&client=id]", "GET /_admin/journeys/{id}",
    ]

    func addRoutes(to group: RouterGroup<EmulatorRequestContext>) {
        func on(
            _ path: RouterPath, _ method: HTTPRequest.Method,
            _ handler: @escaping @Sendable (Request, EmulatorRequestContext) async throws -> Response
        ) {
            group.on(path, method: method) { request, context in
                do { return try await handler(request, context) } catch let e as AdminError {
                    return Self.adminError(e.status, e.message)
                } catch let e as JSONPathError {
                    return Self.adminError(400, "the request body: \(e)")
                }
            }
        }
        peopleRoutes(on)
        journeyRoutes(on)
        journeyRecorderRoutes(on)
        tenantRoutes(on)
        for method in [HTTPRequest.Method.get, .post, .put, .delete, .patch] {
            group.on("**", method: method) { request, _ in
                Self.adminError(404, "no admin endpoint \(request.method.rawValue) \(request.uri.path); GET /_admin lists them")
            }
        }
    }

    typealias AdminRoute = (RouterPath, HTTPRequest.Method, @escaping @Sendable (Request, EmulatorRequestContext) async throws -> Response)
        -> Void

    /// The index, the seed, users and their MFA state, and the MFA knobs.
    private func peopleRoutes(_ on: AdminRoute) {
        on("", .get) { _, _ in
            .json(["tenant": .string(self.tenantName), "tenantId": .string(self.tenantID), "endpoints": Self.adminEndpoints])
        }
        on("seed", .get) { _, _ in .json(self.seed.json) }
        on("users", .get) { _, _ in .json(["users": .array(try self.store.users().map(\.json))]) }
        on("users", .post) { request, _ in try self.createUser(try await Self.adminBody(request)) }
        on("users/:id", .delete) { _, context in
            _ = try self.store.deleteUser(oid: try self.adminUser(context).oid)
            return .empty(204)
        }
        on("users/:id/revoke", .post) { _, context in
            let u = try self.adminUser(context), now = self.clock.now()
            let n = try self.store.revokeGrants(oid: u.oid, now: now)
            return .json(["oid": .string(u.oid), "revokedGrants": JSONValue(n), "tokensValidFrom": JSONValue(now)])
        }
        on("mfa", .get) { _, _ in .json(try Self.knobsJSON(try self.store.mfaKnobs)) }
        on("mfa", .post) { request, _ in try self.setMFAKnobs(try await Self.adminBody(request)) }
        on("users/:id/mfa", .get) { _, context in .json(try self.store.mfaState(oid: try self.adminUser(context).oid).json) }
        on("users/:id/mfa", .post) { request, context in
            try self.setUserMFA(try self.adminUser(context), try await Self.adminBody(request))
        }
    }

    /// What journeys leave behind: sessions, the mock identity providers' next answers, callouts and the outbox.
    private func journeyRoutes(_ on: AdminRoute) {
        on("sessions", .get) { _, _ in
            let now = self.clock.now()
            return .json([
                "now": JSONValue(now),
                "sessions": .array(
                    try self.store.ssoSessions.all().map { s in
                        var o = s.json.objectValue ?? [:]
                        o["live"] = .bool(s.expiresAt.map { $0 > now } ?? true)
                        return .object(o)
                    }),
            ])
        }
        on("sessions", .delete) { request, _ in
            let who = try request.queryParameters()["user"]
            let oid = try who.map { id -> String in
                guard let u = try self.store.user(identifier: id) else { throw AdminError(status: 404, message: "no user '\(id)'") }
                return u.oid
            }
            return .json(["ended": JSONValue(try self.store.ssoSessions.end(oid: oid))])
        }
        on("idp/:name/next", .get) { _, context in
            .json(try Self.answerJSON(try self.store.nextIdPAnswer(try Self.provider(context))))
        }
        on("idp/:name/next", .post) { request, context in
            let answer = try Self.idpAnswer(try await Self.adminBody(request))
            try self.store.setNextIdPAnswer(try Self.provider(context), answer)
            return .json(try Self.answerJSON(answer), status: 201)
        }
        on("idp/:name/next", .delete) { _, context in
            try self.store.setNextIdPAnswer(try Self.provider(context), nil)
            return .empty(204)
        }
        on("callouts", .get) { request, _ in
            let step = try request.queryParameters()["step"]
            return .json(["callouts": .array(self.store.callouts.all.filter { step == nil || $0.step == step }.map(\.json))])
        }
        on("callouts", .delete) { _, _ in
            self.store.callouts.clear()
            return .empty(204)
        }
        on("outbox", .get) { request, _ in
            .json(["messages": .array(try self.store.outbox.messages(to: try request.queryParameters()["to"]).map(\.json))])
        }
    }

    /// The tenant's clock, faults, keys and request log.
    private func tenantRoutes(_ on: AdminRoute) {
        on("clock", .get) { _, _ in .json(["now": JSONValue(self.clock.now()), "offsetSeconds": JSONValue(self.clock.offsetSeconds)]) }
        on("clock", .post) { request, _ in try self.setClock(try await Self.adminBody(request)) }
        on("faults", .get) { _, _ in .json(["faults": .array(self.faults.withLockedValue { $0 }.map(\.json))]) }
        on("faults", .post) { request, _ in try self.addFault(try await Self.adminBody(request)) }
        on("faults", .delete) { _, _ in
            self.faults.withLockedValue { $0.removeAll() }
            return .empty(204)
        }
        on("keys", .get) { _, _ in .json(["keys": self.keys.json]) }
        on("keys/rotate", .post) { request, _ in
            let type = try Self.policyType(try await Self.adminBody(request))
            let key = try self.keys.rotate(type, now: self.clock.now())
            return .json(["rotated": .string(type.rawValue), "kid": .string(key.kid), "keys": self.keys.json], status: 201)
        }
        on("keys/retire", .post) { request, _ in
            let type = try Self.policyType(try await Self.adminBody(request))
            return .json(["retired": JSONValue(try self.keys.retire(type)), "keys": self.keys.json])
        }
        on("log", .get) { _, _ in .json(["requests": .array(try self.store.requests.entries().map(\.json))]) }
        on("log", .delete) { _, _ in
            try self.store.requests.clear()
            return .empty(204)
        }
        on("stats", .get) { _, _ in
            var counts: [String: JSONValue] = [:]
            for e in try self.store.requests.entries() {
                let key = "\(e.endpoint) \(e.grantType) \(e.policy.isEmpty ? "-" : e.policy) \(e.outcome)"
                counts[key] = JSONValue((counts[key]?.lenientInt ?? 0) + 1)
            }
            return .json(["tokenRequests": .object(counts), "signing": self.keys.signingCounts])
        }
    }

    /// `{"policyType": "userFlow" | "custom"}` (default userFlow).
    static func policyType(_ b: JSONObjectReader) throws -> EmulatorSeed.PolicyType {
        try b.rejectUnknownKeys(allowed: ["policyType"])
        let name = try b.optionalString("policyType") ?? "userFlow"
        guard let type = EmulatorSeed.PolicyType(rawValue: name) else {
            throw AdminError(message: "$.policyType is '\(name)'; expected userFlow or custom")
        }
        return type
    }

    static func adminError(_ status: Int, _ message: String) -> Response {
        .json(
            ["error": .string(status == 404 ? "not_found" : status == 403 ? "forbidden" : "bad_request"), "message": .string(message)],
            status: status)
    }

    static func adminBody(_ request: Request) async throws -> JSONObjectReader {
        var request = request
        let body = try await request.bodyData()
        do { return try JSONObjectReader(JSONValue.parse(body.isEmpty ? Data("{}".utf8) : body)) } catch let e as JSONPathError {
            throw AdminError(message: "the request body \(e)")
        }
    }

    private func adminUser(_ context: EmulatorRequestContext) throws -> EmulatorStore.UserRecord {
        let id = context.parameters.get("id") ?? ""
        guard let u = try store.user(identifier: id) else { throw AdminError(status: 404, message: "no user '\(id)'") }
        return u
    }

    private func createUser(_ b: JSONObjectReader) throws -> Response {
        try b.rejectUnknownKeys(allowed: ["email", "password", "displayName", "givenName", "surname", "oid"])
        let email = try b.string("email")
        guard EmulatorSeed.isPlausibleEmail(email) else { throw AdminError(message: "$.email is not an email address") }
        let oid = try b.optionalString("oid") ?? UUID().uuidString.lowercased()
        guard UUID(uuidString: oid) != nil else { throw AdminError(message: "$.oid must be a GUID") }
        let given = try b.optionalString("givenName") ?? ""
        let surname = try b.optionalString("surname") ?? ""
        let display =
            try b.optionalString("displayName") ?? ([given, surname].filter { !$0.isEmpty }.joined(separator: " ").nilIfEmpty ?? email)
        do {
            let u = try store.createUser(
                oid: oid.lowercased(), email: email, password: try b.string("password"), displayName: display,
                givenName: given, surname: surname, now: clock.now())
            return .json(u.json, status: 201)
        } catch EmulatorStore.UserError.emailTaken {
            throw AdminError(status: 409, message: "a user with email '\(email)' already exists")
        } catch EmulatorStore.UserError.oidTaken {
            throw AdminError(status: 409, message: "a user with oid '\(oid)' already exists")
        }
    }

    static func knobsJSON(_ k: MFAKnobs) throws -> JSONValue { try JSONValue.parse(JSONEncoder().encode(k)) }

    static func provider(_ context: EmulatorRequestContext) throws -> EmulatorSeed.IdentityProvider {
        let name = context.parameters.get("name") ?? ""
        guard let p = EmulatorSeed.IdentityProvider(rawValue: name), p != .local else {
            let known = EmulatorSeed.IdentityProvider.allCases.filter { $0 != .local }.map(\.rawValue).joined(separator: ", ")
            throw AdminError(status: 404, message: "no identity provider '\(name)' (providers: \(known))")
        }
        return p
    }

    static func answerJSON(_ a: IdPAnswer?) throws -> JSONValue {
        guard let a else { return ["next": .null] }
        return ["next": try JSONValue.parse(JSONEncoder().encode(a))]
    }

    /// `{"sub", "email", "name"?, "givenName"?, "surname"?}` or `{"error": "access_denied", "errorDescription"?}`.
    static func idpAnswer(_ b: JSONObjectReader) throws -> IdPAnswer {
        try b.rejectUnknownKeys(allowed: ["sub", "email", "name", "givenName", "surname", "error", "errorDescription"])
        if let error = try b.optionalString("error") {
            return IdPAnswer(error: error, errorDescription: try b.optionalString("errorDescription"))
        }
        let email = try b.string("email")
        guard EmulatorSeed.isPlausibleEmail(email) else { throw AdminError(message: "$.email is not an email address") }
        return IdPAnswer(
            subject: try b.optionalString("sub"), email: email, name: try b.optionalString("name"),
            givenName: try b.optionalString("givenName"), surname: try b.optionalString("surname"))
    }

    /// `{"fixedCode": "123456" | null, "unreachable": ["+1…"], "throttled": false}`: replaces the knobs (absent keys reset).
    private func setMFAKnobs(_ b: JSONObjectReader) throws -> Response {
        try b.rejectUnknownKeys(allowed: ["fixedCode", "unreachable", "throttled"])
        var knobs = MFAKnobs()
        if let code = try b.optionalString("fixedCode") {
            guard code.count == 6, code.allSatisfy({ $0.isASCII && $0.isNumber }) else {
                throw AdminError(message: "$.fixedCode must be six digits (or null)")
            }
            knobs.fixedCode = code
        }
        knobs.unreachable = try b.stringArray("unreachable")
        for (i, n) in knobs.unreachable.enumerated() where !EmulatorSeed.isE164(n) {
            throw AdminError(message: "$.unreachable[\(i)] must be E.164, such as +14255550123")
        }
        knobs.throttled = try b.bool("throttled", default: false)
        try store.setMFAKnobs(knobs)
        return .json(try Self.knobsJSON(knobs))
    }

    /// `{"risky": true}` marks the user's sign-ins risky (conditional MFA); `{"required": true}` asks MFA of them whatever
    /// the user flow says; `phone`/`totpSecret`/`email` register a method; `"reset": true` forgets the registered ones (the
    /// next MFA sign-in enrols again).
    private func setUserMFA(_ u: EmulatorStore.UserRecord, _ b: JSONObjectReader) throws -> Response {
        try b.rejectUnknownKeys(allowed: ["risky", "required", "phone", "totpSecret", "email", "reset"])
        if try b.bool("reset", default: false) { try store.resetMFA(oid: u.oid) }
        if b.has("risky") { try store.setRisky(oid: u.oid, try b.bool("risky", default: false)) }
        if b.has("required") { try store.setMFARequired(oid: u.oid, try b.bool("required", default: false)) }
        if let email = try b.optionalString("email") {
            guard EmulatorSeed.isPlausibleEmail(email) else { throw AdminError(message: "$.email must be an email address") }
            try store.setMFAEmail(oid: u.oid, email)
        }
        if let phone = try b.optionalString("phone") {
            guard EmulatorSeed.isE164(phone) else { throw AdminError(message: "$.phone must be E.164, such as +14255550123") }
            try store.setPhone(oid: u.oid, phone, enrolled: true)
        }
        if let secret = try b.optionalString("totpSecret") {
            guard let key = Base32.decode(secret), key.count >= 10 else {
                throw AdminError(message: "$.totpSecret must be base32 of at least 10 bytes")
            }
            try store.setTOTP(oid: u.oid, secret: Base32.encode(key), enrolled: true)
        }
        return .json(try store.mfaState(oid: u.oid).json)
    }

    private func setClock(_ b: JSONObjectReader) throws -> Response {
        try b.rejectUnknownKeys(allowed: ["advanceSeconds", "offsetSeconds"])
        if let adv = try b.int("advanceSeconds", default: nil, range: -315_360_000...315_360_000) {
            try clock.advance(by: adv)
        } else if let off = try b.int("offsetSeconds", default: nil, range: -315_360_000...315_360_000) {
            try clock.set(offset: off)
        } else {
            throw AdminError(message: "give advanceSeconds or offsetSeconds (a whole number)")
        }
        return .json(["now": JSONValue(clock.now()), "offsetSeconds": JSONValue(clock.offsetSeconds)])
    }

    private func addFault(_ b: JSONObjectReader) throws -> Response {
        try b.rejectUnknownKeys(allowed: ["endpoint", "kind", "count", "delayMs"])
        let endpoint = try b.string("endpoint")
        guard Fault.endpoints.contains(endpoint) else {
            throw AdminError(message: "$.endpoint is '\(endpoint)'; expected one of \(Fault.endpoints.joined(separator: ", "))")
        }
        let kindName = try b.string("kind")
        guard let kind = Fault.Kind(rawValue: kindName) else {
            throw AdminError(
                message: "$.kind is '\(kindName)'; expected one of \(Fault.Kind.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        let fault = Fault(
            endpoint: endpoint, kind: kind, remaining: try b.int("count", default: 1, range: 1...100_000)!,
            delayMilliseconds: try b.int("delayMs", default: kind == .delay ? 5000 : 0, range: 0...600_000)!)
        faults.withLockedValue { $0.append(fault) }
        return .json(fault.json, status: 201)
    }
}

extension String {
    var nilIfEmpty: String? { isEmpty ? nil : self }
}
