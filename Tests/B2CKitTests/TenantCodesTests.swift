import Foundation
import Testing

@testable import B2CKit

/// Every row of the tenant-code table, through the entry point where its code arrives: the kind it becomes, the code it
/// carries, the remedy it offers. A new row without its expectation here fails `everyRowIsSpecified`.
@Suite("The table of tenant codes")
struct TenantCodesTests {
    enum RemedyShape: Sendable, Equatable {
        case none, signInAgain, retryPasswordOrBrowser, resetPassword, signUp, provideSecret
    }

    /// Code, kind, the word `accounts` shows for a refused refresh, remedy.
    static let expectations: [(String, B2CError.Kind, String, RemedyShape)] = [
        ("AADB2C90080", .interactionRequired, "expired", .signInAgain),
        ("AADB2C90129", .interactionRequired, "revoked", .signInAgain),
        ("AADB2C90128", .interactionRequired, "account deleted", .signInAgain),
        ("AADB2C90088", .interactionRequired, "other policy", .signInAgain),
        ("AADB2C90090", .interactionRequired, "not valid", .signInAgain),
        ("AADB2C90077", .interactionRequired, "sign-in needed", .signInAgain),
        ("invalid_grant", .interactionRequired, "refused", .signInAgain),
        ("interaction_required", .interactionRequired, "sign-in needed", .signInAgain),
        ("login_required", .interactionRequired, "sign-in needed", .signInAgain),
        ("consent_required", .interactionRequired, "sign-in needed", .signInAgain),
        ("AADB2C90225", .interactionRequired, "wrong password", .retryPasswordOrBrowser),
        ("AADB2C99003", .configuration, "no passwords", .none),
        ("AADB2C90057", .configuration, "no passwords", .none),
        ("AADB2C90224", .configuration, "no passwords", .none),
        ("AADB2C90081", .configuration, "wrong secret", .none),
        ("AADB2C90084", .configuration, "public client", .none),
        ("AADB2C90079", .configuration, "secret needed", .provideSecret),
        ("AADB2C90205", .configuration, "no permission", .none),
        ("AADB2C90012", .configuration, "scope refused", .none),
        ("AADB2C90117", .configuration, "scope refused", .none),
        ("AADB2C90085", .configuration, "no client credentials", .none),
        ("AADB2C90118", .failed, "forgot password", .resetPassword),
        ("AADB2C90091", .cancelled, "cancelled", .none),
        ("AADB2C90151", .failed, "too many codes", .signInAgain),
        ("AADB2C90157", .failed, "too many tries", .signInAgain),
        ("AADB2C90273", .failed, "provider refused", .signInAgain),
        ("AADB2C90075", .network, "connector failed", .none),
        ("user_not_found", .interactionRequired, "unknown user", .signUp),
        ("50034", .interactionRequired, "unknown user", .signUp),
        ("50126", .interactionRequired, "wrong password", .signInAgain),
        ("expired_token", .interactionRequired, "too slow", .signInAgain),
        ("redirect", .interactionRequired, "browser needed", .signInAgain),
        ("unsupported_challenge_type", .configuration, "app refused", .none),
        ("invalid_client", .configuration, "app refused", .none),
        ("unauthorized_client", .configuration, "app refused", .none),
        ("user_already_exists", .failed, "already signed up", .signInAgain),
        ("attribute_validation_failed", .failed, "attribute refused", .none),
        ("provider_blocked_by_rep", .network, "method blocked", .none),
        ("901001", .failed, "contact refused", .none),
        ("password_too_weak", .failed, "password refused", .none),
        ("password_too_short", .failed, "password refused", .none),
        ("password_too_long", .failed, "password refused", .none),
        ("password_recently_used", .failed, "password refused", .none),
        ("password_banned", .failed, "password refused", .none),
        ("password_is_invalid", .failed, "password refused", .none),
        ("AADSTS50057", .failed, "account disabled", .none),
        ("50057", .failed, "account disabled", .none),
        ("password_expired", .interactionRequired, "password expired", .resetPassword),
    ]

