import AsyncHTTPClient
import Crypto
import B2CProtocol
import Foundation
import X509
import _CryptoExtras

/// A SAML sign-in the tenant started at a provider: which provider, its metadata as read when the sign-in began (the
/// answer is checked against it, not a second fetch), and the `ID` of the `AuthnRequest` the answer must be in response to.
struct SAMLPending: Codable, Sendable, Equatable {
    var providerID: String
    var requestID: String
    var metadata: SAMLRelyingParty.IdPMetadata
}

/// The tenant as a SAML 2.0 service provider (reference: b2c-journeys.md §2.3): an `AuthnRequest` by the HTTP-Redirect
/// binding (HTTP-POST when that is all the provider offers), the answer by HTTP-POST at the policy's assertion consumer
/// service, and the assertion taken only when a signature by a certificate of the provider's metadata covers it, it is
/// addressed to this tenant, in response to this request, and within its validity.
enum SAMLRelyingParty {
    typealias Failure = FederationFailure

    static let protocolNS = "urn:oasis:names:tc:SAML:2.0:protocol"
    static let assertionNS = "urn:oasis:names:tc:SAML:2.0:assertion"
    static let metadataNS = "urn:oasis:names:tc:SAML:2.0:metadata"
    static let redirectBinding = "urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect"
    static let postBinding = "urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST"
    /// How far the tenant's clock and the provider's may disagree.
    static let skew = 300

    struct IdPMetadata: Codable, Sendable, Equatable {
        var entityID: String
        var singleSignOnURL: String
        var usesPostBinding: Bool
        /// The signing certificates (base64 DER).
        var certificates: [String]
        /// `WantAuthnRequestsSigned` of its `IDPSSODescriptor`.
        var wantsSignedRequests: Bool? = nil
    }

    /// How the tenant signs an `AuthnRequest` (B2C's `XmlSignatureAlgorithm`: `Sha1` by default, `Sha256`, `Sha384`,
    /// `Sha512`), as the HTTP-Redirect binding's `SigAlg` names it.
    enum SignatureAlgorithm: String, Sendable, Equatable, CaseIterable {
        case sha1 = "Sha1", sha256 = "Sha256", sha384 = "Sha384", sha512 = "Sha512"

        init?(named name: String) {
            guard let known = Self.allCases.first(where: { $0.rawValue.caseInsensitiveCompare(name) == .orderedSame }) else { return nil }
            self = known
        }

        var uri: String {
            switch self {
            case .sha1: "http://www.w3.org/2000/09/xmldsig#rsa-sha1"
            case .sha256: "http://www.w3.org/2001/04/xmldsig-more#rsa-sha256"
            case .sha384: "http://www.w3.org/2001/04/xmldsig-more#rsa-sha384"
            case .sha512: "http://www.w3.org/2001/04/xmldsig-more#rsa-sha512"
            }
        }

        /// RSASSA-PKCS1-v1_5 over `data` with this algorithm's digest.
        func sign(_ data: Data, with key: _RSA.Signing.PrivateKey) throws -> Data {
            switch self {
            case .sha1: try key.signature(for: Insecure.SHA1.hash(data: data), padding: .insecurePKCS1v1_5).rawRepresentation
            case .sha256: try key.signature(for: SHA256.hash(data: data), padding: .insecurePKCS1v1_5).rawRepresentation
            case .sha384: try key.signature(for: SHA384.hash(data: data), padding: .insecurePKCS1v1_5).rawRepresentation
            case .sha512: try key.signature(for: SHA512.hash(data: data), padding: .insecurePKCS1v1_5).rawRepresentation
            }
        }
    }

    /// The service provider's names for one policy: its entity id (the `Issuer` of requests, the `Audience` answers must
    /// name) and its assertion consumer service.
    struct ServiceProvider {
        var entityID: String
        var assertionConsumer: String

        init(origin: String, tenantName: String, tenantSegment: String, policy: EmulatorSeed.Policy) {
            entityID = "\(origin)/\(tenantName)/\(policy.id)"
            assertionConsumer = "\(origin)/\(tenantSegment)/\(policy.lowercasedID)/samlp/sso/assertionconsumer"
        }
    }

