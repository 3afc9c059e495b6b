import Foundation

/// Every answer of the tenant that the client acts on, in one table: B2C's AADB2C codes (from the token endpoint and in
/// error redirects), the OAuth errors that come without one, and native auth's errors (reference §8.4). Each row says
/// where the code arrives, the error kind it becomes (and so the exit code), the word `accounts` shows for a refused
/// refresh, the remedy, and the message. "What does AADB2C90088 do?" is answered here and nowhere else.
enum TenantCodes {
    /// Where a code arrives.
    enum Arrival: Sendable { case tokenEndpoint, redirect, nativeAuth }

    /// What a person can do about it, decided per row; made into a `Remedy` with the refused request's context.
    enum RemedyRule: Sendable {
        case none
        /// Sign in to the refused policy again, as the person who was refused.
        case signInAgain
        /// Check the username and password, or sign in to the default policy in the browser.
        case retryPasswordOrBrowser
        /// Run the configuration's password-reset policy (the interactive flow does it on its own, then resumes).
        case resetPassword
        /// Sign up: the person is unknown to the tenant.
        case signUp
        /// Give the app's client secret.
        case provideClientSecret
        /// Sign in again in the browser, at the default sign-in policy.
        case signInInBrowser
        /// An app-only request from a public client's configuration: write the daemon app's configuration.
        case appOnlyConfiguration
    }

    struct Rule: Sendable {
        /// `AADB2C90088`, an OAuth error without a code (`invalid_grant`), or a native-auth error or AAD code (`50126`).
        var code: String
        var arrives: Set<Arrival>
        var kind: B2CError.Kind
        /// In one or two words: what `accounts` says of a refresh the tenant refused with it.
        var meaning: String
        var remedy: RemedyRule
        /// The row holds for app-only (client credentials) grants alone.
        var appOnly = false
        var message: @Sendable (Refusal) -> String
    }

    /// What the tenant refused and in which request: everything a row's message or remedy may name.
    struct Refusal: Sendable {
        var config: ClientConfiguration
        /// The policy (or native-auth name) of the request.
        var policy: String
        /// The person, when known (a login hint, the account's email).
        var loginHint: String?
        /// The tenant's code as it came (`AADB2C90080`), or the OAuth error when there is none.
        var code: String
        /// The whole answer in one line (`invalid_grant AADB2C90080: The provided grant has expired.`).
        var answer: String
        /// B2C's message alone, without its code, correlation id and timestamp.
        var tenantMessage: String
        /// The grant refused at the token endpoint.
        var grant: TokenGrant? = nil
        /// Where the client secret sent came from; nil when none was sent.
        var secretOrigin: String? = nil
        var app: String { config.clientID }
        var isAppOnly: Bool { grant?.isAppOnly ?? false }
    }

    // MARK: the table

    static let rules: [Rule] = grants + passwords + appRegistration + redirects + nativeAuth + accountState

    /// What the directory says of the person (Entra's codes, which the local tenant also answers on its B2C side): no new
    /// sign-in helps a disabled account; an expired password is changed through the password reset.
    static let accountState: [Rule] =
        [("AADSTS50057", Set<Arrival>([.tokenEndpoint, .redirect])), ("50057", [.nativeAuth])].map { code, arrives in
            Rule(code: code, arrives: arrives, kind: .failed, meaning: "account disabled", remedy: .none) { r in
                "the account \(r.loginHint.map { "of \($0) " } ?? "")is disabled in the tenant (AADSTS50057): an administrator must "
                    + "enable it before it signs in; nothing was stored"
            }
        } + [
            Rule(
                code: "password_expired", arrives: [.nativeAuth], kind: .interactionRequired, meaning: "password expired",
                remedy: .resetPassword
            ) { r in
                "the password of \(r.loginHint ?? "this account") must be changed before it signs in (\(plain(r.tenantMessage))): "
                    + "choose a new one through the password reset or in the browser; nothing was stored"
            }
        ]

