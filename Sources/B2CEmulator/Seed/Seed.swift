import B2CProtocol
import Foundation

/// Everything that configures a tenant: the tenant itself, its user flows (policies), app registrations,
/// web APIs and the users it starts with. Loaded from `--seed FILE` or the built-in default.
public struct EmulatorSeed: Sendable, Equatable {
    public struct Tenant: Sendable, Equatable {
        public var name: String  // contoso.onmicrosoft.com
        public var id: String  // tenant GUID
        /// Extra `host[:port]` names under which tokens this tenant issues are accepted by the sample API.
        public var hostAliases: [String]
        /// App-only (client-credentials) tokens carry the policy claim (`tfp`/`acr`) of the policy in the path. B2C's
        /// documentation does not say; a captured token does (reference §13.2): the emulator's choice, a knob.
        public var appTokenPolicyClaim: Bool = true
        /// An Entra External ID tenant: no policy in its URLs (the first sign-up-or-sign-in user flow is the app's), v2.0
        /// tokens (`tid`, `preferred_username`, no `tfp`), AAD-style errors from native authentication.
        public var externalId = false
        /// The appId of the tenant's `b2c-extensions-app`: API connectors name custom attributes
        /// `extension_<this appId without hyphens>_<Name>`. Default: a GUID derived from the tenant id.
        public var extensionsAppId: String?
        /// The tenant's policy keys (Identity Experience Framework → Policy keys): the key containers a custom policy's
        /// `CryptographicKeys` may name. Default: what B2C's custom-policy setup creates.
        public var policyKeys = Tenant.setupPolicyKeys
        /// Policy keys with a value (Policy keys → Add → Manual in B2C): what a REST API's `CryptographicKeys` send —
        /// `BasicAuthenticationUsername`/`Password`, `BearerAuthenticationToken`, an API key header. Each is a policy key
        /// too. Default: none.
        public var policyKeyValues: [String: String] = [:]
        /// A PEM file of CA certificates the tenant trusts, beside the system's, when a custom policy calls a REST API over
        /// HTTPS (a developer's endpoint with a private CA). A `ClientCertificate` key's value is a PEM file holding the
        /// certificate and its private key. Default: none.
        public var customPolicyCAFile: String?
        public var allPolicyKeys: [String] { policyKeys + policyKeyValues.keys.sorted() }
        public static let setupPolicyKeys = [
            "B2C_1A_TokenSigningKeyContainer", "B2C_1A_TokenEncryptionKeyContainer", "B2C_1A_FacebookSecret",
        ]

        public var extensionsAppIdOrDefault: String { extensionsAppId ?? EmulatorStore.derivedGUID("b2c-extensions-app:\(id)") }
    }

    /// What a policy does, in the client configuration's words (`signUpSignIn`, `resetPassword`, …; the first seeds'
    /// `signUpOrSignIn` and `passwordReset` are still read).
    public typealias PolicyKind = PolicyRole

    /// A user flow (`B2C_1_…`) or a custom policy of the Identity Experience Framework (`B2C_1A_…`), which signs with the
    /// tenant's other key and emits the starter pack's claims.
    public enum PolicyType: String, Sendable, CaseIterable, Codable { case userFlow, custom }

    /// An External ID user flow's sign-in method for local accounts: the first factor native sign-in challenges.
    public enum SignInMethod: String, Sendable, CaseIterable, Codable { case emailPassword, emailOtp }

