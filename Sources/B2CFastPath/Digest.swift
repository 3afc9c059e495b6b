import CStoreCrypto

/// SHA-256 and the encodings the store uses, over the system's libcrypto (CStoreCrypto): what the fast path needs without Foundation
/// (whose start alone costs a cache hit more than its database lookup).
public enum Digest {
    public static func sha256(_ bytes: [UInt8]) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: 32)
        bytes.withUnsafeBufferPointer { b in b2c_sha256(b.baseAddress, b.count, &out) }
        return out
    }

    /// SHA-256 of a string's UTF-8, read in place (the tenant hashes tokens of a kilobyte and more per request).
    public static func sha256(utf8 text: String) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: 32)
        var text = text
        text.withUTF8 { b in b2c_sha256(b.baseAddress, b.count, &out) }
        return out
    }

    /// SHA-256 in lower-case hex.
    public static func sha256Hex(_ bytes: [UInt8]) -> String { hex(sha256(bytes)) }

    public static func hex(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var out = [UInt8]()
        out.reserveCapacity(bytes.count * 2)
        for b in bytes {
            out.append(digits[Int(b >> 4)])
            out.append(digits[Int(b & 15)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Base64url without padding.
    public static func base64URL(_ bytes: [UInt8]) -> String {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)
        var out = [UInt8]()
        var i = 0
        while i < bytes.count {
            let n =
                (UInt32(bytes[i]) << 16) | (i + 1 < bytes.count ? UInt32(bytes[i + 1]) << 8 : 0)
                | (i + 2 < bytes.count ? UInt32(bytes[i + 2]) : 0)
            let chars = min(4, (bytes.count - i) * 4 / 3 + ((bytes.count - i) % 3 == 0 ? 0 : 1))
            for j in 0..<chars { out.append(alphabet[Int((n >> (18 - 6 * UInt32(j))) & 63)]) }
            i += 3
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Standard base64 as Foundation's `Data(base64Encoded:)` reads it after the surrounding whitespace is trimmed: padded
    /// to a multiple of four, `=` only at the end; nil otherwise.
    public static func base64DecodeStrict(_ text: String) -> [UInt8]? {
        let whitespace: Set<UInt8> = [0x20, 0x09, 0x0a, 0x0d, 0x0b, 0x0c]
        var bytes = Array(text.utf8)[...]
        while let f = bytes.first, whitespace.contains(f) { bytes = bytes.dropFirst() }
        while let l = bytes.last, whitespace.contains(l) { bytes = bytes.dropLast() }
        guard bytes.count % 4 == 0 else { return nil }
        let padding = bytes.reversed().prefix { $0 == UInt8(ascii: "=") }.count
        guard padding <= 2, !bytes.dropLast(padding).contains(UInt8(ascii: "=")),
            !bytes.contains(where: { whitespace.contains($0) })
        else { return nil }
        return base64Decode(String(decoding: bytes, as: UTF8.self))
    }

    /// Standard base64 (with or without padding, whitespace around it ignored); nil when it is not base64.
    public static func base64Decode(_ text: String) -> [UInt8]? {
        var values: [UInt8] = []
        for c in text.utf8 {
            switch c {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"): values.append(c - UInt8(ascii: "A"))
            case UInt8(ascii: "a")...UInt8(ascii: "z"): values.append(c - UInt8(ascii: "a") + 26)
            case UInt8(ascii: "0")...UInt8(ascii: "9"): values.append(c - UInt8(ascii: "0") + 52)
            case UInt8(ascii: "+"): values.append(62)
            case UInt8(ascii: "/"): values.append(63)
            case UInt8(ascii: "="), UInt8(ascii: " "), UInt8(ascii: "\n"), UInt8(ascii: "\r"), UInt8(ascii: "\t"): continue
            default: return nil
            }
        }
        guard values.count % 4 != 1 else { return nil }
        var out: [UInt8] = []
        var i = 0
        while i < values.count {
            let chunk = values[i..<min(i + 4, values.count)]
            var n: UInt32 = 0
            for (j, v) in chunk.enumerated() { n |= UInt32(v) << (18 - 6 * UInt32(j)) }
            let bytes = chunk.count - 1
            for j in 0..<bytes { out.append(UInt8((n >> (16 - 8 * UInt32(j))) & 0xff)) }
            i += 4
        }
        return out
    }
}
