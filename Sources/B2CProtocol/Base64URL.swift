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
        let count = bytes.count
        let length = count / 3 * 4 + (count % 3 == 0 ? 0 : count % 3 + 1)
        guard length > 0, let source = bytes.baseAddress else { return "" }
        return String(unsafeUninitializedCapacity: length) { out in
            alphabet.withUnsafeBufferPointer { table in
                // Plain pointers and four stores per quantum: a nested function writing through captured indices kept
                // the compiler from unrolling it (8.5 instructions per byte of a refresh grant's two tokens).
                guard let a = table.baseAddress, let o = out.baseAddress else { return }
                func sextet(_ n: UInt32, _ shift: UInt32) -> UInt8 { a[Int(n >> shift & 63)] }
                var i = 0
                var w = 0
                while i + 3 <= count {
                    let n = UInt32(source[i]) << 16 | UInt32(source[i + 1]) << 8 | UInt32(source[i + 2])
                    o[w] = sextet(n, 18)
                    o[w + 1] = sextet(n, 12)
                    o[w + 2] = sextet(n, 6)
                    o[w + 3] = sextet(n, 0)
                    i += 3
                    w += 4
                }
                switch count - i {
                case 1:
                    let n = UInt32(source[i]) << 16
                    o[w] = sextet(n, 18)
                    o[w + 1] = sextet(n, 12)
                case 2:
                    let n = UInt32(source[i]) << 16 | UInt32(source[i + 1]) << 8
                    o[w] = sextet(n, 18)
                    o[w + 1] = sextet(n, 12)
                    o[w + 2] = sextet(n, 6)
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
    public static func decode(_ string: some StringProtocol) -> Data? { decodeBytes(string).map { Data($0) } }

    /// The same, as bytes: read in place and written into the array's own storage (a refresh grant opens its token's three
    /// parts; an array per quantum appended to `Data` cost it two per cent).
    public static func decodeBytes(_ string: some StringProtocol) -> [UInt8]? {
        if let decoded = string.utf8.withContiguousStorageIfAvailable({ decode(buffer: $0) }) { return decoded }
        return Array(string.utf8).withUnsafeBufferPointer { decode(buffer: $0) }
    }

    /// `canonical`: also nil when the last character carries bits the bytes do not use (RFC 4648 §3.5), so that one byte
    /// string has one encoding — for a token, where another spelling of the same bytes must not be taken as it.
    public static func decode(buffer: UnsafeBufferPointer<UInt8>, canonical: Bool = false) -> [UInt8]? {
        var sextets = 0
        for c in buffer where c != UInt8(ascii: "=") { sextets += 1 }
        guard sextets % 4 != 1 else { return nil }
        var valid = true
        let out = [UInt8](unsafeUninitializedCapacity: sextets / 4 * 3 + max(0, sextets % 4 - 1)) { o, initialized in
            values.withUnsafeBufferPointer { table in
                var n: UInt32 = 0
                var k = 0
                var w = 0
                for c in buffer where c != UInt8(ascii: "=") {
                    let v = table[Int(c)]
                    if v == 0xFF {
                        valid = false
                        break
                    }
                    n = n << 6 | UInt32(v)
                    k += 1
                    if k == 4 {
                        o[w] = UInt8(truncatingIfNeeded: n >> 16)
                        o[w + 1] = UInt8(truncatingIfNeeded: n >> 8)
                        o[w + 2] = UInt8(truncatingIfNeeded: n)
                        (w, k, n) = (w + 3, 0, 0)
                    }
                }
                if canonical && (k == 2 && n & 0xF != 0 || k == 3 && n & 0x3 != 0) { valid = false }
                if valid && k == 2 {
                    o[w] = UInt8(truncatingIfNeeded: n >> 4)
                    w += 1
                } else if valid && k == 3 {
                    o[w] = UInt8(truncatingIfNeeded: n >> 10)
                    o[w + 1] = UInt8(truncatingIfNeeded: n >> 2)
                    w += 2
                }
                initialized = w
            }
        }
        return valid ? out : nil
    }
}

/// Random identifiers and secrets.
public enum Random {
    /// `count` random bytes, base64url-encoded.
    public static func token(bytes count: Int = 32) -> String {
        Base64URL.encode(bytes(count))
    }

    /// `count` bytes from the kernel's generator: one `getentropy` call per 256 bytes (the system generator asks the
    /// kernel once per eight bytes: six system calls for 48 bytes), or, where that call fails, the system generator eight
    /// bytes a draw.
    public static func bytes(_ count: Int) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        guard count > 0 else { return bytes }
        #if canImport(Glibc)
        let filled = bytes.withUnsafeMutableBytes { buffer in
            stride(from: 0, to: buffer.count, by: 256).allSatisfy { getentropy(buffer.baseAddress! + $0, min(256, buffer.count - $0)) == 0 }
        }
        if filled { return bytes }
        #endif
        return generatorBytes(count)
    }

    /// `count` bytes from the system generator, eight bytes a draw.
    package static func generatorBytes(_ count: Int) -> [UInt8] {
        var generator = SystemRandomNumberGenerator()
        var bytes: [UInt8] = []
        bytes.reserveCapacity(count + 7)
        while bytes.count < count { withUnsafeBytes(of: generator.next()) { bytes += $0 } }
        return Array(bytes.prefix(count))
    }

    /// A string of `length` decimal digits.
    public static func digits(_ length: Int) -> String {
        String((0..<length).map { _ in Character(String(Int.random(in: 0...9))) })
    }
}