    static let config = try! ClientConfiguration.parse(
        Data(
            """
            {"tenant": {"name": "contoso.onmicrosoft.com"}, "authorityHost": "https://contoso.b2clogin.com",
             "knownAuthorities": ["contoso.b2clogin.com"],
             "clientId": "11111111-1111-1111-1111-111111111111", "redirectUri": "http://localhost",
             "policies": [{"name": "B2C_1_susi", "role": "signUpSignIn"}, {"name": "B2C_1_reset", "role": "resetPassword"}]}
            """.utf8))

    /// An OAuth error body as the tenant sends it, parsed as the client parses it.
    static func oauth(_ status: Int, _ error: String, _ description: String) -> OAuthError {
        let body = JSONValue.object(["error": .string(error), "error_description": .string(description)]).serialized()
        return OAuthError.parse(status: status, Data(body.utf8))!
    }

    @Test func anEntraCodeInTheDescriptionFindsItsRow() {
        let oauth = Self.oauth(400, "invalid_grant", "AADSTS50057: The user account is disabled.\r\nCorrelation ID: c\r\nTimestamp: t")
        let context = TenantCodes.Refusal(
            config: Self.config, policy: "B2C_1_susi", loginHint: nil, code: "", answer: "", tenantMessage: "")
        let e = TenantCodes.error(.refused(oauth, secretOrigin: nil), context)
        #expect(e.kind == .failed && e.tenantCode == "AADSTS50057" && e.remedy == nil, "\(e)")
        let redirected = TenantCodes.redirectError(error: "access_denied", description: "AADSTS50057: disabled.", context: context)
        #expect(redirected.kind == .failed && redirected.tenantCode == "AADSTS50057", "\(redirected)")
        // An Entra code the table does not name keeps the OAuth error's row, as before.
        let other = Self.oauth(400, "invalid_grant", "AADSTS70000: The grant is invalid.")
        #expect(TenantCodes.error(.refused(other, secretOrigin: nil), context).tenantCode == "invalid_grant")
    }

    @Test func everyRowIsSpecified() {
        #expect(Set(TenantCodes.rules.map(\.code)) == Set(Self.expectations.map(\.0)))
        #expect(TenantCodes.rules.count == Set(TenantCodes.rules.map(\.code)).count, "a code has two rows")
    }

    @Test(arguments: expectations.map(\.0))
    func eachCodeBecomesItsKindAndRemedy(_ code: String) throws {
        let (_, kind, meaning, shape) = try #require(Self.expectations.first { $0.0 == code })
        let rule = try #require(TenantCodes.rules.first { $0.code == code })
        let context = TenantCodes.Refusal(
            config: Self.config, policy: "B2C_1_susi", loginHint: "alice@contoso.com", code: "", answer: "", tenantMessage: "")
        let e: B2CError
        if rule.arrives.contains(.tokenEndpoint) {
            let isB2C = code.hasPrefix("AADB2C")
            let oauth = Self.oauth(
                400, isB2C ? "invalid_request" : code, isB2C ? "\(code): The tenant says no.\r\nCorrelation ID: c\r\nTimestamp: t" : "no")
            var refusal = context
            refusal.grant = rule.appOnly ? .clientCredentials(clientID: "c", scope: "https://x/.default") : nil
            e = TenantCodes.error(.refused(oauth, secretOrigin: nil), refusal)
            #expect(TenantCodes.meaning(ofRefusal: code) == meaning)
        } else if rule.arrives.contains(.redirect) {
            e = TenantCodes.redirectError(error: "access_denied", description: "\(code): The tenant says no.", context: context)
        } else {
            var refusal = context
            refusal.code = code
            e = TenantCodes.error(rule, refusal)
        }
        #expect(e.kind == kind, "\(code): \(e)")
        #expect(e.tenantCode == code)
        #expect(rule.meaning == meaning)
        #expect(!e.message.isEmpty)
        switch (shape, e.remedy) {
        case (.none, nil), (.retryPasswordOrBrowser, .retryPasswordOrBrowser(policy: "B2C_1_susi")?):
            break
        case (.signInAgain, .signIn(_, _, "alice@contoso.com")?), (.resetPassword, .signIn("B2C_1_reset", .resetPassword, _)?),
            (.signUp, .signUp?), (.provideSecret, .provideClientSecret?):
            break
        default:
            Issue.record("\(code): the remedy is \(String(describing: e.remedy)), expected \(shape)")
        }
    }

