import B2CProtocol
import Foundation
import GRDB

/// The outbox: every code the tenant sent (email, text, call), for `GET /_admin/outbox` and the tests; each send is also
/// in its journey's record.
public struct Outbox: Sendable {
    let db: any DatabaseWriter
    let journeys: JourneyRecorder

    /// How a code reached the person: an email, a text message, or a call that reads it out.
    public enum Channel: String, Sendable, Codable, DatabaseValueConvertible { case email, sms, voice }

    /// A row of `outbox`, as a GRDB record (its columns are the properties' names in snake case).
    public struct Message: Sendable, Codable, FetchableRecord, PersistableRecord {
        public static let databaseTableName = "outbox"
        public static let databaseColumnDecodingStrategy = DatabaseColumnDecodingStrategy.convertFromSnakeCase
        public static let databaseColumnEncodingStrategy = DatabaseColumnEncodingStrategy.convertToSnakeCase

        /// nil until inserted (the table numbers its rows).
        public var id: Int?
        public var recipient: String, purpose: String, code: String, createdAt: Int
        public var channel: Channel = .email
        public var expiresAt: Int? = nil
        /// The authorize transaction (or native-auth flow) the code belongs to.
        public var journey: String? = nil
        var json: JSONValue {
            var o: [String: JSONValue] = [
                "id": JSONValue(id ?? 0), "to": .string(recipient), "purpose": .string(purpose), "code": .string(code),
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
            try Message(
                recipient: recipient, purpose: purpose, code: code, createdAt: now, channel: channel, expiresAt: expiresAt, journey: journey
            ).insert($0)
        }
        journeys.note(
            journey, .code, "code sent", ["to": .string(recipient), "purpose": .string(purpose), "channel": .string(channel.rawValue)])
    }

    /// Newest first.
    public func messages(to recipient: String?) throws -> [Message] {
        try db.read { db in
            // `recipient` is COLLATE NOCASE in the table: the comparison is SQLite's.
            let all = Message.order(Column("id").desc)
            return try (recipient.map { all.filter(Column("recipient") == $0) } ?? all).fetchAll(db)
        }
    }
}
