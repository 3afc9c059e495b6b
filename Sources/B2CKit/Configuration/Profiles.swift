import B2CFastPath
import Foundation

/// Named configurations, one file each: `$XDG_CONFIG_HOME/b2c/profiles/NAME.json`, chosen per command with `--profile` or
/// per shell with `$B2C_PROFILE` — nothing a command does changes another shell's choice.
public enum Profiles {
    /// Where profiles live: `$XDG_CONFIG_HOME/b2c/profiles`, else `~/.config/b2c/profiles`.
    public static func directory(environment: [String: String] = ProcessEnvironment.current()) -> URL {
        let xdg =
            environment["XDG_CONFIG_HOME"].flatMap { $0.isEmpty ? nil : $0 }
            ?? ((environment["HOME"] ?? NSHomeDirectory()) + "/.config")
        return URL(fileURLWithPath: xdg).appendingPathComponent("b2c/profiles")
    }

    /// Letters, digits, `_ . -`, not starting with `.`: a profile name is a file name.
    public static func isValidName(_ name: String) -> Bool {
        PolicyID.isValid(name) && !name.hasPrefix(".") && name.count <= 64
    }

    /// The file of the profile `name`, whether it exists or not.
    public static func path(of name: String, environment: [String: String] = ProcessEnvironment.current()) -> String {
        directory(environment: environment).appendingPathComponent("\(name).json").path
    }

    /// The profile names there are, sorted.
    public static func names(environment: [String: String] = ProcessEnvironment.current()) -> [String] {
        let files = (try? FileManager.default.contentsOfDirectory(atPath: directory(environment: environment).path)) ?? []
        return files.filter { $0.hasSuffix(".json") }.map { String($0.dropLast(5)) }.filter(isValidName).sorted()
    }

    /// The file of an existing profile, or an error that lists the profiles there are.
    public static func existing(_ name: String, environment: [String: String] = ProcessEnvironment.current()) throws -> String {
        guard isValidName(name) else {
            throw B2CError(.configuration, "'\(name)' is not a profile name (letters, digits, _ . -)")
        }
        let file = path(of: name, environment: environment)
        guard FileManager.default.fileExists(atPath: file) else {
            let known = names(environment: environment)
            throw B2CError(
                .configuration,
                "the configuration '\(file)' does not exist: there is no profile '\(name)' ("
                    + (known.isEmpty ? "no profiles yet" : "profiles: \(known.joined(separator: ", "))") + ")",
                remedy: known.isEmpty ? .createProfile(name) : nil)
        }
        return file
    }
}
