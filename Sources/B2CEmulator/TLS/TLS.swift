import B2CProtocol
import Crypto
import Foundation
import NIOSSL
import SwiftASN1
import X509

/// The emulator's own certificate authority and a server certificate for 127.0.0.1, ::1 and localhost,
/// generated in-process. The CA is kept in the state directory so clients trust it once.
public struct EmulatorTLS: Sendable {
    public let caCertificatePEM: String
    /// Where the CA certificate was written (give it to clients: `caFile`, `REQUESTS_CA_BUNDLE`, `--cacert`).
    public let caPath: URL
    /// The host names (besides localhost and the loopback addresses) the server certificate is valid for.
    public let hostNames: [String]
    public let serverConfiguration: TLSConfiguration

    /// How long a new CA is valid: short, since a person may trust it in a browser (docs/security.md).
    static let caLifetime: TimeInterval = 30 * 86_400

    /// The CA in `directory` (made when missing, expiring within a day, unconstrained, or not permitted to name every
    /// one of `extraHostNames`) and a new server certificate for the loopback names and `extraHostNames`.
    public static func loadOrCreate(in directory: URL, extraHostNames: [String] = []) throws -> EmulatorTLS {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let caPath = directory.appendingPathComponent("ca.pem")
        let caKeyPath = directory.appendingPathComponent("ca-key.pem")
        let extra = Array(Set(extraHostNames.map { $0.lowercased() }).subtracting(["localhost", "127.0.0.1", "::1", "0.0.0.0", "::"]))
            .sorted()
        let names = extra.filter { IPBytes.parse($0) == nil }, addresses = extra.compactMap { IPBytes.parse($0) }
        let caKey: P256.Signing.PrivateKey
        let ca: Certificate
        if let certPEM = try? String(contentsOf: caPath, encoding: .utf8), let keyPEM = try? String(contentsOf: caKeyPath, encoding: .utf8),
            let key = try? P256.Signing.PrivateKey(pemRepresentation: keyPEM), let cert = try? Certificate(pemEncoded: certPEM),
            cert.notValidAfter > Date().addingTimeInterval(86_400), permits(cert, names: names)
        {
            caKey = key
            ca = cert
            // An earlier tenant wrote the PEM without a final newline: a bundle made with `cat` joined two lines.
            if !certPEM.hasSuffix("\n") { try write(certPEM, to: caPath, mode: 0o644) }
        } else {
            caKey = P256.Signing.PrivateKey()
            ca = try makeCA(key: caKey, names: names)
            try write(try ca.serializeAsPEM().pemString, to: caPath, mode: 0o644)
            try write(caKey.pemRepresentation, to: caKeyPath, mode: 0o600)
        }
        let leafKey = P256.Signing.PrivateKey()
        let leaf = try makeLeaf(key: leafKey, ca: ca, caKey: caKey, names: names, addresses: addresses)
        let leafPEM = try leaf.serializeAsPEM().pemString
        let caPEM = try ca.serializeAsPEM().pemString
        let config = TLSConfiguration.makeServerConfiguration(
            certificateChain: [.certificate(try NIOSSLCertificate(bytes: Array(leafPEM.utf8), format: .pem))],
            privateKey: .privateKey(try NIOSSLPrivateKey(bytes: Array(leafKey.pemRepresentation.utf8), format: .pem)))
        return EmulatorTLS(caCertificatePEM: caPEM, caPath: caPath, hostNames: names, serverConfiguration: config)
    }

    /// A CA that can only vouch for `localhost` and the tenant's own names (Name Constraints): its key, if stolen, cannot
    /// mint a certificate that a browser trusting the CA accepts for any other site. IP addresses are not constrained:
    /// BoringSSL, which b2c's own HTTPS client uses, refuses every chain whose CA constrains IP addresses
    /// (X509_V_ERR_UNSUPPORTED_CONSTRAINT_TYPE) — docs/security.md says what that leaves.
    static func makeCA(key: P256.Signing.PrivateKey, names: [String]) throws -> Certificate {
        let name = try DistinguishedName {
            CommonName("b2c emulator local CA")
            OrganizationName("b2c emulator (development only)")
        }
        let publicKey = Certificate.PublicKey(key.publicKey)
        let constraints = NameConstraints(permittedDNSDomains: ["localhost"] + names)
        return try Certificate(
            version: .v3, serialNumber: Certificate.SerialNumber(), publicKey: publicKey,
            notValidBefore: Date().addingTimeInterval(-3600), notValidAfter: Date().addingTimeInterval(caLifetime),
            issuer: name, subject: name, signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.isCertificateAuthority(maxPathLength: 0))
                Critical(KeyUsage(keyCertSign: true, cRLSign: true))
                Critical(constraints)
                SubjectKeyIdentifier(hash: publicKey)
            },
            issuerPrivateKey: Certificate.PrivateKey(key))
    }

    static func makeLeaf(
        key: P256.Signing.PrivateKey, ca: Certificate, caKey: P256.Signing.PrivateKey, names: [String], addresses: [[UInt8]]
    ) throws -> Certificate {
        let publicKey = Certificate.PublicKey(key.publicKey)
        let sans: [GeneralName] =
            [
                .dnsName("localhost"), .ipAddress(ASN1OctetString(contentBytes: [127, 0, 0, 1])),
                .ipAddress(ASN1OctetString(contentBytes: ArraySlice(IPBytes.loopbackV6))),
            ]
            + names.map { .dnsName($0) } + addresses.map { .ipAddress(ASN1OctetString(contentBytes: ArraySlice($0))) }
        let caSKI = (try? ca.extensions.subjectKeyIdentifier)??.keyIdentifier
        return try Certificate(
            version: .v3, serialNumber: Certificate.SerialNumber(), publicKey: publicKey,
            notValidBefore: Date().addingTimeInterval(-3600), notValidAfter: min(ca.notValidAfter, Date().addingTimeInterval(caLifetime)),
            issuer: ca.subject, subject: try DistinguishedName { CommonName("localhost") }, signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.notCertificateAuthority)
                Critical(KeyUsage(digitalSignature: true))
                try ExtendedKeyUsage([.serverAuth])
                SubjectAlternativeNames(sans)
                SubjectKeyIdentifier(hash: publicKey)
                AuthorityKeyIdentifier(keyIdentifier: caSKI)
            },
            issuerPrivateKey: Certificate.PrivateKey(caKey))
    }

    /// True when the CA carries Name Constraints that permit each of these names.
    static func permits(_ ca: Certificate, names: [String]) -> Bool {
        guard let constraints = (try? ca.extensions.nameConstraints) ?? nil else { return false }
        let dns = Set(constraints.permittedDNSDomains.map { $0.lowercased() })
        return names.allSatisfy { dns.contains($0) }
    }

    /// A PEM file, ending with a newline (so that `cat ca.pem other.pem > bundle.pem` makes a valid bundle).
    private static func write(_ text: String, to url: URL, mode: Int) throws {
        try Data((text.hasSuffix("\n") ? text : text + "\n").utf8).write(to: url, options: .atomic)
        try FileManager.default.setAttributes([.posixPermissions: mode], ofItemAtPath: url.path)
    }
}
