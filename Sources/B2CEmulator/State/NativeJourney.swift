import B2CProtocol
import Foundation

/// What a native-auth journey carries from one step to the next beyond its stage and one-time code: kept as JSON beside
/// the continuation token (`native_flows.journey`).
struct NativeJourney: Codable, Sendable, Equatable {
    /// The journey's id in the recorder (and the outbox), the same from the first call to the last.
    var id: String? = nil
    /// What the client said it can handle on its first request (`mfa_required`, `registration_required`).
    var capabilities: [String] = []
    /// The first factor was a code by email (code sign-in, passwordless sign-up): email cannot be the second factor too.
    var firstFactorByEmail: Bool? = nil

    /// Sign-up: the address being signed up, whether its code was entered, the password's salted hash once given, whether
    /// the sign-up takes a password at all (the client offered `password`), and the attributes given so far (wire names
    /// already mapped to the user flow's, values typed).
    var email: String?
    var verified = false
    var credential: EmulatorStore.PasswordCredential?
    var wantsPassword = false
    var attributes: [String: AttributeValue] = [:]

    /// MFA and method registration: the method challenged (its id), its channel (`email`, `sms`) and where the code went.
    var methodID: String?
    var channel: String?
    var target: String?

    /// Password reset: how many times the client asked whether the new password is in place.
    var polls = 0
    /// How many codes this flow has sent (the first and every resend); capped.
    var codesSent: Int? = nil

    /// An attribute's value as the user flow types it.
    enum AttributeValue: Codable, Sendable, Equatable {
        case string(String), bool(Bool), int(Int)

        var json: JSONValue {
            switch self {
            case .string(let s): .string(s)
            case .bool(let b): .bool(b)
            case .int(let n): JSONValue(n)
            }
        }

        var text: String {
            switch self {
            case .string(let s): s
            case .bool(let b): b ? "true" : "false"
            case .int(let n): String(n)
            }
        }
    }
}
