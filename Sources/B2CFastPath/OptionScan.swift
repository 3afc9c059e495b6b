/// The options of a command line after its command word, in their plain forms: `--name value`, `--name=value`, or a flag.
/// Used where a command is read without ArgumentParser (its reflection over the command tree costs a cache hit a large
/// share of its run): anything the plain forms do not cover is nil, and the caller leaves it to ArgumentParser. The names
/// are lists, not sets: a dozen names are searched as fast in a list, and the first `Set<String>` of a process costs the
/// Swift runtime a look-up of its type's metadata, a share of a cache hit (bench/README.md, "A cheaper start").
public enum OptionScan {
    /// `(name, value)` pairs in order (a flag's value is empty; `aliases` are folded into the name they stand for), or nil
    /// for an unknown name, an option given twice (other than `repeatable` ones), a flag with `=value`, a missing or empty
    /// value, or a value that starts with '-' (a number is taken for `negativeNumbers`).
    public static func scan(
        _ arguments: ArraySlice<String>, flags: [String], valued: [String], repeatable: [String] = [],
        aliases: [String: String] = [:], negativeNumbers: [String] = []
    ) -> [(name: String, value: String)]? {
        var out: [(name: String, value: String)] = []
        var seen: [String] = []
        var i = arguments.startIndex
        while i < arguments.endIndex {
            var name = arguments[i]
            var value: String?
            if name.hasPrefix("--"), let eq = name.firstIndex(of: "=") {
                value = String(name[name.index(after: eq)...])
                name = String(name[..<eq])
            }
            i += 1
            name = aliases[name] ?? name
            if !repeatable.contains(name) {
                guard !seen.contains(name) else { return nil }
                seen.append(name)
            }
            if flags.contains(name) {
                guard value == nil else { return nil }
                out.append((name, ""))
                continue
            }
            guard valued.contains(name) else { return nil }
            if value == nil {
                guard i < arguments.endIndex,
                    !arguments[i].hasPrefix("-") || (negativeNumbers.contains(name) && Int(arguments[i]) != nil)
                else { return nil }
                value = arguments[i]
                i += 1
            }
            guard let v = value, !v.isEmpty else { return nil }
            out.append((name, v))
        }
        return out
    }
}
