import B2CProtocol
import Foundation

/// A fault to inject on the next requests of one endpoint.
struct Fault: Sendable {
    enum Kind: String, Sendable, CaseIterable { case delay, status429, status500, status503, malformedJSON, wrongContentType, drop }
    var endpoint: String
    var kind: Kind
    var remaining: Int
    var delayMilliseconds: Int

    var json: JSONValue {
        [
            "endpoint": .string(endpoint), "kind": .string(kind.rawValue), "remaining": JSONValue(remaining),
            "delayMs": JSONValue(delayMilliseconds),
        ]
    }

    static let endpoints = [
        "any", "discovery", "keys", "authorize", "token", "logout", "initiate", "challenge", "userinfo", "hello", "pages",
        "signup", "resetpassword", "register", "graph",
    ]
}