    // MARK: Metadata

    static func metadata(_ p: EmulatorSeed.SAMLProvider) async throws -> IdPMetadata {
        let data: Data
        if let u = URL(string: p.metadata), ["http", "https"].contains(u.scheme ?? "") {
            let r = try await ProviderHTTP.send(HTTPClientRequest(url: p.metadata), what: "its metadata", name: p.name, caFile: p.caFile)
            guard r.status == 200 else { throw Failure(reason: "\(p.metadata) (the metadata of \(p.name)) answered HTTP \(r.status)") }
            data = r.body
        } else {
            guard let d = FileManager.default.contents(atPath: p.metadata) else {
                throw Failure(reason: "the metadata file of \(p.name), '\(p.metadata)', cannot be read")
            }
            data = d
        }
        do { return try parseMetadata(data) } catch let e as XMLElement.ParseError {
            throw Failure(reason: "the metadata of \(p.name) is not XML: \(e)")
        }
    }

    static func parseMetadata(_ data: Data) throws -> IdPMetadata {
        let root = try XMLElement.parse(data)
        let entity =
            root.localName == "EntityDescriptor" && root.namespaceURI == metadataNS
            ? root : root.children("EntityDescriptor", in: metadataNS).first
        guard let entity, let entityID = entity.attribute("entityID"), let idp = entity.child("IDPSSODescriptor", in: metadataNS)
        else { throw Failure(reason: "the metadata has no EntityDescriptor with an entityID and an IDPSSODescriptor") }
        let services = idp.children("SingleSignOnService", in: metadataNS)
        guard
            let service = services.first(where: { $0.attribute("Binding") == redirectBinding })
                ?? services.first(where: { $0.attribute("Binding") == postBinding }),
            let location = service.attribute("Location")
        else { throw Failure(reason: "the metadata names no SingleSignOnService with the HTTP-Redirect or HTTP-POST binding") }
        let certificates = idp.children("KeyDescriptor", in: metadataNS)
            .filter { ($0.attribute("use") ?? "signing") == "signing" }
            .flatMap { $0.descendants.filter { $0.localName == "X509Certificate" && $0.namespaceURI == XMLSignature.dsig } }
            .compactMap { XMLSignature.base64($0.text)?.base64EncodedString() }
        guard !certificates.isEmpty else { throw Failure(reason: "the metadata names no signing certificate (KeyDescriptor)") }
        return IdPMetadata(
            entityID: entityID, singleSignOnURL: location, usesPostBinding: service.attribute("Binding") == postBinding,
            certificates: certificates, wantsSignedRequests: idp.attribute("WantAuthnRequestsSigned")?.lowercased() == "true")
    }

    /// The tenant's own metadata for one provider (`samlp/metadata?idptp=`): what an IdP administrator imports; with
    /// `signingCertificate` (base64 DER), `AuthnRequestsSigned="true"` and the certificate its requests are signed with.
    static func serviceProviderMetadata(_ sp: ServiceProvider, signingCertificate: String?) -> String {
        var values: [String: Any] = [
            "entityID": sp.entityID, "assertionConsumer": sp.assertionConsumer, "signed": signingCertificate != nil ? "true" : "false",
        ]
        if let signingCertificate { values["certificate"] = signingCertificate }
        return PageTemplates.render("saml-metadata", values)
    }

    /// The HTTP-Redirect binding's query for `request`, signed as the binding says when `algorithm` is given: `SigAlg`
    /// added, then `Signature` over the query's own octets (`SAMLRequest=…&RelayState=…&SigAlg=…`).
    static func redirectQuery(
        _ request: String, relayState: String, signedWith algorithm: SignatureAlgorithm?, key: _RSA.Signing.PrivateKey
    ) throws -> String {
        var pairs = [("SAMLRequest", redirectEncoded(request)), ("RelayState", relayState)]
        guard let algorithm else { return FormEncoding.encode(pairs) }
        pairs.append(("SigAlg", algorithm.uri))
        let signed = FormEncoding.encode(pairs)
        let signature = try algorithm.sign(Data(signed.utf8), with: key)
        return signed + "&" + FormEncoding.encode([("Signature", signature.base64EncodedString())])
    }