    /// A refresh token or code the tenant no longer honours: only a new sign-in helps.
    static let grants: [Rule] = [
        needsSignIn("AADB2C90080", "expired"),  // the grant (refresh token) has expired
        needsSignIn("AADB2C90129", "revoked"),  // revoked: a password reset, a revocation by an admin
        needsSignIn("AADB2C90128", "account deleted"),
        needsSignIn("AADB2C90088", "other policy"),  // a refresh token sent to a policy other than the one that issued it
        needsSignIn("AADB2C90090", "not valid"),
        needsSignIn("AADB2C90077", "sign-in needed", arrives: [.tokenEndpoint, .redirect]) { r in
            r.grant == nil
                ? "\(r.policy) has no browser session for prompt=none (AADB2C90077)" : "\(r.policy) needs a new sign-in: \(r.answer)"
        },
        needsSignIn("invalid_grant", "refused"),
        needsSignIn("interaction_required", "sign-in needed"),
        needsSignIn("login_required", "sign-in needed"),
        needsSignIn("consent_required", "sign-in needed"),
    ]

    /// ROPC's refusals.
    static let passwords: [Rule] =
        [
            Rule(
                code: "AADB2C90225", arrives: [.tokenEndpoint], kind: .interactionRequired, meaning: "wrong password",
                remedy: .retryPasswordOrBrowser
            ) { r in
                "\(r.policy) refused the username or password (AADB2C90225: \(r.tenantMessage)); nothing was stored"
            }
        ]
        // The policy (99003; 90224: it asks for MFA) or the app (90057) does not take passwords.
        + ["AADB2C99003", "AADB2C90057", "AADB2C90224"].map { code in
            Rule(code: code, arrives: [.tokenEndpoint], kind: .configuration, meaning: "no passwords", remedy: .none) { r in
                "\(r.policy) does not accept passwords from this app: \(r.answer)"
            }
        }

    /// Refusals of the app itself (its secret, its type, its permissions), in words that say what to change.
    static let appRegistration: [Rule] = [
        appRule("AADB2C90081", "wrong secret") { r in
            "the tenant refused the client secret of \(r.app) from \(r.secretOrigin ?? "nowhere") (AADB2C90081): it is wrong or "
                + "expired. Check it against the app registration's Certificates & secrets; nothing was stored"
        },
        appRule("AADB2C90084", "public client", remedy: .appOnlyConfiguration) { r in
            r.isAppOnly
                ? publicClientHasNoAppToken(r)
                : "the app \(r.app) is a public client: the tenant refuses a client secret (AADB2C90084)"
                    + (r.config.confidential ? ". Remove \"confidential\" from \(r.config.source)" : "; give none")
        },
        Rule(code: "AADB2C90079", arrives: [.tokenEndpoint], kind: .configuration, meaning: "secret needed", remedy: .provideClientSecret) {
            r in
            if r.isAppOnly && r.secretOrigin != nil { return publicClientHasNoAppToken(r) }
            if r.secretOrigin == nil {
                return "the app \(r.app) is confidential (its redirect URI is of type Web): the tenant wants its secret (AADB2C90079). "
                    + "Set \"confidential\": true in \(r.config.source) and give the secret"
            }
            return "the tenant treats \(r.app) as a public client and refused the secret (AADB2C90079: \(r.tenantMessage)); client "
                + "credentials need a confidential app with a secret"
        },
        appRule("AADB2C90205", "no permission") { r in
            "the app \(r.app) holds no application permission of \(r.grant?.scope ?? "the scope") (AADB2C90205). In the app "
                + "registration: API permissions › Add a permission › My APIs › the API › Application permissions, then Grant "
                + "admin consent"
        },
        appRule("AADB2C90012", "scope refused", onlyAppOnly: true) { r in
            "the tenant refused the scope \(r.grant?.scope ?? "") (AADB2C90012): app-only tokens take one '<App ID URI>/.default'"
        },
        appRule("AADB2C90117", "scope refused", onlyAppOnly: true) { r in
            "the tenant refused the scope \(r.grant?.scope ?? "") (AADB2C90117): app-only tokens take one '<App ID URI>/.default'"
        },
        appRule("AADB2C90085", "no client credentials") { r in
            "the app \(r.app) cannot use client credentials in this tenant (AADB2C90085: \(r.tenantMessage)): its sign-in audience "
                + "must be accounts in any identity provider or organizational directory"
        },
    ]

