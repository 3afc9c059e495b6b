import B2CKit
import Foundation

/// Documented exit codes (docs/exit-codes.md).
public enum ExitStatus {
    public static let ok: Int32 = 0
    public static let error: Int32 = 1
    public static let cancelled: Int32 = 2
    public static let configuration: Int32 = 3
    public static let interactionRequired: Int32 = 4
    public static let network: Int32 = 5
    /// `b2c migrate diff`: something an app relies on differs between the two sides.
    public static let differs: Int32 = 6
    public static let usage: Int32 = 64
}

package func exitStatus(_ kind: B2CError.Kind) -> Int32 {
    switch kind {
    case .failed: ExitStatus.error
    case .cancelled: ExitStatus.cancelled
    case .configuration: ExitStatus.configuration
    case .interactionRequired: ExitStatus.interactionRequired
    case .network: ExitStatus.network
    case .usage: ExitStatus.usage
    }
}

/// A failure with its message and exit code; printed once as `b2c: message`.
public struct CLIError: Error, CustomStringConvertible {
    public let message: String
    public let exitCode: Int32
    public init(_ message: String, exitCode: Int32) { self.message = message; self.exitCode = exitCode }
    public var description: String { message }

    /// A library failure in the CLI's words: its message and its remedy as a command line, with its exit code.
    init(_ e: B2CError) {
        self.init(Self.render(e), exitCode: exitStatus(e.kind))
    }

    static func render(_ e: B2CError) -> String { render(e.message, e.remedy) }

    /// A message and its remedy as the CLI says them: the remedy as flags and command lines.
    static func render(_ message: String, _ remedy: Remedy?) -> String {
        guard let remedy else { return message }
        switch remedy {
        case let .signIn(policy, method, hint):
            return message + "\nRun: " + signInCommandLine(policy: policy, method: method, loginHint: hint)
        case .retryPasswordOrBrowser(let policy):
            return message + "\nCheck them and run the command again, or sign in in the browser: b2c signin --policy \(policy)"
        case .signUp(let username):
            return message + "\nCheck the address, or sign up: b2c signup --username \(username ?? "<email>")"
        case .chooseAccount(_, true): return message + "\nGive a longer --account (email, oid or account id)."
        case .chooseAccount(let policy, false):
            return message + "\nChoose one with --account, or make one current with `b2c switch --policy \(policy) <account>`."
        case .choosePerson(true): return message + "\nGive an email or oid with --account."
        case .choosePerson(false): return message + "\nChoose one with --account <email>."
        case .nameAccount: return message + ": --account <email|oid|account id>, --policy <policy>, or --all"
        case .listAccounts: return message + " (see `b2c accounts`)"
        case .namePolicy: return message + "; name one with --policy"
        case .allowMoreTime: return message + ". Run the command again, or raise --timeout."
        case .nameAPIAndAllowHost(let host):
            return message + ". Name the API whose token to use with --api and allow the host with --allow-host \(host)."
        case .allowHost(let host): return message + ". If you trust that host, add --allow-host \(host)."
        case .nameAPI: return message + ", or give a full URL and --api"
        case .chooseStorage:
            return message + " Or keep tokens unencrypted on purpose: `b2c config set storage plaintext`. Nothing was stored."
        case .encryptStore: return message + ": run `b2c config set storage encrypted` first"
        case .removeStoredTokens: return message + " Remove the store's tokens with `b2c signout --all`."
        case .createProfile(let name): return message + "; create it with `b2c init --profile \(name)`"
        case .nameAppResource: return message + ": give --api NAME or --scope <App ID URI>/.default"
        case .provideClientSecret(let key):
            return message + ": pipe it to --client-secret-stdin, set B2C_CLIENT_SECRET (from your CI's secret store), or name a 0600 "
                + "file in the configuration's \(key)"
        case .writeAppOnlyConfiguration:
            return message + ": write one with `b2c init --out daemon.json --client-id <the daemon's id> --policy "
                + "<any policy>=clientCredentials`, or, from the local tenant, "
                + "`b2c-emulator serve --config-out daemon.json --client daemon`"
        case .nameScopeOrAddAPI:
            return message + ": name the scope with --scope (such as api://<API app id>/<scope>), or add the API to \"apis\" "
                + "(b2c init --api NAME --api-url URL --scope SCOPE)"
        case .useTokenOfAPI(let api): return message + ". Use `b2c token --api \(api)`"
        case .checkPolicy(let policy): return message + ". Check it with `b2c token --policy \(policy) --decode` and `b2c policies --check`"
        case .leaveOutPolicy(let policy): return message + "; leave out --policy '\(policy)'"
        case .giveValue(let field): return message + " (" + Self.flag(field) + ")"
        case .createConfiguration(let path):
            return message + ". Check the path, or write a configuration there with `b2c init --out \(path)`."
        }
    }

    /// The `b2c init` option that gives a configuration value.
    static func flag(_ field: Remedy.ConfigurationField) -> String {
        switch field {
        case .policy: "--policy NAME=ROLE"
        case .host: "--host https://<name>.b2clogin.com"
        case .tenant: "--tenant contoso.onmicrosoft.com or its GUID"
        case .clientID: "--client-id <GUID>"
        case .apiURL(let api): "--api \(api) --api-url URL"
        case .apiScope(let api): "--api \(api) --scope <full scope URI>"
        }
    }

    /// The command that signs a person in to a policy by its method.
    static func signInCommandLine(policy: String, method: Remedy.SignInMethod, loginHint: String?) -> String {
        switch method {
        case .native: "b2c signin --native --username \(loginHint ?? "<email>")"
        case .password: "b2c signin --policy \(policy) --username \(loginHint ?? "<user>") --password-stdin"
        case .browser: "b2c signin --policy \(policy)" + (loginHint.map { " --login-hint \($0)" } ?? "")
        case .editProfile: "b2c edit-profile --policy \(policy)" + (loginHint.map { " --account \($0)" } ?? "")
        case .resetPassword: "b2c reset-password --policy \(policy)" + (loginHint.map { " --account \($0)" } ?? "")
        }
    }
}