    // MARK: The request

    static func authnRequest(id: String, sp: ServiceProvider, destination: String, at instant: Date) -> String {
        PageTemplates.render(
            "saml-authnrequest",
            [
                "id": id, "instant": timestamp(instant), "destination": destination, "assertionConsumer": sp.assertionConsumer,
                "entityID": sp.entityID,
            ])
    }

    /// The HTTP-Redirect binding's `SAMLRequest`: the request DEFLATE-encoded (in stored blocks, which every inflater
    /// reads), then base64.
    static func redirectEncoded(_ xml: String) -> String {
        var out: [UInt8] = []
        let bytes = Array(xml.utf8)
        var offset = 0
        repeat {
            let count = min(65_535, bytes.count - offset)
            let final = offset + count == bytes.count
            out.append(final ? 1 : 0)
            out += [UInt8(count & 0xFF), UInt8(count >> 8), UInt8(~count & 0xFF), UInt8((~count >> 8) & 0xFF)]
            out += bytes[offset..<(offset + count)]
            offset += count
        } while offset < bytes.count
        return Data(out).base64EncodedString()
    }

    // MARK: The answer

    /// The person a `SAMLResponse` names, once everything about it holds; a `StatusFailure` when the provider said no.
    static func identity(
        samlResponse: String, provider p: EmulatorSeed.SAMLProvider, pending: SAMLPending, sp: ServiceProvider, now: Int
    ) throws -> (identity: FederatedIdentity, assertionID: String, expiresAt: Int) {
        guard let data = XMLSignature.base64(samlResponse) else { throw Failure(reason: "SAMLResponse is not base64") }
        let response: XMLElement
        do { response = try XMLElement.parse(data) } catch { throw Failure(reason: "the SAML response of \(p.name) is not XML: \(error)") }
        guard response.localName == "Response", response.namespaceURI == protocolNS else {
            throw Failure(reason: "the answer of \(p.name) is a <\(response.localName)>, not a SAML Response")
        }
        let md = pending.metadata
        guard response.attribute("InResponseTo") == pending.requestID else {
            throw Failure(reason: "the SAML response of \(p.name) does not answer this sign-in's request (InResponseTo)")
        }
        if let destination = response.attribute("Destination"), destination != sp.assertionConsumer {
            throw Failure(reason: "the SAML response of \(p.name) is addressed to \(destination), not \(sp.assertionConsumer)")
        }
        if let issuer = response.child("Issuer", in: assertionNS)?.text, issuer != md.entityID {
            throw Failure(reason: "the SAML response comes from \(issuer), not \(md.entityID)")
        }
        let status = response.child("Status", in: protocolNS)
        let code = status?.child("StatusCode", in: protocolNS)?.attribute("Value")
        guard code == "urn:oasis:names:tc:SAML:2.0:status:Success" else {
            let detail = status?.child("StatusCode", in: protocolNS)?.child("StatusCode", in: protocolNS)?.attribute("Value")
            throw StatusFailure(
                status: [code, detail].compactMap { $0?.components(separatedBy: ":").last }.joined(separator: "/"),
                message: String((status?.child("StatusMessage", in: protocolNS)?.text ?? "").prefix(200)))
        }
        guard response.children("EncryptedAssertion", in: assertionNS).isEmpty else {
            throw Failure(reason: "\(p.name) encrypted its assertion; the emulator takes signed, unencrypted assertions only")
        }
        let assertions = response.children("Assertion", in: assertionNS)
        guard assertions.count == 1, let assertion = assertions.first else {
            throw Failure(reason: "the SAML response of \(p.name) carries \(assertions.count) assertions; exactly one is taken")
        }
        try verifySignatures(response: response, assertion: assertion, metadata: md, name: p.name)
        let identity = try person(in: assertion, provider: p, pending: pending, sp: sp, now: now)
        guard let id = assertion.attribute("ID") else { throw Failure(reason: "the assertion of \(p.name) has no ID") }
        let until = assertion.descendants.compactMap { $0.attribute("NotOnOrAfter").flatMap(date) }.map { Int($0.timeIntervalSince1970) }
        return (identity, id, (until.max() ?? now) + skew)
    }

