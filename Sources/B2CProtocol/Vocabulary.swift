import Foundation

/// What a user flow (policy) does: the one vocabulary of client configurations and emulator seeds.
public enum PolicyRole: String, Sendable, CaseIterable {
    case signUpSignIn, signIn, signUp, editProfile, resetPassword, ropc
    /// The policy whose token endpoint app-only (client credentials) requests go to; any policy serves them.
    case clientCredentials

    /// The names the emulator's first seeds used (`kind`), still accepted.
    public static let legacyNames: [String: PolicyRole] = ["signUpOrSignIn": .signUpSignIn, "passwordReset": .resetPassword]

    public init?(name: String) {
        guard let role = PolicyRole(rawValue: name) ?? Self.legacyNames[name] else { return nil }
        self = role
    }
}

/// The policy-id rule: letters, digits, `_`, `.` and `-` (B2C_1_susi, B2C_1A_signup_signin). Checked by hand: a regular
/// expression here costs every command ICU's start-up.
public enum PolicyID {
    public static func isValid(_ name: String) -> Bool {
        !name.isEmpty
            && name.utf8.allSatisfy {
                $0.isASCIIAlphanumeric || $0 == UInt8(ascii: "_") || $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "-")
            }
    }
}

/// Which hosts are this machine, and which URLs may carry protocol traffic: https, or plain http on a loopback host.
public enum Loopback {
    /// A host as a URL or a Host header writes it, without the brackets around an IPv6 address (`[::1]` → `::1`), lower
    /// case: the one form every host comparison uses. (A byte scan: Foundation's `trimmingCharacters` was a per cent of
    /// every token request the tenant answers.)
    public static func bareHost(_ host: some StringProtocol) -> String {
        var bytes = Substring(host).utf8[...]
        func isBracket(_ c: UInt8) -> Bool { c == UInt8(ascii: "[") || c == UInt8(ascii: "]") }
        while let first = bytes.first, isBracket(first) { bytes = bytes.dropFirst() }
        while let last = bytes.last, isBracket(last) { bytes = bytes.dropLast() }
        let bare = String(Substring(bytes))
        return bare.utf8.contains(where: { $0 >= UInt8(ascii: "A") && $0 <= UInt8(ascii: "Z") || $0 >= 0x80 }) ? bare.lowercased() : bare
    }

    /// A bare host and a port as a URL's authority or a CONNECT writes them: an IPv6 address in brackets, the port after
    /// a colon unless it is nil.
    public static func authority(_ host: String, port: Int?) -> String {
        (host.contains(":") ? "[\(host)]" : host) + (port.map { ":\($0)" } ?? "")
    }

    public static func isHost(_ host: String) -> Bool {
        let h = bareHost(host)
        if h == "localhost" || h == "::1" { return true }
        let parts = h.split(separator: ".")
        return parts.count == 4 && parts[0] == "127" && parts.allSatisfy { UInt8($0) != nil }
    }

    /// https, or http on a loopback host.
    public static func isSecure(scheme: String?, host: String?) -> Bool {
        let s = scheme?.lowercased()
        return s == "https" || (s == "http" && isHost(host ?? ""))
    }

    public static func isSecure(_ url: URL) -> Bool { isSecure(scheme: url.scheme, host: url.host) }
}

extension UInt8 {
    /// An ASCII letter or digit.
    public var isASCIIAlphanumeric: Bool {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(self) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(self)
            || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(self)
    }
}

extension StringProtocol {
    /// Empty, or only whitespace as Foundation's `CharacterSet.whitespaces` has it (Unicode's space separators and tab).
    /// Any ASCII byte but space and tab decides at once; only the other strings go to Foundation, whose trimming cost a
    /// refresh grant 68,000 instructions (bench/README.md).
    public var isBlank: Bool {
        if utf8.contains(where: { $0 < 0x80 && $0 != UInt8(ascii: " ") && $0 != UInt8(ascii: "\t") }) { return false }
        return trimmingCharacters(in: .whitespaces).isEmpty
    }

    /// Equal but for letter case, as Foundation's `caseInsensitiveCompare` decides; ASCII strings (policy ids, client ids,
    /// scopes) are compared byte by byte, without Foundation's string bridging, which every token request paid for.
    /// Inlinable, so that the tenant's lookups by client id and policy get a copy specialised for `String` instead of the
    /// generic one (bench/README.md, "Both bounds, both grants", has the profile that found it).
    @inlinable
    public func equalsIgnoringCase(_ other: some StringProtocol) -> Bool {
        // Native strings and their substrings hold contiguous bytes: one loop without branches, which the compiler
        // vectorises. Anything else, and any text that is not ASCII, is Foundation's to decide.
        let contiguous: Bool?? = utf8.withContiguousStorageIfAvailable { a -> Bool? in
            other.utf8.withContiguousStorageIfAvailable { b -> Bool? in asciiEqualsIgnoringCase(a, b) } ?? nil
        }
        if case let decided?? = contiguous { return decided }
        return String(self).caseInsensitiveCompare(String(other)) == .orderedSame
    }
}

/// Two ASCII byte strings equal but for letter case; nil when either holds a byte that is not ASCII (Foundation decides).
@inlinable
func asciiEqualsIgnoringCase(_ a: UnsafeBufferPointer<UInt8>, _ b: UnsafeBufferPointer<UInt8>) -> Bool? {
    var high: UInt8 = 0
    for c in a { high |= c }
    for c in b { high |= c }
    guard high < 0x80 else { return nil }
    guard a.count == b.count else { return false }
    // 'A'...'Z' get bit 5 set: (c + 0x3f) ^ (c + 0x25) has bit 7 set exactly for 0x41...0x5a, for c below 0x80.
    func folded(_ c: UInt8) -> UInt8 { c | (((c &+ 0x3f) ^ (c &+ 0x25)) & 0x80) >> 2 }
    var diff: UInt8 = 0
    for k in 0..<a.count { diff |= folded(a[k]) ^ folded(b[k]) }
    return diff == 0
}

/// IP literals as the octets a certificate holds (`inet_pton`'s reading); nil for a name. The tenant's certificate and
/// the client's TLS (no SNI for an address) ask the same question.
public enum IPBytes {
    public static let loopbackV6: [UInt8] = [UInt8](repeating: 0, count: 15) + [1]

    public static func parse(_ text: String) -> [UInt8]? {
        let t = Loopback.bareHost(text)
        var v4 = in_addr(), v6 = in6_addr()
        if inet_pton(AF_INET, t, &v4) == 1 { return withUnsafeBytes(of: &v4) { Array($0) } }
        if inet_pton(AF_INET6, t, &v6) == 1 { return withUnsafeBytes(of: &v6) { Array($0) } }
        return nil
    }

    /// Whether `parse` would read an address, without making its bytes (the tenant asks of every request's Host).
    public static func isAddress(_ text: String) -> Bool {
        let t = Loopback.bareHost(text)
        var address = in6_addr()  // room for either family's
        return inet_pton(AF_INET, t, &address) == 1 || inet_pton(AF_INET6, t, &address) == 1
    }
}

/// OAuth's space-delimited lists (`scope`, `response_type`, `prompt`, a token's `scp`; RFC 6749 §3.3): the items between
/// space bytes, empty ones dropped. Split on the bytes: `String.split` walks grapheme clusters, and cost a
/// client-credentials grant 20,000 instructions for its one-item scope (a twentieth of its work besides the signature).
public enum SpaceList {
    public static func items(_ list: String) -> [Substring] {
        list.utf8.split(separator: UInt8(ascii: " ")).map { Substring($0) }
    }
}
