import Crypto
import _CryptoExtras
import Foundation

/// Why a JWT was refused. Each case carries a message a person can act on.
public enum JWTError: Error, Equatable, CustomStringConvertible {
    case malformed(String)
    case unsupportedAlgorithm(String)
    case unknownKey(kid: String)
    case badSignature
    case claim(name: String, problem: String)
    case expired(exp: Int, now: Int)
    case notYetValid(nbf: Int, now: Int)

    public var description: String {
        switch self {
        case .malformed(let why): "the token is malformed: \(why)"
        case .unsupportedAlgorithm(let alg): "the token is signed with '\(alg)'; only RS256 is accepted"
        case .unknownKey(let kid): "the token names signing key '\(kid)', which is not in the key set"
        case .badSignature: "the token's signature does not verify"
        case .claim(let name, let problem): "claim '\(name)' \(problem)"
        case .expired(let exp, let now):
            "the token expired at \(Self.date(exp)), \(now - exp) s before this machine's clock (\(Self.date(now)))"
        case .notYetValid(let nbf, let now):
            "the token is not valid before \(Self.date(nbf)), \(nbf - now) s after this machine's clock (\(Self.date(now)))"
        }
    }

    /// An epoch time as ISO 8601 UTC.
    public static func date(_ epoch: Int) -> String {
        ISO8601.string(epoch: epoch)
    }

    /// A time-window failure, where a wrong clock on either side is the usual cause.
    public var isClockRelated: Bool {
        switch self {
        case .expired, .notYetValid: true
        default: false
        }
    }
}

/// A decoded (not yet trusted) JSON Web Token.
public struct JWT: Sendable {
    public let header: [String: JSONValue]
    public let claims: [String: JSONValue]
    public let signingInput: String
    public let signature: Data

    public static func decode(_ token: String) throws -> JWT {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3 else {
            throw JWTError.malformed("a JWT has 3 parts separated by '.' (header.payload.signature); this has \(parts.count)")
        }
        func object(_ part: Substring, _ name: String) throws -> [String: JSONValue] {
            guard let data = Base64URL.decode(part) else { throw JWTError.malformed("the \(name) is not base64url") }
            guard let value = try? JSONValue.parse(data) else { throw JWTError.malformed("the \(name) is not JSON") }
            guard case .object(let o) = value else { throw JWTError.malformed("the \(name) is not a JSON object") }
            return o
        }
        let header = try object(parts[0], "header (part 1)")
        let claims = try object(parts[1], "payload (part 2)")
        guard let signature = Base64URL.decode(parts[2]) else { throw JWTError.malformed("the signature (part 3) is not base64url") }
        return JWT(header: header, claims: claims, signingInput: "\(parts[0]).\(parts[1])", signature: signature)
    }

    /// The claims of a JWT without checking anything else (nil when the token is not a JWT): for tokens already
    /// trusted, or to tell what a token claims before deciding whether to serve it.
    public static func payload(of token: String) -> [String: JSONValue]? {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let data = Base64URL.decode(parts[1]), case .object(let o)? = try? JSONValue.parse(data) else { return nil }
        return o
    }

    public var kid: String? { header["kid"]?.stringValue }
    public var algorithm: String? { header["alg"]?.stringValue }

    public func string(_ claim: String) -> String? { claims[claim]?.stringValue }
    public func int(_ claim: String) -> Int? { claims[claim]?.lenientInt }

    /// Checks alg = RS256 and the signature against the key named by `kid` (or the only key when there is no kid).
    public func verifySignature(with keys: JWKSet) throws {
        guard algorithm == "RS256" else { throw JWTError.unsupportedAlgorithm(algorithm ?? "none") }
        let key: JWK
        if let kid {
            guard let k = keys.key(kid: kid) else { throw JWTError.unknownKey(kid: kid) }
            key = k
        } else if keys.keys.count == 1 {
            key = keys.keys[0]
        } else {
            throw JWTError.malformed("the header has no 'kid' and the key set has \(keys.keys.count) keys")
        }
        let publicKey = try key.rsaPublicKey()
        let sig = _RSA.Signing.RSASignature(rawRepresentation: signature)
        guard publicKey.isValidSignature(sig, for: Data(signingInput.utf8), padding: .insecurePKCS1v1_5) else {
            throw JWTError.badSignature
        }
    }

    /// Standard checks after the signature: issuer, audience, time window.
    public func validateClaims(issuers: Set<String>, audience: String, now: Int, skew: Int = 0) throws {
        guard let iss = string("iss") else { throw JWTError.claim(name: "iss", problem: "is missing") }
        guard issuers.contains(iss) else { throw JWTError.claim(name: "iss", problem: "is '\(iss)', which is not a trusted issuer") }
        let auds: [String]
        switch claims["aud"] {
        case .string(let s)?: auds = [s]
        case .array(let a)?: auds = a.compactMap(\.stringValue)
        default: throw JWTError.claim(name: "aud", problem: "is missing")
        }
        guard auds.contains(audience) else {
            throw JWTError.claim(name: "aud", problem: "is '\(auds.joined(separator: " "))', expected '\(audience)'")
        }
        guard let exp = int("exp") else { throw JWTError.claim(name: "exp", problem: "is missing") }
        if now >= exp + skew { throw JWTError.expired(exp: exp, now: now) }
        if let nbf = int("nbf"), now + skew < nbf { throw JWTError.notYetValid(nbf: nbf, now: now) }
    }

