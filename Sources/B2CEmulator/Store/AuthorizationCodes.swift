import B2CProtocol
import Foundation
import GRDB

/// Authorization codes: each redeemed once, atomically; a replay revokes what the first redemption issued. Codes are
/// stored only as hashes.
struct AuthorizationCodes: Sendable {
    let db: any DatabaseWriter

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

    func save(_ code: String, _ r: Record) throws {
        try db.write {
            try $0.execute(
                sql: """
                    INSERT INTO codes(hash, client_id, redirect_uri, policy, scopes, nonce, challenge, challenge_method, oid,
                                      auth_time, new_user, created_at, grant_id, redirect_type, idp_access_token, extra_claims)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                    """,
                arguments: [
                    EmulatorStore.hash(code), r.clientId, r.redirectUri, r.policy, r.scopes, r.nonce, r.challenge,
                    r.challengeMethod, r.oid, r.authTime, r.newUser, r.createdAt, r.grantId, r.redirectType.rawValue,
                    r.idpAccessToken, r.extraClaims.isEmpty ? nil : JSONValue.object(r.extraClaims).serialized(),
                ])
        }
    }

    enum Redemption { case unknown, replayed(Record), fresh(Record) }

    /// Marks a code redeemed, atomically, so that only one request can ever redeem it.
    /// A replay also revokes the refresh tokens that the first redemption issued (RFC 6749 §4.1.2).
    func redeem(_ code: String, now: Int) throws -> Redemption {
        try db.write { db in
            guard let row = try Row.fetchOne(db, sql: "SELECT * FROM codes WHERE hash = ?", arguments: [EmulatorStore.hash(code)]) else {
                return .unknown
            }
            let r = Record(
                clientId: row["client_id"], redirectUri: row["redirect_uri"], policy: row["policy"],
                scopes: row["scopes"], nonce: row["nonce"], challenge: row["challenge"],
                challengeMethod: row["challenge_method"], oid: row["oid"], authTime: row["auth_time"],
                newUser: row["new_user"], createdAt: row["created_at"], redeemedAt: row["redeemed_at"],
                grantId: row["grant_id"], redirectType: EmulatorSeed.RedirectType(rawValue: row["redirect_type"]) ?? .publicClient,
                idpAccessToken: row["idp_access_token"],
                extraClaims: (row["extra_claims"] as String?).flatMap { try? JSONValue.parse($0).objectValue } ?? [:])
            if r.redeemedAt != nil {
                try db.execute(sql: "UPDATE refresh_tokens SET revoked = 1 WHERE grant_id = ?", arguments: [r.grantId])
                return .replayed(r)
            }
            try db.execute(sql: "UPDATE codes SET redeemed_at = ? WHERE hash = ?", arguments: [now, EmulatorStore.hash(code)])
            return .fresh(r)
        }
    }
}
