import B2CProtocol
import Foundation
import Hummingbird
import NIOCore

/// Entra External ID's custom authentication extensions (reference: b2c-journeys.md §4): at an event of the journey the
/// tenant POSTs Microsoft's envelope to the developer's endpoint with a bearer token of its own issuer (`azp` the
/// authentication events app, `aud` the extension's app), and holds the answer to Entra's contract — HTTP 200,
/// `application/json`, the event's response type, exactly one known action — failing with the 1003xxx code Entra logs.
/// What went wrong, as Entra's sign-in logs code it (1003002 InvalidHTTPStatus, 1003005 TimedOut, …).
struct ExtensionFailure: Error {
    var code: Int
    var name: String
    var detail: String

    var pageError: PageError {
        PageError(code: "AADSTS\(code)", message: "The custom authentication extension failed: \(name). \(detail)")
    }
}

/// The parts of the tenant that call the developer's code during a journey (the browser's pages, native authentication).
protocol JourneyCallouts: TenantPart {
    var store: EmulatorStore { get }
    var clock: EmulatorClock { get }
    var issuer: TokenIssuer { get }
}

/// Who a callout is about: the app, the page's language, the origin the client used (the callout token's issuer), and the
/// journey (its correlation id).
struct CalloutContext {
    var clientId: String
    var language: String
    var origin: String
    var journeyID: String
    var policy: String
}

extension AuthorizeTransaction {
    var callout: CalloutContext {
        .init(clientId: request.clientId, language: request.language, origin: origin, journeyID: id, policy: policy)
    }
}

extension JourneyCallouts {
    typealias ExtensionEvent = EmulatorSeed.AuthenticationExtension.Event

    /// The "Azure AD authentication events" app: the callout token's `azp`.
    static var authenticationEventsApp: String { "99045fe1-7639-4a75-9d4a-577b6ca3810f" }

    func authenticationExtension(_ event: ExtensionEvent, clientId: String) -> EmulatorSeed.AuthenticationExtension? {
        seed.authenticationExtensions.first { $0.event == event && ($0.clientIds.isEmpty || $0.clientIds.contains(clientId)) }
    }