    /// What the pages send back to the app instead of a code (error redirects).
    static let redirects: [Rule] = [
        Rule(code: "AADB2C90118", arrives: [.redirect], kind: .failed, meaning: "forgot password", remedy: .resetPassword) { r in
            r.config.resetPolicy(after: r.policy) == nil
                ? "the user chose \"Forgot your password?\" (AADB2C90118) but \(r.config.source) has no policy of role resetPassword"
                : "the user chose \"Forgot your password?\" (AADB2C90118) at \(r.policy); reset the password with the policy below"
        },
        Rule(code: "AADB2C90091", arrives: [.redirect], kind: .cancelled, meaning: "cancelled", remedy: .none) { r in
            "cancelled: the sign-in to \(r.policy) was cancelled on the page (AADB2C90091)"
        },
        Rule(code: "AADB2C90151", arrives: [.redirect], kind: .failed, meaning: "too many codes", remedy: .signInAgain) { r in
            "the sign-in to \(r.policy) was stopped after too many wrong verification codes (AADB2C90151); nothing was stored"
        },
        Rule(code: "AADB2C90157", arrives: [.redirect], kind: .failed, meaning: "too many tries", remedy: .signInAgain) { r in
            "the sign-in to \(r.policy) was stopped after too many tries on one page (AADB2C90157); nothing was stored"
        },
        Rule(code: "AADB2C90273", arrives: [.redirect], kind: .failed, meaning: "provider refused", remedy: .signInAgain) { r in
            "the identity provider did not sign the person in to \(r.policy) (AADB2C90273: \(r.tenantMessage)); nothing was stored"
        },
        Rule(code: "AADB2C90075", arrives: [.redirect], kind: .network, meaning: "connector failed", remedy: .none) { r in
            "a REST call of \(r.policy)'s journey failed (AADB2C90075: \(r.tenantMessage)); nothing was stored. Try again later"
        },
    ]

    /// Native auth's refusals (External ID), keyed by its error or AAD code.
    static let nativeAuth: [Rule] =
        // The person is unknown: said as an error of its own, or as invalid_grant with AAD's code 50034.
        ["user_not_found", "50034"].map { code in
            Rule(code: code, arrives: [.nativeAuth], kind: .interactionRequired, meaning: "unknown user", remedy: .signUp) { r in
                "there is no account \(r.loginHint ?? "of that name") in this tenant; nothing was stored"
            }
        } + [
            Rule(code: "50126", arrives: [.nativeAuth], kind: .interactionRequired, meaning: "wrong password", remedy: .signInAgain) { r in
                "wrong password for \(r.loginHint ?? "that account"); nothing was stored"
            },
            Rule(code: "expired_token", arrives: [.nativeAuth], kind: .interactionRequired, meaning: "too slow", remedy: .signInAgain) {
                r in
                "it took too long: the tenant's continuation token expired (\(r.tenantMessage)); nothing was stored"
            },
            Rule(
                code: "redirect", arrives: [.nativeAuth], kind: .interactionRequired, meaning: "browser needed", remedy: .signInInBrowser
            ) { r in
                let why = r.tenantMessage.isEmpty ? "" : " (\(r.tenantMessage))"
                return "the tenant needs the browser to sign in \(r.loginHint ?? "this person")\(why)"
            },
            nativeClientRule("unsupported_challenge_type"),
            nativeClientRule("invalid_client"),
            nativeClientRule("unauthorized_client"),
            Rule(
                code: "user_already_exists", arrives: [.nativeAuth], kind: .failed, meaning: "already signed up", remedy: .signInAgain
            ) { r in
                "there is already an account \(r.loginHint ?? "with that address") in this tenant: sign in instead; nothing was stored"
            },
            Rule(
                code: "attribute_validation_failed", arrives: [.nativeAuth], kind: .failed, meaning: "attribute refused", remedy: .none
            ) { r in
                "the tenant refused an attribute value: \(plain(r.tenantMessage)); nothing was stored"
            },
            // A second factor's channel the tenant will not use for now (throttled, or a number it does not serve).
            Rule(
                code: "provider_blocked_by_rep", arrives: [.nativeAuth], kind: .network, meaning: "method blocked", remedy: .none
            ) { r in
                "the tenant will not send a code by that method for now (\(plain(r.tenantMessage))); try again later or another method"
            },
            Rule(code: "901001", arrives: [.nativeAuth], kind: .failed, meaning: "contact refused", remedy: .none) { r in
                "the tenant cannot register that address or number: \(plain(r.tenantMessage)); nothing was stored"
            },
        ]
        // A new password the tenant refuses (sign-up, reset): asked again at a terminal, an error from a script.
        + [
            "password_too_weak", "password_too_short", "password_too_long", "password_recently_used", "password_banned",
            "password_is_invalid",
        ].map { code in
            Rule(code: code, arrives: [.nativeAuth], kind: .failed, meaning: "password refused", remedy: .none) { r in
                "the tenant refused the new password (\(code)): \(plain(r.tenantMessage))"
            }
        }

