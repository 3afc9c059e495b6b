#if canImport(Glibc)  // the Secret Service is a freedesktop (Linux, BSD) service; macOS has the Keychain
/// A D-Bus message: the fixed header, the header fields we use, and the body.
struct DBusMessage: Sendable {
    enum Kind: UInt8, Sendable {
        case methodCall = 1, methodReturn = 2, error = 3, signal = 4
    }

    /// Header field codes from the D-Bus specification.
    private enum Field: UInt8 {
        case path = 1, interface, member, errorName, replySerial, destination, sender, signature, unixFDs
    }

    /// The spec's maximum message size (128 MiB).
    /// The largest message we read: the Secret Service's answers are a few kilobytes; the spec's 128 MiB would let a
    /// hostile or broken bus make b2c allocate gigabytes (each value boxed) before any deadline applies.
    static let maxLength = 1024 * 1024

    var kind: Kind
    var flags: UInt8 = 0
    var serial: UInt32
    var path: String?
    var interface: String?
    var member: String?
    var errorName: String?
    var replySerial: UInt32?
    var destination: String?
    var sender: String?
    var body: [DBusValue] = []

    /// Signature of the body, as it goes into the SIGNATURE header field.
    var bodySignature: String { body.map(\.signature).joined() }

    // MARK: Encoding

    func encoded() -> [UInt8] {
        var bodyWriter = DBusWriter()
        body.forEach { bodyWriter.write($0) }

        var fields: [DBusValue] = []
        func add(_ field: Field, _ value: DBusValue?) {
            if let value { fields.append(.structure([.byte(field.rawValue), .variant(value)])) }
        }
        add(.path, path.map(DBusValue.objectPath))
        add(.interface, interface.map(DBusValue.string))
        add(.member, member.map(DBusValue.string))
        add(.errorName, errorName.map(DBusValue.string))
        add(.replySerial, replySerial.map(DBusValue.uint32))
        add(.destination, destination.map(DBusValue.string))
        add(.signature, body.isEmpty ? nil : .signature(bodySignature))

        var writer = DBusWriter()
        writer.append(UInt8(ascii: "l"))  // little-endian
        writer.append(kind.rawValue)
        writer.append(flags)
        writer.append(UInt8(1))  // protocol version
        writer.append(UInt32(bodyWriter.bytes.count))
        writer.append(serial)
        writer.write(.array(elementSignature: "(yv)", fields))
        writer.pad(to: 8)
        return writer.bytes + bodyWriter.bytes
    }

    // MARK: Decoding

    /// Total length of the message that starts `buffer`, once its first 16
    /// bytes are there; nil while fewer have arrived.
    static func frameLength(of buffer: [UInt8]) throws -> Int? {
        guard buffer.count >= 16 else { return nil }
        var reader = try makeReader(buffer)
        reader.offset = 4
        let bodyLength = Int(try reader.read(UInt32.self))
        reader.offset = 12
        let fieldsLength = Int(try reader.read(UInt32.self))
        guard bodyLength <= maxLength, fieldsLength <= maxLength else {
            throw SecretServiceError.protocol("D-Bus message too large")
        }
        let total = (16 + fieldsLength + 7) / 8 * 8 + bodyLength
        guard total <= maxLength else { throw SecretServiceError.protocol("D-Bus message too large") }
        return total
    }

    private static func makeReader(_ bytes: [UInt8]) throws -> DBusReader {
        switch bytes.first {
        case UInt8(ascii: "l"): DBusReader(bytes: bytes, bigEndian: false)
        case UInt8(ascii: "B"): DBusReader(bytes: bytes, bigEndian: true)
        default: throw SecretServiceError.protocol("bad D-Bus endianness marker")
        }
    }

    /// Decodes one complete message. Returns nil for message types this client
    /// does not know (the spec says to ignore those).
    static func decode(_ bytes: [UInt8]) throws -> DBusMessage? {
        var reader = try makeReader(bytes)
        reader.offset = 1
        let rawKind = try reader.read(UInt8.self)
        let flags = try reader.read(UInt8.self)
        _ = try reader.read(UInt8.self)  // protocol version
        _ = try reader.read(UInt32.self)  // body length, already used for framing
        let serial = try reader.read(UInt32.self)
        guard case .array(_, let fields) = try reader.read(type: "a(yv)", depth: 0) else {
            throw SecretServiceError.protocol("bad D-Bus header fields")
        }
        guard let kind = Kind(rawValue: rawKind) else { return nil }

        var message = DBusMessage(kind: kind, flags: flags, serial: serial)
        var signature = ""
        for case .structure(let pair) in fields {
            guard pair.count == 2, case .byte(let code) = pair[0], case .variant(let value) = pair[1] else { continue }
            switch Field(rawValue: code) {
            case .path: message.path = value.stringValue
            case .interface: message.interface = value.stringValue
            case .member: message.member = value.stringValue
            case .errorName: message.errorName = value.stringValue
            case .replySerial: message.replySerial = value.uint32Value
            case .destination: message.destination = value.stringValue
            case .sender: message.sender = value.stringValue
            case .signature: signature = value.stringValue ?? ""
            case .unixFDs, nil: break
            }
        }
        try reader.align(to: 8)
        message.body = try reader.readAll(signature: signature)
        guard reader.offset == bytes.count else { throw SecretServiceError.protocol("D-Bus body length mismatch") }
        return message
    }
}
#endif