    public struct Policy: Sendable, Equatable {
        public var id: String
        public var kind: PolicyKind
        public var type: PolicyType = .userFlow
        /// `tfp` (default) or `acr`: the claim that names the policy in tokens.
        public var policyClaim: String
        /// `tenantGuid` (default, `https://host/<guid>/v2.0/`) or `tfp` (`https://host/tfp/<guid>/<policy>/v2.0/`).
        public var issuerPattern: String
        public var accessTokenLifetime: Int
        public var idTokenLifetime: Int
        public var refreshTokenLifetime: Int
        /// nil: no sliding-window limit ("No expiry").
        public var slidingWindow: Int?
        /// Legacy responses with numbers as strings (`"expires_in": "3600"`).
        public var numbersAsStrings: Bool
        /// The user flow's multifactor authentication; nil: off.
        public var mfa: MFA? = nil
        /// The identity providers of the sign-in page: local accounts and the built-in social providers, in order.
        public var identityProviders: [IdentityProvider] = [.local]
        /// OpenID Connect providers of the sign-in page, after the built-in ones: the tenant is their relying party.
        public var oidcProviders: [OIDCProvider] = []
        /// SAML 2.0 providers of the sign-in page, after the OpenID Connect ones: the tenant is their service provider.
        public var samlProviders: [SAMLProvider] = []
        /// Session behaviour: the SSO session's lifetime and scope, and "Keep me signed in".
        public var session = SessionSettings()
        /// The pages' languages and the user flow's string overrides.
        public var languages = Languages()
        /// Sign-up: how the email is verified with a code before the account is made (B2C's classic widget by default).
        public var emailVerification = EmailVerification.classic
        /// The attributes the sign-up page collects (and the tokens carry), in order.
        public var attributes: [Attribute] = Attribute.defaults
        /// B2C's "application claims": which stored attributes (beyond the standard claims) this user flow's tokens carry;
        /// nil means every one.
        public var applicationClaims: [String]?
        /// The user flow's API connectors (sign-up part only, as in B2C).
        public var apiConnectors = APIConnectors()
        /// Custom page layouts: the developer's HTML around the tenant's pages.
        public var pageLayouts = PageLayouts()
        /// How an External ID user flow's local accounts sign in: "Email with password" or "Email one-time passcode".
        public var signInMethod = SignInMethod.emailPassword
        /// B2C's "Forced password reset" (a sign-up-or-sign-in or sign-in user flow): a person whose
        /// `forceChangePasswordNextSignIn` is set chooses a new password after signing in. Off by default, as in B2C; an
        /// External ID tenant always honours the flag.
        public var forcedPasswordReset = false
        /// The policy is a loaded custom policy's relying party: its journey is the XML's (`CustomPolicyStep`), its tokens
        /// carry the claims the relying party names. Set by the tenant, never by a seed.
        public var runsCustomPolicy = false

        public var lowercasedID: String { id.lowercased() }

        /// The claim that names the policy in its tokens, with its value (`acr` carries the id lower-cased); nil when a
        /// custom policy's issuer emits none (`AuthenticationContextReferenceClaimPattern` `None`).
        var policyClaimEntry: (name: String, value: String)? {
            policyClaim.isEmpty ? nil : (policyClaim, policyClaim == "acr" ? lowercasedID : id)
        }
    }

    /// An OpenID Connect identity provider (another tenant, Keycloak, a corporate IdP): the tenant signs in there with the
    /// code flow and PKCE, and validates the id token against the provider's keys.
    public struct OIDCProvider: Sendable, Equatable {
        /// Its id: the button is `#<id>Exchange`, its form `idp_<id>`.
        public var id: String
        public var name: String
        /// The provider's `.well-known/openid-configuration` URL.
        public var discovery: String
        public var clientId: String
        public var clientSecret: String?
        public var scope = "openid profile email"
        /// The `domain_hint` that goes straight to it.
        public var domainHint: String?
        /// A PEM file of the CA that signed the provider's certificate, trusted beside the system's (a private CA, a
        /// `--tls` emulator).
        public var caFile: String?

        public var exchangeID: String { id.hasSuffix("Exchange") ? id : "\(id)Exchange" }
    }

