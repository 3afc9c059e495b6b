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
    let serverConfiguration: TLSConfiguration

    public static func loadOrCreate(in directory: URL, extraHostNames: [String] = []) throws -> EmulatorTLS {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let caPath = directory.appendingPathComponent("ca.pem")
        let caKeyPath = directory.appendingPathComponent("ca-key.pem")
        let caKey: P256.Signing.PrivateKey
        let ca: Certificate
        if let certPEM = try? String(contentsOf: caPath, encoding: .utf8), let keyPEM = try? String(contentsOf: caKeyPath, encoding: .utf8),
            let key = try? P256.Signing.PrivateKey(pemRepresentation: keyPEM), let cert = try? Certificate(pemEncoded: certPEM),
            cert.notValidAfter > Date().addingTimeInterval(86_400)
        {
            caKey = key
            ca = cert
        } else {
            caKey = P256.Signing.PrivateKey()
            let name = try DistinguishedName {
                CommonName("b2c emulator local CA")
                OrganizationName("b2c emulator (development only)")
            }
            let publicKey = Certificate.PublicKey(caKey.publicKey)
            ca = try Certificate(
                version: .v3, serialNumber: Certificate.SerialNumber(), publicKey: publicKey,
                notValidBefore: Date().addingTimeInterval(-3600), notValidAfter: Date().addingTimeInterval(5 * 365 * 86_400),
                issuer: name, subject: name, signatureAlgorithm: .ecdsaWithSHA256,
                extensions: try Certificate.Extensions {
                    Critical(BasicConstraints.isCertificateAuthority(maxPathLength: 0))
                    Critical(KeyUsage(keyCertSign: true, cRLSign: true))
                    SubjectKeyIdentifier(hash: publicKey)
                },
                issuerPrivateKey: Certificate.PrivateKey(caKey))
            try write(try ca.serializeAsPEM().pemString, to: caPath, mode: 0o644)
            try write(caKey.pemRepresentation, to: caKeyPath, mode: 0o600)
        }

        let leafKey = P256.Signing.PrivateKey()
        let leafPublic = Certificate.PublicKey(leafKey.publicKey)
        var names: [GeneralName] = [
            .dnsName("localhost"), .ipAddress(ASN1OctetString(contentBytes: [127, 0, 0, 1])),
            .ipAddress(ASN1OctetString(contentBytes: ArraySlice([UInt8](repeating: 0, count: 15) + [1]))),
        ]
        for h in extraHostNames where !["localhost", "127.0.0.1", "::1"].contains(h) { names.append(.dnsName(h)) }
        let caSKI = (try? ca.extensions.subjectKeyIdentifier)??.keyIdentifier
        let leaf = try Certificate(
            version: .v3, serialNumber: Certificate.SerialNumber(), publicKey: leafPublic,
            notValidBefore: Date().addingTimeInterval(-3600), notValidAfter: Date().addingTimeInterval(90 * 86_400),
            issuer: ca.subject, subject: try DistinguishedName { CommonName("localhost") }, signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.notCertificateAuthority)
                Critical(KeyUsage(digitalSignature: true))
                try ExtendedKeyUsage([.serverAuth])
                SubjectAlternativeNames(names)
                SubjectKeyIdentifier(hash: leafPublic)
                AuthorityKeyIdentifier(keyIdentifier: caSKI)
            },
            issuerPrivateKey: Certificate.PrivateKey(caKey))
        let leafPEM = try leaf.serializeAsPEM().pemString
        let caPEM = try ca.serializeAsPEM().pemString
        let config = TLSConfiguration.makeServerConfiguration(
            certificateChain: [.certificate(try NIOSSLCertificate(bytes: Array(leafPEM.utf8), format: .pem))],
            privateKey: .privateKey(try NIOSSLPrivateKey(bytes: Array(leafKey.pemRepresentation.utf8), format: .pem)))
        return EmulatorTLS(caCertificatePEM: caPEM, caPath: caPath, serverConfiguration: config)
    }

    private static func write(_ text: String, to url: URL, mode: Int) throws {
        try Data(text.utf8).write(to: url, options: .atomic)
        try FileManager.default.setAttributes([.posixPermissions: mode], ofItemAtPath: url.path)
    }
}
