import Foundation

/// A person: one (tenant, oid).
public struct Identity: Sendable, Equatable {
    /// The tenant's GUID, lower-cased.
    public var tenantID: String
    /// The person's object id in the tenant (the id token's `oid`, else `sub`), lower-cased.
    public var oid: String
    /// The display name (`name`), when the id token has one.
    public var name: String?
    /// The `given_name` claim, when there is one.
    public var givenName: String?
    /// The `family_name` claim, when there is one.
    public var familyName: String?
    /// The email address, as `Account.email` reads it from the id token.
    public var email: String?
}

/// The part of the store one configuration sees: its authority host (`host[:port]`), its client id and, when the
/// configuration names it, its tenant GUID. MSAL keys its cache by environment, realm and client id for the same reason:
/// the same account id can come from two hosts (two emulators, b2clogin.com and a custom domain), and a token issued
/// to one app must never be served to another.
public struct AccountScope: Sendable, Hashable, CustomStringConvertible {
    /// The authority host, `host[:port]`, lower-cased.
    public var environment: String
    /// The app's client id, lower-cased.
    public var clientID: String
    /// The tenant GUID, lower-cased, when the configuration names one; nil: accounts of any tenant at that host.
    public var tenantID: String?

    /// A scope with every part lower-cased, as the store keys it.
    public init(environment: String, clientID: String, tenantID: String? = nil) {
        self.environment = environment.lowercased(); self.clientID = clientID.lowercased(); self.tenantID = tenantID?.lowercased()
    }

    /// `host · client <id>`, with ` · tenant <id>` when the scope names one.
    public var description: String { "\(environment) · client \(clientID)" + (tenantID.map { " · tenant \($0)" } ?? "") }
}

/// A person under one policy. `id` is MSAL's home account id `<oid>-<policy lower>.<tenant id>`; it is unique within
/// one environment (authority host) and client id, which are part of the account's key in the store.
public struct Account: Sendable, Equatable {
    /// The home account id: `<oid>-<policy lower>.<tenant id>`, or `<oid>.<tenant id>` for native auth.
    public var id: String
    /// The authority host it signed in at, `host[:port]`.
    public var environment: String
    /// The tenant GUID, lower-cased.
    public var tenantID: String
    /// The person's object id, lower-cased.
    public var oid: String
    /// The policy it signed in with, or the native-auth or External ID name it is kept under.
    public var policy: String
    /// The authority URL it signed in at, as text.
    public var authority: String
    /// The client id of the app it signed in to.
    public var clientID: String
    /// The id token of the last sign-in or refresh, as received (a JWT).
    public var idToken: String
    /// That id token's claims, decoded.
    public var claims: JSONValue
    /// When it was last signed in or refreshed (epoch seconds).
    public var updatedAt: Int

    /// The store scope this account lives in.
    public var scope: AccountScope { AccountScope(environment: environment, clientID: clientID) }

    /// The email address from the id token: the first of `emails`, else `email`, else `preferred_username`.
    public var email: String? {
        claims["emails"]?.arrayValue?.first?.stringValue ?? claims["email"]?.stringValue ?? claims["preferred_username"]?.stringValue
    }
}

/// A cached access token of an account, for one set of scopes (`target`, as MSAL's cache names it).
public struct AccessToken: Sendable, Equatable {
    /// The `id` of the account it was issued to.
    public var accountID: String
    /// The scopes it was granted, as `target(_:)` writes them.
    public var target: String
    /// The token itself.
    public var secret: String
    /// When it expires (epoch seconds).
    public var expiresOn: Int
    /// When it was stored (epoch seconds).
    public var cachedAt: Int

    /// Scopes are compared as a set: the stored target is sorted, space-separated, lower-cased.
    public static func target(_ scopes: [String]) -> String {
        Set(scopes.map { $0.lowercased() }).sorted().joined(separator: " ")
    }
}

/// One person of a listing, with the accounts listed (all under one environment and client id).
public struct ListedPerson: Sendable {
    /// The authority host of the accounts, `host[:port]`.
    public var environment: String
    /// The client id of the accounts.
    public var clientID: String
    /// Who the person is.
    public var identity: Identity
    /// The person's accounts listed, one per policy signed in to.
    public var accounts: [ListedAccount]
}

/// An account as listed: who, which policy, and the state of its tokens (never the tokens themselves).
public struct ListedAccount: Sendable {
    /// A cached access token as listed: its scopes and expiry, never the token.
    public struct TokenState: Sendable, Equatable {
        /// The scopes it was granted (lower-cased, sorted, space-separated).
        public var target: String
        /// When it expires (epoch seconds).
        public var expiresOn: Int
    }
    /// The account's home account id.
    public var accountID: String
    /// The tenant GUID.
    public var tenantID: String
    /// The person's object id.
    public var oid: String
    /// The policy (or native-auth name) the account is kept under.
    public var policy: String
    /// `tfp`, else `acr`, of the account's id token, when one is a string (nil for native auth).
    public var claimPolicy: String?
    /// Whether the id token has a `tfp` or `acr` claim at all.
    public var hasPolicyClaim: Bool
    /// Whether it is its policy's current account.
    public var current: Bool
    /// Whether a refresh token is stored for it, so that a silent refresh can be tried.
    public var hasRefreshToken: Bool
    /// What the tenant answered the last refresh when it refused it ("revoked", "expired", …); nil when the last refresh
    /// worked or none was tried. The refresh token is kept (the next refresh asks again), but it is not usable as it is.
    public var refreshRefused: String? = nil
    /// The identity provider a federated account signed in with (its id token's `idp`, such as `google.com`); nil for a
    /// local account.
    public var identityProvider: String? = nil
    /// Its cached access tokens: scopes and expiry.
    public var accessTokens: [TokenState]
}

/// What one sign-in or refresh produces, written in one transaction.
public struct TokenSet: Sendable {
    /// The person the id token names.
    public var identity: Identity
    /// The account to store or update.
    public var account: Account
    /// The access token issued, when the response had one with an expiry.
    public var accessToken: AccessToken?
    /// The refresh token issued, when the response had one.
    public var refreshToken: String?

    /// The set one sign-in or refresh stores; a token the response did not carry stays nil.
    public init(identity: Identity, account: Account, accessToken: AccessToken? = nil, refreshToken: String? = nil) {
        self.identity = identity; self.account = account; self.accessToken = accessToken; self.refreshToken = refreshToken
    }
}
