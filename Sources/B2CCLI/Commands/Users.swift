import ArgumentParser
import B2CKit
import Foundation

/// `b2c users`: the directory's people through Microsoft Graph, as the app (`User.ReadWrite.All`).
struct UsersCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "users",
        abstract: "Manage the tenant's users through Microsoft Graph, as the app (test users, imports).",
        discussion: """
            The app is the configuration's (a daemon's: `b2c-emulator serve --config-out FILE --client user-admin` for the \
            local tenant), with Graph's application permission User.ReadWrite.All; its secret comes from B2C_CLIENT_SECRET, \
            --client-secret-stdin or the configuration's clientSecretFile. Graph is the configuration's "graph" (the local \
            tenant's own), else Microsoft's.
            Exit codes: 0 done, 1 a refusal (a sign-in name taken, no such user), 3 a configuration or a missing \
            permission, 5 network or a throttle not waited out (three waits of up to a minute), 64 usage.
            """,
        subcommands: [
            UsersList.self, UsersShow.self, UsersCreate.self, UsersUpdate.self, UsersSetPassword.self, UsersDelete.self, UsersImport.self,
        ])
}

/// What every `b2c users` command shares: the client options and the output format.
struct UsersOptions: ParsableArguments {
    @OptionGroup var client: ClientOptions
    @Option(name: [.customShort("o"), .long], help: "table or json (default: table on a terminal, json otherwise).")
    var output: OutputFormat?

    func run<T>(_ body: (B2CClient) async throws -> T) async throws -> T {
        try await withClient(try client.makeClient(), body)
    }
}

/// A password from stdin, or generated (and then printed once, by the command that asked for it).
struct PasswordChoice: ParsableArguments {
    @Flag(help: "Read the password from the first line of stdin.") var passwordStdin = false
    @Flag(help: "Make a strong random password and print it once.") var generatePassword = false

    func validate() throws {
        if passwordStdin && generatePassword { throw ValidationError("--password-stdin and --generate-password exclude each other.") }
        if !passwordStdin && !generatePassword {
            throw ValidationError(
                "give the new password on stdin (--password-stdin), or --generate-password to have one made and printed once.")
        }
    }

    /// The password, and whether it was made here (so it must be shown).
    func password(clientSecretFromStdin: Bool) throws -> (String, generated: Bool) {
        if generatePassword { return (Self.generated(), true) }
        if clientSecretFromStdin {
            throw CLIError(
                "--password-stdin and --client-secret-stdin both read stdin; give the secret through B2C_CLIENT_SECRET or the "
                    + "configuration's clientSecretFile", exitCode: ExitStatus.usage)
        }
        return (try Prompt.password(fromStdin: true, prompt: ""), false)
    }

    /// 20 characters: lower and upper case, digits and symbols, from the system's random source.
    static func generated() -> String {
        let sets = ["abcdefghijkmnopqrstuvwxyz", "ABCDEFGHJKLMNPQRSTUVWXYZ", "23456789", "!#%+-=?@^_"].map(Array.init)
        var chars = sets.map { $0.randomElement()! }
        let all = sets.flatMap { $0 }
        while chars.count < 20 { chars.append(all.randomElement()!) }
        return String(chars.shuffled())
    }
}

/// `NAME=VALUE` pairs: `true`/`false` are booleans, whole numbers numbers, the rest text.
func attributeValues(_ pairs: [String]) throws -> [String: JSONValue] {
    var out: [String: JSONValue] = [:]
    for pair in pairs {
        guard let eq = pair.firstIndex(of: "="), eq != pair.startIndex else {
            throw CLIError("--attribute '\(pair)' is not NAME=VALUE", exitCode: ExitStatus.usage)
        }
        let value = String(pair[pair.index(after: eq)...])
        out[String(pair[..<eq])] =
            value == "true" ? .bool(true) : value == "false" ? .bool(false) : Int(value).map { JSONValue($0) } ?? .string(value)
    }
    return out
}

func usersTable(_ users: [DirectoryUser]) -> String {
    table(
        [["ID", "DISPLAY NAME", "SIGN-IN NAME", "TYPE", "ENABLED"]]
            + users.map { u in
                [
                    u.id, u.displayName, u.signIn?.name ?? "", u.signIn?.type ?? "",
                    u.json["accountEnabled"].map { $0 == .bool(false) ? "no" : "yes" } ?? "",
                ]
            })
}

