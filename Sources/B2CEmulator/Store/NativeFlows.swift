import B2CProtocol
import Foundation
import GRDB

/// Native authentication's flows, each under its current continuation token (stored only as a hash): a token is spent
/// once, and a step replaces it with the next.
struct NativeFlows: Sendable {
    let db: any DatabaseWriter

    struct Flow {
        var clientId: String, oid: String, stage: NativeStage, challengeTypes: String
        var otpHash: String?, otpIssuedAt: Int?, attempts: Int, expiresAt: Int
        var journey = NativeJourney()
    }

    /// Stores the flow under a fresh continuation token, replacing the previous token of the same flow.
    /// A continuation token that was already spent (or ended) when a step tried to replace it: the step fails.
    struct Spent: Error {}

    func advance(_ flow: Flow, replacing old: String?) throws -> String {
        let token = Random.token(bytes: 48)
        try db.write { db in
            if let old {
                // Each token is spent once: two requests racing with one token cannot both go on.
                try db.execute(sql: "DELETE FROM native_flows WHERE hash = ?", arguments: [EmulatorStore.hash(old)])
                guard db.changesCount == 1 else { throw Spent() }
            }
            try db.execute(
                sql: """
                    INSERT INTO native_flows(
                        hash, client_id, oid, stage, challenge_types, otp_hash, otp_issued_at, attempts, expires_at, journey)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                    """,
                arguments: [
                    EmulatorStore.hash(token), flow.clientId, flow.oid, flow.stage.rawValue, flow.challengeTypes, flow.otpHash,
                    flow.otpIssuedAt, flow.attempts, flow.expiresAt,
                    String(decoding: try JSONEncoder().encode(flow.journey), as: UTF8.self),
                ])
        }
        return token
    }

    func flow(_ token: String) throws -> Flow? {
        try db.read { db in
            guard let row = try Row.fetchOne(db, sql: "SELECT * FROM native_flows WHERE hash = ?", arguments: [EmulatorStore.hash(token)]),
                let stage = NativeStage(rawValue: row["stage"])
            else { return nil }
            return Flow(
                clientId: row["client_id"], oid: row["oid"], stage: stage, challengeTypes: row["challenge_types"],
                otpHash: row["otp_hash"], otpIssuedAt: row["otp_issued_at"], attempts: row["attempts"],
                expiresAt: row["expires_at"],
                journey: (row["journey"] as String?).flatMap { try? JSONDecoder().decode(NativeJourney.self, from: Data($0.utf8)) }
                    ?? NativeJourney())
        }
    }

    /// Takes one of the flow's `cap` tries at a code, atomically (parallel guesses count each); the number of this try, or
    /// nil when none is left (or the flow is gone).
    func takeAttempt(_ token: String, cap: Int) throws -> Int? {
        try db.write {
            try Int.fetchOne(
                $0, sql: "UPDATE native_flows SET attempts = attempts + 1 WHERE hash = ? AND attempts < ? RETURNING attempts",
                arguments: [EmulatorStore.hash(token), cap])
        }
    }

    /// Ends the flow of a token the step redeems; false when another request spent it first.
    func spend(_ token: String) throws -> Bool {
        try db.write {
            try $0.execute(sql: "DELETE FROM native_flows WHERE hash = ?", arguments: [EmulatorStore.hash(token)])
            return $0.changesCount == 1
        }
    }

    func end(_ token: String) throws {
        try db.write { try $0.execute(sql: "DELETE FROM native_flows WHERE hash = ?", arguments: [EmulatorStore.hash(token)]) }
    }
}
