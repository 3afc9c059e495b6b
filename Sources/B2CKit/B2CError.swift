import Foundation

/// Every failure the client reports, by kind; the CLI maps kinds to exit codes (docs/exit-codes.md).
/// The message says what went wrong in the library's words; `remedy` says what fixes it as a value, which the CLI
/// renders as a command line and other callers as they see fit.
public struct B2CError: Error, Sendable, CustomStringConvertible {
    /// What kind of failure it is; each kind is one exit code of the CLI (the trailing comments).
    public enum Kind: Sendable, Equatable {
        /// The operation failed: a response that fails validation, no answer from the browser in time, a redirect port in use,
        /// a store problem, a file not written whole (exit 1).
        case failed  // 1
        /// The person or a signal stopped it: Cancel on a page, Ctrl-C, SIGTERM, "no" to a question (exit 2).
        case cancelled  // 2
        /// The configuration, a file it names, the store's key, or the app as the tenant sees it is wrong or missing
        /// (exit 3).
        case configuration  // 3
        /// Nothing more can be done without the person: no account or usable token, a wrong password or code;
        /// they sign in again (exit 4).
        case interactionRequired  // 4
        /// The network, a proxy or the tenant failed: unreachable, a timeout, HTTP 5xx, a malformed or oversized answer,
        /// a refresh lock held too long (exit 5).
        case network  // 5
        /// The request itself is wrong: bad arguments, an ambiguous account, an answer that cannot be asked for without a
        /// terminal (exit 64).
        case usage  // 64
    }

    /// Which kind of failure; the CLI's exit code follows from it.
    public var kind: Kind
    /// What went wrong, in the library's words, without the remedy.
    public var message: String
    /// What fixes it, when something does; the caller renders it (the CLI as a command line).
    public var remedy: Remedy?
    /// The tenant's own code for a refusal (`AADB2C90129`, or the OAuth error when it gave no code), when it answered one.
    public var tenantCode: String?
    /// No key for the store's tokens can be had in this session (none configured, or the one the store names is out of
    /// reach): what needs no persistent store (an app-only token) can go on without one.
    public var isMissingStoreKey = false
    /// The attributes a native sign-up's tenant refused (`invalid_attributes`), by wire name.
    public var invalidAttributes: [String] = []

    /// A failure of `kind` with its message and, when there is one, what fixes it.
    public init(_ kind: Kind, _ message: String, remedy: Remedy? = nil) {
        self.kind = kind; self.message = message; self.remedy = remedy
    }

    /// The message, then the remedy in parentheses on a line of its own.
    public var description: String { message + (remedy.map { "\n(\($0))" } ?? "") }

    /// A failure of the token store (opening, migrating, reading, writing, its key): a choice to make or a key to give is
    /// `configuration`, a store that failed is `failed`.
    static func store(_ message: String, configuration: Bool = false, remedy: Remedy? = nil, missingKey: Bool = false) -> B2CError {
        var e = B2CError(configuration ? .configuration : .failed, message, remedy: remedy)
        e.isMissingStoreKey = missingKey
        return e
    }

    /// A configuration file that is invalid: its path and what is wrong (with the JSON path inside it).
    static func invalidConfiguration(_ path: String, _ problem: String, remedy: Remedy? = nil) -> B2CError {
        B2CError(.configuration, "the configuration '\(path)' is invalid: \(problem)", remedy: remedy)
    }

    /// A configuration file that could not be read: said with its path and what to do.
    static func unreadableConfiguration(_ e: LocalFileError) -> B2CError {
        switch e.problem {
        case .missing:
            return B2CError(.configuration, "the configuration '\(e.path)' does not exist", remedy: .createConfiguration(path: e.path))
        case .directory:
            let inside = URL(fileURLWithPath: e.path).appendingPathComponent("policies.json").path
            return B2CError(
                .configuration,
                "the configuration '\(e.path)' is a directory, not a configuration file: name the file itself"
                    + (FileManager.default.fileExists(atPath: inside) ? ", e.g. '\(inside)'" : " (a policies.json)"))
        case .permissionDenied, .other: return B2CError(.configuration, "the configuration '\(e.path)' \(e.reason)")
        }
    }
}

/// What a person can do about a failure, independent of how it is asked for (a command line, a button).
public enum Remedy: Sendable, Equatable, CustomStringConvertible {
    /// How a policy signs people in: the browser, a password (ROPC) or native auth; profile policies run their own flow.
    public enum SignInMethod: Sendable, Equatable { case browser, password, native, editProfile, resetPassword }

