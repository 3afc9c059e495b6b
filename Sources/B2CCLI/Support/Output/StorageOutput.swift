import B2CKit
import Foundation

extension Output {
    /// `b2c config get`: the storage mode, where the key is kept (never the key) and the store's path.
    static func writeStorage(_ s: StorageStatus, path: String, format: OutputFormat) {
        switch format {
        case .json:
            let json: JSONValue = [
                "storage": s.mode.map { .string($0.rawValue) } ?? .null, "keySource": s.source.map { .string($0.rawValue) } ?? .null,
                "keyId": s.keyID.map { .string($0) } ?? .null, "store": .string(path),
            ]
            writeOut(json.serialized(pretty: true))
        case .table:
            var rows = [["storage", s.mode?.rawValue ?? "not decided yet (decided when the first token is stored)"]]
            if let source = s.source { rows.append(["key", "\(source.place) (key id \(s.keyID ?? "?"))"]) }
            rows.append(["store", path])
            writeOut(table(rows))
        }
    }
}
