#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The process's environment as a dictionary, read from `environ` at each call (as `ProcessInfo.processInfo.environment`
/// is). Foundation's getter builds its dictionary through `Character`-level string splitting, about 360,000 instructions
/// on a shell's environment, and a command reads it about eight times: a measurable share of a refresh (callgrind,
/// bench/README.md, item 3). A name given twice keeps its first value, as `getenv` does; an entry without `=`, or whose
/// name or value is not UTF-8, is skipped (Foundation skips those too: a Latin-1 path must not become another path).
public enum ProcessEnvironment {
    public static func current() -> [String: String] {
        var result: [String: String] = [:]
        let table = environ
        guard Int(bitPattern: table) != 0 else { return result }  // after clearenv()
        var entry = table
        while let pointer = entry.pointee {
            let length = strlen(pointer)
            pointer.withMemoryRebound(to: UInt8.self, capacity: length) { bytes in
                let all = UnsafeBufferPointer(start: bytes, count: length)
                guard let equals = all.firstIndex(of: UInt8(ascii: "=")),
                    let name = String(validating: UnsafeBufferPointer(rebasing: all[..<equals]), as: UTF8.self),
                    let value = String(validating: UnsafeBufferPointer(rebasing: all[(equals + 1)...]), as: UTF8.self),
                    result[name] == nil
                else { return }
                result[name] = value
            }
            entry += 1
        }
        return result
    }
}
