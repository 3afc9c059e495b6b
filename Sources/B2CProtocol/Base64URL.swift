import Foundation

/// base64url without padding (RFC 4648 §5), as used by JWTs, PKCE and `client_info`.
public enum Base64URL {
    static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)
    /// Byte → 6-bit value, 0xFF outside the alphabet.
    static let values: [UInt8] = {
        var table = [UInt8](repeating: 0xFF, count: 256)
        for (i, c) in alphabet.enumerated() { table[Int(c)] = UInt8(i) }
        return table
    }()

    /// Encoded directly from the alphabet into the string's own storage (the emulator signs two JWTs per token answer;
    /// Foundation's base64 plus three string replacements, and later an array per quantum, cost it whole per cents).
    public static func encode<D: DataProtocol>(_ data: D) -> String {
        // (Read in place where the bytes are contiguous, as an array's and `Data`'s are.)
        if let encoded = data.withContiguousStorageIfAvailable(encode(buffer:)) { return encoded }
        return [UInt8](data).withUnsafeBufferPointer(encode(buffer:))
    }

    private static func encode(buffer bytes: UnsafeBufferPointer<UInt8>) -> String {
        let length = bytes.count / 3 * 4 + [0, 2, 3][bytes.count % 3]
        guard length > 0 else { return "" }
        return String(unsafeUninitializedCapacity: length) { out in
            alphabet.withUnsafeBufferPointer { a in
                var i = 0
                var o = 0
                func put(_ n: UInt32, _ count: Int) {
                    for k in 0..<count { out[o + k] = a[Int(n >> (18 - 6 * UInt32(k)) & 63)] }
                    o += count
                }
                while i + 3 <= bytes.count {
                    put(UInt32(bytes[i]) << 16 | UInt32(bytes[i + 1]) << 8 | UInt32(bytes[i + 2]), 4)
                    i += 3
                }
                switch bytes.count - i {
                case 1: put(UInt32(bytes[i]) << 16, 2)
                case 2: put(UInt32(bytes[i]) << 16 | UInt32(bytes[i + 1]) << 8, 3)
                default: break
                }
            }
            return length
        }
    }

    public static func encode(_ string: String) -> String {
        var string = string
        return string.withUTF8(encode(buffer:))
    }

    /// Decodes base64url with or without padding ('=' is ignored); returns nil on any character outside the
    /// alphabet and on a length no encoding produces.
    public static func decode(_ string: some StringProtocol) -> Data? {
        var sextets = [UInt8]()
        sextets.reserveCapacity(string.utf8.count)
        for c in string.utf8 where c != UInt8(ascii: "=") {
            let v = values[Int(c)]
            if v == 0xFF { return nil }
            sextets.append(v)
        }
        if sextets.count % 4 == 1 { return nil }
        var out = Data(capacity: sextets.count * 3 / 4)
        var i = 0
        while i + 4 <= sextets.count {
            let n = UInt32(sextets[i]) << 18 | UInt32(sextets[i + 1]) << 12 | UInt32(sextets[i + 2]) << 6 | UInt32(sextets[i + 3])
            out.append(contentsOf: [UInt8(n >> 16 & 0xFF), UInt8(n >> 8 & 0xFF), UInt8(n & 0xFF)])
            i += 4
        }
        switch sextets.count - i {
        case 2:
            let n = UInt32(sextets[i]) << 18 | UInt32(sextets[i + 1]) << 12
            out.append(UInt8(n >> 16 & 0xFF))
        case 3:
            let n = UInt32(sextets[i]) << 18 | UInt32(sextets[i + 1]) << 12 | UInt32(sextets[i + 2]) << 6
            out.append(contentsOf: [UInt8(n >> 16 & 0xFF), UInt8(n >> 8 & 0xFF)])
        default: break
        }
        return out
    }
}

/// Random identifiers and secrets.
public enum Random {
    /// `count` random bytes, base64url-encoded.
    public static func token(bytes count: Int = 32) -> String {
        // Eight bytes per draw: the system generator asks the kernel once per draw, so a byte at a time was a system call
        // per byte (48 for a refresh token).
        var generator = SystemRandomNumberGenerator()
        var bytes: [UInt8] = []
        bytes.reserveCapacity(count + 7)
        while bytes.count < count { withUnsafeBytes(of: generator.next()) { bytes += $0 } }
        return Base64URL.encode(bytes.prefix(count))
    }

    /// A string of `length` decimal digits.
    public static func digits(_ length: Int) -> String {
        String((0..<length).map { _ in Character(String(Int.random(in: 0...9))) })
    }
}