/// A deletion's yes: given with `--yes`, else asked at a terminal; without one, exit 64 and nothing deleted.
func confirmDeletion(_ what: String, yes: Bool) throws {
    guard !yes else { return }
    guard Prompt.stdinIsTerminal else {
        throw CLIError("deleting \(what) needs a yes: add --yes (no terminal to ask on); nothing was deleted", exitCode: ExitStatus.usage)
    }
    writePrompt("b2c: delete \(what)? [y/N] ")
    guard let a = Prompt.line()?.lowercased(), ["y", "yes"].contains(a) else {
        throw CLIError("nothing was deleted", exitCode: ExitStatus.cancelled)
    }
}

/// The person a selector names, or exit 1 saying there is none.
func requiredUser(_ c: B2CClient, _ selector: String) async throws -> DirectoryUser {
    guard let user = try await c.user(selector) else {
        throw CLIError("no user \(selector) in the tenant (give an object id, or a sign-in name)", exitCode: ExitStatus.error)
    }
    return user
}

struct UsersList: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "list", abstract: "List users (every page), optionally those whose name or address starts with --filter.",
        discussion: """
            Examples:
              b2c users list --config admin.json
              b2c users list --config admin.json --filter ali -o json
              b2c users list --config admin.json --filter alice@contoso.com      an address: whose sign-in name it is
            """)
    @OptionGroup var options: UsersOptions
    @Option(help: "The start of a display name or an address, or a whole sign-in address.") var filter: String?
    @Option(help: "Users per page (1–999).") var pageSize = 100
    @Option(help: "At most this many users.") var limit: Int?

    func validate() throws {
        guard (1...999).contains(pageSize) else { throw ValidationError("--page-size must be between 1 and 999.") }
        if let limit, limit < 1 { throw ValidationError("--limit must be 1 or more.") }
    }

    func run() async throws {
        let users = try await options.run { try await $0.listUsers(filter: filter, pageSize: pageSize, limit: limit) }
        switch options.output ?? .auto {
        case .json: writeOut(JSONValue.array(users.map(\.json)).serialized(pretty: true))
        case .table: writeOut(usersTable(users))
        }
    }
}

struct UsersShow: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "show", abstract: "Show one user: by object id or sign-in name.",
        discussion: "Example:\n  b2c users show alice@contoso.com --config admin.json -o json")
    @OptionGroup var options: UsersOptions
    @Argument(help: "An object id, or a sign-in name (email address or user name).") var user: String

    func run() async throws {
        let found = try await options.run { try await requiredUser($0, user) }
        switch options.output ?? .auto {
        case .json: writeOut(found.json.serialized(pretty: true))
        case .table:
            writeOut(
                table(
                    [["PROPERTY", "VALUE"]]
                        + (found.json.objectValue ?? [:]).filter { !$0.key.hasPrefix("@odata") }.sorted { $0.key < $1.key }.map { k, v in
                            [k, v.stringValue ?? v.serialized()]
                        }))
        }
    }
}

