import Foundation

/// A token endpoint success body. Numbers may arrive as JSON numbers or as strings (B2C's legacy form).
public struct TokenResponse: Sendable {
    public var accessToken: String?
    public var idToken: String?
    public var refreshToken: String?
    public var tokenType: String?
    public var expiresIn: Int?
    public var expiresOn: Int?
    public var notBefore: Int?
    public var scope: String?
    public var clientInfo: ClientInfo?

    public static func parse(_ data: Data) throws -> TokenResponse {
        let value: JSONValue
        do { value = try JSONValue.parse(data) } catch {
            throw ProtocolError("the token endpoint answered with something that is not JSON (\(data.count) bytes)")
        }
        guard case .object(let o) = value else { throw ProtocolError("the token endpoint answered with JSON that is not an object") }
        func string(_ k: String) throws -> String? {
            switch o[k] {
            case nil, .null?: return nil
            case .string(let s)?: return s.isEmpty ? nil : s
            default: throw ProtocolError("the token response field '\(k)' is not a string")
            }
        }
        func int(_ k: String) throws -> Int? {
            guard let v = o[k], v != .null else { return nil }
            guard let i = v.lenientInt else {
                throw ProtocolError("the token response field '\(k)' is not a whole number (got \(v.typeName))")
            }
            return i
        }
        var r = TokenResponse()
        r.accessToken = try string("access_token")
        r.idToken = try string("id_token")
        r.refreshToken = try string("refresh_token")
        r.tokenType = try string("token_type")
        r.expiresIn = try int("expires_in")
        r.expiresOn = try int("expires_on")
        r.notBefore = try int("not_before")
        r.scope = try string("scope")
        if let ci = try string("client_info") {
            do { r.clientInfo = try ClientInfo.decode(ci) } catch {
                throw ProtocolError("the token response's client_info is malformed: \(error)")
            }
        }
        if r.accessToken == nil && r.idToken == nil {
            throw ProtocolError("the token response has neither an access token nor an id token")
        }
        if let t = r.tokenType, t.lowercased() != "bearer" { throw ProtocolError("the token type is '\(t)', expected Bearer") }
        return r
    }

    /// When the access token expires on our clock: now + `expires_in` (robust to clock skew, as MSAL does), else `expires_on`.
    public func accessTokenExpiry(now: Int) -> Int? {
        expiresIn.map { now + $0 } ?? expiresOn
    }
}

/// An OAuth error body (`error`, `error_description`), with B2C's AADB2C code when there is one.
public struct OAuthError: Error, Sendable, CustomStringConvertible {
    public var status: Int
    public var error: String
    public var errorDescription: String?

    public var b2c: B2CErrorDescription { B2CErrorDescription.parse(errorDescription ?? "") }
    public var code: String? { b2c.code }

    public static func parse(status: Int, _ data: Data) -> OAuthError? {
        guard let v = try? JSONValue.parse(data), let e = v["error"]?.stringValue else { return nil }
        return OAuthError(status: status, error: e, errorDescription: v["error_description"]?.stringValue)
    }

    /// Errors that only a new interactive sign-in can fix.
    public var needsInteraction: Bool {
        ["invalid_grant", "interaction_required", "login_required", "consent_required"].contains(error)
            || ["AADB2C90080", "AADB2C90129", "AADB2C90128", "AADB2C90088", "AADB2C90077", "AADB2C90090"].contains(code ?? "")
    }

    public var description: String {
        let d = b2c
        return "\(error)" + (d.code.map { " \($0)" } ?? "") + (d.message.isEmpty ? "" : ": \(d.message)")
    }
}

public struct ProtocolError: Error, Sendable, CustomStringConvertible {
    public let description: String
    public init(_ d: String) { description = d }
}
