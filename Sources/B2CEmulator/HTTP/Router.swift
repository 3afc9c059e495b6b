import B2CProtocol
import Foundation
import Hummingbird
import Logging

extension B2CEmulator {
    /// What serves a request: the request log, then the authority-prefix parse (which must come before the router's
    /// path lookup, since it rewrites the path), then the router.
    func responder(scheme: String, logger: Logger?) -> TenantResponder {
        TenantResponder(
            log: logger.map { RequestLogMiddleware(logger: $0) }, prefix: AuthorityPrefixMiddleware(emulator: self, scheme: scheme),
            router: router().buildResponder())
    }

    /// Every route of the tenant. Paths below an authority arrive as `/_b2c/<endpoint>` (see `AuthorityPrefixMiddleware`).
    func router() -> Router<EmulatorRequestContext> {
        let router = Router(context: EmulatorRequestContext.self)
        router.middlewares.add(PageLayoutMiddleware(emulator: self))
        router.middlewares.add(ErrorMiddleware(emulator: self))
        router.middlewares.add(FaultMiddleware(emulator: self))
        let any: [HTTPRequest.Method] = [.get, .post, .put, .delete, .patch, .head, .options]
        func on(
            _ path: RouterPath, _ methods: [HTTPRequest.Method],
            _ handler: @escaping @Sendable (Request, EmulatorRequestContext) async throws -> Response
        ) {
            for m in methods { router.on(path, method: m, use: handler) }
        }

        hostRoutes(on, methods: any)
        admin.addRoutes(to: router.group("_admin").add(middleware: AdminGuardMiddleware(emulator: self)))

        protocolRoutes(on, methods: any)
        nativeAuthRoutes(on, methods: any)
        journeyRoutes(on, methods: any)
        return router
    }

    typealias Handler = @Sendable (Request, EmulatorRequestContext) async throws -> Response

    /// The OpenID Connect endpoints of an authority: discovery, keys, authorize, token, device code, logout, userinfo.
    func protocolRoutes(_ on: (RouterPath, [HTTPRequest.Method], @escaping Handler) -> Void, methods any: [HTTPRequest.Method]) {
        for path in ["/_b2c/v2.0/.well-known/openid-configuration", "/_b2c/.well-known/openid-configuration"] {
            on(RouterPath(path), [.get]) { _, context in
                let a = try Self.authority(context)
                if a.implicitFlow || (a.policy == nil && !a.policyInPath) { return try self.discovery.nativeDiscovery(a) }
                return self.discovery.discovery(a, policy: try Self.policy(context))
            }
        }
        for path in ["/_b2c/discovery/v2.0/keys", "/_b2c/discovery/keys"] {
            on(RouterPath(path), [.get]) { _, context in
                // Each policy type publishes its own keys: a user flow's set does not list the custom policies' key.
                .json(
                    try self.keys.published(context.authority?.policy?.type ?? .userFlow, externalId: self.seed.tenant.externalId).json,
                    headers: [("Access-Control-Allow-Origin", "*")])
            }
        }
        on("/_b2c/oauth2/v2.0/authorize", [.get, .post]) { request, context in
            try await self.authorize.authorize(request, context, authority: try Self.authority(context), policy: try Self.policy(context))
        }
        on("/_b2c/oauth2/v2.0/token", any) { request, context in
            var request = request
            let a = try Self.authority(context)
            if a.policy == nil && !self.seed.tenant.externalId, await TokenEndpoint.isGraphAppRequest(&request) {
                return try await self.token.tenantToken(request, context)
            }
            if a.policy == nil { return try await self.nativeAuth.token(request, context, authority: a) }
            if a.implicitFlow, await NativeAuthEndpoint.isNativeGrant(&request) {
                return try await self.nativeAuth.token(request, context, authority: a)
            }
            return try await self.token.token(request, context, authority: a, policy: try Self.policy(context))
        }
        on("/_b2c/oauth2/v2.0/devicecode", [.post]) { request, context in
            try await self.deviceAuthorization.start(request, context, authority: try Self.authority(context))
        }
        on("/_b2c/devicelogin", [.get, .post]) { request, context in
            try await self.deviceAuthorization.page(request, context, authority: try Self.authority(context))
        }
        on("/_b2c/devicelogin/complete", [.get]) { request, _ in try self.deviceAuthorization.complete(request) }
        on("/_b2c/oauth2/v2.0/logout", [.get, .post]) { request, context in
            try await self.logout.logout(request, context, policy: try Self.policy(context))
        }
        on("/_b2c/openid/v2.0/userinfo", [.get, .post]) { request, context in
            try self.userInfo.userInfo(request, policy: try Self.policy(context))
        }
    }

