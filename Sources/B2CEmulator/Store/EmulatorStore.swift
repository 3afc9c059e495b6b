import B2CFastPath
import B2CProtocol
import Crypto
import _CryptoExtras
import Foundation
import GRDB
import NIOConcurrencyHelpers

/// The emulator's mutable state in SQLite: users, sessions, pending sign-in transactions, authorization
/// codes, refresh-token grants, the outbox of emailed codes, native-auth flows and its signing key.
/// Secrets (codes, session ids, continuation tokens) are stored only as SHA-256 hashes; refresh tokens are not stored at all
/// (sealed under the state's refresh-token key, their grants recorded).
public final class EmulatorStore: Sendable {
    /// The journey's calls to the developer's code (API connectors, authentication extensions), for `GET /_admin/callouts`.
    let callouts = CalloutLog()
    /// Every journey's steps in order, for `GET /_admin/journeys` and `b2c-emulator journeys`.
    let journeys = JourneyRecorder()

    /// A call to the developer's code: in the callout log, and in its journey's record (what was asked, what came back).
    func recordCallout(_ r: CalloutRecord) {
        callouts.append(r)
        var detail: [String: JSONValue] = [
            "kind": .string(r.kind), "url": .string(r.url), "attempts": JSONValue(r.attempts), "durationMs": JSONValue(r.durationMs),
            "outcome": .string(r.outcome), "request": r.request,
        ]
        if let status = r.status { detail["status"] = JSONValue(status) }
        if let response = r.response { detail["response"] = (try? JSONValue.parse(response)) ?? .string(response) }
        if let error = r.error { detail["error"] = .string(error) }
        journeys.note(r.journey, .callout, r.step, detail)
    }
    /// SAML assertions already taken (issuer and ID → until when they could be presented), so none is taken twice.
    private let usedAssertions = NIOLockedValueBox<[String: Int]>([:])

    func firstUse(ofAssertion key: String, until: Int, now: Int) -> Bool {
        usedAssertions.withLockedValue { used in
            used = used.filter { $0.value > now }
            return used.updateValue(until, forKey: key) == nil
        }
    }
    let db: any DatabaseWriter
    /// The parts of the state with types of their own.
    public let ssoSessions: SSOSessions
    let codes: AuthorizationCodes
    public let outbox: Outbox
    let nativeFlows: NativeFlows
    public let requests: RequestLog
    /// The state's refresh-token key: refresh tokens are sealed with it, not stored (RefreshTokens.swift).
    let refreshSeal: RefreshTokenSeal
    /// A file store's reads that every refresh grant makes, beside GRDB's pool (nil in memory).
    let directReads: DirectReads?

    public typealias SessionRecord = SSOSessions.Record
    typealias CodeRecord = AuthorizationCodes.Record
    typealias Redemption = AuthorizationCodes.Redemption
    public typealias Channel = Outbox.Channel
    public typealias Message = Outbox.Message
    typealias NativeFlow = NativeFlows.Flow
    typealias NativeFlowSpent = NativeFlows.Spent
    public typealias LogEntry = RequestLog.Entry

    /// Closes the database (its connections and files); the store is not used afterwards. For a host that starts and stops
    /// many tenants in one process (a test suite), where open files add up. The token log's waiting entries are written
    /// first.
    public func close() {
        requests.flush()
        directReads?.close()
        if let pool = db as? DatabasePool { try? pool.close() }
        if let queue = db as? DatabaseQueue { try? queue.close() }
    }

    public static func inMemory() throws -> EmulatorStore {
        try EmulatorStore(writer: DatabaseQueue())
    }

