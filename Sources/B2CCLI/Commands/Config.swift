import ArgumentParser
import B2CFastPath
import B2CKit
import Foundation

struct ConfigCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "config", abstract: "How the token store keeps tokens: encrypted (the default) or in plaintext, and its key.",
        subcommands: [
            ConfigGetCommand.self, ConfigSetCommand.self, ConfigRotateKeyCommand.self, ConfigLockCommand.self, ConfigAllowCommand.self,
            ConfigDenyCommand.self,
        ])

    static func openStore() throws -> TokenStore { try ClientSettings().openStore() }

}

struct ConfigGetCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "get", abstract: "Show the storage mode, where the key is kept (never the key) and the store's path.")
    @OptionGroup var output: OutputOptions

    func run() throws {
        let store = try ConfigCommand.openStore()
        let status = try store.storageStatus()
        Output.writeStorage(status, path: store.path, format: output.format)
    }
}

struct ConfigSetCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "set", abstract: "Set how the store keeps tokens: `b2c config set storage encrypted|plaintext`.",
        discussion: """
            encrypted: every token is encrypted (AES-GCM) with a data key from the Secret Service (GNOME Keyring, KWallet), the \
            macOS Keychain, or B2C_STORE_KEY — in one transaction.
            plaintext: tokens are decrypted and kept unencrypted, on purpose; remembered in the store and said on every sign-in.
            """)
    @Argument(help: "storage", completion: .list(["storage"])) var setting: String
    @Argument(help: "encrypted or plaintext", completion: .list(["encrypted", "plaintext"])) var value: String

    func validate() throws {
        guard setting == "storage" else { throw ValidationError("'\(setting)' is not a setting; the one setting is storage.") }
        guard StorageMode(rawValue: value) != nil else { throw ValidationError("storage is encrypted or plaintext, not '\(value)'.") }
    }

    func run() throws {
        let store = try ConfigCommand.openStore()
        let status = try store.setStorage(StorageMode(rawValue: value)!)
        Output.writeStorage(status, path: store.path, format: .table)
        if status.mode == .plaintext {
            writeErr("tokens are now stored unencrypted in \(store.path) (readable by anything that can read the file)")
        }
    }
}

struct ConfigRotateKeyCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rotate-key",
        abstract: "Re-encrypt every token with a new data key, in one transaction.",
        discussion: """
            With the Secret Service or the Keychain, b2c makes the new key and keeps it there (the old one is removed once the \
            store no longer needs it). With B2C_STORE_KEY, give the new key in B2C_NEW_STORE_KEY, then use it as B2C_STORE_KEY.
            """)

    func run() throws {
        let store = try ConfigCommand.openStore()
        var newKey: Data?
        if let text = ProcessEnvironment.current()["B2C_NEW_STORE_KEY"], !text.isEmpty {
            guard let data = Data(base64Encoded: text.trimmingCharacters(in: .whitespacesAndNewlines)), data.count == 32 else {
                throw CLIError(
                    "B2C_NEW_STORE_KEY must be base64 of 32 random bytes (`openssl rand -base64 32`)", exitCode: ExitStatus.configuration)
            }
            newKey = data
        }
        let status = try store.rotateKey(newEnvironmentKey: newKey)
        Output.writeStorage(status, path: store.path, format: .table)
        if status.source == .environment { writeErr("the store now needs the new key: set B2C_STORE_KEY to B2C_NEW_STORE_KEY's value") }
    }
}

struct ConfigLockCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "lock",
        abstract: "Forget the store key cached in this user's kernel keyring; the next command asks the key store for it again.")

    func run() throws {
        let store = try ConfigCommand.openStore()
        writeOut(try store.forgetCachedKey() ? "The cached store key is forgotten." : "No store key was cached.")
    }
}

struct ConfigAllowCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "allow", abstract: "Allow a policies.json found in the current directory (as it is now; a change needs a new allow).",
        discussion: """
            A ./policies.json that no flag or variable names decides where your tokens go (its APIs' base URLs, its caFile), so \
            b2c uses it only once you allowed it. This prints where it points, then remembers the file's path and content hash.
            Example:
              b2c config allow ./policies.json
            """)
    @Argument(help: ArgumentHelp("The file (default: ./policies.json).", valueName: "file")) var file = "./policies.json"

    func run() throws {
        let candidate: ConfigurationTrust.Candidate
        do { candidate = try ConfigurationTrust.read(file) } catch let e as ConfigurationRefused {
            throw CLIError("\(e)", exitCode: ExitStatus.configuration)
        }
        let config = try ClientSettings.parsed { try candidate.configuration() }
        do { try ConfigurationTrust(storeDirectory: StoreLocation.directory()).allow(candidate) } catch {
            throw CLIError("\(error)", exitCode: ExitStatus.configuration)
        }
        writeOut("Allowed \(file):\n" + ImplicitConfiguration.summary(config))
    }
}

struct ConfigDenyCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "deny", abstract: "Take back the allow of a policies.json in the current directory.",
        discussion: """
            Example:
              b2c config deny ./policies.json
            """)
    @Argument(help: ArgumentHelp("The file (default: ./policies.json).", valueName: "file")) var file = "./policies.json"

    func run() throws {
        let was = ConfigurationTrust(storeDirectory: StoreLocation.directory()).deny(file)
        writeOut(was ? "\(file) is no longer allowed." : "\(file) was not allowed; nothing to take back.")
    }
}