    /// Calls `ext` with the event's envelope (`data` beyond the common fields) and returns its one action.
    func callExtension(
        _ ext: EmulatorSeed.AuthenticationExtension, tx: CalloutContext, data extra: [String: JSONValue], user: JSONValue? = nil,
        requestType: String? = nil, nonce: String? = nil
    ) async -> Result<[String: JSONValue], ExtensionFailure> {
        let app = seed.app(clientId: tx.clientId)
        let principal: JSONValue = [
            "id": .string(EmulatorStore.derivedGUID("service-principal:\(tx.clientId)")), "appId": .string(tx.clientId),
            "appDisplayName": .string(app?.name ?? tx.clientId), "displayName": .string(app?.name ?? tx.clientId),
        ]
        var context: [String: JSONValue] = [
            "correlationId": .string(EmulatorStore.derivedGUID("correlation:\(tx.journeyID)")),
            "client": ["ip": "127.0.0.1", "locale": .string(tx.language), "market": .string(tx.language)],
            "protocol": "OAUTH2.0", "clientServicePrincipal": principal, "resourceServicePrincipal": principal,
        ]
        if let user { context["user"] = user }
        if let requestType { context["requestType"] = .string(requestType) }
        var data: [String: JSONValue] = [
            "@odata.type": .string("microsoft.graph.\(ext.event.rawValue)CalloutData"), "tenantId": .string(tenantID),
            "authenticationEventListenerId": .string(EmulatorStore.derivedGUID("listener:\(ext.id)")),
            "customAuthenticationExtensionId": .string(ext.id), "authenticationContext": .object(context),
        ]
        data.merge(extra) { _, new in new }
        let body: JSONValue = [
            "type": .string("microsoft.graph.authenticationEvent.\(Self.eventTypeName(ext.event))"),
            "source": .string("/tenants/\(tenantID)/applications/\(tx.clientId)"), "data": .object(data),
        ]
        // The recorder keeps what was sent, but never even the encrypted password.
        var recorded = data
        if let jwe = recorded["encryptedPasswordContext"]?.stringValue {
            recorded["encryptedPasswordContext"] = .string("(a JWE of \(jwe.utf8.count) characters, not kept)")
        }
        var recordedBody = body.objectValue ?? [:]
        recordedBody["data"] = .object(recorded)
        var record = CalloutRecord(
            at: clock.now(), kind: "authenticationExtension", step: ext.event.rawValue, policy: tx.policy, url: ext.url,
            request: .object(recordedBody), attempts: 0, durationMs: 0, outcome: "")
        let result: Result<[String: JSONValue], ExtensionFailure>
        do {
            let token = try calloutToken(ext, origin: tx.origin)
            let tls = try CalloutHTTP.tls(certificateFile: nil, keyFile: nil, caFile: ext.caFile)
            let outcome = await CalloutHTTP.post(
                ext.url, json: body, headers: [("Authorization", "Bearer " + token)], tls: tls,
                timeout: .milliseconds(Int64(ext.timeoutMs)), retries: ext.maximumRetries)
            (record.attempts, record.durationMs) = (outcome.attempts, outcome.durationMs)
            switch outcome.answer {
            case .failure(.timedOut):
                result = .failure(.init(code: 1_003_005, name: "TimedOut", detail: "No answer within \(ext.timeoutMs) ms."))
            case .failure(.tooLarge):
                result = .failure(.init(code: 1_003_024, name: "ResponseSizeExceeded", detail: "The answer is larger than 1 MiB."))
            case .failure(let other):
                result = .failure(.init(code: 1_003_027, name: "ConnectionError", detail: "\(ext.url) could not be reached: \(other)."))
            case .success(let answer):
                record.status = answer.status
                record.response = String(decoding: answer.body.prefix(16_384), as: UTF8.self)
                result = Self.judge(answer, event: ext.event, nonce: nonce)
            }
        } catch {
            result = .failure(.init(code: 1_003_001, name: "CustomExtensionUnexpectedError", detail: "\(error)"))
        }
        switch result {
        case .success(let action): record.outcome = (action["@odata.type"]?.stringValue ?? "").components(separatedBy: ".").last ?? ""
        case .failure(let f):
            record.outcome = String(f.code)
            record.error = "\(f.name): \(f.detail)"
        }
        record.journey = tx.journeyID
        store.recordCallout(record)
        store.requests.log(
            .init(
                at: clock.now(), endpoint: "callout", grantType: ext.event.rawValue, policy: tx.policy, clientId: tx.clientId, oid: nil,
                outcome: record.outcome))
        return result
    }

    static func eventTypeName(_ e: ExtensionEvent) -> String {
        switch e {
        case .onTokenIssuanceStart: "tokenIssuanceStart"
        case .onAttributeCollectionStart: "attributeCollectionStart"
        case .onAttributeCollectionSubmit: "attributeCollectionSubmit"
        case .onOtpSend: "emailOtpSend"
        case .onPasswordSubmit: "passwordSubmit"
        }
    }

    /// The actions each event may answer (Microsoft's `@odata.type` values, compared without regard to case as the
    /// published samples differ in it).
    static func actions(_ e: ExtensionEvent) -> [String] {
        switch e {
        case .onTokenIssuanceStart: ["microsoft.graph.tokenIssuanceStart.provideClaimsForToken"]
        case .onAttributeCollectionStart:
            ["continueWithDefaultBehavior", "setPrefillValues", "showBlockPage"].map { "microsoft.graph.attributeCollectionStart.\($0)" }
        case .onAttributeCollectionSubmit:
            ["continueWithDefaultBehavior", "modifyAttributeValues", "showValidationError", "showBlockPage"]
                .map { "microsoft.graph.attributeCollectionSubmit.\($0)" }
        case .onOtpSend: ["microsoft.graph.OtpSend.continueWithDefaultBehavior"]
        case .onPasswordSubmit:
            ["MigratePassword", "UpdatePassword", "Retry", "Block"].map { "microsoft.graph.passwordSubmit.\($0)" }
        }
    }