    /// Sign in (again) to a policy; `loginHint` is the person, when known.
    case signIn(policy: String, method: SignInMethod, loginHint: String?)
    /// Check the username and password and try again, or sign in in the browser to `policy`.
    case retryPasswordOrBrowser(policy: String)
    /// The person is unknown to the tenant (a native sign-in): check the address, or sign the person up — natively, as
    /// they were signing in (`username`: the address tried, when known).
    case signUp(username: String?)
    /// Several accounts of a policy match: name one (a longer selector), or make one current.
    case chooseAccount(policy: String, longerSelector: Bool)
    /// Several people match or none is current: name one by email or oid.
    case choosePerson(ambiguousSelector: Bool)
    /// Say which account: a selector, a policy, or all.
    case nameAccount
    /// See who is signed in.
    case listAccounts
    /// The configuration has no default policy for this: name one.
    case namePolicy(candidates: [String])
    /// The browser did not answer in time: try again, or allow more time.
    case allowMoreTime
    /// The URL is not covered by a configured API: name the API whose token to use and allow the host.
    case nameAPIAndAllowHost(String)
    /// The URL's host may not receive this API's token unless allowed explicitly.
    case allowHost(String)
    /// No configured API: give a full URL and name the API.
    case nameAPI
    /// No key for the store: offer one (a key store, an environment key) or keep tokens unencrypted on purpose.
    case chooseStorage
    /// The store must be encrypted first.
    case encryptStore
    /// The store's key is gone for good: remove the store's tokens.
    case removeStoredTokens
    /// No named configuration of that name: create it.
    case createProfile(String)
    /// An app-only token needs its resource: a configured API, or an `<App ID URI>/.default` scope.
    case nameAppResource
    /// The app's client secret comes from outside: standard input, the environment, or a 0600 file the configuration names.
    case provideClientSecret(configurationKey: String)
    /// An app-only token was asked with a public client's configuration: write the daemon app's configuration (its client
    /// id with a secret).
    case writeAppOnlyConfiguration
    /// An External ID tenant gives no token for the app itself: name the API's scope, or add the API to the configuration.
    case nameScopeOrAddAPI
    /// The token is another API's: ask for that API's token.
    case useTokenOfAPI(String)
    /// Check the tokens and metadata of this policy.
    case checkPolicy(String)
    /// An External ID tenant has no policies: leave this one out.
    case leaveOutPolicy(String)
    /// A value of a new configuration is missing or malformed: give it (`ConfigurationDraft`).
    case giveValue(ConfigurationField)
    /// The configuration file named does not exist: check the path, or write one there.
    case createConfiguration(path: String)

    /// The values a new configuration is made from.
    public enum ConfigurationField: Sendable, Equatable {
        case policy, host, tenant, clientID
        case apiURL(api: String)
        case apiScope(api: String)
    }

    /// The remedy in plain words ("sign in to B2C_1_susi as alice@contoso.com"), without a command line.
    public var description: String {
        switch self {
        case .signIn(let policy, _, let hint): "sign in to \(policy)" + (hint.map { " as \($0)" } ?? "")
        case .retryPasswordOrBrowser(let policy): "check the username and password, or sign in to \(policy) in the browser"
        case .signUp(let username): "check the address, or sign up\(username.map { " as \($0)" } ?? "") with native sign-up"
        case .chooseAccount(let policy, _): "choose one of the accounts of \(policy)"
        case .choosePerson: "choose a person by email or oid"
        case .nameAccount: "name an account, a policy, or all accounts"
        case .listAccounts: "list the accounts signed in"
        case .namePolicy: "name a policy"
        case .allowMoreTime: "try again, or allow more time"
        case .nameAPIAndAllowHost(let host): "name the API whose token to use and allow \(host)"
        case .allowHost(let host): "allow \(host) explicitly if you trust it"
        case .nameAPI: "give a full URL and name the API"
        case .chooseStorage: "offer a key, or keep tokens unencrypted on purpose"
        case .encryptStore: "encrypt the store first"
        case .removeStoredTokens: "remove the store's tokens and sign in again"
        case .createProfile(let name): "create the configuration \(name)"
        case .nameAppResource: "name an API, or an <App ID URI>/.default scope"
        case .provideClientSecret(let key): "give the secret on standard input, in B2C_CLIENT_SECRET, or in a 0600 file named by \(key)"
        case .writeAppOnlyConfiguration: "write a configuration for the daemon app: its client id, with a secret"
        case .nameScopeOrAddAPI: "name the API's scope, or add the API to the configuration"
        case .useTokenOfAPI(let api): "use the token of the API \(api)"
        case .checkPolicy(let policy): "check the tokens of \(policy)"
        case .leaveOutPolicy(let policy): "leave out the policy \(policy)"
        case .giveValue(let field): "give the \(field)"
        case .createConfiguration(let path): "check the path, or write a configuration at \(path)"
        }
    }
}
