import B2CProtocol
import Foundation

extension EmulatorSeed {
    /// A user flow's languages (B2C's "Languages" blade): the default, the enabled ones, and per-language overrides of
    /// the pages' strings (string id → text).
    public struct Languages: Sendable, Equatable {
        public var defaultLanguage = "en"
        public var enabled = ["en", "fr"]
        public var overrides: [String: [String: String]] = [:]
        public init() {}
    }

    // MARK: the documented default tenant

    public static let defaultTenantID = "8f2c6d4e-1a3b-4c5d-9e7f-0a1b2c3d4e5f"
    public static let defaultClientID = "3f6b8c9d-2e1a-4b7c-8d9e-0f1a2b3c4d5e"
    public static let defaultHelloAppID = "5a7b9c1d-3e2f-4a6b-8c0d-1e2f3a4b5c6d"

    public static let defaultWebAppID = "6b1e0c2a-7d4f-4e3b-9a8c-2f5d1e0b7c9a"
    public static let defaultDaemonID = "7c2f1d3b-8e5a-4f4c-8b9d-3a6e2f1c8d0b"
    public static let defaultSPAID = "8d3a2e4c-9f6b-4a5d-8cae-4b7f3a2d9e1c"
    /// The two app registrations B2C's custom-policy setup creates (their ids fill the starter pack's placeholders), and an
    /// app a deployment pipeline signs in as (Graph's Policy.ReadWrite.TrustFramework, application permission).
    public static let identityExperienceFrameworkID = "9e4b3f5d-0a7c-4b6e-8d1f-5c8a4b3e0f2d"
    public static let proxyIdentityExperienceFrameworkID = "0f5c4a6e-1b8d-4c7f-9e2a-6d9b5c4f1a3e"
    public static let defaultPolicyDeployID = "1a6d5b7f-2c9e-4d8a-8f3b-7e0c6d5a2b4f"
    public static let defaultPolicyDeploySecret = "Deploy-dev-secret-2026"
    /// An app user-management scripts sign in as (Graph's User.ReadWrite.All, application permission): `b2c users`, a
    /// migration's Graph calls.
    public static let defaultUserAdminID = "2b7e6c8a-3d0f-4e9b-9a4c-8f1d7e6b3c5a"
    public static let defaultUserAdminSecret = "UserAdmin-dev-secret-2026"
    /// The hello API's own secret: the middle tier of the on-behalf-of flow.
    public static let defaultHelloAPISecret = "HelloAPI-dev-secret-2026"
    /// The default tenant as an Entra External ID tenant (`emulator serve --external-id`): the same apps and people, no
    /// policy in any URL.
    public static var defaultExternalID: EmulatorSeed {
        var seed = EmulatorSeed.default
        seed.tenant.externalId = true
        return seed
    }

    /// Development secrets of the default tenant's confidential apps (like the users' development passwords: public fixtures).
    public static let defaultWebAppSecret = "WebApp-dev-secret-2026"
    public static let defaultDaemonSecret = "Daemon-dev-secret-2026"

