import Foundation

/// A QR code (ISO/IEC 18004) of a short text in byte mode, error correction level M, versions 1–10 (up to 213 bytes):
/// what the TOTP enrolment page shows for its `otpauth://` URI, so that an authenticator app — or a test decoding the
/// image — reads it as it would B2C's.
struct QRCode {
    let size: Int
    /// `modules[y][x]`: true is dark.
    private(set) var modules: [[Bool]]
    private var reserved: [[Bool]]

    /// Data codewords, error-correction codewords per block, and the blocks' data lengths, per version (level M).
    private static let levelM: [(data: Int, ec: Int, blocks: [Int])] = [
        (16, 10, [16]), (28, 16, [28]), (44, 26, [44]), (64, 18, [32, 32]), (86, 24, [43, 43]),
        (108, 16, [27, 27, 27, 27]), (124, 18, [31, 31, 31, 31]), (154, 22, [38, 38, 39, 39]), (182, 22, [36, 36, 36, 37, 37]),
        (216, 26, [43, 43, 43, 43, 44]),
    ]
    private static let alignment: [[Int]] = [
        [], [6, 18], [6, 22], [6, 26], [6, 30], [6, 34], [6, 22, 38], [6, 24, 42], [6, 26, 46], [6, 28, 50],
    ]
    private static let versionInfo: [Int: Int] = [7: 0x07C94, 8: 0x085BC, 9: 0x09A99, 10: 0x0A4D3]

    struct TooLong: Error {}

    init(_ text: String) throws {
        let bytes = Array(text.utf8)
        guard let version = (1...10).first(where: { Self.capacity($0) >= bytes.count }) else { throw TooLong() }
        size = 17 + 4 * version
        modules = Array(repeating: Array(repeating: false, count: size), count: size)
        reserved = modules
        placeFunctionPatterns(version)
        placeData(Self.codewords(bytes, version: version))
        var best: (penalty: Int, modules: [[Bool]])?
        for mask in 0..<8 {
            var candidate = self
            candidate.applyMask(mask)
            candidate.placeFormat(mask)
            let p = candidate.penalty()
            if best == nil || p < best!.penalty { best = (p, candidate.modules) }
        }
        modules = best!.modules
    }

    /// Bytes that fit a version in byte mode (4-bit mode, 8- or 16-bit count).
    private static func capacity(_ version: Int) -> Int { levelM[version - 1].data - (version < 10 ? 2 : 3) }

    // MARK: codewords

    private static func codewords(_ bytes: [UInt8], version: Int) -> [UInt8] {
        let spec = levelM[version - 1]
        var bits: [Bool] = []
        func append(_ value: Int, _ count: Int) {
            for i in stride(from: count - 1, through: 0, by: -1) { bits.append(value >> i & 1 == 1) }
        }
        append(0b0100, 4)
        append(bytes.count, version < 10 ? 8 : 16)
        for b in bytes { append(Int(b), 8) }
        append(0, min(4, spec.data * 8 - bits.count))
        while bits.count % 8 != 0 { bits.append(false) }
        var data = stride(from: 0, to: bits.count, by: 8).map { i in bits[i..<i + 8].reduce(UInt8(0)) { $0 << 1 | ($1 ? 1 : 0) } }
        var pad: UInt8 = 0xEC
        while data.count < spec.data {
            data.append(pad)
            pad = pad == 0xEC ? 0x11 : 0xEC
        }
        var blocks: [[UInt8]] = []
        var offset = 0
        for n in spec.blocks {
            blocks.append(Array(data[offset..<offset + n]))
            offset += n
        }
        let ecBlocks = blocks.map { ReedSolomon.remainder($0, degree: spec.ec) }
        var out: [UInt8] = []
        for i in 0..<(spec.blocks.max() ?? 0) { for b in blocks where i < b.count { out.append(b[i]) } }
        for i in 0..<spec.ec { for e in ecBlocks { out.append(e[i]) } }
        return out
    }

    // MARK: placement

    private mutating func set(_ x: Int, _ y: Int, _ dark: Bool) {
        modules[y][x] = dark
        reserved[y][x] = true
    }

