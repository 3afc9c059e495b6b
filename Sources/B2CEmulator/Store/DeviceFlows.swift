import B2CProtocol
import Foundation
import GRDB

/// The device authorization grant's flows (RFC 8628): what the device asked for, and what the person did.
extension EmulatorStore {
    struct DeviceFlow: Codable, Sendable {
        enum Status: String, Codable, Sendable { case pending, approved, declined, redeemed }
        var clientId: String
        var scope: String
        var userCode: String
        var createdAt: Int
        var expiresAt: Int
        var interval: Int
        var lastPoll: Int?
        var status: Status = .pending
        /// The PKCE verifier of the journey the verification page starts, and the code it ended with.
        var verifier: String
        var code: String?
        var redirectUri: String
    }

    /// A row of `device_flows`, as a GRDB record: the device code's hash, the code a person types, the flow as JSON text,
    /// and when it ends (the flow's own `expiresAt`, kept as a column so that old flows are swept by it).
    struct DeviceFlowRow: Codable, FetchableRecord, PersistableRecord {
        static let databaseTableName = "device_flows"
        static let databaseColumnDecodingStrategy = DatabaseColumnDecodingStrategy.convertFromSnakeCase
        static let databaseColumnEncodingStrategy = DatabaseColumnEncodingStrategy.convertToSnakeCase
        enum Columns {
            static let userCode = Column("user_code"), data = Column("data"), expiresAt = Column("expires_at")
        }

        var hash: String, userCode: String, data: String, expiresAt: Int

        /// nil for a flow this tenant cannot read (a row of an older version): as good as gone.
        var flow: DeviceFlow? { try? JSONDecoder().decode(DeviceFlow.self, from: Data(data.utf8)) }

        static func json(_ flow: DeviceFlow) throws -> String { String(decoding: try JSONEncoder().encode(flow), as: UTF8.self) }
    }

    /// Stores a new flow (replacing one with the same device or user code), sweeping flows that ended an hour ago.
    func saveDeviceFlow(deviceCode: String, _ flow: DeviceFlow) throws {
        let row = DeviceFlowRow(
            hash: Self.hash(deviceCode), userCode: flow.userCode, data: try DeviceFlowRow.json(flow), expiresAt: flow.expiresAt)
        try db.write { db in
            try DeviceFlowRow.filter(DeviceFlowRow.Columns.expiresAt < flow.createdAt - 3600).deleteAll(db)
            try row.insert(db, onConflict: .replace)
        }
    }

    /// A flow by its device code (`hash` given) or by the code a person typed.
    func deviceFlow(deviceCode: String) throws -> (hash: String, flow: DeviceFlow)? {
        try deviceFlow { try DeviceFlowRow.fetchOne($0, key: Self.hash(deviceCode)) }
    }

    func deviceFlow(userCode: String) throws -> (hash: String, flow: DeviceFlow)? {
        try deviceFlow { try DeviceFlowRow.filter(DeviceFlowRow.Columns.userCode == userCode.uppercased()).fetchOne($0) }
    }

    private func deviceFlow(_ fetch: @Sendable (Database) throws -> DeviceFlowRow?) throws -> (hash: String, flow: DeviceFlow)? {
        guard let row = try db.read(fetch), let flow = row.flow else { return nil }
        return (row.hash, flow)
    }

    func updateDeviceFlow(hash: String, _ flow: DeviceFlow) throws {
        let data = try DeviceFlowRow.json(flow)
        try db.write { _ = try DeviceFlowRow.filter(key: hash).updateAll($0, DeviceFlowRow.Columns.data.set(to: data)) }
    }
}
