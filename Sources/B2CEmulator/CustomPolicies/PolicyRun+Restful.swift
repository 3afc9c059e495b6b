import B2CProtocol
import Foundation
import NIOCore
import NIOSSL

/// `RestfulProvider`: the app's own REST API (reference: b2c-custom-policies.md, RESTful technical profile). The input
/// claims go as a JSON body by their partner names (`SendClaimsIn` `Body`, the default) or in the query of a GET
/// (`QueryString`); a 200 answer's JSON gives the output claims by partner name; a 409 answer is B2C's error contract,
/// its `userMessage` shown on the page that called; anything else ends the journey with B2C's message. Every call is in
/// the recorder and `/_admin/callouts`.
extension PolicyRun {
    func restful(_ profile: TechnicalProfile, _ inputs: [String: ClaimValue]) async throws -> [String: ClaimValue] {
        guard let url = profile.metadata("ServiceUrl").map(resolvers.resolve), url.hasPrefix("http://") || url.hasPrefix("https://")
        else {
            throw CustomPolicyError(
                code: "AADB2C90250", message: "The technical profile '\(profile.id)' has no ServiceUrl the tenant can call.")
        }
        let headers = try authorization(profile)
        let tls = try clientTLS(profile, url: url)
        let (target, body) = try request(profile, inputs, url: url)
        var record = CalloutRecord(
            at: now, kind: "restful", step: profile.id, policy: policy.id, url: target, request: body ?? .null, attempts: 0,
            durationMs: 0, outcome: "")
        record.journey = journeyID
        let timeout = TimeAmount.seconds(Int64(profile.metadata("Timeout").flatMap(Int.init) ?? 30))
        let outcome =
            if let body {
                await CalloutHTTP.post(target, json: body, headers: headers, tls: tls, timeout: timeout, retries: 0)
            } else {
                await CalloutHTTP.get(target, headers: headers, tls: tls, timeout: timeout)
            }
        (record.attempts, record.durationMs) = (outcome.attempts, outcome.durationMs)
        defer { store.recordCallout(record) }
        let answer: CalloutHTTP.Answer
        switch outcome.answer {
        case .failure:
            record.outcome = "AADB2C90075"
            throw CustomPolicyError(
                code: "AADB2C90075",
                message: "The claims exchange '\(profile.id)' did not answer: the REST API at \(target) could not be reached.")
        case .success(let a): answer = a
        }
        record.status = answer.status
        record.response = String(decoding: answer.body.prefix(16_384), as: UTF8.self)
        let json = (try? JSONValue.parse(answer.body))?.objectValue
        switch answer.status {
        case 200:
            guard let json else {
                record.outcome = "AADB2C90261"
                throw CustomPolicyError(
                    code: "AADB2C90261",
                    message: "The claims exchange '\(profile.id)' returned HTTP error response that could not be parsed.")
            }
            record.outcome = "continue"
            return Self.claims(json)
        case 409:
            // B2C's error contract: {"version", "status": 409, "userMessage", "code"?, "requestId"?, "developerMessage"?}.
            let message = json?["userMessage"]?.stringValue ?? "The REST API refused the request."
            record.outcome = "validationError"
            throw CustomPolicyError(code: "AADB2C90075", message: message, onPage: true)
        default:
            record.outcome = "AADB2C90075"
            throw CustomPolicyError(
                code: "AADB2C90075",
                message: "The claims exchange '\(profile.id)' returned HTTP error response with Code '\(answer.status)' and Reason "
                    + "'\(answer.reason)'.")
        }
    }

    /// Where the request goes and its body: the input claims as a JSON body by partner name (or one claim's JSON as the
    /// whole body, `ClaimUsedForRequestPayload`) for a POST, or in the query (`SendClaimsIn` `QueryString`) for a GET
    /// without a body, as B2C sends them.
    private func request(_ profile: TechnicalProfile, _ inputs: [String: ClaimValue], url: String) throws -> (String, JSONValue?) {
        let sendIn = profile.metadata("SendClaimsIn") ?? "Body"
        if sendIn == "QueryString" {
            let query = FormEncoding.encode(inputs.map { ($0.key, $0.value.text) }.sorted { $0.0 < $1.0 })
            return (url + (url.contains("?") ? "&" : "?") + query, nil)
        }
        let body: JSONValue
        if let claim = profile.metadata("ClaimUsedForRequestPayload").map(claimTypeID) {
            // One claim's value is the whole body (a JSON document a GenerateJson transformation made).
            guard let text = inputs.first(where: { claimTypeID($0.key) == claim })?.value.text, let json = try? JSONValue.parse(text) else {
                throw CustomPolicyError(
                    code: "AADB2C90250",
                    message: "The technical profile '\(profile.id)' sends the claim '\(claim)' as its body, and it holds no JSON.")
            }
            body = json
        } else {
            body = JSONValue.object(inputs.mapValues(Self.json))
        }
        guard sendIn == "Body" else {
            throw CustomPolicyError(
                code: "AADB2C90250",
                message: "The technical profile '\(profile.id)' sends its claims in \(sendIn); the tenant sends Body or QueryString.")
        }
        return (url, body)
    }

