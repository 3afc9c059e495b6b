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

    func saveDeviceFlow(deviceCode: String, _ flow: DeviceFlow) throws {
        let data = String(decoding: try JSONEncoder().encode(flow), as: UTF8.self)
        try db.write { db in
            try db.execute(sql: "DELETE FROM device_flows WHERE expires_at < ?", arguments: [flow.createdAt - 3600])
            try db.execute(
                sql: "INSERT OR REPLACE INTO device_flows(hash, user_code, data, expires_at) VALUES (?, ?, ?, ?)",
                arguments: [Self.hash(deviceCode), flow.userCode, data, flow.expiresAt])
        }
    }

    /// A flow by its device code (`hash` given) or by the code a person typed.
    func deviceFlow(deviceCode: String) throws -> (hash: String, flow: DeviceFlow)? {
        try deviceFlow(sql: "SELECT hash, data FROM device_flows WHERE hash = ?", Self.hash(deviceCode))
    }

    func deviceFlow(userCode: String) throws -> (hash: String, flow: DeviceFlow)? {
        try deviceFlow(sql: "SELECT hash, data FROM device_flows WHERE user_code = ?", userCode.uppercased())
    }

    private func deviceFlow(sql: String, _ key: String) throws -> (hash: String, flow: DeviceFlow)? {
        guard let row = try db.read({ try Row.fetchOne($0, sql: sql, arguments: [key]) }) else { return nil }
        let data: String = row["data"]
        guard let flow = try? JSONDecoder().decode(DeviceFlow.self, from: Data(data.utf8)) else { return nil }
        return (row["hash"], flow)
    }

    func updateDeviceFlow(hash: String, _ flow: DeviceFlow) throws {
        let data = String(decoding: try JSONEncoder().encode(flow), as: UTF8.self)
        try db.write { try $0.execute(sql: "UPDATE device_flows SET data = ? WHERE hash = ?", arguments: [data, hash]) }
    }
}
