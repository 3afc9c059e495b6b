import B2CProtocol
import Foundation

/// One key of a seed object, declared once: how it is read — every refusal names its JSON path, in the words of
/// `JSONObjectReader` — and how it is written (the keys it writes; none when the value is the default the key may omit).
/// A field may read and write a pair of keys that make one value (`session` and `kmsi`).
struct SeedField<Root>: Sendable {
    let keys: [String]
    let read: @Sendable (JSONObjectReader, inout Root) throws -> Void
    let write: @Sendable (Root) -> [String: JSONValue]
}

/// A seed object (`$.tenant`, `$.policies[i]`, `$.apps[i]`, …) as its fields declare it: read with every key checked
/// against the declared ones, then `finish` (the checks across fields, the defaults made of other fields); written from
/// the same declarations; `Codable` through them (`SeedCodable.swift`), at the JSON path its coding path names.
protocol SeedObject: Sendable {
    /// A blank value, which the fields fill.
    init()
    static var fields: [SeedField<Self>] { get }
    /// Keys the object takes that no field reads (`"type"` of an identity provider's entry, `"$schema"`).
    static var otherKeys: [String] { get }
    mutating func finish(_ r: JSONObjectReader) throws
}

extension SeedObject {
    static var otherKeys: [String] { [] }
    mutating func finish(_ r: JSONObjectReader) throws {}

    init(reading r: JSONObjectReader) throws {
        try r.rejectUnknownKeys(allowed: Set(Self.fields.flatMap(\.keys) + Self.otherKeys))
        var made = Self()
        for field in Self.fields { try field.read(r, &made) }
        try made.finish(r)
        self = made
    }

    init(reading value: JSONValue, path: String) throws { try self.init(reading: JSONObjectReader(value, path: path)) }

    var json: JSONValue { Self.written(self) }

    /// The object as its fields write it.
    static func written(_ value: Self) -> JSONValue {
        .object(fields.reduce(into: [:]) { o, field in o.merge(field.write(value)) { _, new in new } })
    }

    /// `Decodable`'s reading: the whole value, then the fields, at the JSON path of the decoder's coding path.
    init(decodingSeed decoder: any Decoder) throws {
        let path = decoder.codingPath.reduce("$") { path, key in key.intValue.map { "\(path)[\($0)]" } ?? "\(path).\(key.stringValue)" }
        try self.init(reading: JSONValue(from: decoder), path: path)
    }

    func encodeSeed(to encoder: any Encoder) throws { try json.encode(to: encoder) }
}

/// The kinds of field the seed is made of.
extension SeedField {
    /// A string: required when there is no default; `check` sees it (with the object, for the path) and may normalise it.
    /// `omitDefault`: the default is not written.
    static func string(
        _ key: String, _ path: WritableKeyPath<Root, String> & Sendable, default value: String? = nil, omitDefault: Bool = false,
        check: (@Sendable (String, JSONObjectReader) throws -> String)? = nil
    ) -> Self {
        SeedField(
            keys: [key],
            read: { r, root in
                // The default is taken as it is; a value given is checked.
                if let value, try r.optionalString(key) == nil { return root[keyPath: path] = value }
                let s = try r.string(key)
                root[keyPath: path] = try check?(s, r) ?? s
            },
            write: { root in omitDefault && root[keyPath: path] == value ? [:] : [key: .string(root[keyPath: path])] })
    }

    /// A string that may be absent (or null); written when present.
    static func optional(
        _ key: String, _ path: WritableKeyPath<Root, String?> & Sendable,
        check: (@Sendable (String, JSONObjectReader) throws -> String)? = nil
    ) -> Self {
        SeedField(
            keys: [key],
            read: { r, root in root[keyPath: path] = try r.optionalString(key).map { try check?($0, r) ?? $0 } },
            write: { root in root[keyPath: path].map { [key: .string($0)] } ?? [:] })
    }

    /// A GUID, kept lower-case; with a default (`""`: `finish` makes one), only a GUID given is checked.
    static func guid(_ key: String, _ path: WritableKeyPath<Root, String> & Sendable, default value: String? = nil) -> Self {
        string(key, path, default: value) { _, r in try EmulatorSeed.guid(r, key) }
    }

    static func bool(
        _ key: String, _ path: WritableKeyPath<Root, Bool> & Sendable, default value: Bool, omitDefault: Bool = false
    )
        -> Self
    {
        SeedField(
            keys: [key], read: { r, root in root[keyPath: path] = try r.bool(key, default: value) },
            write: { root in omitDefault && root[keyPath: path] == value ? [:] : [key: .bool(root[keyPath: path])] })
    }

    static func int(_ key: String, _ path: WritableKeyPath<Root, Int> & Sendable, default value: Int, range: ClosedRange<Int>) -> Self {
        SeedField(
            keys: [key], read: { r, root in root[keyPath: path] = try r.int(key, default: value, range: range)! },
            write: { root in [key: JSONValue(root[keyPath: path])] })
    }

    /// An array of non-empty strings (`[]` when absent, unless `required`); `check` sees each with its path.
    static func strings(
        _ key: String, _ path: WritableKeyPath<Root, [String]> & Sendable, required: Bool = false,
        check: (@Sendable (String, String) throws -> Void)? = nil
    ) -> Self {
        SeedField(
            keys: [key],
            read: { r, root in
                let items = try r.stringArray(key, required: required)
                if let check { for (i, item) in items.enumerated() { try check(item, "\(r.childPath(key))[\(i)]") } }
                root[keyPath: path] = items
            },
            write: { root in [key: JSONValue(root[keyPath: path])] })
    }

    /// An array of seed objects (`[]` when absent, unless `required`).
    static func objects<T: SeedObject>(_ key: String, _ path: WritableKeyPath<Root, [T]> & Sendable, required: Bool = false) -> Self {
        SeedField(
            keys: [key], read: { r, root in root[keyPath: path] = try r.objects(key, required: required).map(T.init(reading:)) },
            write: { root in [key: .array(root[keyPath: path].map(\.json))] })
    }

    /// A field whose shape is its own (a list of strings and objects, a bool or a string): both directions side by side.
    static func custom(
        _ keys: String..., read: @escaping @Sendable (JSONObjectReader, inout Root) throws -> Void,
        write: @escaping @Sendable (Root) -> [String: JSONValue]
    ) -> Self {
        SeedField(keys: keys, read: read, write: write)
    }
}
