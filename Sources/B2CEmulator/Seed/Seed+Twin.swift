import B2CProtocol
import Foundation

/// A twin tenant: one directory served as an Azure AD B2C tenant and as its Entra External ID side at once, with the rules
/// of External ID's High Scale Compatibility mode (docs/migration.md) — the same people under the same object ids, each
/// side with its own host, issuer, signing keys and app registrations.
extension EmulatorSeed {
    public struct Twin: Sendable, Equatable {
        /// The other side's app registrations: in the seed file, the External ID side's. An app registered on one side is
        /// refused on the other, as B2C's registrations cannot be reused for External ID endpoints.
        public var apps: [App]

        public init(apps: [App]) { self.apps = apps }
    }

    /// The two sides of a twin seed: the B2C tenant (user flows and custom policies, no authentication extension) and the
    /// External ID side (its own apps, no policy in its URLs, the first sign-up-or-sign-in user flow as the apps' user flow,
    /// the authentication extensions). In each, `twin.apps` are the other side's. nil when the seed is not a twin.
    public var twinSides: (b2c: EmulatorSeed, externalId: EmulatorSeed)? {
        guard let twin, !tenant.externalId, let flow = nativeAuthFlow else { return nil }
        var b2c = self
        b2c.authenticationExtensions = []
        var externalId = self
        externalId.tenant.externalId = true
        externalId.apps = twin.apps
        externalId.twin = Twin(apps: apps)
        externalId.policies = [flow]
        return (b2c, externalId)
    }

    /// Why a request's `client_id` names no app of this tenant (side), in its own words: B2C's `AADB2C90018`, or Entra's
    /// `AADSTS700016`; in a twin, an app of the other side is named as such, with what to do.
    func unregisteredApp(_ clientId: String) -> (code: String, message: String) {
        let elsewhere = twin?.apps.first { $0.clientId.equalsIgnoringCase(clientId) }
        if tenant.externalId {
            var message = "Application with identifier '\(clientId)' was not found in the directory '\(tenant.name)'."
            if let elsewhere {
                message +=
                    " '\(elsewhere.name)' is registered for the tenant's B2C endpoints; B2C app registrations cannot be reused for "
                    + "External ID endpoints (High Scale Compatibility): register the app again on the External ID side."
            }
            return ("AADSTS700016", message)
        }
        var message = "The client ID '\(clientId)' specified in the request is not registered in tenant '\(tenant.name)'."
        if let elsewhere {
            message +=
                " '\(elsewhere.name)' is registered for the tenant's External ID endpoints, which have no policy in their URLs; a "
                + "B2C user flow needs a B2C app registration."
        }
        return ("AADB2C90018", message)
    }

    // MARK: the documented default twin

    public static let defaultTwinClientID = "4e7a1c3f-6b2d-4f8e-9a1c-5d3b7e9f2a6c"
    public static let defaultTwinWebAppID = "5f8b2d4a-7c3e-4a9f-8b2d-6e4c8f0a3b7d"
    public static let defaultTwinWebAppSecret = "WebAppEID-dev-secret-2026"
    public static let defaultMigrationAppID = "6a9c3e5b-8d4f-4b0a-9c3e-7f5d9a1b4c8e"
    public static let defaultMigrationAppSecret = "Migrate-dev-secret-2026"

    /// The default tenant as a twin (`emulator serve --twin`): its B2C apps, and on the External ID side a public client
    /// (native authentication too), a web app for Graph's `/me`, and the migration scripts' app (`User.ReadWrite.All`).
    public static var defaultTwin: EmulatorSeed {
        var seed = EmulatorSeed.default
        let helloURI = "https://contoso.onmicrosoft.com/helloapi"
        seed.twin = Twin(apps: [
            App(
                clientId: defaultTwinClientID, name: "b2c-cli-external-id",
                redirects: [Redirect(uri: "http://localhost", type: .publicClient)], allowImplicitFlow: false, nativeAuth: true,
                apiPermissions: ["\(helloURI)/demo.read", "\(helloURI)/demo.write"],
                servicePrincipalId: "4e7a1c3f-5e1f-4c2a-9b3d-000000000011"),
            App(
                clientId: defaultTwinWebAppID, name: "web-app-external-id",
                redirects: [Redirect(uri: "http://localhost/signin-oidc", type: .web), Redirect(uri: "http://localhost", type: .web)],
                allowImplicitFlow: true, nativeAuth: false,
                apiPermissions: ["\(helloURI)/demo.read", "\(GraphEndpoint.resource)/User.Read"],
                secrets: [Secret(value: defaultTwinWebAppSecret)], servicePrincipalId: "5f8b2d4a-5e1f-4c2a-9b3d-000000000012"),
            App(
                clientId: defaultMigrationAppID, name: "user-migration", redirects: [], allowImplicitFlow: false, nativeAuth: false,
                apiPermissions: [],
                applicationPermissions: [
                    "\(GraphEndpoint.resource)/\(GraphEndpoint.usersReadWritePermission)",
                    "\(GraphEndpoint.resource)/\(GraphEndpoint.applicationsReadPermission)",
                ],
                secrets: [Secret(value: defaultMigrationAppSecret)], servicePrincipalId: "6a9c3e5b-5e1f-4c2a-9b3d-000000000013"),
        ])
        return seed
    }
}