    /// A 200 answer's members as claims by partner name: strings, booleans, string collections, whole numbers; others as
    /// their JSON text.
    static func claims(_ json: [String: JSONValue]) -> [String: ClaimValue] {
        var out: [String: ClaimValue] = [:]
        for (name, value) in json {
            switch value {
            case .string(let s): out[name] = .string(s)
            case .bool(let b): out[name] = .bool(b)
            case .array(let items): out[name] = .collection(items.compactMap(\.stringValue))
            case .number(let n) where n == n.rounded() && abs(n) < 1e15: out[name] = .int(Int(n))
            case .null: break
            default: out[name] = .string(value.serialized())
            }
        }
        return out
    }

    /// The request's credentials, from the profile's `CryptographicKeys` and the tenant's policy keys (reference: RESTful
    /// technical profile): `Basic` (`BasicAuthenticationUsername`, `BasicAuthenticationPassword`), `Bearer`
    /// (`BearerAuthenticationToken`), `ApiKeyHeader` (each key's `Id` is the header's name). A client certificate goes
    /// in the TLS handshake instead (`clientTLS`).
    func authorization(_ profile: TechnicalProfile) throws -> [(String, String)] {
        let auth = profile.metadata("AuthenticationType") ?? "None"
        let keys = profile.node.child("CryptographicKeys")?.all("Key") ?? []
        func secret(_ id: String) throws -> String { try keyValue(id, of: profile) }
        switch auth {
        case "None": return []
        case "Basic":
            let pair = "\(try secret("BasicAuthenticationUsername")):\(try secret("BasicAuthenticationPassword"))"
            return [("Authorization", "Basic " + Data(pair.utf8).base64EncodedString())]
        case "Bearer": return [("Authorization", "Bearer " + (try secret("BearerAuthenticationToken")))]
        case "ApiKeyHeader": return try keys.compactMap { $0["Id"] }.map { ($0, try secret($0)) }
        case "ClientCertificate": return []
        default:
            throw CustomPolicyError(
                code: "AADB2C90250",
                message: "The technical profile '\(profile.id)' authenticates with \(auth); the local tenant sends None, Basic, Bearer, "
                    + "ApiKeyHeader or ClientCertificate.")
        }
    }

    /// The TLS of a call to `url`: the client certificate of `AuthenticationType` `ClientCertificate` (its key's value
    /// in `tenant.policyKeyValues` is a PEM file holding the certificate and its private key, where B2C keeps a .pfx),
    /// and the tenant's `customPolicyCAFile` trusted beside the system's roots. Nil: the defaults.
    func clientTLS(_ profile: TechnicalProfile, url: String) throws -> TLSConfiguration? {
        var certificate: String?
        if profile.metadata("AuthenticationType") == "ClientCertificate" {
            guard url.lowercased().hasPrefix("https://") else {
                throw CustomPolicyError(
                    code: "AADB2C90250",
                    message: "The technical profile '\(profile.id)' authenticates with a client certificate, which needs an https "
                        + "ServiceUrl.")
            }
            certificate = try keyValue("ClientCertificate", of: profile)
        }
        do {
            return try CalloutHTTP.tls(certificateFile: certificate, keyFile: certificate, caFile: caFile)
        } catch {
            guard case .misconfigured(let why) = error else { throw CustomPolicyError(code: "AADB2C90250", message: "\(error)") }
            throw CustomPolicyError(code: "AADB2C90250", message: "The technical profile '\(profile.id)' cannot call its REST API: \(why).")
        }
    }

    /// The value of the policy key the profile's `CryptographicKeys` names under `id` (`BearerAuthenticationToken`,
    /// `ClientCertificate`, …).
    func keyValue(_ id: String, of profile: TechnicalProfile) throws -> String {
        let key = profile.node.child("CryptographicKeys")?.all("Key").first { $0["Id"] == id }
        guard let name = key?["StorageReferenceId"] else {
            let auth = profile.metadata("AuthenticationType") ?? "None"
            throw CustomPolicyError(
                code: "AADB2C90250", message: "The technical profile '\(profile.id)' authenticates with \(auth) and has no key '\(id)'.")
        }
        return try policyKeyValue(name, sentBy: profile)
    }

    /// The value of the tenant's policy key `name` (any case), which `profile` sends (a REST API's credential, an OpenID
    /// Connect client secret); a key without a value ends the journey saying where to give it one.
    func policyKeyValue(_ name: String, sentBy profile: TechnicalProfile) throws -> String {
        guard let value = policyKeys.first(where: { $0.key.caseInsensitiveCompare(name) == .orderedSame })?.value else {
            throw CustomPolicyError(
                code: "AADB2C90250",
                message: "The policy key '\(name)' that '\(profile.id)' sends has no value; give it one in the seed's "
                    + "tenant.policyKeyValues.")
        }
        return value
    }
}
