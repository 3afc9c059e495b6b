import B2CProtocol
import Foundation
import GRDB

/// The outbox: every code the tenant sent (email, text, call), for `GET /_admin/outbox` and the tests; each send is also
/// in its journey's record.
public struct Outbox: Sendable {
    let db: any DatabaseWriter
    let journeys: JourneyRecorder

    /// How a code reached the person: an email, a text message, or a call that reads it out.
    public enum Channel: String, Sendable, Codable { case email, sms, voice }

    public struct Message: Sendable {
        public var id: Int, recipient: String, purpose: String, code: String, createdAt: Int
        public var channel: Channel = .email
        public var expiresAt: Int? = nil
        /// The authorize transaction (or native-auth flow) the code belongs to.
        public var journey: String? = nil
        var json: JSONValue {
            var o: [String: JSONValue] = [
                "id": JSONValue(id), "to": .string(recipient), "purpose": .string(purpose), "code": .string(code),
                "sentAt": JSONValue(createdAt), "channel": .string(channel.rawValue),
            ]
            if let expiresAt { o["expiresAt"] = JSONValue(expiresAt) }
            if let journey { o["journey"] = .string(journey) }
            return .object(o)
        }
    }

    func send(
        to recipient: String, purpose: String, code: String, now: Int, channel: Channel = .email, expiresAt: Int? = nil,
        journey: String? = nil
    ) throws {
        try db.write {
            try $0.execute(
                sql: """
                    INSERT INTO outbox(recipient, purpose, code, created_at, channel, expires_at, journey) VALUES (?, ?, ?, ?, ?, ?, ?)
                    """, arguments: [recipient, purpose, code, now, channel.rawValue, expiresAt, journey])
        }
        journeys.note(
            journey, .code, "code sent", ["to": .string(recipient), "purpose": .string(purpose), "channel": .string(channel.rawValue)])
    }

    /// Newest first.
    public func messages(to recipient: String?) throws -> [Message] {
        try db.read { db in
            let rows =
                try recipient.map {
                    try Row.fetchAll(db, sql: "SELECT * FROM outbox WHERE recipient = ? ORDER BY id DESC", arguments: [$0])
                } ?? Row.fetchAll(db, sql: "SELECT * FROM outbox ORDER BY id DESC")
            return rows.map {
                Message(
                    id: $0["id"], recipient: $0["recipient"], purpose: $0["purpose"], code: $0["code"], createdAt: $0["created_at"],
                    channel: Channel(rawValue: $0["channel"]) ?? .email, expiresAt: $0["expires_at"], journey: $0["journey"])
            }
        }
    }
}