    /// B2C's API connectors of one user flow: the developer's endpoint at up to three steps.
    public struct APIConnectors: Sendable, Equatable {
        public enum Step: String, Sendable, CaseIterable {
            case postFederationSignup, postAttributeCollection, preTokenIssuance
            /// The `step` value of the request body (B2C's own spelling; the token step as its documented sample body).
            public var bodyName: String {
                switch self {
                case .postFederationSignup: "PostFederationSignup"
                case .postAttributeCollection: "PostAttributeCollection"
                case .preTokenIssuance: "PreTokenApplicationClaims"
                }
            }
        }
        public var postFederationSignup: APIConnector?
        public var postAttributeCollection: APIConnector?
        public var preTokenIssuance: APIConnector?

        public subscript(step: Step) -> APIConnector? {
            switch step {
            case .postFederationSignup: postFederationSignup
            case .postAttributeCollection: postAttributeCollection
            case .preTokenIssuance: preTokenIssuance
            }
        }

        public var isEmpty: Bool { Step.allCases.allSatisfy { self[$0] == nil } }
    }

    /// A user flow's custom page layouts (B2C's "Use custom page content" with a "Custom page URI", or a custom policy's
    /// content definitions): per page type, where the template is and which page contract it follows.
    public struct PageLayouts: Sendable, Equatable {
        public enum PageType: String, Sendable, CaseIterable {
            case unifiedssp, selfasserted, multifactor, globalexception
            /// A custom policy's page of buttons, one per claims provider (a `ClaimsProviderSelection` step without a local
            /// sign-in); user flows show their providers on the unified page.
            case providerselection

            /// The page types a user flow has (its providers are buttons on the unified page): what its `pageLayouts` and
            /// the page preview take.
            public static var userFlowPages: [PageType] { allCases.filter { $0 != .providerselection } }

            /// The page contract the emulator's pages follow when the seed names none (B2C's starter pack's versions).
            public var defaultDataUri: String {
                let version = [
                    "unifiedssp": "2.1.5", "selfasserted": "2.1.7", "multifactor": "1.2.5", "globalexception": "1.2.1",
                    "providerselection": "1.2.1",
                ]
                return "urn:com:microsoft:aad:b2c:elements:contract:\(rawValue):\(version[rawValue]!)"
            }
        }

        public struct Page: Sendable, Equatable {
            /// An http(s) URL, a file path, or a built-in layout: `classic`, `oceanBlue`, `slateGray`.
            public var loadUri: String
            /// `urn:com:microsoft:aad:b2c:elements[:contract]:<page>:<version>`; JavaScript needs a `contract` one.
            public var dataUri: String
        }

        public var pages: [PageType: Page] = [:]
        /// "Enable JavaScript enforcing page layout": the template's scripts stay (on pages with a contract data URI).
        public var javascript = false
        /// Check the template host's CORS answer (`Access-Control-Allow-Origin` for the tenant's origin) like a browser.
        public var strictCors = false

        public var isEmpty: Bool { pages.isEmpty }
    }

    /// One API connector: where the tenant POSTs, with which credentials, and how long it waits for each attempt.
    public struct APIConnector: Sendable, Equatable {
        public enum Auth: Sendable, Equatable {
            case none
            case basic(username: String, password: String)
            /// A TLS client certificate and its key (PEM files).
            case certificate(certificateFile: String, keyFile: String)
            case bearer(token: String)
        }
        public var url: String
        public var auth: Auth = .none
        /// Seconds per attempt; B2C waits 20, then tries once more.
        public var timeoutSeconds = 20
        /// A PEM file of the CA of an `https` endpoint's certificate, trusted beside the system's.
        public var caFile: String?
    }

    /// A SAML 2.0 identity provider (AD FS, Shibboleth, a corporate IdP): the tenant sends it an `AuthnRequest` and takes
    /// its signed answer at the policy's assertion consumer service, checked against the certificate its metadata names.
    public struct SAMLProvider: Sendable, Equatable {
        /// Its id: the button is `#<id>Exchange`, its form `idp_<id>`, and it is the `idptp` of the tenant's SP metadata.
        public var id: String
        public var name: String
        /// The provider's metadata (an `EntityDescriptor` with an `IDPSSODescriptor`): an http(s) URL or a file path.
        public var metadata: String
        /// The `domain_hint` that goes straight to it.
        public var domainHint: String?
        /// A PEM file of the CA that signed the metadata host's certificate, trusted beside the system's.
        public var caFile: String?
        /// The tenant signs its `AuthnRequest`s (a custom policy's `WantsSignedRequests`, B2C's default; a user flow's
        /// provider only when its metadata says `WantAuthnRequestsSigned`), with `requestSignature`'s algorithm.
        public var signsRequests = false
        var requestSignature = SAMLRelyingParty.SignatureAlgorithm.sha1

