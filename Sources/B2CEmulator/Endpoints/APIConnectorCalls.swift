import B2CProtocol
import Foundation
import Hummingbird
import NIOCore

/// B2C's API connectors (reference: b2c-journeys.md §3): at a user flow's sign-up steps the tenant POSTs B2C's JSON body
/// (Graph names, `step`, `client_id`, `ui_locales`, custom attributes as `extension_<appId>_<Name>`, empty claims left out)
/// to the developer's endpoint and holds the answer to B2C's contract — `Continue` (with claims), `ShowBlockPage`,
/// `ValidationError` (HTTP 400 with `"status": 400`, before the user is created only); anything else is B2C's error page.
/// What a connector's answer makes of the journey.
enum ConnectorDecision {
    /// Go on, with the claims the endpoint returned (stored names: `extension_<Name>` for custom attributes).
    case proceed([String: JSONValue])
    case block(String)
    case validationError(String)
}

extension JourneyContext {
    typealias ConnectorStep = EmulatorSeed.APIConnectors.Step

    /// The request's claims of a person: the Graph-style names B2C sends, empty ones left out.
    func connectorClaims(
        email: String, identity: FederatedIdentity?, displayName: String?, givenName: String?, surname: String?,
        attributes: [String: JSONValue], objectId: String? = nil
    ) -> [String: JSONValue] {
        var out: [String: JSONValue] = ["email": .string(email)]
        out["identities"] = [
            identity.map { ["signInType": "federated", "issuer": .string($0.idp), "issuerAssignedId": .string($0.subject)] }
                ?? ["signInType": "emailAddress", "issuer": .string(tenantName), "issuerAssignedId": .string(email)]
        ]
        for (name, value) in [("displayName", displayName), ("givenName", givenName), ("surname", surname), ("objectId", objectId)] {
            if let value, !value.isEmpty { out[name] = .string(value) }
        }
        let appID = seed.tenant.extensionsAppIdOrDefault.replacingOccurrences(of: "-", with: "")
        for (name, value) in attributes where value != .string("") {
            let wire = name.hasPrefix("extension_") ? "extension_\(appID)_" + name.dropFirst("extension_".count) : name
            out[wire] = value
        }
        return out
    }

    /// Calls the policy's connector at `step`, if it has one, and says what the journey does next.
    func callConnector(
        _ step: ConnectorStep, policy: EmulatorSeed.Policy, tx: AuthorizeTransaction, claims: [String: JSONValue]
    ) async throws -> ConnectorDecision {
        guard let connector = policy.apiConnectors[step] else { return .proceed([:]) }
        var body = claims
        body["step"] = .string(step.bodyName)
        body[step == .preTokenIssuance ? "clientId" : "client_id"] = .string(tx.clientId)
        body["ui_locales"] = .string(tx.language)
        var headers: [(String, String)] = []
        var certificate: (String, String)?
        switch connector.auth {
        case .none: break
        case .basic(let user, let password):
            headers.append(("Authorization", "Basic " + Data("\(user):\(password)".utf8).base64EncodedString()))
        case .bearer(let token): headers.append(("Authorization", "Bearer " + token))
        case .certificate(let cert, let key): certificate = (cert, key)
        }
        var record = CalloutRecord(
            at: clock.now(), kind: "apiConnector", step: step.rawValue, policy: policy.id, url: connector.url, request: .object(body),
            attempts: 0, durationMs: 0, outcome: "")
        let outcome: CalloutHTTP.Outcome
        do {
            let tls = try CalloutHTTP.tls(certificateFile: certificate?.0, keyFile: certificate?.1, caFile: connector.caFile)
            outcome = await CalloutHTTP.post(
                connector.url, json: .object(body), headers: headers, tls: tls, timeout: .seconds(Int64(connector.timeoutSeconds)),
                retries: 1)
        } catch { outcome = .init(answer: .failure(error), attempts: 0, durationMs: 0) }
        (record.attempts, record.durationMs) = (outcome.attempts, outcome.durationMs)
        let decision: Result<ConnectorDecision, PageError>
        switch outcome.answer {
        case .failure(let failure):
            decision = .failure(connectorFailure(step, connector, failure))
        case .success(let answer):
            record.status = answer.status
            record.response = String(decoding: answer.body.prefix(16_384), as: UTF8.self)
            decision = judge(answer, step: step)
        }
        switch decision {
        case .success(.proceed): record.outcome = "continue"
        case .success(.block): record.outcome = "block"
        case .success(.validationError): record.outcome = "validationError"
        case .failure(let e):
            record.outcome = e.code ?? "error"
            record.error = e.message
        }
        record.journey = tx.id
        store.recordCallout(record)
        store.requests.log(
            .init(
                at: clock.now(), endpoint: "callout", grantType: step.rawValue, policy: policy.id, clientId: tx.clientId, oid: nil,
                outcome: record.outcome))
        return try decision.get()
    }