    private mutating func placeFunctionPatterns(_ version: Int) {
        for (cx, cy) in [(3, 3), (size - 4, 3), (3, size - 4)] {
            for dy in -4...4 {
                for dx in -4...4 {
                    let x = cx + dx, y = cy + dy
                    guard (0..<size).contains(x), (0..<size).contains(y) else { continue }
                    let d = max(abs(dx), abs(dy))
                    set(x, y, d != 2 && d != 4)
                }
            }
        }
        for i in 8..<(size - 8) {
            set(i, 6, i % 2 == 0)
            set(6, i, i % 2 == 0)
        }
        // Alignment patterns everywhere on the grid of centres but the three corners the finders hold.
        let centres = Self.alignment[version - 1]
        for (i, cy) in centres.enumerated() {
            for (j, cx) in centres.enumerated() {
                let last = centres.count - 1
                if (i == 0 && j == 0) || (i == 0 && j == last) || (i == last && j == 0) { continue }
                for dy in -2...2 { for dx in -2...2 { set(cx + dx, cy + dy, max(abs(dx), abs(dy)) != 1) } }
            }
        }
        // Format areas (written per mask later) and the dark module.
        for i in 0...8 {
            reserved[8][i] = true
            reserved[i][8] = true
        }
        for i in 0..<8 {
            reserved[8][size - 1 - i] = true
            reserved[size - 1 - i][8] = true
        }
        set(8, size - 8, true)
        if let info = Self.versionInfo[version] {
            for i in 0..<18 {
                let bit = info >> i & 1 == 1
                set(size - 11 + i % 3, i / 3, bit)
                set(i / 3, size - 11 + i % 3, bit)
            }
        }
    }

    /// Data bits in the zigzag: two columns at a time from the right, up then down, skipping the timing column.
    private mutating func placeData(_ codewords: [UInt8]) {
        var bit = 0
        let total = codewords.count * 8
        var right = size - 1
        while right >= 1 {
            if right == 6 { right = 5 }
            for vertical in 0..<size {
                for j in 0..<2 {
                    let x = right - j
                    let upward = ((right + 1) & 2) == 0
                    let y = upward ? size - 1 - vertical : vertical
                    guard !reserved[y][x] else { continue }
                    if bit < total { modules[y][x] = codewords[bit >> 3] >> (7 - bit & 7) & 1 == 1 }
                    bit += 1
                }
            }
            right -= 2
        }
    }

    private mutating func applyMask(_ mask: Int) {
        for y in 0..<size {
            for x in 0..<size where !reserved[y][x] {
                let flip: Bool
                switch mask {
                case 0: flip = (x + y) % 2 == 0
                case 1: flip = y % 2 == 0
                case 2: flip = x % 3 == 0
                case 3: flip = (x + y) % 3 == 0
                case 4: flip = (x / 3 + y / 2) % 2 == 0
                case 5: flip = x * y % 2 + x * y % 3 == 0
                case 6: flip = (x * y % 2 + x * y % 3) % 2 == 0
                default: flip = ((x + y) % 2 + x * y % 3) % 2 == 0
                }
                if flip { modules[y][x].toggle() }
            }
        }
    }

    /// Level M (00) and the mask, BCH-coded and masked with 0x5412, in both copies.
    private mutating func placeFormat(_ mask: Int) {
        let data = mask  // level M is 00
        var rem = data
        for _ in 0..<10 { rem = (rem << 1) ^ ((rem >> 9) * 0x537) }
        let bits = (data << 10 | rem) ^ 0x5412
        func bit(_ i: Int) -> Bool { bits >> i & 1 == 1 }
        for i in 0...5 { modules[i][8] = bit(i) }
        modules[7][8] = bit(6)
        modules[8][8] = bit(7)
        modules[8][7] = bit(8)
        for i in 9..<15 { modules[8][14 - i] = bit(i) }
        for i in 0..<8 { modules[8][size - 1 - i] = bit(i) }
        for i in 8..<15 { modules[size - 15 + i][8] = bit(i) }
        modules[size - 8][8] = true
    }

    /// The standard's penalty (runs, 2×2 blocks, finder-like patterns, balance); the mask with the least is kept.
    private func penalty() -> Int {
        var p = 0
        for line in 0..<size {
            for horizontal in [true, false] {
                var run = 1
                var window = 0
                for i in 0..<size {
                    let m = horizontal ? modules[line][i] : modules[i][line]
                    if i > 0 {
                        let prev = horizontal ? modules[line][i - 1] : modules[i - 1][line]
                        if m == prev {
                            run += 1
                            if run == 5 { p += 3 } else if run > 5 { p += 1 }
                        } else {
                            run = 1
                        }
                    }
                    window = (window << 1 | (m ? 1 : 0)) & 0x7FF
                    if i >= 10 && (window == 0b10111010000 || window == 0b00001011101) { p += 40 }
                }
            }
        }
        for y in 0..<(size - 1) {
            for x in 0..<(size - 1) {
                let c = modules[y][x]
                if c == modules[y][x + 1] && c == modules[y + 1][x] && c == modules[y + 1][x + 1] { p += 3 }
            }
        }
        let dark = modules.joined().filter { $0 }.count
        p += abs(dark * 20 - size * size * 10) / (size * size) * 10
        return p
    }

