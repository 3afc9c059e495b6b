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
    /// The MFA columns of a row of `users`, as a GRDB record: what `MFAState` is made of (and, written only by
    /// `takeTOTPStep`, the authenticator's last step taken).
    struct MFARow: Decodable, FetchableRecord, TableRecord {
        static let databaseTableName = "users"
        static let databaseColumnDecodingStrategy = DatabaseColumnDecodingStrategy.convertFromSnakeCase
        enum Columns {
            static let phone = Column("phone"), phoneEnrolled = Column("phone_enrolled"), totpSecret = Column("totp_secret")
            static let totpEnrolled = Column("totp_enrolled"), risky = Column("risky"), mfaEmail = Column("mfa_email")
            static let mfaRequired = Column("mfa_required"), totpLastStep = Column("totp_last_step")
        }
        static var databaseSelection: [any SQLSelectable] {
            [
                Columns.phone, Columns.phoneEnrolled, Columns.totpSecret, Columns.totpEnrolled, Columns.risky, Columns.mfaEmail,
                Columns.mfaRequired,
            ]
        }

        var phone: String?, phoneEnrolled: Bool, totpSecret: String?, totpEnrolled: Bool, risky: Bool, mfaEmail: String?
        var mfaRequired: Bool

        var state: MFAState {
            MFAState(
                phone: phone, phoneEnrolled: phoneEnrolled, totpSecret: totpSecret, totpEnrolled: totpEnrolled, risky: risky,
                mfaEmail: mfaEmail, mfaRequired: mfaRequired)
        }
    }

    /// The user's MFA state; a user who is not there has none.
    func mfaState(oid: String) throws -> MFAState {
        try db.read { try MFARow.fetchOne($0, key: oid)?.state }
            ?? MFAState(phone: nil, phoneEnrolled: false, totpSecret: nil, totpEnrolled: false, risky: false)
    }

    /// Sets MFA columns of the user's row.
    private func updateMFA(oid: String, _ assignments: ColumnAssignment...) throws {
        try db.write { _ = try MFARow.filter(key: oid).updateAll($0, assignments) }
    }

    func setPhone(oid: String, _ phone: String?, enrolled: Bool) throws {
        try updateMFA(oid: oid, MFARow.Columns.phone.set(to: phone), MFARow.Columns.phoneEnrolled.set(to: enrolled))
    }

    func setTOTP(oid: String, secret: String?, enrolled: Bool) throws {
        try updateMFA(oid: oid, MFARow.Columns.totpSecret.set(to: secret), MFARow.Columns.totpEnrolled.set(to: enrolled))
    }

    /// Takes an authenticator code's time step for the user if it is later than the last one taken (RFC 6238 §5.2: the
    /// same code — or an earlier one — is not accepted twice), in one statement so parallel submits cannot both pass. Steps
    /// are times, so they stay comparable across a new secret: the enrolment's code counts too.
    func takeTOTPStep(oid: String, _ step: Int) throws -> Bool {
        let last = MFARow.Columns.totpLastStep
        return try db.write {
            try MFARow.filter(key: oid).filter(last == nil || last < step).updateAll($0, last.set(to: step)) == 1
        }
    }

    func setMFAEmail(oid: String, _ email: String?) throws { try updateMFA(oid: oid, MFARow.Columns.mfaEmail.set(to: email)) }

    func setMFARequired(oid: String, _ required: Bool) throws { try updateMFA(oid: oid, MFARow.Columns.mfaRequired.set(to: required)) }

    func setRisky(oid: String, _ risky: Bool) throws { try updateMFA(oid: oid, MFARow.Columns.risky.set(to: risky)) }

    /// Forgets the user's registered phone, authenticator and strong-authentication email: the next MFA sign-in enrols again
    /// (the portal's "Require re-register MFA").
    func resetMFA(oid: String) throws {
        try updateMFA(
            oid: oid, MFARow.Columns.phoneEnrolled.set(to: false), MFARow.Columns.totpSecret.set(to: nil),
            MFARow.Columns.totpEnrolled.set(to: false), MFARow.Columns.mfaEmail.set(to: nil))
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