        public var exchangeID: String { id.hasSuffix("Exchange") ? id : "\(id)Exchange" }
    }

    /// The sign-up page's email verification: none, B2C's classic widget (`email_ver_*` ids), or the display control of
    /// page layouts 2.0 and custom policies (`emailVerificationControl_but_*` ids, code in `#verificationCode`).
    public enum EmailVerification: String, Sendable, Equatable, Codable {
        case off, classic, displayControl
    }

    /// A user attribute a sign-up page collects: a built-in one (`city`, `country`, …) or a custom `extension_<Name>`.
    public struct Attribute: Sendable, Equatable, Codable {
        public enum Kind: String, Sendable, Codable, CaseIterable { case string = "String", boolean = "Boolean", int = "Int" }
        /// The claim id: the page's element id and the tokens' claim name.
        public var name: String
        public var kind: Kind = .string
        public var required = false
        public var label: String

        public static let builtIn: [String: String] = [
            "displayName": "Display Name", "givenName": "Given Name", "surname": "Surname", "city": "City",
            "country": "Country/Region", "jobTitle": "Job Title", "postalCode": "Postal Code", "state": "State/Province",
            "streetAddress": "Street Address",
        ]
        public static let defaults = ["displayName", "givenName", "surname"].map { Attribute(name: $0, label: builtIn[$0]!) }
        public var isCustom: Bool { name.hasPrefix("extension_") }
        /// The names every profile has (the user's record), as opposed to the attributes kept beside it.
        public static let names: Set<String> = ["displayName", "givenName", "surname"]
    }

    /// A user flow's session behaviour (B2C's "Session behavior" properties).
    public struct SessionSettings: Sendable, Equatable {
        /// Which sign-ins an SSO session answers: every app and user flow of the tenant, one app's, one user flow's, or none
        /// (the whole flow every time).
        public enum Scope: String, Sendable, CaseIterable { case tenant, application, policy, suppressed }
        /// "Web app session lifetime" in minutes (15–1440).
        public var lifetimeMinutes = 1440
        /// Rolling (extended each time the session answers) or absolute.
        public var rolling = true
        public var scope: Scope = .tenant
        /// "Keep me signed in" (the `.rememberMe` checkbox) and how many days it keeps the session (1–90); nil: off.
        public var kmsiDays: Int? = nil

        public init() {}
    }

    /// A way to sign in on a user flow's page: local accounts, or a social provider the tenant serves as a mock identity
    /// provider on its own address (docs/emulator.md, "Federated sign-in").
    public enum IdentityProvider: String, Sendable, CaseIterable, Codable {
        case local, google, facebook, microsoft, apple, github, amazon, linkedin, twitter

        /// The claims-exchange id of its button on the unified page (B2C's element id).
        public var exchangeID: String {
            switch self {
            case .local: "SignInWithLogonEmailExchange"
            case .google: "GoogleExchange"
            case .facebook: "FacebookExchange"
            case .microsoft: "MicrosoftAccountExchange"
            case .apple: "AppleExchange"
            case .github: "GitHubExchange"
            case .amazon: "AmazonExchange"
            case .linkedin: "LinkedInExchange"
            case .twitter: "TwitterExchange"
            }
        }