    /// What a journey's pages and providers answer to (federation's return, SAML, the mock providers, the tenant's pages),
    /// and the refusal of any other path below an authority.
    func journeyRoutes(_ on: (RouterPath, [HTTPRequest.Method], @escaping Handler) -> Void, methods any: [HTTPRequest.Method]) {
        on("/_b2c/oauth2/authresp", [.get, .post]) { request, context in
            try await FederationStep(self.authorize).providerAnswered(request, context)
        }
        on("/_b2c/samlp/sso/assertionconsumer", [.post]) { request, context in
            try await FederationStep(self.authorize).samlAnswered(request, context, policy: try Self.policy(context))
        }
        on("/_b2c/samlp/metadata", [.get]) { request, context in
            try FederationStep(self.authorize).samlMetadata(
                request, context, authority: try Self.authority(context), policy: try Self.policy(context))
        }
        on("/_idp/:name/authorize", [.get, .post]) { request, context in
            try await self.identityProviders.authorize(request, context, name: context.parameters.get("name") ?? "")
        }
        on("/_b2c/emulator/:page", [.get, .post]) { request, context in
            try await self.authorize.page(context.parameters.get("page") ?? "", request, context, policy: try Self.policy(context))
        }
        on("/_b2c/**", any) { _, context in
            .json(
                [
                    "error": "not_found",
                    "error_description": .string(
                        "No endpoint at \(context.path). Authority forms: /<tenant>/<policy>/..., /tfp/<tenant>/<policy>/..., "
                            + "/<tenant>/...?p=<policy>."
                    ),
                ],
                status: 404)
        }
    }

    /// The routes outside any authority: the index page, the seeded APIs, health, Graph, and the probes clients make.
    func hostRoutes(_ on: (RouterPath, [HTTPRequest.Method], @escaping Handler) -> Void, methods any: [HTTPRequest.Method]) {
        on("/", [.get]) { _, context in self.discovery.indexPage(origin: context.origin) }
        on("/:api", any) { request, context in self.sampleAPI.serve(request, api: context.parameters.get("api") ?? "") }
        // For orchestrators (a container's health check, Kubernetes probes, compose's depends_on): 200 once serving.
        on("/health", [.get, .head]) { _, _ in
            .json(["status": "ok", "tenant": .string(self.tenantName), "tenantId": .string(self.tenantID)])
        }
        on("/graph/v1.0/me", [.get, .patch]) { request, _ in try await self.graph.me(request) }
        on("/graph/v1.0/applications", [.get]) { request, _ in self.graph.applications(request) }
        on("/graph/v1.0/users", [.get, .post]) { request, context in try await self.graph.users(request, id: nil, origin: context.origin) }
        on("/graph/v1.0/users/:id", [.get, .patch, .delete]) { request, context in
            try await self.graph.users(request, id: context.parameters.get("id") ?? "", origin: context.origin)
        }
        on("/graph/beta/trustFramework/policies", [.get]) { request, _ in try await self.graph.listPolicies(request) }
        on("/graph/beta/trustFramework/policies/:id", [.get, .delete]) { request, context in
            try await self.graph.policy(request, id: context.parameters.get("id") ?? "", value: false)
        }
        on("/graph/beta/trustFramework/policies/:id/:value", [.get, .put]) { request, context in
            guard ["$value", "%24value"].contains(context.parameters.get("value") ?? "") else {
                return GraphEndpoint.error(
                    404, "Request_ResourceNotFound", "Resource not found for the segment '\(context.parameters.get("value") ?? "")'.")
            }
            return try await self.graph.policy(request, id: context.parameters.get("id") ?? "", value: true)
        }
        on("/public", [.get]) { _, _ in .json(["date": .string(ISO8601.string(self.clock.date))]) }
        // msal-python probes this before ROPC and falls back to plain ROPC on 404.
        on("/common/**", any) { _, _ in
            .json(["error": "not_found", "error_description": "User realm discovery is not available in Azure AD B2C."], status: 404)
        }
    }

