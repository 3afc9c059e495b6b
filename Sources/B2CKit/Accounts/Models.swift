import Foundation

/// A person: one (tenant, oid).
public struct Identity: Sendable, Equatable {
    public var tenantID: String
    public var oid: String
    public var name: String?
    public var givenName: String?
    public var familyName: String?
    public var email: String?
}

/// The part of the store one configuration sees: its authority host (`host[:port]`), its client id and, when the
/// configuration names it, its tenant GUID. MSAL keys its cache by environment, realm and client id for the same reason:
/// the same account id can come from two hosts (two emulators, b2clogin.com and a custom domain), and a token issued
/// to one app must never be served to another.
public struct AccountScope: Sendable, Hashable, CustomStringConvertible {
    public var environment: String
    public var clientID: String
    public var tenantID: String?

    public init(environment: String, clientID: String, tenantID: String? = nil) {
        self.environment = environment.lowercased(); self.clientID = clientID.lowercased(); self.tenantID = tenantID?.lowercased()
    }

    public var description: String { "\(environment) · client \(clientID)" + (tenantID.map { " · tenant \($0)" } ?? "") }
}

/// A person under one policy. `id` is MSAL's home account id `<oid>-<policy lower>.<tenant id>`; it is unique within
/// one environment (authority host) and client id, which are part of the account's key in the store.
public struct Account: Sendable, Equatable {
    public var id: String
    public var environment: String
    public var tenantID: String
    public var oid: String
    public var policy: String
    public var authority: String
    public var clientID: String
    public var idToken: String
    public var claims: JSONValue
    public var updatedAt: Int

    /// The store scope this account lives in.
    public var scope: AccountScope { AccountScope(environment: environment, clientID: clientID) }
}

/// A cached access token of an account, for one set of scopes (`target`, as MSAL's cache names it).
public struct AccessToken: Sendable, Equatable {
    public var accountID: String
    public var target: String
    public var secret: String
    public var expiresOn: Int
    public var cachedAt: Int

    /// Scopes are compared as a set: the stored target is sorted, space-separated, lower-cased.
    public static func target(_ scopes: [String]) -> String {
        Set(scopes.map { $0.lowercased() }).sorted().joined(separator: " ")
    }
}

/// One person of a listing, with the accounts listed (all under one environment and client id).
public struct ListedPerson: Sendable {
    public var environment: String
    public var clientID: String
    public var identity: Identity
    public var accounts: [ListedAccount]
}

/// An account as listed: who, which policy, and the state of its tokens (never the tokens themselves).
public struct ListedAccount: Sendable {
    public struct TokenState: Sendable, Equatable {
        public var target: String
        public var expiresOn: Int
    }
    public var accountID: String
    public var tenantID: String
    public var oid: String
    public var policy: String
    /// `tfp`, else `acr`, of the account's id token, when one is a string (nil for native auth).
    public var claimPolicy: String?
    /// Whether the id token has a `tfp` or `acr` claim at all.
    public var hasPolicyClaim: Bool
    public var current: Bool
    public var hasRefreshToken: Bool
    /// What the tenant answered the last refresh when it refused it ("revoked", "expired", …); nil when the last refresh
    /// worked or none was tried. The refresh token is kept (the next refresh asks again), but it is not usable as it is.
    public var refreshRefused: String? = nil
    /// The identity provider a federated account signed in with (its id token's `idp`, such as `google.com`); nil for a
    /// local account.
    public var identityProvider: String? = nil
    public var accessTokens: [TokenState]
}

/// What one sign-in or refresh produces, written in one transaction.
public struct TokenSet: Sendable {
    public var identity: Identity
    public var account: Account
    public var accessToken: AccessToken?
    public var refreshToken: String?

    public init(identity: Identity, account: Account, accessToken: AccessToken? = nil, refreshToken: String? = nil) {
        self.identity = identity; self.account = account; self.accessToken = accessToken; self.refreshToken = refreshToken
    }
}
