import ChildProcess
import Foundation
import Testing

@testable import B2CEmulator

/// The TOTP enrolment's pieces: the QR code decoded by a real reader (zbarimg, Debian's zbar-tools), RFC 6238's test
/// vectors, base32.
@Suite struct TOTPAndQRTests {
    static let zbarimg = URL(fileURLWithPath: "/usr/bin/zbarimg")

    /// One text per version, 1 to 10, up to the largest an `otpauth://` URI of a long address needs.
    @Test(arguments: [1, 20, 40, 60, 80, 100, 120, 150, 180, 210])
    func aRealReaderDecodesTheCode(_ length: Int) throws {
        try #require(
            FileManager.default.isExecutableFile(atPath: Self.zbarimg.path), "zbarimg is missing: apt-get install zbar-tools")
        let base = "otpauth://totp/Contoso:alice%40contoso.com?secret=JBSWY3DPEHPK3PXP&issuer=Contoso&x="
        let text = String((base + String(repeating: "0123456789", count: 30)).prefix(length))
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("qr-\(UUID().uuidString).png")
        defer { try? FileManager.default.removeItem(at: file) }
        try QRCode(text).png().write(to: file)
        let r = try ChildProcess.run(Self.zbarimg, ["--raw", "-q", "-Sbinary", file.path])
        #expect(r.status == 0, "\(r.errors)")
        var decoded = r.output
        if decoded.hasSuffix("\n") { decoded.removeLast() }
        #expect(decoded == text)
    }

    @Test func tooLongIsRefused() {
        #expect(throws: QRCode.TooLong.self) { try QRCode(String(repeating: "x", count: 214)) }
    }

    /// RFC 6238 appendix B (SHA-1, the 20-byte ASCII secret "12345678901234567890"), six digits.
    @Test(arguments: [
        (59, "287082"), (1_111_111_109, "081804"), (1_111_111_111, "050471"), (1_234_567_890, "005924"),
        (2_000_000_000, "279037"), (20_000_000_000, "353130"),
    ])
    func rfc6238TestVectors(_ time: Int, _ code: String) {
        let secret = Base32.encode(Data("12345678901234567890".utf8))
        #expect(TOTP.code(secret: secret, at: time) == code)
        #expect(TOTP.accepts(code, secret: secret, at: time + 29))
        #expect(!TOTP.accepts(code, secret: secret, at: time + 95))
    }

    @Test func base32RoundTrips() {
        for n in 0..<40 {
            let bytes = Data((0..<n).map { UInt8(truncatingIfNeeded: $0 * 37 + 11) })
            #expect(Base32.decode(Base32.encode(bytes)) == bytes)
        }
        #expect(Base32.encode(Data("foobar".utf8)) == "MZXW6YTBOI")
        #expect(Base32.decode("mzxw 6ytb-oi") == Data("foobar".utf8))
        #expect(Base32.decode("MZXW6YTB0I") == nil)
    }
}
