#if canImport(Glibc)  // the Secret Service is a freedesktop (Linux, BSD) service; macOS has the Keychain
import Foundation

/// Why a Secret Service operation failed. Each case is a distinct situation the
/// caller may want to handle differently (e.g. fall back to a file-based store
/// on `.noBus`/`.noService`, tell the user to unlock on `.locked`).
public enum SecretServiceError: Error, CustomStringConvertible, Sendable, Equatable {
    /// No session bus could be reached (unset address, missing socket, refused).
    case noBus(String)
    /// The bus is there, but nothing provides `org.freedesktop.secrets`.
    case noService
    /// The keyring is locked and unlocking it would need a user prompt.
    case locked
    /// The service has no default collection to create items in.
    case noDefaultCollection
    /// A step did not finish within the timeout; the payload names the step.
    case timeout(String)
    /// The peer sent something this client cannot make sense of.
    case `protocol`(String)
    /// The service (or bus) answered with a D-Bus error.
    case dbusError(name: String, message: String)
    /// Refused: searching with no attributes would match every item.
    case emptyAttributes

    public var description: String {
        switch self {
        case .noBus(let reason):
            "No D-Bus session bus is reachable, so the Secret Service cannot be used (\(reason))."
        case .noService:
            "The session bus offers no Secret Service (org.freedesktop.secrets): no keyring daemon such as GNOME Keyring or KWallet "
                + "is running."
        case .locked:
            "The keyring is locked; it needs an interactive unlock (log in to the desktop session or unlock it in the keyring manager)."
        case .noDefaultCollection:
            "The Secret Service has no default keyring (collection) to store the key in; create one, e.g. a \"login\" keyring, first."
        case .timeout(let step):
            "The session bus or Secret Service did not answer in time (\(step))."
        case .protocol(let detail):
            "Unexpected data on the D-Bus connection: \(detail)."
        case .dbusError(let name, let message):
            "The Secret Service reported an error: \(name)\(message.isEmpty ? "" : ": \(message)")."
        case .emptyAttributes:
            "No lookup attributes were given; refusing to search, as that would match every stored secret."
        }
    }
}

/// Stores small secrets (e.g. a 32-byte data-encryption key) in the
/// freedesktop Secret Service, talking D-Bus directly so that no C library is
/// needed. Every call opens a fresh connection, does its work with every step
/// bounded by `timeout`, and closes it: it blocks, so call it off the main
/// thread, but it never hangs and never prompts.
public struct SecretServiceKeyStore: Sendable {
    /// D-Bus address list, or nil for the session bus from the environment.
    public var address: String?
    /// Bound for each step: connecting, authenticating, and each method call.
    public var timeout: Duration

    public init(address: String? = nil, timeout: Duration = .seconds(2)) {
        self.address = address
        self.timeout = timeout
    }

    /// The secret of the first item matching `attributes`, or nil if none does.
    public func read(attributes: [String: String]) throws(SecretServiceError) -> Data? {
        guard !attributes.isEmpty else { throw .emptyAttributes }
        return try run { service in
            guard let item = try service.items(matching: attributes, all: false).first else { return nil }
            return try service.secret(of: item)
        }
    }

    /// Stores `secret` in the default collection, replacing an item with the
    /// same attributes.
    public func write(_ secret: Data, label: String, attributes: [String: String]) throws(SecretServiceError) {
        guard !attributes.isEmpty else { throw .emptyAttributes }
        try run { service in
            try service.createItem(in: service.defaultCollection(), label: label, attributes: attributes, secret: secret)
        }
    }

    /// Deletes every item matching `attributes`; no match is not an error.
    public func delete(attributes: [String: String]) throws(SecretServiceError) {
        guard !attributes.isEmpty else { throw .emptyAttributes }
        try run { service in
            for item in try service.items(matching: attributes, all: true) {
                try service.deleteItem(item)
            }
        }
    }

    /// Succeeds when a Secret Service answers on the bus (it may still be locked).
    public func checkAvailable() throws(SecretServiceError) {
        try run { _ in }
    }

    /// Opens a session, runs `body`, and funnels every failure into `SecretServiceError`.
    private func run<T>(_ body: (SecretServiceClient) throws -> T) throws(SecretServiceError) -> T {
        do {
            let environment = ProcessInfo.processInfo.environment
            guard let address = address ?? BusAddress.sessionBus(environment: environment) else {
                throw SecretServiceError.noBus("DBUS_SESSION_BUS_ADDRESS is not set")
            }
            return try body(SecretServiceClient(address: address, timeout: timeout))
        } catch let error as SecretServiceError {
            throw error
        } catch {
            throw .protocol(String(describing: error))
        }
    }
}

/// One connection with an open "plain" Secret Service session. The plain
/// algorithm sends the secret unencrypted over the local socket, which only
/// processes of the same user can reach.
struct SecretServiceClient {
    static let busName = "org.freedesktop.secrets"
    static let servicePath = "/org/freedesktop/secrets"
    static let defaultAliasPath = "/org/freedesktop/secrets/aliases/default"

    let bus: DBusConnection
    let session: String

    init(address: String, timeout: Duration) throws {
        bus = try DBusConnection.open(addressList: address, timeout: timeout)
        try Self.requireService(on: bus)
        let reply = try Self.call(bus, Self.servicePath, "Service", "OpenSession", [.string("plain"), .variant(.string(""))])
        session = try reply.path(1)
    }