    /// B2C's contract for the answer: 200 with `version` and `action` `Continue` or `ShowBlockPage` (with `userMessage`);
    /// 400 with `"status": 400` (or `"400"`) and `action` `ValidationError`, at the step before the user is created.
    private func judge(_ answer: CalloutHTTP.Answer, step: ConnectorStep) -> Result<ConnectorDecision, PageError> {
        let n = ConnectorStep.allCases.firstIndex(of: step)! + 1
        guard answer.status == 200 || answer.status == 400 else {
            return .failure(
                PageError(
                    code: "AADB2C90075",
                    message: "The claims exchange '\(step.bodyName)' specified in step '\(n)' returned HTTP error response with Code "
                        + "'\(answer.status)' and Reason '\(answer.reason)'."))
        }
        let unparsed = PageError(
            code: "AADB2C90261",
            message:
                "The claims exchange '\(step.bodyName)' specified in step '\(n)' returned HTTP error response that could not be parsed.")
        guard let o = (try? JSONValue.parse(answer.body))?.objectValue, o["version"]?.stringValue != nil,
            let action = o["action"]?.stringValue
        else { return .failure(unparsed) }
        let message = o["userMessage"]?.stringValue
        switch (answer.status, action) {
        case (200, "Continue"):
            let appID = seed.tenant.extensionsAppIdOrDefault.replacingOccurrences(of: "-", with: "")
            var claims: [String: JSONValue] = [:]
            for (key, value) in o where !["version", "action", "userMessage", "status"].contains(key) {
                claims[key.replacingOccurrences(of: "extension_\(appID)_", with: "extension_")] = value
            }
            return .success(.proceed(claims))
        case (200, "ShowBlockPage"):
            guard let message else { return .failure(unparsed) }
            return .success(.block(message))
        case (400, "ValidationError") where step == .postAttributeCollection:
            guard let message, o["status"] == JSONValue(400) || o["status"] == "400" else { return .failure(unparsed) }
            return .success(.validationError(message))
        default:
            return .failure(unparsed)
        }
    }

    private func connectorFailure(_ step: ConnectorStep, _ c: EmulatorSeed.APIConnector, _ f: CalloutHTTP.Failure) -> PageError {
        switch f {
        case .timedOut:
            PageError(
                code: "AADB2C90075",
                message: "Failed to establish connection to restful service end point within timeout limit \(c.timeoutSeconds) seconds. "
                    + "Restful service URL: \(c.url)")
        case .unreachable:
            PageError(code: "AADB2C90075", message: "The API connector of step '\(step.bodyName)' could not be reached at \(c.url).")
        case .tooLarge:
            PageError(code: "AADB2C90075", message: "The API connector of step '\(step.bodyName)' answered more than 1 MiB.")
        case .misconfigured(let why):
            PageError(code: "AADB2C90075", message: "The API connector of step '\(step.bodyName)' is misconfigured: \(why).")
        }
    }

    /// A block page: the connector's message and no way on (the sign-in ends here).
    func blockPage(_ tx: AuthorizeTransaction, message: String) throws -> Response {
        try store.deleteTransaction(id: tx.id)
        return pages.blockPage(tx, message: message)
    }

    /// "Before sending the token": the connector's claims, as the tokens name them, for a policy whose connector is set.
    func preTokenClaims(
        _ tx: AuthorizeTransaction, user: EmulatorStore.UserRecord, policy: EmulatorSeed.Policy
    ) async throws
        -> [String: JSONValue]
    {
        guard policy.apiConnectors.preTokenIssuance != nil else { return [:] }
        let identity =
            try tx.federated
            ?? store.federatedIdentity(oid: user.oid).map { FederatedIdentity(issuer: $0.issuer, subject: $0.subject, email: user.email) }
        let claims = connectorClaims(
            email: user.email, identity: identity, displayName: user.displayName, givenName: user.givenName, surname: user.surname,
            attributes: user.attributes, objectId: user.oid)
        guard case .proceed(let returned) = try await callConnector(.preTokenIssuance, policy: policy, tx: tx, claims: claims) else {
            throw PageError(code: "AADB2C90261", message: "The claims exchange 'PreTokenApplicationClaims' may only answer Continue.")
        }
        var out: [String: JSONValue] = [:]
        let tokenNames = ["displayName": "name", "givenName": "given_name", "surname": "family_name"]
        for (name, value) in returned where name != "email" {
            let claim = tokenNames[name] ?? name
            if let allowed = policy.applicationClaims, !allowed.contains(name) && !allowed.contains(claim) { continue }
            out[claim] = value
        }
        return out
    }
}