    /// Creates a signed RS256 token with header `typ`, `alg`, `kid`.
    public static func sign(claims: JSONValue, kid: String, key: _RSA.Signing.PrivateKey) throws -> String {
        try sign(claims: claims, kid: kid) { try signature(signingInput: $0, key: key) }
    }

    /// Creates an RS256 token whose signature `signature` makes (base64url) from the JWS signing input: the same token as
    /// `sign(claims:kid:key:)` from another implementation of RS256.
    public static func sign(claims: JSONValue, kid: String, signature: (String) throws -> String) rethrows -> String {
        let input = signingInput(claims: claims, kid: kid)
        return input + "." + (try signature(input))
    }

    /// The JWS signing input of an RS256 token of these claims: its header and claims, base64url, joined by a dot.
    public static func signingInput(claims: JSONValue, kid: String) -> String {
        Base64URL.encode(header(kid: kid)) + "." + Base64URL.encode(claims.serializedBytes())
    }

    /// The header `{"alg":"RS256","kid":…,"typ":"JWT"}`, its members in the order `serialized` sorts them and the kid
    /// escaped as any JSON string: the bytes `JSONValue` wrote from a dictionary, without the dictionary and its sort, which
    /// every token the tenant signs paid for (`JWSKnownAnswerTests.headerAsTheDictionaryWroteIt` compares the two).
    private static func header(kid: String) -> [UInt8] {
        var out = Array(#"{"alg":"RS256","kid":"#.utf8)
        out.reserveCapacity(kid.utf8.count + 40)
        out += JSONValue.string(kid).serializedBytes()
        out += #","typ":"JWT"}"#.utf8
        return out
    }

    /// The RS256 signature (RSASSA-PKCS1-v1_5 with SHA-256) of a JWS signing input, base64url: deterministic, and
    /// pinned by RFC 7515 appendix A.2's known answer in the tests.
    public static func signature(signingInput: String, key: _RSA.Signing.PrivateKey) throws -> String {
        Base64URL.encode(try key.signature(for: Data(signingInput.utf8), padding: .insecurePKCS1v1_5).rawRepresentation)
    }
}

/// One RSA signing key as published in a JWKS.
public struct JWK: Sendable, Equatable {
    public var kid: String
    public var kty: String
    public var use: String?
    public var n: String
    public var e: String
    public var nbf: Int?
    /// Entra's keys carry their certificate: its SHA-1 thumbprint (base64url) and the chain (base64 DER).
    public var x5t: String?
    public var x5c: [String]?

    public init(
        kid: String, kty: String = "RSA", use: String? = "sig", n: String, e: String, nbf: Int? = nil, x5t: String? = nil,
        x5c: [String]? = nil
    ) {
        self.kid = kid; self.kty = kty; self.use = use; self.n = n; self.e = e; self.nbf = nbf; self.x5t = x5t; self.x5c = x5c
    }

    public init(publicKey: _RSA.Signing.PublicKey, kid: String? = nil, nbf: Int? = nil) throws {
        let p = try publicKey.getKeyPrimitives()
        let n = Base64URL.encode(p.modulus)
        let e = Base64URL.encode(p.publicExponent)
        self.init(kid: kid ?? JWK.thumbprint(n: n, e: e), n: n, e: e, nbf: nbf)
    }

    /// RFC 7638 thumbprint, the usual shape of B2C `kid`s.
    public static func thumbprint(n: String, e: String) -> String {
        let canonical = "{\"e\":\"\(e)\",\"kty\":\"RSA\",\"n\":\"\(n)\"}"
        return Base64URL.encode(Data(SHA256.hash(data: Data(canonical.utf8))))
    }

    public func rsaPublicKey() throws -> _RSA.Signing.PublicKey {
        guard kty == "RSA", let n = Base64URL.decode(n), let e = Base64URL.decode(e) else {
            throw JWTError.malformed("key '\(kid)' is not a usable RSA key")
        }
        do { return try _RSA.Signing.PublicKey(n: n, e: e) } catch {
            throw JWTError.malformed("key '\(kid)' is not a usable RSA key")
        }
    }

    public var json: JSONValue {
        var o: [String: JSONValue] = ["kid": .string(kid), "kty": .string(kty), "n": .string(n), "e": .string(e)]
        if let use { o["use"] = .string(use) }
        if let nbf { o["nbf"] = JSONValue(nbf) }
        if let x5t { o["x5t"] = .string(x5t) }
        if let x5c { o["x5c"] = .array(x5c.map(JSONValue.string)) }
        return .object(o)
    }
}

/// A JSON Web Key Set (`{"keys": [...]}`).
public struct JWKSet: Sendable, Equatable {
    public var keys: [JWK]
    public init(keys: [JWK]) { self.keys = keys }

    public func key(kid: String) -> JWK? { keys.first { $0.kid == kid } }

    public var json: JSONValue { ["keys": .array(keys.map(\.json))] }

    public static func parse(_ data: Data) throws -> JWKSet {
        let root = try JSONObjectReader(JSONValue.parse(data))
        var keys: [JWK] = []
        for k in try root.objects("keys", required: true) {
            // Keys of other types are skipped, as a verifier must; RSA keys must be complete.
            guard try k.string("kty") == "RSA" else { continue }
            keys.append(
                JWK(
                    kid: try k.string("kid"), use: try k.optionalString("use"), n: try k.string("n"), e: try k.string("e"),
                    nbf: k.raw("nbf")?.lenientInt))
        }
        return JWKSet(keys: keys)
    }
}