    /// Fails fast with `.noService` instead of waiting for a call that cannot
    /// be answered. An activatable (not yet running) service counts as present:
    /// the bus starts it on the first call.
    private static func requireService(on bus: DBusConnection) throws {
        func busCall(_ member: String, _ args: [DBusValue]) throws -> [DBusValue] {
            try bus.call(
                destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus",
                interface: "org.freedesktop.DBus", member: member, args)
        }
        if try busCall("NameHasOwner", [.string(busName)]).first?.boolValue == true { return }
        let activatable = try busCall("ListActivatableNames", []).first?.arrayElements ?? []
        guard activatable.contains(.string(busName)) else { throw SecretServiceError.noService }
    }

    /// Calls `org.freedesktop.Secret.<interface>.<member>`, translating the
    /// errors that have a dedicated meaning.
    private static func call(
        _ bus: DBusConnection, _ path: String, _ interface: String, _ member: String,
        _ args: [DBusValue] = []
    ) throws -> [DBusValue] {
        do {
            return try bus.call(
                destination: busName, path: path, interface: "org.freedesktop.Secret." + interface,
                member: member, args)
        } catch SecretServiceError.dbusError(let name, _)
            where name == "org.freedesktop.DBus.Error.ServiceUnknown" || name == "org.freedesktop.DBus.Error.NameHasNoOwner"
            || name.hasPrefix("org.freedesktop.DBus.Error.Spawn.")
        {  // activation failed
            throw SecretServiceError.noService
        } catch SecretServiceError.dbusError("org.freedesktop.Secret.Error.IsLocked", _) {
            throw SecretServiceError.locked
        }
    }

    private func call(_ path: String, _ interface: String, _ member: String, _ args: [DBusValue] = []) throws -> [DBusValue] {
        try Self.call(bus, path, interface, member, args)
    }

    /// Items matching `attributes`. Locked matches are unlocked (if that needs
    /// no prompt) only when they are needed: for `all`, or when no unlocked
    /// match exists.
    func items(matching attributes: [String: String], all: Bool) throws -> [String] {
        let reply = try call(Self.servicePath, "Service", "SearchItems", [.stringDict(attributes)])
        let (unlocked, locked) = (try reply.paths(0), try reply.paths(1))
        if locked.isEmpty || (!all && !unlocked.isEmpty) { return unlocked }
        return try unlocked + unlock(locked)
    }

    /// Unlocks `objects`; a returned prompt means a user would have to type a
    /// password, which a CLI must not wait for, so that is `.locked`.
    @discardableResult
    func unlock(_ objects: [String]) throws -> [String] {
        let reply = try call(Self.servicePath, "Service", "Unlock", [.objectPaths(objects)])
        guard try reply.path(1) == "/" else { throw SecretServiceError.locked }
        return try reply.paths(0)
    }

    func secret(of item: String) throws -> Data {
        let reply = try call(item, "Item", "GetSecret", [.objectPath(session)])
        guard case .structure(let fields)? = reply.first, fields.count == 4, let value = fields[2].byteData else {
            throw SecretServiceError.protocol("GetSecret returned \(reply.map(\.signature).joined())")
        }
        return value
    }

    /// The collection the "default" alias points to, unlocked.
    func defaultCollection() throws -> String {
        let path: String
        do {
            path = try call(Self.servicePath, "Service", "ReadAlias", [.string("default")]).path(0)
        } catch SecretServiceError.dbusError("org.freedesktop.DBus.Error.UnknownMethod", _) {
            path = Self.defaultAliasPath  // services without ReadAlias still serve the alias path
        }
        guard path != "/" else { throw SecretServiceError.noDefaultCollection }
        try unlock([path])
        return path
    }

    func createItem(in collection: String, label: String, attributes: [String: String], secret: Data) throws {
        let properties = DBusValue.variantDict([
            "org.freedesktop.Secret.Item.Label": .string(label),
            "org.freedesktop.Secret.Item.Attributes": .stringDict(attributes),
        ])
        let value = DBusValue.structure([.objectPath(session), .bytes(Data()), .bytes(secret), .string("application/octet-stream")])
        let reply = try call(collection, "Collection", "CreateItem", [properties, value, .bool(true)])
        guard try reply.path(0) != "/" else { throw SecretServiceError.locked }  // only a prompt came back
    }

    func deleteItem(_ item: String) throws {
        guard try call(item, "Item", "Delete").path(0) == "/" else { throw SecretServiceError.locked }
    }
}

extension [DBusValue] {
    /// The object path at `index`, or a protocol error naming what came instead.
    func path(_ index: Int) throws -> String {
        guard indices.contains(index), case .objectPath(let path) = self[index] else {
            throw SecretServiceError.protocol("expected an object path in reply (\(map(\.signature).joined()))")
        }
        return path
    }

    /// The `ao` at `index`.
    func paths(_ index: Int) throws -> [String] {
        guard indices.contains(index), case .array("o", let elements) = self[index] else {
            throw SecretServiceError.protocol("expected an array of object paths in reply (\(map(\.signature).joined()))")
        }
        return elements.compactMap(\.stringValue)
    }
}
#endif
