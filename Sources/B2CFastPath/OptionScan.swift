/// The options of a command line after its command word, in their plain forms: `--name value`, `--name=value`, or a flag.
/// Used where a command is read without ArgumentParser (its reflection over the command tree costs a cache hit a large
/// share of its run): anything the plain forms do not cover is nil, and the caller leaves it to ArgumentParser.
public enum OptionScan {
    /// `(name, value)` pairs in order (a flag's value is empty; `aliases` are folded into the name they stand for), or nil
    /// for an unknown name, an option given twice (other than `repeatable` ones), a flag with `=value`, a missing or empty
    /// value, or a value that starts with '-' (a number is taken for `negativeNumbers`).
    public static func scan(
        _ arguments: ArraySlice<String>, flags: Set<String>, valued: Set<String>, repeatable: Set<String> = [],
        aliases: [String: String] = [:], negativeNumbers: Set<String> = []
    ) -> [(name: String, value: String)]? {
        var out: [(name: String, value: String)] = []
        var seen: Set<String> = []
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
            guard repeatable.contains(name) || seen.insert(name).inserted else { return nil }
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
