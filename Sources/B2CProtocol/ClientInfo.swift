import Foundation

/// `client_info`: base64url JSON `{"uid": "<oid>-<policy lower>", "utid": "<tenant guid>"}`.
public struct ClientInfo: Sendable, Equatable {
    public var uid: String
    public var utid: String

    public init(uid: String, utid: String) { self.uid = uid; self.utid = utid }

    /// MSAL's home account id: `uid.utid`, lower-cased.
    public var homeAccountID: String { "\(uid).\(utid)".lowercased() }

    public var encoded: String {
        Base64URL.encode(JSONValue.object(["uid": .string(uid), "utid": .string(utid)]).serialized())
    }

    public static func decode(_ encoded: String) throws -> ClientInfo {
        guard let data = Base64URL.decode(encoded) else {
            throw JSONPathError(path: "client_info", message: "is not base64url")
        }
        let reader = try JSONObjectReader(JSONValue.parse(data), path: "client_info")
        return ClientInfo(uid: try reader.string("uid"), utid: try reader.string("utid"))
    }
}
