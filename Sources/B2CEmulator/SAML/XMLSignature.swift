import Crypto
import Foundation
import _CryptoExtras

/// An enveloped XML signature (XML-DSig) checked the way a hardened SAML service provider checks it: the signature must
/// sit directly in the element it signs and its one reference must name that element's `ID`, so what is read afterwards
/// is what was signed (no wrapping); only exclusive canonicalization, the enveloped-signature transform, SHA-1/256/512
/// digests and RSA PKCS #1 v1.5 signatures are taken; the key is one the configuration trusts, never one the message
/// carries.
enum XMLSignature {
    static let dsig = "http://www.w3.org/2000/09/xmldsig#"
    static let excC14N = "http://www.w3.org/2001/10/xml-exc-c14n#"
    static let enveloped = "http://www.w3.org/2000/09/xmldsig#enveloped-signature"

    struct Failure: Error, CustomStringConvertible { var description: String }

    /// The `ds:Signature` directly inside `element`, if there is one (more than one is refused).
    static func signature(of element: XMLElement) throws -> XMLElement? {
        let signatures = element.children("Signature", in: dsig)
        guard signatures.count <= 1 else { throw Failure(description: "<\(element.localName)> carries more than one signature") }
        return signatures.first
    }

    /// Checks `signature` (a child of `element`) against `keys`; throws a failure in words when anything does not hold.
    static func verify(_ element: XMLElement, signature: XMLElement, keys: [_RSA.Signing.PublicKey]) throws {
        guard let signedInfo = signature.child("SignedInfo", in: dsig),
            let c14n = signedInfo.child("CanonicalizationMethod", in: dsig), let method = signedInfo.child("SignatureMethod", in: dsig),
            let value = signature.child("SignatureValue", in: dsig)
        else { throw Failure(description: "the signature lacks SignedInfo, its methods or SignatureValue") }
        guard c14n.attribute("Algorithm") == excC14N else {
            throw Failure(
                description: "the signature uses canonicalization \(c14n.attribute("Algorithm") ?? "?"); only \(excC14N) is taken")
        }
        let references = signedInfo.children("Reference", in: dsig)
        guard references.count == 1, let reference = references.first else {
            throw Failure(description: "the signature has \(references.count) references; a SAML signature has exactly one")
        }
        guard let id = element.attribute("ID"), reference.attribute("URI") == "#" + id else {
            throw Failure(description: "the signature's reference does not name the element it sits in (#\(element.attribute("ID") ?? ""))")
        }
        var inclusive: Set<String> = []
        for transform in reference.child("Transforms", in: dsig)?.children("Transform", in: dsig) ?? [] {
            switch transform.attribute("Algorithm") {
            case enveloped: continue
            case excC14N: inclusive = prefixList(transform)
            case let other: throw Failure(description: "the signature uses the transform \(other ?? "?"), which is not taken")
            }
        }
        guard let digestMethod = reference.child("DigestMethod", in: dsig)?.attribute("Algorithm"),
            let expected = reference.child("DigestValue", in: dsig).flatMap({ base64($0.text) })
        else { throw Failure(description: "the signature's reference lacks its digest") }
        let canonical = ExclusiveC14N.canonicalize(element, excluding: signature, inclusivePrefixes: inclusive)
        guard try digest(canonical, algorithm: digestMethod) == expected else {
            throw Failure(description: "the digest of <\(element.localName)> does not match: the message was changed after it was signed")
        }
        guard let signatureBytes = base64(value.text) else { throw Failure(description: "SignatureValue is not base64") }
        let signedBytes = ExclusiveC14N.canonicalize(signedInfo, inclusivePrefixes: prefixList(c14n))
        let rsa = _RSA.Signing.RSASignature(rawRepresentation: signatureBytes)
        let valid = try keys.contains { key in
            switch method.attribute("Algorithm") {
            case "http://www.w3.org/2001/04/xmldsig-more#rsa-sha256":
                key.isValidSignature(rsa, for: SHA256.hash(data: signedBytes), padding: .insecurePKCS1v1_5)
            case "http://www.w3.org/2001/04/xmldsig-more#rsa-sha512":
                key.isValidSignature(rsa, for: SHA512.hash(data: signedBytes), padding: .insecurePKCS1v1_5)
            case "http://www.w3.org/2000/09/xmldsig#rsa-sha1":
                key.isValidSignature(rsa, for: Insecure.SHA1.hash(data: signedBytes), padding: .insecurePKCS1v1_5)
            case let other:
                throw Failure(description: "the signature method \(other ?? "?") is not taken (RSA with SHA-1, SHA-256 or SHA-512 is)")
            }
        }
        guard valid else { throw Failure(description: "the signature is not made by the identity provider's certificate") }
    }

    private static func prefixList(_ method: XMLElement) -> Set<String> {
        guard let list = method.child("InclusiveNamespaces", in: excC14N)?.attribute("PrefixList") else { return [] }
        return Set(list.split(separator: " ").map { $0 == "#default" ? "" : String($0) })
    }

    private static func digest(_ data: Data, algorithm: String) throws -> Data {
        switch algorithm {
        case "http://www.w3.org/2001/04/xmlenc#sha256": Data(SHA256.hash(data: data))
        case "http://www.w3.org/2001/04/xmlenc#sha512": Data(SHA512.hash(data: data))
        case "http://www.w3.org/2000/09/xmldsig#sha1": Data(Insecure.SHA1.hash(data: data))
        default: throw Failure(description: "the digest method \(algorithm) is not taken (SHA-1, SHA-256 or SHA-512 is)")
        }
    }

    static func base64(_ text: String) -> Data? {
        Data(base64Encoded: String(text.unicodeScalars.filter { !CharacterSet.whitespacesAndNewlines.contains($0) }))
    }
}