    /// A refusal for what the directory says of the person (`accountState`), not of the grant.
    static func isAccountState(_ code: String?) -> Bool { accountState.contains { $0.code == code } }

    /// The `AADSTS` code an Entra description starts with (`AADSTS50057: …`), or nil.
    static func entraCode(_ description: String) -> String? {
        guard description.hasPrefix("AADSTS") else { return nil }
        let digits = description.dropFirst(6).prefix { $0.isASCII && $0.isNumber }
        return digits.isEmpty ? nil : "AADSTS" + digits
    }

    /// AAD's message without its `AADSTS…:` prefix.
    static func plain(_ message: String) -> String {
        guard message.hasPrefix("AADSTS"), let colon = message.firstIndex(of: ":") else { return message }
        return message[message.index(after: colon)...].trimmingCharacters(in: .whitespaces)
    }

    // MARK: lookups

    private static let byCode: [String: Rule] = Dictionary(rules.map { ($0.code.uppercased(), $0) }) { first, _ in first }

    /// The row for a code as it arrives there; nil when the client has no rule for it.
    static func rule(_ code: String?, at arrival: Arrival) -> Rule? {
        guard let code, let rule = byCode[code.uppercased()], rule.arrives.contains(arrival) else { return nil }
        return rule
    }

    /// What `accounts` says of a refresh the tenant refused.
    static func meaning(ofRefusal code: String?) -> String {
        rule(code, at: .tokenEndpoint)?.meaning ?? "refused"
    }

    /// The error a row makes of a refusal, with its remedy and the tenant's code.
    static func error(_ rule: Rule, _ r: Refusal) -> B2CError {
        var e = B2CError(rule.kind, rule.message(r), remedy: remedy(rule.remedy, r))
        e.tenantCode = r.code
        return e
    }

    static func remedy(_ rule: RemedyRule, _ r: Refusal) -> Remedy? {
        switch rule {
        case .none: return nil
        case .signInAgain: return r.config.signInRemedy(policy: r.policy, loginHint: r.loginHint)
        case .retryPasswordOrBrowser: return .retryPasswordOrBrowser(policy: (try? r.config.defaultPolicy().name) ?? r.policy)
        case .resetPassword:
            return r.config.resetPolicy(after: r.policy).map {
                .signIn(policy: $0.name, method: .resetPassword, loginHint: r.loginHint)
            }
        case .signUp: return .signUp(username: r.loginHint)
        case .provideClientSecret:
            if r.isAppOnly && r.secretOrigin != nil { return .writeAppOnlyConfiguration }
            return r.secretOrigin == nil && !r.isAppOnly ? ClientSecretSource.remedy : nil
        case .appOnlyConfiguration: return r.isAppOnly ? .writeAppOnlyConfiguration : nil
        case .signInInBrowser:
            return (try? r.config.resolve(policy: nil).name).map { r.config.signInRemedy(policy: $0, loginHint: r.loginHint) }
        }
    }

