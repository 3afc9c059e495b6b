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

    /// A row of `native_flows`, as a GRDB record: the token's hash, the flow's fields, its journey as JSON text.
    struct FlowRow: Codable, FetchableRecord, PersistableRecord {
        static let databaseTableName = "native_flows"
        static let databaseColumnDecodingStrategy = DatabaseColumnDecodingStrategy.convertFromSnakeCase
        static let databaseColumnEncodingStrategy = DatabaseColumnEncodingStrategy.convertToSnakeCase

        var hash: String
        var clientId: String, oid: String, stage: String, challengeTypes: String
        var otpHash: String?, otpIssuedAt: Int?, attempts: Int, expiresAt: Int, journey: String?

        init(hash: String, _ f: Flow) throws {
            self.hash = hash
            (clientId, oid, stage, challengeTypes) = (f.clientId, f.oid, f.stage.rawValue, f.challengeTypes)
            (otpHash, otpIssuedAt, attempts, expiresAt) = (f.otpHash, f.otpIssuedAt, f.attempts, f.expiresAt)
            journey = String(decoding: try JSONEncoder().encode(f.journey), as: UTF8.self)
        }

        /// nil for a stage this tenant does not know (a row of an older version).
        var flow: Flow? {
            guard let stage = NativeStage(rawValue: stage) else { return nil }
            return Flow(
                clientId: clientId, oid: oid, stage: stage, challengeTypes: challengeTypes, otpHash: otpHash, otpIssuedAt: otpIssuedAt,
                attempts: attempts, expiresAt: expiresAt,
                journey: journey.flatMap { try? JSONDecoder().decode(NativeJourney.self, from: Data($0.utf8)) } ?? NativeJourney())
        }
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
            try FlowRow(hash: EmulatorStore.hash(token), flow).insert(db)
        }
        return token
    }

    func flow(_ token: String) throws -> Flow? {
        try db.read { try FlowRow.fetchOne($0, key: EmulatorStore.hash(token))?.flow }
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
