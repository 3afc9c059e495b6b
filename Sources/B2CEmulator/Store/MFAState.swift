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
    /// The email registered as a strong-authentication method (native auth's `email` method); nil: none yet.
    public var mfaEmail: String? = nil
    /// MFA for this user whatever the user flow says (a Conditional Access policy aimed at them).
    public var mfaRequired = false

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
            "risky": .bool(risky), "mfaEmail": mfaEmail.map(JSONValue.string) ?? .null, "mfaRequired": .bool(mfaRequired),
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
                db,
                sql: """
                    SELECT phone, phone_enrolled, totp_secret, totp_enrolled, risky, mfa_email, mfa_required FROM users WHERE oid = ?
                    """, arguments: [oid])
            return MFAState(
                phone: row?["phone"], phoneEnrolled: row?["phone_enrolled"] ?? false, totpSecret: row?["totp_secret"],
                totpEnrolled: row?["totp_enrolled"] ?? false, risky: row?["risky"] ?? false, mfaEmail: row?["mfa_email"],
                mfaRequired: row?["mfa_required"] ?? false)
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

    /// Takes an authenticator code's time step for the user if it is later than the last one taken (RFC 6238 §5.2: the
    /// same code — or an earlier one — is not accepted twice), in one statement so parallel submits cannot both pass. Steps
    /// are times, so they stay comparable across a new secret: the enrolment's code counts too.
    func takeTOTPStep(oid: String, _ step: Int) throws -> Bool {
        try db.write {
            try $0.execute(
                sql: "UPDATE users SET totp_last_step = ? WHERE oid = ? AND (totp_last_step IS NULL OR totp_last_step < ?)",
                arguments: [step, oid, step])
            return $0.changesCount == 1
        }
    }

    func setMFAEmail(oid: String, _ email: String?) throws {
        try db.write { try $0.execute(sql: "UPDATE users SET mfa_email = ? WHERE oid = ?", arguments: [email, oid]) }
    }

    func setMFARequired(oid: String, _ required: Bool) throws {
        try db.write { try $0.execute(sql: "UPDATE users SET mfa_required = ? WHERE oid = ?", arguments: [required, oid]) }
    }

    func setRisky(oid: String, _ risky: Bool) throws {
        try db.write { try $0.execute(sql: "UPDATE users SET risky = ? WHERE oid = ?", arguments: [risky, oid]) }
    }

    /// Forgets the user's registered phone, authenticator and strong-authentication email: the next MFA sign-in enrols again
    /// (the portal's "Require re-register MFA").
    func resetMFA(oid: String) throws {
        try db.write {
            try $0.execute(
                sql: "UPDATE users SET phone_enrolled = 0, totp_secret = NULL, totp_enrolled = 0, mfa_email = NULL WHERE oid = ?",
                arguments: [oid])
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