    /// A token-endpoint failure as the client reports it: a row of the table when the tenant's code has one, else by status.
    static func error(_ failure: TokenEndpointError, _ context: Refusal) -> B2CError {
        switch failure {
        case .unreachable(let e): return B2CError(e)
        case .unexpectedStatus(let status):
            return B2CError(.network, "the token endpoint answered HTTP \(status) without an OAuth error body; try again later")
        case .malformedResponse(let host, let e): return B2CError(.network, "\(host): \(e)")
        case .refused(let oauth, let secretOrigin):
            var r = context
            r.code = oauth.code ?? oauth.error
            r.answer = oauth.description
            r.tenantMessage = oauth.b2c.message
            r.secretOrigin = secretOrigin
            // The B2C code's row, else an Entra code's (`AADSTS50057: …`) when the table names it, else the OAuth error's
            // (`invalid_grant` with a code the table does not name).
            let entra = rule(entraCode(oauth.errorDescription ?? ""), at: .tokenEndpoint)
            if entra != nil, oauth.code == nil { r.code = entraCode(oauth.errorDescription ?? "") ?? r.code }
            let rows = [rule(oauth.code, at: .tokenEndpoint), entra, rule(oauth.error, at: .tokenEndpoint)].compactMap { $0 }
            if let rule = rows.first(where: { !$0.appOnly || r.isAppOnly }) {
                return error(rule, r)
            }
            var e =
                oauth.status >= 500
                ? B2CError(.network, "the token endpoint failed (HTTP \(oauth.status)): \(oauth)")
                : B2CError(.failed, "the token endpoint refused the request: \(oauth)")
            e.tenantCode = r.code
            return e
        }
    }

    /// An error redirect (`error`, `error_description`) as the client reports it.
    static func redirectError(error: String, description: String, context: Refusal) -> B2CError {
        let d = B2CErrorDescription.parse(description)
        var r = context
        r.code = d.code ?? error
        r.answer = error + (d.code.map { " \($0)" } ?? "") + (d.message.isEmpty ? "" : ": \(d.message)")
        r.tenantMessage = d.message
        if let rule = rule(d.code, at: .redirect) { return Self.error(rule, r) }
        if d.code == nil, let code = entraCode(description), let rule = rule(code, at: .redirect) {
            r.code = code
            return Self.error(rule, r)
        }
        var e = B2CError(.failed, "the sign-in to \(r.policy) failed: \(error)\(d.code.map { " \($0)" } ?? ""): \(d.message)")
        e.tenantCode = r.code
        return e
    }

    // MARK: row makers

    private static func needsSignIn(
        _ code: String, _ meaning: String, arrives: Set<Arrival> = [.tokenEndpoint],
        message: @escaping @Sendable (Refusal) -> String = { "\($0.policy) needs a new sign-in: \($0.answer)" }
    ) -> Rule {
        Rule(code: code, arrives: arrives, kind: .interactionRequired, meaning: meaning, remedy: .signInAgain, message: message)
    }

    private static func appRule(
        _ code: String, _ meaning: String, onlyAppOnly: Bool = false, remedy: RemedyRule = .none,
        message: @escaping @Sendable (Refusal) -> String
    ) -> Rule {
        Rule(
            code: code, arrives: [.tokenEndpoint], kind: .configuration, meaning: meaning, remedy: remedy, appOnly: onlyAppOnly,
            message: message)
    }

    private static func nativeClientRule(_ code: String) -> Rule {
        Rule(code: code, arrives: [.nativeAuth], kind: .configuration, meaning: "app refused", remedy: .none) { r in
            "the tenant refused this app's native-auth request: \(r.answer). Check clientId and nativeAuth in \(r.config.source)"
        }
    }

    private static func publicClientHasNoAppToken(_ r: Refusal) -> String {
        "\(r.config.source) is a public client's configuration (\(r.app), an app that signs people in): the tenant gives it no "
            + "token of its own (\(r.code)). An app-only token needs the daemon app's configuration, its client id with a secret"
    }
}

extension TokenEndpoint {
    /// `redeem`, with a failure made into the client's error by the table, for a request of `policy` as `loginHint`.
    func redeem(
        _ grant: TokenGrant, at endpoint: URL, config: ClientConfiguration, policy: String, loginHint: String?
    ) async throws -> TokenResponse {
        do { return try await redeem(grant, at: endpoint) } catch let failure as TokenEndpointError {
            let context = TenantCodes.Refusal(
                config: config, policy: policy, loginHint: loginHint, code: "", answer: "", tenantMessage: "", grant: grant)
            throw TenantCodes.error(failure, context)
        }
    }
}
