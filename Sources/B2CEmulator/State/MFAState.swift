import B2CProtocol
import Foundation
import GRDB

/// What the tenant knows of a user's second factors: the registered phone, the authenticator's secret, and whether a
/// sign-in of theirs is risky (conditional MFA).
public struct MFAState: Sendable, Equatable {
    public var phone: String?
    public var phoneEnrolled: Bool
    public var totpSecret: String?
    public var totpEnrolled: Bool
    public var risky: Bool

    public func enrolled(_ method: EmulatorSeed.MFA.Method) -> Bool {
        switch method {
        case .email: true
        case .phone: phoneEnrolled && phone != nil
        case .totp: totpEnrolled && totpSecret != nil
        }
    }

    var json: JSONValue {
        [
            "phone": phone.map(JSONValue.string) ?? .null, "phoneEnrolled": .bool(phoneEnrolled), "totpEnrolled": .bool(totpEnrolled),
            "risky": .bool(risky),
        ]
    }
}

/// The tenant's MFA test knobs (`POST /_admin/mfa`): a fixed code for every code sent, numbers that cannot be reached,
/// and throttling of the phone channel.
public struct MFAKnobs: Sendable, Codable, Equatable {
    public var fixedCode: String?
    public var unreachable: [String] = []
    public var throttled = false
}

extension EmulatorStore {
    func mfaState(oid: String) throws -> MFAState {
        try db.read { db in
            let row = try Row.fetchOne(
                db, sql: "SELECT phone, phone_enrolled, totp_secret, totp_enrolled, risky FROM users WHERE oid = ?", arguments: [oid])
            return MFAState(
                phone: row?["phone"], phoneEnrolled: row?["phone_enrolled"] ?? false, totpSecret: row?["totp_secret"],
                totpEnrolled: row?["totp_enrolled"] ?? false, risky: row?["risky"] ?? false)
        }
    }

    func setPhone(oid: String, _ phone: String?, enrolled: Bool) throws {
        try db.write {
            try $0.execute(sql: "UPDATE users SET phone = ?, phone_enrolled = ? WHERE oid = ?", arguments: [phone, enrolled, oid])
        }
    }

    func setTOTP(oid: String, secret: String?, enrolled: Bool) throws {
        try db.write {
            try $0.execute(sql: "UPDATE users SET totp_secret = ?, totp_enrolled = ? WHERE oid = ?", arguments: [secret, enrolled, oid])
        }
    }

    func setRisky(oid: String, _ risky: Bool) throws {
        try db.write { try $0.execute(sql: "UPDATE users SET risky = ? WHERE oid = ?", arguments: [risky, oid]) }
    }

    /// Forgets the user's registered phone and authenticator: the next MFA sign-in enrols again (the portal's "Require
    /// re-register MFA").
    func resetMFA(oid: String) throws {
        try db.write {
            try $0.execute(
                sql: "UPDATE users SET phone_enrolled = 0, totp_secret = NULL, totp_enrolled = 0 WHERE oid = ?", arguments: [oid])
        }
    }

    var mfaKnobs: MFAKnobs {
        get throws {
            guard let text = try setting("mfa_knobs") else { return MFAKnobs() }
            return (try? JSONDecoder().decode(MFAKnobs.self, from: Data(text.utf8))) ?? MFAKnobs()
        }
    }

    func setMFAKnobs(_ knobs: MFAKnobs) throws {
        try setSetting("mfa_knobs", String(decoding: try JSONEncoder().encode(knobs), as: UTF8.self))
    }
}