    // MARK: PNG

    /// The code as a PNG (8-bit grey, `scale` pixels a module, a quiet zone of four modules), with stored deflate blocks.
    func png(scale: Int = 4) -> Data {
        let border = 4
        let side = (size + 2 * border) * scale
        var raw: [UInt8] = []
        raw.reserveCapacity(side * (side + 1))
        for py in 0..<side {
            raw.append(0)  // filter: none
            for px in 0..<side {
                let x = px / scale - border, y = py / scale - border
                let dark = (0..<size).contains(x) && (0..<size).contains(y) && modules[y][x]
                raw.append(dark ? 0 : 255)
            }
        }
        var zlib: [UInt8] = [0x78, 0x01]
        var offset = 0
        repeat {
            let n = min(65_535, raw.count - offset)
            let last: UInt8 = offset + n == raw.count ? 1 : 0
            zlib += [last, UInt8(n & 0xFF), UInt8(n >> 8), UInt8(~n & 0xFF), UInt8((~n >> 8) & 0xFF)]
            zlib += raw[offset..<offset + n]
            offset += n
        } while offset < raw.count
        zlib += PNG.bigEndian(PNG.adler32(raw))
        var out: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
        out += PNG.chunk("IHDR", PNG.bigEndian(UInt32(side)) + PNG.bigEndian(UInt32(side)) + [8, 0, 0, 0, 0])
        out += PNG.chunk("IDAT", zlib)
        out += PNG.chunk("IEND", [])
        return Data(out)
    }
}

/// Reed–Solomon over GF(256) with QR's polynomial (0x11D): the error-correction codewords of a block.
enum ReedSolomon {
    private static let tables: (exp: [UInt8], log: [Int]) = {
        var exp = [UInt8](repeating: 0, count: 512)
        var log = [Int](repeating: 0, count: 256)
        var x = 1
        for i in 0..<255 {
            exp[i] = UInt8(x)
            log[x] = i
            x <<= 1
            if x & 0x100 != 0 { x ^= 0x11D }
        }
        for i in 255..<512 { exp[i] = exp[i - 255] }
        return (exp, log)
    }()

    static func multiply(_ a: UInt8, _ b: UInt8) -> UInt8 {
        a == 0 || b == 0 ? 0 : tables.exp[tables.log[Int(a)] + tables.log[Int(b)]]
    }

    /// The remainder of data·x^degree divided by the generator (x − α⁰)…(x − α^(degree−1)).
    static func remainder(_ data: [UInt8], degree: Int) -> [UInt8] {
        var generator: [UInt8] = [1]
        for i in 0..<degree {
            var next = [UInt8](repeating: 0, count: generator.count + 1)
            for (j, g) in generator.enumerated() {
                next[j] ^= g
                next[j + 1] ^= multiply(g, tables.exp[i])
            }
            generator = next
        }
        var rem = [UInt8](repeating: 0, count: degree)
        for byte in data {
            let factor = byte ^ rem[0]
            rem.removeFirst()
            rem.append(0)
            for i in 0..<degree { rem[i] ^= multiply(generator[i + 1], factor) }
        }
        return rem
    }
}

/// The pieces of a PNG file.
enum PNG {
    private static let crcTable: [UInt32] = (0..<256).map { n in
        var c = UInt32(n)
        for _ in 0..<8 { c = c & 1 != 0 ? 0xEDB8_8320 ^ (c >> 1) : c >> 1 }
        return c
    }

    static func crc32(_ bytes: [UInt8]) -> UInt32 {
        ~bytes.reduce(~UInt32(0)) { crcTable[Int(($0 ^ UInt32($1)) & 0xFF)] ^ ($0 >> 8) }
    }

    static func adler32(_ bytes: [UInt8]) -> UInt32 {
        var a: UInt32 = 1, b: UInt32 = 0
        for byte in bytes {
            a = (a + UInt32(byte)) % 65_521
            b = (b + a) % 65_521
        }
        return b << 16 | a
    }

    static func bigEndian(_ v: UInt32) -> [UInt8] { [UInt8(v >> 24), UInt8(v >> 16 & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF)] }

    static func chunk(_ type: String, _ data: [UInt8]) -> [UInt8] {
        let body = Array(type.utf8) + data
        return bigEndian(UInt32(data.count)) + body + bigEndian(crc32(body))
    }
}
