import B2CProtocol
import Foundation
import GRDB

/// Authorization codes: each redeemed once, atomically; a replay revokes what the first redemption issued. Codes are
/// stored only as hashes.
struct AuthorizationCodes: Sendable {
    let db: any DatabaseWriter

    /// What a code stands for.
    struct Record {
        var clientId: String, redirectUri: String, policy: String, scopes: String, nonce: String?
        var challenge: String?, challengeMethod: String?, oid: String, authTime: Int, newUser: Bool
        var createdAt: Int, redeemedAt: Int?, grantId: String
        var redirectType: EmulatorSeed.RedirectType = .publicClient
        /// A federated sign-in's provider access token, for a user flow whose application claims name `idp_access_token`.
        var idpAccessToken: String? = nil
        /// Claims the user flow's "before sending the token" API connector returned.
        var extraClaims: [String: JSONValue] = [:]
    }

    /// A row of `codes`, as a GRDB record: the record's fields, the code's hash, and the connector's claims as JSON text.
    struct CodeRow: Codable, FetchableRecord, PersistableRecord {
        static let databaseTableName = "codes"
        static let databaseColumnDecodingStrategy = DatabaseColumnDecodingStrategy.convertFromSnakeCase
        static let databaseColumnEncodingStrategy = DatabaseColumnEncodingStrategy.convertToSnakeCase

        var hash: String
        var clientId: String, redirectUri: String, policy: String, scopes: String, nonce: String?
        var challenge: String?, challengeMethod: String?, oid: String, authTime: Int, newUser: Bool
        var createdAt: Int, redeemedAt: Int?, grantId: String, redirectType: String, idpAccessToken: String?, extraClaims: String?

        init(hash: String, _ r: Record) {
            self.hash = hash
            (clientId, redirectUri, policy, scopes, nonce) = (r.clientId, r.redirectUri, r.policy, r.scopes, r.nonce)
            (challenge, challengeMethod, oid, authTime, newUser) = (r.challenge, r.challengeMethod, r.oid, r.authTime, r.newUser)
            (createdAt, redeemedAt, grantId, redirectType) = (r.createdAt, r.redeemedAt, r.grantId, r.redirectType.rawValue)
            idpAccessToken = r.idpAccessToken
            extraClaims = r.extraClaims.isEmpty ? nil : JSONValue.object(r.extraClaims).serialized()
        }

        var record: Record {
            Record(
                clientId: clientId, redirectUri: redirectUri, policy: policy, scopes: scopes, nonce: nonce, challenge: challenge,
                challengeMethod: challengeMethod, oid: oid, authTime: authTime, newUser: newUser, createdAt: createdAt,
                redeemedAt: redeemedAt, grantId: grantId, redirectType: EmulatorSeed.RedirectType(rawValue: redirectType) ?? .publicClient,
                idpAccessToken: idpAccessToken, extraClaims: extraClaims.flatMap { try? JSONValue.parse($0).objectValue } ?? [:])
        }
    }

    func save(_ code: String, _ r: Record) throws {
        try db.write { try CodeRow(hash: EmulatorStore.hash(code), r).insert($0) }
    }

    enum Redemption { case unknown, replayed(Record), fresh(Record) }

    /// Marks a code redeemed, atomically, so that only one request can ever redeem it.
    /// A replay also revokes the grant of the refresh tokens that the first redemption issued (RFC 6749 §4.1.2).
    func redeem(_ code: String, now: Int) throws -> Redemption {
        try db.write { db in
            guard let r = try CodeRow.fetchOne(db, key: EmulatorStore.hash(code))?.record else { return .unknown }
            if r.redeemedAt != nil {
                try EmulatorStore.revokeGrant(
                    db, id: r.grantId, oid: r.oid, clientId: r.clientId, policy: r.policy.lowercased(), issuedAt: r.createdAt)
                return .replayed(r)
            }
            try db.execute(sql: "UPDATE codes SET redeemed_at = ? WHERE hash = ?", arguments: [now, EmulatorStore.hash(code)])
            return .fresh(r)
        }
    }
}