    static func judge(
        _ a: CalloutHTTP.Answer, event: ExtensionEvent, nonce: String? = nil
    ) -> Result<[String: JSONValue], ExtensionFailure> {
        guard a.status == 200 else {
            return .failure(.init(code: 1_003_002, name: "InvalidHTTPStatus", detail: "The endpoint answered HTTP \(a.status), not 200."))
        }
        guard (a.contentType ?? "").lowercased().hasPrefix("application/json") else {
            return .failure(
                .init(code: 1_003_006, name: "InvalidResponseContentType", detail: "Content-Type is '\(a.contentType ?? "")'."))
        }
        guard !a.body.isEmpty else { return .failure(.init(code: 1_003_009, name: "EmptyResponse", detail: "The body is empty.")) }
        guard let data = (try? JSONValue.parse(a.body))?["data"]?.objectValue,
            let type = data["@odata.type"]?.stringValue, let actions = data["actions"]?.arrayValue
        else {
            return .failure(.init(code: 1_003_003, name: "InvalidResponseBody", detail: "No data with @odata.type and actions."))
        }
        let expected = "microsoft.graph.\(event.rawValue)ResponseData"
        guard type.lowercased() == expected.lowercased() else {
            return .failure(.init(code: 1_003_003, name: "InvalidResponseBody", detail: "data.@odata.type is '\(type)', not \(expected)."))
        }
        guard actions.count == 1, let action = actions[0].objectValue else {
            return .failure(
                .init(code: 1_003_010, name: "InvalidNumberOfActions", detail: "\(actions.count) actions; exactly one is taken."))
        }
        let actionType = action["@odata.type"]?.stringValue ?? ""
        guard let known = Self.actions(event).first(where: { $0.lowercased() == actionType.lowercased() }) else {
            return .failure(
                .init(code: 1_003_012, name: "InvalidActionType", detail: "'\(actionType)' is not an action of \(event.rawValue)."))
        }
        // OnPasswordSubmit: the answer echoes the request's nonce (a replayed or misdirected answer does not).
        if let nonce, data["nonce"]?.stringValue != nonce {
            return .failure(
                .init(
                    code: 1_003_003, name: "InvalidResponseBody",
                    detail: "data.nonce is \(data["nonce"]?.stringValue.map { "'\($0)'" } ?? "missing"), not the nonce of this request."))
        }
        var normalized = action
        normalized["@odata.type"] = .string(known)
        if event == .onTokenIssuanceStart { return checkClaims(normalized) }
        return .success(normalized)
    }

    /// `provideClaimsForToken`: an object of strings and arrays of strings, keys not empty, 3 KB at most.
    private static func checkClaims(_ action: [String: JSONValue]) -> Result<[String: JSONValue], ExtensionFailure> {
        guard let claims = action["claims"]?.objectValue else {
            return .failure(.init(code: 1_003_007, name: "NullClaimsResponse", detail: "The action has no claims object."))
        }
        guard !claims.keys.contains(where: { $0.trimmingCharacters(in: .whitespaces).isEmpty }) else {
            return .failure(.init(code: 1_003_026, name: "NullOrEmptyClaimKeyNotSupported", detail: "A claim has an empty name."))
        }
        for (name, value) in claims {
            let ok = value.stringValue != nil || (value.arrayValue?.allSatisfy { $0.stringValue != nil } ?? false)
            guard ok else {
                return .failure(
                    .init(code: 1_003_003, name: "InvalidResponseBody", detail: "The claim '\(name)' is neither a string nor strings."))
            }
        }
        guard JSONValue.object(claims).serialized().utf8.count <= 3072 else {
            return .failure(.init(code: 1_003_025, name: "ResponseClaimsSizeExceeded", detail: "The claims are larger than 3 KB."))
        }
        return .success(action)
    }

    /// The token the callout carries: issued by this tenant for the extension's app, as Entra issues it to the
    /// authentication events app with client credentials.
    func calloutToken(_ ext: EmulatorSeed.AuthenticationExtension, origin: String) throws -> String {
        let now = clock.now()
        let signer = try issuer.keys.current(.userFlow)
        let principal = EmulatorStore.derivedGUID("service-principal:\(Self.authenticationEventsApp):\(tenantID)")
        let claims: JSONValue = [
            "iss": .string(issuer.issuer(origin: origin, policy: nil)), "aud": .string(ext.appId),
            "azp": .string(Self.authenticationEventsApp),
            "appid": .string(Self.authenticationEventsApp), "azpacr": "1", "tid": .string(tenantID), "sub": .string(principal),
            "oid": .string(principal), "idtyp": "app", "ver": "2.0", "iat": JSONValue(now), "nbf": JSONValue(now),
            "exp": JSONValue(now + 3600),
        ]
        return try signer.sign(claims)
    }

