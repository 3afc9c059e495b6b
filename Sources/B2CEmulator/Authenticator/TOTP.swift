import B2CProtocol
import Crypto
import Foundation

/// Time-based one-time passwords (RFC 6238 over RFC 4226): HMAC-SHA-1, 30-second steps, six digits — what authenticator
/// apps compute from an `otpauth://totp/…` URI's secret. B2C's parameters are not documented; these are the defaults every
/// authenticator app assumes (the emulator's choice, docs/emulator.md).
enum TOTP {
    static let period = 30
    static let digits = 6

    /// The code of `secret` (base32) for the step that holds `time`.
    static func code(secret: String, at time: Int) -> String? {
        guard let key = Base32.decode(secret), !key.isEmpty else { return nil }
        return code(key: key, counter: UInt64(max(0, time) / period))
    }

    /// True when `code` is the code of the current step or of the one before or after it (a clock a little off).
    static func accepts(_ code: String, secret: String, at time: Int) -> Bool { step(of: code, secret: secret, at: time) != nil }

    /// The time step `code` is the code of — the current one, or the one before or after it — or nil.
    static func step(of code: String, secret: String, at time: Int) -> Int? {
        guard code.count == digits, let key = Base32.decode(secret), !key.isEmpty else { return nil }
        let step = max(0, time) / period
        return (step - 1...step + 1).first { $0 >= 0 && Self.code(key: key, counter: UInt64($0)) == code }
    }

    /// A new secret: 20 random bytes, base32 (what an authenticator app types or scans).
    static func newSecret() -> String { Base32.encode(Data(Random.bytes(20))) }

    /// `otpauth://totp/<issuer>:<account>?secret=…&issuer=…` (Google Authenticator's key-URI format).
    static func uri(secret: String, account: String, issuer: String) -> String {
        let allowed = CharacterSet.alphanumerics.union(CharacterSet(charactersIn: "-._~"))
        func esc(_ s: String) -> String { s.addingPercentEncoding(withAllowedCharacters: allowed) ?? s }
        return "otpauth://totp/\(esc(issuer)):\(esc(account))?secret=\(secret)&issuer=\(esc(issuer))&algorithm=SHA1&digits=6&period=30"
    }

    private static func code(key: Data, counter: UInt64) -> String {
        let message = withUnsafeBytes(of: counter.bigEndian) { Data($0) }
        let mac = Array(HMAC<Insecure.SHA1>.authenticationCode(for: message, using: SymmetricKey(data: key)))
        let offset = Int(mac[mac.count - 1] & 0x0F)
        let value =
            (UInt32(mac[offset] & 0x7F) << 24) | UInt32(mac[offset + 1]) << 16 | UInt32(mac[offset + 2]) << 8 | UInt32(mac[offset + 3])
        let text = String(value % 1_000_000)
        return String(repeating: "0", count: digits - text.count) + text
    }
}

/// RFC 4648 base32 (upper case, no padding on output; spaces, hyphens and case ignored on input).
enum Base32 {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567")

    static func encode(_ data: Data) -> String {
        var out = ""
        var buffer = 0, bits = 0
        for byte in data {
            buffer = buffer << 8 | Int(byte)
            bits += 8
            while bits >= 5 {
                out.append(alphabet[(buffer >> (bits - 5)) & 31])
                bits -= 5
            }
        }
        if bits > 0 { out.append(alphabet[(buffer << (5 - bits)) & 31]) }
        return out
    }

    static func decode(_ text: String) -> Data? {
        var out = Data()
        var buffer = 0, bits = 0
        for ch in text.uppercased() where ch != " " && ch != "-" && ch != "=" {
            guard let v = alphabet.firstIndex(of: ch) else { return nil }
            buffer = (buffer << 5 | v) & 0xFFFF
            bits += 5
            if bits >= 8 {
                out.append(UInt8((buffer >> (bits - 8)) & 0xFF))
                bits -= 8
            }
        }
        return out
    }
}