        /// The domain `domain_hint` names it by, and the tokens' `idp` claim.
        public var domain: String {
            switch self {
            case .local: "local"
            case .google: "google.com"
            case .facebook: "facebook.com"
            case .microsoft: "live.com"
            case .apple: "appleid.apple.com"
            case .github: "github.com"
            case .amazon: "amazon.com"
            case .linkedin: "linkedin.com"
            case .twitter: "twitter.com"
            }
        }

        public var label: String {
            switch self {
            case .local: "Local account"
            case .google: "Google"
            case .facebook: "Facebook"
            case .microsoft: "Microsoft"
            case .apple: "Apple"
            case .github: "GitHub"
            case .amazon: "Amazon"
            case .linkedin: "LinkedIn"
            case .twitter: "Twitter"
            }
        }

        /// The provider a `domain_hint` names: its domain or its name.
        public static func hinted(_ hint: String) -> IdentityProvider? {
            let h = hint.lowercased()
            return allCases.first { $0 != .local && ($0.domain == h || $0.rawValue == h) }
        }
    }

    /// A user flow's multifactor authentication: B2C's "Type of method" and "MFA enforcement" (docs/emulator.md, "MFA").
    public struct MFA: Sendable, Equatable {
        /// Email one-time code, phone (SMS or a call that reads the code), or an authenticator app (TOTP).
        public enum Method: String, Sendable, CaseIterable, Codable { case email, phone, totp }
        /// Always; only when a sign-in is risky (enrolment is still offered); never.
        public enum Enforcement: String, Sendable, CaseIterable { case always, conditional, off }
        public var methods: [Method]
        public var enforcement: Enforcement

        public init(methods: [Method], enforcement: Enforcement) { self.methods = methods; self.enforcement = enforcement }
    }

    /// An External ID tenant's user flow: what a request without a policy runs.
    public var externalIdFlow: Policy? {
        guard tenant.externalId else { return nil }
        return nativeAuthFlow
    }

    /// The user flow whose sign-in method native authentication follows: the External ID tenant's, or — where the
    /// emulator serves native authentication in a B2C tenant, which B2C itself does not — the first sign-up-or-sign-in
    /// user flow.
    public var nativeAuthFlow: Policy? { policies.first { $0.kind == .signUpSignIn && $0.type == .userFlow } }

    /// How a redirect URI may be used: a public client (native, loopback), a web app (redeems with its secret), or a
    /// single-page app (redeems cross-origin with PKCE; its origin gets CORS at the token endpoint).
    public enum RedirectType: String, Sendable, CaseIterable, Codable { case publicClient, web, spa }

    public struct Redirect: Sendable, Equatable {
        public var uri: String
        public var type: RedirectType
    }

    /// A client secret: its SHA-256 (the value itself only when the seed gave it, for `default-seed` and `--config-out`).
    public struct Secret: Sendable, Equatable {
        public var hash: String
        public var value: String?
        /// Epoch seconds; nil never expires.
        public var expiresAt: Int?

        public init(value: String, expiresAt: Int? = nil) {
            self.hash = Self.hash(value); self.value = value; self.expiresAt = expiresAt
        }

        public init(hash: String, expiresAt: Int?) { self.hash = hash; self.value = nil; self.expiresAt = expiresAt }

        /// `sha256:` + base64url of the SHA-256 of the secret.
        public static func hash(_ value: String) -> String { "sha256:" + EmulatorStore.hash(value) }
    }

    public struct App: Sendable, Equatable {
        public var clientId: String
        public var name: String
        public var redirects: [Redirect]
        public var allowImplicitFlow: Bool
        public var nativeAuth: Bool
        /// Full scope URIs of APIs this app may request (admin-consented, as B2C requires).
        public var apiPermissions: [String]
        /// Application permissions granted with admin consent: `<identifier URI>/<app role value>`.
        public var applicationPermissions: [String] = []
        public var secrets: [Secret] = []
        /// The object id of the app's service principal: `sub` and `oid` of its app-only tokens.
        public var servicePrincipalId: String