    /// The provider said no (`StatusCode` other than Success): the app hears of it as of an OpenID Connect error.
    struct StatusFailure: Error {
        var status: String
        var message: String
    }

    /// At least one of the response and the assertion is signed, and every signature present is valid.
    private static func verifySignatures(response: XMLElement, assertion: XMLElement, metadata md: IdPMetadata, name: String) throws {
        // Certificates that are not RSA (or not certificates) cannot have made an RSA signature: only the others count.
        let keys = md.certificates.compactMap { b64 -> _RSA.Signing.PublicKey? in
            guard let der = Data(base64Encoded: b64), let certificate = try? Certificate(derEncoded: Array(der)) else { return nil }
            return _RSA.Signing.PublicKey(certificate.publicKey)
        }
        guard !keys.isEmpty else { throw Failure(reason: "the metadata of \(name) names no RSA signing certificate") }
        let signed = [(response, try XMLSignature.signature(of: response)), (assertion, try XMLSignature.signature(of: assertion))]
            .compactMap { element, signature in signature.map { (element, $0) } }
        guard !signed.isEmpty else { throw Failure(reason: "neither the SAML response of \(name) nor its assertion is signed") }
        for (element, signature) in signed {
            do { try XMLSignature.verify(element, signature: signature, keys: keys) } catch let e as XMLSignature.Failure {
                throw Failure(reason: "the signature of the SAML \(element.localName.lowercased()) of \(name) does not hold: \(e)")
            }
        }
    }

    private static func person(
        in assertion: XMLElement, provider p: EmulatorSeed.SAMLProvider, pending: SAMLPending, sp: ServiceProvider, now: Int
    ) throws -> FederatedIdentity {
        guard assertion.child("Issuer", in: assertionNS)?.text == pending.metadata.entityID else {
            throw Failure(reason: "the assertion was issued by someone other than \(pending.metadata.entityID)")
        }
        let subject = assertion.child("Subject", in: assertionNS)
        guard let nameID = subject?.child("NameID", in: assertionNS), !nameID.text.isEmpty else {
            throw Failure(reason: "the assertion of \(p.name) names nobody (no Subject/NameID)")
        }
        let confirmations = subject?.children("SubjectConfirmation", in: assertionNS) ?? []
        guard
            let bearer = confirmations.first(where: { $0.attribute("Method") == "urn:oasis:names:tc:SAML:2.0:cm:bearer" })?
                .child("SubjectConfirmationData", in: assertionNS)
        else { throw Failure(reason: "the assertion of \(p.name) has no bearer SubjectConfirmation") }
        // The Web SSO profile's bearer rules (SAML profiles §4.1.4.2–3): the signed assertion itself says where it goes, to
        // which request it answers and until when — so a signed assertion cannot be carried into another sign-in.
        guard bearer.attribute("Recipient") == sp.assertionConsumer else {
            throw Failure(
                reason: "the assertion of \(p.name) is for \(bearer.attribute("Recipient") ?? "no Recipient"), not \(sp.assertionConsumer)")
        }
        guard bearer.attribute("InResponseTo") == pending.requestID else {
            throw Failure(
                reason: "the assertion of \(p.name) does not answer this sign-in's request (SubjectConfirmationData InResponseTo)")
        }
        guard bearer.attribute("NotOnOrAfter") != nil else {
            throw Failure(reason: "the assertion of \(p.name) has no NotOnOrAfter in its SubjectConfirmationData")
        }
        try checkTime(notOnOrAfter: bearer.attribute("NotOnOrAfter"), notBefore: nil, now: now, what: "subject confirmation")
        let conditions = assertion.child("Conditions", in: assertionNS)
        try checkTime(
            notOnOrAfter: conditions?.attribute("NotOnOrAfter"), notBefore: conditions?.attribute("NotBefore"), now: now, what: "assertion")
        let restrictions = conditions?.children("AudienceRestriction", in: assertionNS) ?? []
        guard !restrictions.isEmpty else { throw Failure(reason: "the assertion of \(p.name) names no audience (AudienceRestriction)") }
        for r in restrictions where !r.children("Audience", in: assertionNS).contains(where: { $0.text == sp.entityID }) {
            throw Failure(reason: "the assertion of \(p.name) is for another audience, not \(sp.entityID)")
        }
        let attributes = self.attributes(assertion)
        let emailFormat = nameID.attribute("Format") == "urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress"
        guard let email = attributes.first(of: Claim.email) ?? (emailFormat ? nameID.text : nil), EmulatorSeed.isPlausibleEmail(email)
        else { throw Failure(reason: "the assertion of \(p.name) has no email address (an email attribute or an emailAddress NameID)") }
        return FederatedIdentity(
            provider: nil, issuer: pending.metadata.entityID, providerName: p.name, subject: nameID.text, email: email,
            name: attributes.first(of: Claim.name), givenName: attributes.first(of: Claim.givenName),
            surname: attributes.first(of: Claim.surname))
    }