    public static func file(directory: URL) throws -> EmulatorStore {
        try FileManager.default.createDirectory(
            at: directory, withIntermediateDirectories: true,
            attributes: [.posixPermissions: 0o700])
        let path = directory.appendingPathComponent("emulator.sqlite").path
        var config = Configuration()
        config.busyMode = .timeout(10)
        // WAL with synchronous=NORMAL: a commit is not fsynced (a checkpoint is). The state survives the emulator being
        // killed; a power cut may lose the last grants, which a test tenant can afford. With FULL, every grant waited for
        // an fsync on the thread that serves it.
        config.prepareDatabase { db in try db.execute(sql: "PRAGMA synchronous = NORMAL") }
        // Two readers beside the writer: most of a tenant's work writes (grants, codes, sessions), and each reader holds
        // open files — a test suite runs many tenants in one process.
        config.maximumReaderCount = 2
        let pool = try DatabasePool(path: path, configuration: config)
        for suffix in ["", "-wal", "-shm"] {
            let p = path + suffix
            if FileManager.default.fileExists(atPath: p) {
                try? FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: p)
            }
        }
        return try EmulatorStore(writer: pool, directReads: DirectReads(path: path))
    }

    init(writer: any DatabaseWriter, directReads: DirectReads? = nil) throws {
        self.db = writer
        self.directReads = directReads
        (ssoSessions, codes, nativeFlows, requests) = (
            SSOSessions(db: writer), AuthorizationCodes(db: writer), NativeFlows(db: writer), RequestLog(db: writer)
        )
        outbox = Outbox(db: writer, journeys: journeys)
        try EmulatorSchema.migrator.migrate(writer)
        refreshSeal = try RefreshTokenSeal.load(writer)
    }

    static func hash(_ secret: String) -> String { Base64URL.encode(sha256(secret)) }

    /// SHA-256 of a string's UTF-8 from the system's libcrypto (the fast path's `Digest`), as the signer's: swift-crypto's
    /// `Data` round trips cost a refresh grant, which hashes three tokens, more than the digests themselves (bench/README.md).
    static func sha256(_ text: String) -> [UInt8] { B2CFastPath.Digest.sha256(utf8: text) }

    /// A GUID derived from a text (the same text, the same GUID): ids the seed may leave out, stable across restarts.
    static func derivedGUID(_ text: String) -> String {
        var b = Array(SHA256.hash(data: Data(text.utf8)).prefix(16))
        b[6] = (b[6] & 0x0f) | 0x50  // version 5-style (name-based)
        b[8] = (b[8] & 0x3f) | 0x80  // RFC 4122 variant
        let hex = b.map { String(format: "%02x", $0) }.joined()
        let parts = [
            hex.prefix(8), hex.dropFirst(8).prefix(4), hex.dropFirst(12).prefix(4), hex.dropFirst(16).prefix(4), hex.dropFirst(20),
        ]
        return parts.joined(separator: "-")
    }

    // MARK: settings

    /// A row of `settings`, as a GRDB record: a key and its text (the signing keys, the clock's offset, the MFA knobs, a
    /// mock provider's next answer, …).
    struct SettingRow: Codable, FetchableRecord, PersistableRecord {
        static let databaseTableName = "settings"
        var key: String, value: String
    }

    func setting(_ key: String) throws -> String? {
        try db.read { try SettingRow.fetchOne($0, key: key)?.value }
    }

    func setSetting(_ key: String, _ value: String) throws {
        try db.write { try SettingRow(key: key, value: value).insert($0, onConflict: .replace) }
    }
}

extension Database {
    /// The first row of a statement prepared once per connection (GRDB's statement cache): for the statements every grant
    /// runs, whose parsing (and GRDB's authorizer callbacks during it) cost more than their execution.
    func cachedRow(_ sql: String, _ arguments: StatementArguments) throws -> Row? {
        try Row.fetchOne(cachedStatement(sql: sql), arguments: arguments)
    }

    /// Executes a statement prepared once per connection.
    func cachedExecute(_ sql: String, _ arguments: StatementArguments) throws {
        try cachedStatement(sql: sql).execute(arguments: arguments)
    }
}
