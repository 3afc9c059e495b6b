import B2CProtocol
import Crypto
import Foundation
import NIOConcurrencyHelpers
import SwiftASN1
import X509
import _CryptoExtras

/// The tenant's RS256 signing keys, one set per policy type (user flows; custom policies sign with the tenant's other key,
/// `B2C_1A_TokenSigningKeyContainer`). Each set has a current key, which signs, and may have older keys still published
/// after a rotation until they are retired. Kept with the state, so that issued tokens stay valid across restarts.
final class SigningKeys: Sendable {
    struct Entry: Sendable {
        var kid: String
        var type: EmulatorSeed.PolicyType
        /// Its signatures (libcrypto's, held to swift-crypto's answer; RS256Signer.swift).
        var signer: RS256Signer
        var jwk: JWK
        var createdAt: Int
        var current: Bool

        var key: _RSA.Signing.PrivateKey { signer.key }

        /// A token of these claims signed with this key, its `kid` in the header.
        func sign(_ claims: JSONValue) throws -> String { try signer.sign(claims, kid: kid) }

        /// The same token, its signature made with the others waiting on this event loop (RS256Signer): the token
        /// endpoint's grants, which a load test sends many of at once.
        func batchedSign(_ claims: JSONValue) async throws -> String { try await signer.batchedSign(claims, kid: kid) }
    }

    private let store: EmulatorStore
    /// The state's setting that keeps them (a twin's External ID side has its own).
    private let setting: String
    private let entries: NIOLockedValueBox<[Entry]>
    /// Each key's certificate (DER) by `kid`, made once: an External ID tenant's JWKS carries it on every request.
    private let certificates = NIOLockedValueBox<[String: Data]>([:])

    init(store: EmulatorStore, now: Int, setting: String = "signing_keys") throws {
        self.store = store
        self.setting = setting
        var list: [Entry] = []
        if let saved = try store.setting(setting) {
            for item in try JSONDecoder().decode([SavedKey].self, from: Data(saved.utf8)) {
                let key = try _RSA.Signing.PrivateKey(pemRepresentation: item.pem)
                list.append(
                    Entry(
                        kid: item.kid, type: item.type, signer: RS256Signer(key), jwk: try JWK(publicKey: key.publicKey, kid: item.kid),
                        createdAt: item.createdAt, current: item.current))
            }
        } else if setting == "signing_keys", let legacy = try store.setting("signing_key") {
            // The first emulators kept one key: it stays the user flows' current key.
            let key = try _RSA.Signing.PrivateKey(pemRepresentation: legacy)
            let jwk = try JWK(publicKey: key.publicKey)
            list.append(Entry(kid: jwk.kid, type: .userFlow, signer: RS256Signer(key), jwk: jwk, createdAt: now, current: true))
        }
        entries = NIOLockedValueBox(list)
        if !list.contains(where: { $0.type == .userFlow && $0.current }) { _ = try rotate(.userFlow, now: now) } else { try save() }
    }

    /// The key that signs for a policy type (made on first use for custom policies).
    func current(_ type: EmulatorSeed.PolicyType) throws -> Entry {
        if let e = entries.withLockedValue({ $0.first { $0.type == type && $0.current } }) { return e }
        _ = try rotate(type, now: Int(Date().timeIntervalSince1970))
        return try current(type)
    }

    /// The published key set of a policy type: its current key and the older ones not yet retired.
    func jwks(_ type: EmulatorSeed.PolicyType) throws -> JWKSet {
        _ = try current(type)
        return JWKSet(
            keys: entries.withLockedValue { list in list.filter { $0.type == type }.sorted { $0.current && !$1.current }.map(\.jwk) })
    }

    /// The key set as the tenant's `keys` endpoint publishes it: B2C's keys say since when they sign (`nbf`); Entra's
    /// (an External ID tenant) carry a certificate, `x5t` and `x5c`, as login.microsoftonline.com's do.
    func published(_ type: EmulatorSeed.PolicyType, externalId: Bool) throws -> JWKSet {
        _ = try current(type)
        let list = entries.withLockedValue { list in list.filter { $0.type == type }.sorted { $0.current && !$1.current } }
        return JWKSet(
            keys: try list.map { entry in
                var jwk = entry.jwk
                if externalId {
                    let der = try certificates.withLockedValue { made in
                        if let der = made[entry.kid] { return der }
                        let der = try Self.certificate(of: entry)
                        made[entry.kid] = der
                        return der
                    }
                    jwk.x5t = Base64URL.encode(Data(Insecure.SHA1.hash(data: der)))
                    jwk.x5c = [der.base64EncodedString()]
                } else {
                    jwk.nbf = entry.createdAt
                }
                return jwk
            })
    }