struct UsersCreate: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "create", abstract: "Create a local account that signs in with an email address (or a user name, on B2C).",
        discussion: """
            Examples:
              printf '%s\\n' "$PASSWORD" | b2c users create --email erin@contoso.com --display-name Erin --password-stdin \\
                --config admin.json
              b2c users create --email test1@contoso.com --display-name 'Test One' --generate-password \\
                --attribute extension_LoyaltyId=L-1 --config admin.json
            """)
    @OptionGroup var options: UsersOptions
    @OptionGroup var passwordChoice: PasswordChoice
    @Option(help: "The sign-in email address.") var email: String?
    @Option(help: "The sign-in user name (B2C only).") var username: String?
    @Option(help: "The display name (default: the sign-in name).") var displayName: String?
    @Option(help: "The given name.") var givenName: String?
    @Option(help: "The surname.") var surname: String?
    @Option(
        parsing: .singleValue,
        help: "An attribute NAME=VALUE (repeatable): city=Lyon, or a custom one, extension_LoyaltyId=L-7 (its app id is looked up).")
    var attribute: [String] = []
    @Flag(help: "The person must choose a new password at the next sign-in.") var forceChangePassword = false

    func validate() throws {
        if (email == nil) == (username == nil) { throw ValidationError("give the sign-in name: --email or --username (one).") }
    }

    func run() async throws {
        let (password, generated) = try passwordChoice.password(clientSecretFromStdin: options.client.clientSecretStdin)
        var new = NewDirectoryUser(
            signIn: email.map { .email($0) } ?? .userName(username ?? ""), displayName: displayName ?? email ?? username ?? "",
            password: password)
        new.givenName = givenName
        new.surname = surname
        new.forceChangePassword = forceChangePassword
        new.attributes = try attributeValues(attribute)
        let user = try await options.run { try await $0.createUser(new) }
        switch options.output ?? .auto {
        case .json:
            var out = user.json.objectValue ?? [:]
            if generated { out["password"] = .string(password) }
            writeOut(JSONValue.object(out).serialized(pretty: true))
        case .table:
            writeOut("Created \(new.signInName) (\(user.id)).")
            if generated { writeOut("Password: \(password)   (shown once: keep it now)") }
        }
    }
}

struct UsersUpdate: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "update", abstract: "Change a user's names, attributes, or whether the account is enabled.",
        discussion: "Example:\n  b2c users update erin@contoso.com --display-name 'Erin E' --attribute city=Lyon --config admin.json")
    @OptionGroup var options: UsersOptions
    @Argument(help: "An object id, or a sign-in name.") var user: String
    @Option(help: "The display name.") var displayName: String?
    @Option(help: "The given name.") var givenName: String?
    @Option(help: "The surname.") var surname: String?
    @Option(parsing: .singleValue, help: "An attribute NAME=VALUE (repeatable).") var attribute: [String] = []
    @Flag(inversion: .prefixedEnableDisable, help: "Enable or disable the account.") var account: Bool?

    func run() async throws {
        var changes = try attributeValues(attribute)
        if let displayName { changes["displayName"] = .string(displayName) }
        if let givenName { changes["givenName"] = .string(givenName) }
        if let surname { changes["surname"] = .string(surname) }
        if let account { changes["accountEnabled"] = .bool(account) }
        guard !changes.isEmpty else {
            throw CLIError("nothing to change: give --display-name, --attribute, …", exitCode: ExitStatus.usage)
        }
        let id = try await options.run { c -> String in
            let found = try await requiredUser(c, user)
            try await c.updateUser(found.id, changes)
            return found.id
        }
        writeOut("Changed \(user) (\(id)).")
    }
}

struct UsersSetPassword: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "set-password", abstract: "Give a user a new password (from stdin, or generated and printed once).",
        discussion: "Example:\n  printf '%s\\n' \"$NEW\" | b2c users set-password erin@contoso.com --password-stdin --config admin.json")
    @OptionGroup var options: UsersOptions
    @OptionGroup var passwordChoice: PasswordChoice
    @Argument(help: "An object id, or a sign-in name.") var user: String
    @Flag(help: "The person must choose a new password at the next sign-in.") var forceChangePassword = false

    func run() async throws {
        let (password, generated) = try passwordChoice.password(clientSecretFromStdin: options.client.clientSecretStdin)
        try await options.run { c in
            let found = try await requiredUser(c, user)
            try await c.setUserPassword(found.id, password, forceChange: forceChangePassword)
        }
        writeOut("The password of \(user) is changed.")
        if generated { writeOut("Password: \(password)   (shown once: keep it now)") }
    }
}

struct UsersDelete: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "delete", abstract: "Delete a user (asks at a terminal; --yes otherwise).",
        discussion: "Example:\n  b2c users delete erin@contoso.com --yes --config admin.json")
    @OptionGroup var options: UsersOptions
    @Argument(help: "An object id, or a sign-in name.") var user: String
    @Flag(help: "Delete without asking.") var yes = false

    func run() async throws {
        try await options.run { c in
            let found = try await requiredUser(c, user)
            try confirmDeletion("\(found.displayName) (\(user), \(found.id))", yes: yes)
            _ = try await c.deleteUser(found.id)
        }
        writeOut("Deleted \(user).")
    }
}