    /// External ID's native authentication: sign-in (initiate, challenge, introspect), sign-up, password reset and method
    /// registration. Every step is a POST; other methods get native auth's own 405 answer.
    func nativeAuthRoutes(_ on: (RouterPath, [HTTPRequest.Method], @escaping Handler) -> Void, methods: [HTTPRequest.Method]) {
        let n = nativeAuth
        let steps: [(String, Handler)] = [
            ("oauth2/v2.0/initiate", { r, _ in try await n.initiate(r) }),
            ("oauth2/v2.0/challenge", { r, c in try await n.challenge(r, origin: c.origin) }),
            ("oauth2/v2.0/introspect", { r, _ in try await n.introspect(r) }),
            ("signup/v1.0/start", { r, _ in try await n.signUpStart(r) }),
            ("signup/v1.0/challenge", { r, c in try await n.signUpChallenge(r, origin: c.origin) }),
            ("signup/v1.0/continue", { r, _ in try await n.signUpContinue(r) }),
            ("resetpassword/v1.0/start", { r, _ in try await n.resetStart(r) }),
            ("resetpassword/v1.0/challenge", { r, c in try await n.resetChallenge(r, origin: c.origin) }),
            ("resetpassword/v1.0/continue", { r, _ in try await n.resetContinue(r) }),
            ("resetpassword/v1.0/submit", { r, _ in try await n.resetSubmit(r) }),
            ("resetpassword/v1.0/complete", { r, _ in try await n.resetSubmit(r) }),
            ("resetpassword/v1.0/poll_completion", { r, _ in try await n.resetPoll(r) }),
            ("register/v1.0/introspect", { r, _ in try await n.registerIntrospect(r) }),
            ("register/v1.0/challenge", { r, c in try await n.registerChallenge(r, origin: c.origin) }),
            ("register/v1.0/continue", { r, _ in try await n.registerContinue(r) }),
        ]
        for (path, handler) in steps { on(RouterPath("/_b2c/" + path), methods, handler) }
    }

    static func authority(_ context: EmulatorRequestContext) throws -> AuthorityRef {
        guard let a = context.authority else {
            throw OAuthFailure(error: "not_found", code: "AADB2C90055", message: "The request names no tenant.", status: 404)
        }
        return a
    }

    /// The policy the request named, which these endpoints need.
    static func policy(_ context: EmulatorRequestContext) throws -> EmulatorSeed.Policy {
        guard let policy = context.authority?.policy else {
            throw OAuthFailure(
                error: "invalid_request", code: "AADB2C90055",
                message: "The request names no policy. Put the policy in the path (/<tenant>/B2C_1_susi/...) or in the p query parameter.")
        }
        return policy
    }
}

/// The log and the authority-prefix parse around the router.
struct TenantResponder: HTTPResponder {
    typealias Context = EmulatorRequestContext
    let log: RequestLogMiddleware?
    let prefix: AuthorityPrefixMiddleware
    let router: RouterResponder<EmulatorRequestContext>

    func respond(to request: Request, context: Context) async throws -> Response {
        let routed: @Sendable (Request, Context) async throws -> Response = { request, context in
            try await prefix.handle(request, context: context) { try await router.respond(to: $0, context: $1) }
        }
        guard let log else { return try await routed(request, context) }
        return try await log.handle(request, context: context, next: routed)
    }
}