    @Test("forgot password goes on to a reset policy of the sign-in's own kind: custom after custom, user flow after user flow")
    func forgotPasswordPicksTheResetPolicyOfTheSameKind() throws {
        let config = try ClientConfiguration.parse(
            Data(
                """
                {"tenant": {"name": "contoso.onmicrosoft.com"}, "authorityHost": "https://contoso.b2clogin.com",
                 "knownAuthorities": ["contoso.b2clogin.com"],
                 "clientId": "11111111-1111-1111-1111-111111111111", "redirectUri": "http://localhost",
                 "policies": [{"name": "B2C_1_susi", "role": "signUpSignIn"}, {"name": "B2C_1_reset", "role": "resetPassword"},
                              {"name": "B2C_1A_signup_signin", "role": "signUpSignIn"},
                              {"name": "B2C_1A_PasswordReset", "role": "resetPassword"}]}
                """.utf8))
        #expect(config.resetPolicy(after: "B2C_1A_signup_signin")?.name == "B2C_1A_PasswordReset")
        #expect(config.resetPolicy(after: "b2c_1a_signup_signin")?.name == "B2C_1A_PasswordReset")
        #expect(config.resetPolicy(after: "B2C_1_susi")?.name == "B2C_1_reset")
        // Only a user flow to reset with: a custom sign-in still gets it.
        #expect(Self.config.resetPolicy(after: "B2C_1A_signup_signin")?.name == "B2C_1_reset")
        for (policy, reset) in [("B2C_1A_signup_signin", "B2C_1A_PasswordReset"), ("B2C_1_susi", "B2C_1_reset")] {
            let context = TenantCodes.Refusal(config: config, policy: policy, loginHint: nil, code: "", answer: "", tenantMessage: "")
            let e = TenantCodes.redirectError(error: "access_denied", description: "AADB2C90118: forgot.", context: context)
            guard case .signIn(reset, .resetPassword, _)? = e.remedy else {
                Issue.record("\(policy): the remedy is \(String(describing: e.remedy)), expected \(reset)")
                continue
            }
        }
    }

    @Test("a code the table does not name: a server fault is a network error, a refusal a failure, both keep the code")
    func unknownCodes() {
        let context = TenantCodes.Refusal(
            config: Self.config, policy: "B2C_1_susi", loginHint: nil, code: "", answer: "", tenantMessage: "")
        let server = TenantCodes.error(
            .refused(Self.oauth(503, "server_error", "AADB2C99999: down"), secretOrigin: nil), context)
        let client = TenantCodes.error(
            .refused(Self.oauth(400, "invalid_request", "AADB2C99998: no"), secretOrigin: nil), context)
        #expect(server.kind == .network && server.tenantCode == "AADB2C99999")
        #expect(client.kind == .failed && client.tenantCode == "AADB2C99998")
        // invalid_grant with a code of its own that has no row: the OAuth error's row (a new sign-in).
        let grant = TenantCodes.error(
            .refused(Self.oauth(400, "invalid_grant", "AADB2C90087: wrong version"), secretOrigin: nil),
            context)
        #expect(grant.kind == .interactionRequired && grant.tenantCode == "AADB2C90087")
        #expect(TenantCodes.meaning(ofRefusal: "AADB2C90087") == "refused")
    }
}