    /// `OnTokenIssuanceStart`: the claims of the answer that the extension's `claims` list (the claims-mapping policy).
    /// The one rule for every way a journey ends in tokens: the browser's pages and native authentication.
    func tokenIssuanceClaims(
        _ tx: CalloutContext, user: EmulatorStore.UserRecord
    ) async -> Result<[String: JSONValue], ExtensionFailure> {
        guard seed.tenant.externalId, let ext = authenticationExtension(.onTokenIssuanceStart, clientId: tx.clientId) else {
            return .success([:])
        }
        let person: JSONValue = [
            "id": .string(user.oid), "displayName": .string(user.displayName), "givenName": .string(user.givenName),
            "surname": .string(user.surname), "mail": .string(user.email), "userPrincipalName": .string("\(user.oid)@\(tenantName)"),
            "userType": "Member",
            "createdDateTime": .string(ISO8601.string(epoch: user.createdAt)),
        ]
        return await callExtension(ext, tx: tx, data: [:], user: person).map { action in
            let provided = action["claims"]?.objectValue ?? [:]
            return provided.filter { ext.claims.contains($0.key) && !TokenIssuer.protocolClaims.contains($0.key) }
        }
    }

    /// An email code: to the outbox, and in an External ID tenant with an OnOtpSend extension, to the developer's endpoint
    /// too (Entra's custom email provider) — a failure there is the page's error, the code unsent.
    func sendEmailCode(
        to email: String, purpose: String, code: String, now: Int, expiresAt: Int? = nil, tx: CalloutContext
    ) async throws {
        if seed.tenant.externalId, let ext = authenticationExtension(.onOtpSend, clientId: tx.clientId) {
            let requestType =
                ["signup": "signUp", "mfa": "mfa", "password_reset": "passwordReset", "native_signin": "signIn"][purpose] ?? purpose
            let context: JSONValue = ["identifier": .string(email), "oneTimeCode": .string(code)]
            if case .failure(let f) = await callExtension(ext, tx: tx, data: ["otpContext": context], requestType: requestType) {
                throw f.pageError
            }
        }
        try store.outbox.send(to: email, purpose: purpose, code: code, now: now, expiresAt: expiresAt, journey: tx.journeyID)
    }

    /// The one action of the tenant's extension for `event` and this app, if it has one; a failure is the page's error.
    func extensionAction(
        _ event: ExtensionEvent, _ tx: AuthorizeTransaction, data: [String: JSONValue]
    ) async throws
        -> [String: JSONValue]?
    {
        guard seed.tenant.externalId, let ext = authenticationExtension(event, clientId: tx.clientId) else { return nil }
        switch await callExtension(ext, tx: tx.callout, data: data) {
        case .failure(let f): throw f.pageError
        case .success(let action): return action
        }
    }

    /// `userSignUpInfo` of the attribute events: the page's values typed as Graph's directory attribute values.
    func userSignUpInfo(
        email: String, names: [String: String], attributes: [String: JSONValue], policy: EmulatorSeed.Policy
    )
        -> JSONValue
    {
        let appID = seed.tenant.extensionsAppIdOrDefault.replacingOccurrences(of: "-", with: "")
        var out: [String: JSONValue] = [:]
        func put(_ name: String, _ value: JSONValue) {
            let custom = name.hasPrefix("extension_")
            let wire = custom ? "extension_\(appID)_" + name.dropFirst("extension_".count) : name
            let type =
                switch value {
                case .bool: "microsoft.graph.booleanDirectoryAttributeValue"
                case .number: "microsoft.graph.int64DirectoryAttributeValue"
                default: "microsoft.graph.stringDirectoryAttributeValue"
                }
            out[wire] = [
                "@odata.type": .string(type), "value": value, "attributeType": custom ? "directorySchemaExtension" : "builtIn",
            ]
        }
        for (name, value) in names where !value.isEmpty { put(name, .string(value)) }
        for (name, value) in attributes { put(name, value) }
        return [
            "attributes": .object(out),
            "identities": [["signInType": "email", "issuer": .string(tenantName), "issuerAssignedId": .string(email)]],
        ]
    }

    /// The names an extension's answer uses for attributes (`extension_<appId>_Name` or `extension_Name`), as stored.
    func storedAttributeName(_ wire: String) -> String {
        let appID = seed.tenant.extensionsAppIdOrDefault.replacingOccurrences(of: "-", with: "")
        return wire.replacingOccurrences(of: "extension_\(appID)_", with: "extension_")
    }
}