    public static let `default`: EmulatorSeed = {
        func policy(_ id: String, _ kind: PolicyKind, type: PolicyType = .userFlow) -> Policy {
            Policy(
                id: id, kind: kind, type: type, policyClaim: type == .custom ? "acr" : "tfp", issuerPattern: "tenantGuid",
                accessTokenLifetime: 3600, idTokenLifetime: 3600, refreshTokenLifetime: 1_209_600, slidingWindow: 7_776_000,
                numbersAsStrings: false)
        }
        let helloURI = "https://contoso.onmicrosoft.com/helloapi"
        let iefURI = "https://contoso.onmicrosoft.com/\(identityExperienceFrameworkID)"
        return EmulatorSeed(
            tenant: Tenant(name: "contoso.onmicrosoft.com", id: defaultTenantID, hostAliases: []),
            policies: [
                policy("B2C_1_susi", .signUpSignIn),
                policy("B2C_1_signin", .signIn),
                policy("B2C_1_edit_profile", .editProfile),
                policy("B2C_1_reset", .resetPassword),
                policy("B2C_1_ROPC_Auth", .ropc),
                policy("B2C_1A_signup_signin", .signUpSignIn, type: .custom),
                // Sign-up or sign-in with an emailed code after the password, every time.
                {
                    var p = policy("B2C_1_susi_mfa", .signUpSignIn)
                    p.mfa = MFA(methods: [.email], enforcement: .always)
                    return p
                }(),
                // Sign-up or sign-in with local accounts or a social provider (the tenant's mock providers).
                {
                    var p = policy("B2C_1_susi_social", .signUpSignIn)
                    p.identityProviders = [.local, .google, .facebook, .microsoft, .apple]
                    return p
                }(),
            ],
            apps: [
                App(
                    clientId: defaultClientID, name: "b2c-cli", redirects: [Redirect(uri: "http://localhost", type: .publicClient)],
                    allowImplicitFlow: false, nativeAuth: true, apiPermissions: ["\(helloURI)/demo.read", "\(helloURI)/demo.write"],
                    servicePrincipalId: "3f6b8c9d-5e1f-4c2a-9b3d-000000000001"),
                App(
                    clientId: defaultWebAppID, name: "web-app",
                    redirects: [Redirect(uri: "http://localhost/signin-oidc", type: .web), Redirect(uri: "http://localhost", type: .web)],
                    allowImplicitFlow: true, nativeAuth: false, apiPermissions: ["\(helloURI)/demo.read"],
                    secrets: [Secret(value: defaultWebAppSecret)], servicePrincipalId: "6b1e0c2a-5e1f-4c2a-9b3d-000000000002"),
                App(
                    clientId: defaultDaemonID, name: "daemon", redirects: [], allowImplicitFlow: false, nativeAuth: false,
                    apiPermissions: [], applicationPermissions: ["\(helloURI)/hello.read.all"],
                    secrets: [Secret(value: defaultDaemonSecret)], servicePrincipalId: "7c2f1d3b-5e1f-4c2a-9b3d-000000000003"),
                App(
                    clientId: defaultSPAID, name: "spa",
                    redirects: [Redirect(uri: "http://localhost:3000", type: .spa), Redirect(uri: "http://127.0.0.1:3000", type: .spa)],
                    allowImplicitFlow: false, nativeAuth: false, apiPermissions: ["\(helloURI)/demo.read"],
                    servicePrincipalId: "8d3a2e4c-5e1f-4c2a-9b3d-000000000004"),
                App(
                    clientId: identityExperienceFrameworkID, name: "IdentityExperienceFramework",
                    redirects: [Redirect(uri: "https://contoso.b2clogin.com/contoso.onmicrosoft.com", type: .web)],
                    allowImplicitFlow: false, nativeAuth: false, apiPermissions: [],
                    servicePrincipalId: "9e4b3f5d-5e1f-4c2a-9b3d-000000000005"),
                // "Treat application as a public client": the starter pack's password check signs in through it.
                App(
                    clientId: proxyIdentityExperienceFrameworkID, name: "ProxyIdentityExperienceFramework",
                    redirects: [Redirect(uri: "myapp://auth", type: .publicClient)], allowImplicitFlow: false, nativeAuth: false,
                    apiPermissions: ["\(iefURI)/user_impersonation"], servicePrincipalId: "0f5c4a6e-5e1f-4c2a-9b3d-000000000006"),
                App(
                    clientId: defaultPolicyDeployID, name: "policy-deploy", redirects: [], allowImplicitFlow: false, nativeAuth: false,
                    apiPermissions: [], applicationPermissions: ["\(GraphEndpoint.resource)/\(GraphEndpoint.trustFrameworkPermission)"],
                    secrets: [Secret(value: defaultPolicyDeploySecret)], servicePrincipalId: "1a6d5b7f-5e1f-4c2a-9b3d-000000000007"),
                // The hello API as a confidential client: on an External ID tenant it calls Microsoft Graph on behalf of
                // the person whose token it got (the on-behalf-of flow).
                App(
                    clientId: defaultHelloAppID, name: "hello-api", redirects: [], allowImplicitFlow: false, nativeAuth: false,
                    apiPermissions: ["\(GraphEndpoint.resource)/User.Read"], secrets: [Secret(value: defaultHelloAPISecret)],
                    servicePrincipalId: "5a7b9c1d-5e1f-4c2a-9b3d-000000000009"),
                App(
                    clientId: defaultUserAdminID, name: "user-admin", redirects: [], allowImplicitFlow: false, nativeAuth: false,
                    apiPermissions: [],
                    applicationPermissions: [
                        "\(GraphEndpoint.resource)/\(GraphEndpoint.usersReadWritePermission)",
                        "\(GraphEndpoint.resource)/\(GraphEndpoint.applicationsReadPermission)",
                    ],
                    secrets: [Secret(value: defaultUserAdminSecret)], servicePrincipalId: "2b7e6c8a-5e1f-4c2a-9b3d-000000000008"),
            ],
            apis: [
                API(
                    name: "hello", appId: defaultHelloAppID, identifierUri: helloURI, scopes: ["demo.read", "demo.write"],
                    requiredScope: "demo.read", appRoles: [AppRole(value: "hello.read.all", allowedMemberTypes: ["Application"])]),
                // B2C's custom-policy setup: IdentityExperienceFramework exposes user_impersonation, which the proxy app is
                // granted (its password check asks for it).
                API(
                    name: "IdentityExperienceFramework", appId: identityExperienceFrameworkID, identifierUri: iefURI,
                    scopes: ["user_impersonation"], requiredScope: "user_impersonation"),
            ],
            users: [
                User(
                    oid: "0a11ce00-5eed-4a11-8000-00000000a11c", email: "alice@contoso.com", password: "Alice-dev-2026!",
                    displayName: "Alice Example", givenName: "Alice", surname: "Example"),
                User(
                    oid: "0b0b0000-5eed-4b0b-8000-000000000b0b", email: "bob@contoso.com", password: "Bob-dev-2026!",
                    displayName: "Bob Example", givenName: "Bob", surname: "Example"),
            ]
        )
    }()
}

extension EmulatorSeed.Policy {
    /// A custom policy's authority when the seed has no policy of its id: the starter pack's token shape (`acr`, the
    /// tenant-id issuer) and B2C's defaults for what its issuer profile does not set (`JwtIssuerSettings`): the default
    /// lifetimes, and numbers as strings in the token response (`SendTokenResponseBodyWithJsonNumbers` unset).
    static func customPolicy(_ id: String) -> EmulatorSeed.Policy {
        EmulatorSeed.Policy(
            id: id, kind: .signUpSignIn, type: .custom, policyClaim: "acr", issuerPattern: "tenantGuid", accessTokenLifetime: 3600,
            idTokenLifetime: 3600, refreshTokenLifetime: 1_209_600, slidingWindow: 7_776_000, numbersAsStrings: true)
    }
}