        public var redirectUris: [String] { redirects.map(\.uri) }
        /// A confidential client: it has a secret.
        public var isConfidential: Bool { !secrets.isEmpty }
        public func redirect(_ uri: String) -> Redirect? { redirects.first { $0.uri == uri } }
    }

    /// A role an API defines for apps (`allowedMemberTypes: ["Application"]`) or users.
    public struct AppRole: Sendable, Equatable {
        public var value: String
        public var allowedMemberTypes: [String]
    }

    public struct API: Sendable, Equatable {
        public var name: String
        public var appId: String
        public var identifierUri: String
        public var scopes: [String]
        public var requiredScope: String?
        public var appRoles: [AppRole] = []

        public func fullScope(_ short: String) -> String { "\(identifierUri)/\(short)" }
    }

    public struct User: Sendable, Equatable {
        public var oid: String
        public var email: String
        public var password: String
        public var displayName: String
        public var givenName: String
        public var surname: String
        /// A phone number (E.164) for phone MFA.
        public var phone: String? = nil
        /// An authenticator app's secret (base32), so that a test can compute the user's codes.
        public var totpSecret: String? = nil
        /// Whether `phone` and `totpSecret` are registered (default true when given): false makes the first MFA sign-in
        /// enrol them (the TOTP enrolment then shows this secret).
        public var mfaEnrolled: Bool = true
        /// MFA for this user whatever the user flow says (External ID: a Conditional Access policy aimed at them).
        public var mfaRequired: Bool = false
    }

    public var tenant: Tenant
    public var policies: [Policy]
    public var apps: [App]
    public var apis: [API]
    public var users: [User]
    /// An External ID tenant's custom authentication extensions (Entra's event listeners, flattened).
    public var authenticationExtensions: [AuthenticationExtension] = []
    /// High Scale Compatibility: the directory is served as this B2C tenant and, on a listener of its own, as its External
    /// ID side, whose app registrations these are (`EmulatorSeed+Twin.swift`). nil: one side only.
    public var twin: Twin? = nil

    /// A custom authentication extension of Entra External ID: at an event of the journey the tenant POSTs Microsoft's
    /// envelope to the developer's endpoint, with a bearer token the tenant issues for `appId`.
    public struct AuthenticationExtension: Sendable, Equatable {
        public enum Event: String, Sendable, CaseIterable {
            case onTokenIssuanceStart, onAttributeCollectionStart, onAttributeCollectionSubmit, onOtpSend, onPasswordSubmit
        }
        public var event: Event
        public var url: String
        /// The extension's app registration: the callout token's audience.
        public var appId: String
        /// The apps whose sign-ins trigger it (empty: every app).
        public var clientIds: [String] = []
        /// Token issuance: the claims of the answer that go into tokens (the app's claims-mapping policy; case-sensitive).
        public var claims: [String] = []
        /// Entra's `timeoutInMilliseconds` (200–2000, default 1000) and `maximumRetries` (0 or 1, default 1).
        public var timeoutMs = 1000
        public var maximumRetries = 1
        /// A PEM file of the CA of an `https` endpoint's certificate, trusted beside the system's.
        public var caFile: String?
        /// `OnPasswordSubmit` (just-in-time password migration): the directory extension attribute that marks a person for
        /// migration (the listener's `migrationPropertyId`, `extension_<b2c-extensions-app id>_<name>`), the PEM file of
        /// the certificate (or public key) whose key the password is encrypted to, and the JWE key algorithm.
        public var migrationProperty: String?
        public var encryptionCertificate: String?
        public var encryptionAlgorithm = "RSA-OAEP-256"

        /// Its `customAuthenticationExtensionId` (stable for the same event and URL).
        public var id: String { EmulatorStore.derivedGUID("custom-extension:\(event.rawValue):\(url)") }
    }

    public func policy(named name: String) -> Policy? {
        policies.first { $0.id.equalsIgnoringCase(name) }
    }

    public func app(clientId: String) -> App? {
        apps.first { $0.clientId.equalsIgnoringCase(clientId) }
    }
}