    private static func checkTime(notOnOrAfter: String?, notBefore: String?, now: Int, what: String) throws {
        if let s = notOnOrAfter {
            guard let t = date(s) else { throw Failure(reason: "the \(what)'s NotOnOrAfter '\(s)' is not a SAML time") }
            guard now < Int(t.timeIntervalSince1970) + skew else { throw Failure(reason: "the \(what) expired at \(s)") }
        }
        if let s = notBefore {
            guard let t = date(s) else { throw Failure(reason: "the \(what)'s NotBefore '\(s)' is not a SAML time") }
            guard now >= Int(t.timeIntervalSince1970) - skew else { throw Failure(reason: "the \(what) is not valid before \(s)") }
        }
    }

    /// The names a claim goes by in SAML attribute statements: WS-Federation claim URIs (AD FS, Entra ID), LDAP names and
    /// their OIDs (Shibboleth), and the plain words.
    enum Claim {
        static let email = [
            "http://schemas.xmlsoap.org/ws/2005/05/identity/claims/emailaddress", "urn:oid:0.9.2342.19200300.100.1.3", "email", "mail",
            "emailaddress",
        ]
        static let givenName = ["http://schemas.xmlsoap.org/ws/2005/05/identity/claims/givenname", "urn:oid:2.5.4.42", "givenName"]
        static let surname = ["http://schemas.xmlsoap.org/ws/2005/05/identity/claims/surname", "urn:oid:2.5.4.4", "sn", "surname"]
        static let name = [
            "http://schemas.microsoft.com/identity/claims/displayname", "urn:oid:2.16.840.1.113730.3.1.241", "displayName",
            "http://schemas.xmlsoap.org/ws/2005/05/identity/claims/name", "name",
        ]
    }

    private static func attributes(_ assertion: XMLElement) -> [String: String] {
        var out: [String: String] = [:]
        for statement in assertion.children("AttributeStatement", in: assertionNS) {
            for a in statement.children("Attribute", in: assertionNS) {
                guard let name = a.attribute("Name"), let value = a.children("AttributeValue", in: assertionNS).first?.text,
                    !value.isEmpty, out[name.lowercased()] == nil
                else { continue }
                out[name.lowercased()] = value
            }
        }
        return out
    }

    // MARK: Time

    static func timestamp(_ d: Date) -> String {
        ISO8601.string(d)
    }

    /// An `xs:dateTime` as SAML writes it, fractional seconds of any length (AD FS writes seven digits) ignored.
    static func date(_ s: String) -> Date? {
        ISO8601.date(s.replacingOccurrences(of: #"\.\d+"#, with: "", options: .regularExpression))
    }
}

extension [String: String] {
    fileprivate func first(of names: [String]) -> String? { names.lazy.compactMap { self[$0.lowercased()] }.first }
}