    /// A self-signed certificate of a signing key (DER), the same for the same key and creation time: its serial number
    /// comes from the `kid` and its validity from when the key was made (RSA PKCS#1 v1.5 signatures are deterministic).
    static func certificate(of entry: Entry) throws -> Data {
        let name = try DistinguishedName { CommonName("b2c local tenant token signing") }
        let serial = Certificate.SerialNumber(bytes: Array(SHA256.hash(data: Data(entry.kid.utf8)).prefix(16)).map { $0 & 0x7F })
        let since = Date(timeIntervalSince1970: TimeInterval(entry.createdAt))
        let certificate = try Certificate(
            version: .v3, serialNumber: serial, publicKey: .init(entry.key.publicKey), notValidBefore: since,
            notValidAfter: since.addingTimeInterval(5 * 365 * 86_400), issuer: name, subject: name,
            signatureAlgorithm: .sha256WithRSAEncryption, extensions: Certificate.Extensions {}, issuerPrivateKey: .init(entry.key))
        var serializer = DER.Serializer()
        try serializer.serialize(certificate)
        return Data(serializer.serializedBytes)
    }

    /// Every published key of every type (an API that trusts both policy types looks a `kid` up here).
    var all: JWKSet { JWKSet(keys: entries.withLockedValue { $0.map(\.jwk) }) }

    /// How the token endpoint's signatures were made, over every key (`/_admin/stats`): whether a key signs in batches, in
    /// which lanes (`lanes`: `avx512ifma`, `avx2`, null without batches), and the fewest signatures one pass makes on this
    /// processor (`smallestBatch`, 0 without batches; `passCost`, what a pass was timed at in signatures made alone, null
    /// where none was timed), how many signatures
    /// the event loops made with others in one pass (and in how many passes) or alone, and how many of those made together
    /// did not check and were made again by libcrypto alone (`fallbacks`, 0 unless the lanes go wrong).
    var signingCounts: JSONValue {
        let signers = entries.withLockedValue { $0.map(\.signer) }
        let counts = signers.map(\.batchCounts)
        return [
            "batches": .bool(signers.contains { $0.signsInBatches }),
            "smallestBatch": JSONValue(signers.map(\.smallestBatch).max() ?? 0),
            "lanes": signers.lazy.compactMap(\.lanes).first.map { .string($0) } ?? .null,
            "passCost": signers.lazy.compactMap(\.passCost).first.map { .number($0) } ?? .null,
            "together": JSONValue(counts.map(\.together).reduce(0, +)), "passes": JSONValue(counts.map(\.passes).reduce(0, +)),
            "alone": JSONValue(counts.map(\.alone).reduce(0, +)),
            "fallbacks": JSONValue(signers.map(\.batchFallbacks).reduce(0, +)),
        ]
    }

    func type(ofKid kid: String) -> EmulatorSeed.PolicyType? { entries.withLockedValue { $0.first { $0.kid == kid }?.type } }

    /// A new key signs from now on; the previous one stays published until retired.
    @discardableResult
    func rotate(_ type: EmulatorSeed.PolicyType, now: Int) throws -> Entry {
        let key = try _RSA.Signing.PrivateKey(keySize: .bits2048)
        let jwk = try JWK(publicKey: key.publicKey)
        let entry = Entry(kid: jwk.kid, type: type, signer: RS256Signer(key), jwk: jwk, createdAt: now, current: true)
        entries.withLockedValue { list in
            for i in list.indices where list[i].type == type { list[i].current = false }
            list.append(entry)
        }
        try save()
        return entry
    }

    /// Unpublishes every key of a type but the current one; returns their kids.
    func retire(_ type: EmulatorSeed.PolicyType) throws -> [String] {
        let retired = entries.withLockedValue { list -> [String] in
            let gone = list.filter { $0.type == type && !$0.current }.map(\.kid)
            list.removeAll { $0.type == type && !$0.current }
            return gone
        }
        try save()
        return retired
    }

    var json: JSONValue {
        .array(
            entries.withLockedValue { list in
                list.map {
                    [
                        "kid": .string($0.kid), "type": .string($0.type.rawValue), "current": .bool($0.current),
                        "createdAt": JSONValue($0.createdAt),
                    ]
                }
            })
    }

    /// A signing key as the tenant's state keeps it (the `signing_keys` setting, a JSON array).
    private struct SavedKey: Codable {
        var kid: String
        var type: EmulatorSeed.PolicyType
        var pem: String
        var createdAt: Int
        var current: Bool
    }

    private func save() throws {
        let saved = entries.withLockedValue { list in
            list.map { SavedKey(kid: $0.kid, type: $0.type, pem: $0.key.pemRepresentation, createdAt: $0.createdAt, current: $0.current) }
        }
        try store.setSetting(setting, String(decoding: try JSONEncoder().encode(saved), as: UTF8.self))
    }
}
