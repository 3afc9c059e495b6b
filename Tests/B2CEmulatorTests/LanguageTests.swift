import B2CKit
import Foundation
import Testing

@testable import B2CEmulator

/// The pages' language (reference: b2c-journeys.md §6): `ui_locales`, else the browser's `Accept-Language`, else the
/// user flow's default; `<html lang>`; B2C's English strings, the emulator's French, and a user flow's overrides.
@Suite struct LanguageTests {
    static var seed: EmulatorSeed {
        var s = EmulatorSeed.default
        var p = s.policy(named: "B2C_1_susi")!
        p.id = "B2C_1_custom_words"
        p.languages.overrides["fr"] = ["button_signin": "Entrer"]
        var mfa = s.policy(named: "B2C_1_susi_mfa")!
        mfa.id = "B2C_1_mfa_fr"
        s.policies += [p, mfa]
        return s
    }

    static func page(
        _ t: TestTenant, policy: String = "B2C_1_susi", uiLocales: String? = nil, acceptLanguage: String? = nil
    )
        async throws -> TestResponse
    {
        try await t.get(
            authorizeURL(policy: policy, extra: uiLocales.map { ["ui_locales": $0] } ?? [:]),
            headers: acceptLanguage.map { [("Accept-Language", $0)] } ?? [])
    }

    @Test(
        arguments: [
            (nil, nil, "en"), ("fr", nil, "fr"), ("fr-CA", nil, "fr"), (nil, "de-DE,fr;q=0.8,en;q=0.5", "fr"), ("en", "fr", "en"),
            ("de", nil, "en"), (nil, "*", "en"),
        ] as [(String?, String?, String)])
    func theLanguageIsUILocalesElseTheBrowsersElseTheDefault(_ ui: String?, _ accept: String?, _ expected: String) async throws {
        try await TestTenant.with { t in
            let r = try await Self.page(t, uiLocales: ui, acceptLanguage: accept)
            #expect(r.body.contains("<html lang=\"\(expected)\">"), "ui_locales \(ui ?? "-"), Accept-Language \(accept ?? "-")")
            #expect(r.body.contains(expected == "fr" ? ">Se connecter</button>" : ">Sign in</button>"))
            for id in ["logonIdentifier", "password", "next", "forgotPassword", "createAccount", "cancel"] {
                #expect(r.body.contains("id=\"\(id)\""), "the element ids do not change with the language")
            }
        }
    }

    @Test func errorsAndTheMFAPagesSpeakThePagesLanguage() async throws {
        try await TestTenant.with(seed: Self.seed) { t in
            let b = Browser(t)
            let page = try await b.get(authorizeURL(policy: "B2C_1_mfa_fr", extra: ["ui_locales": "fr"]))
            let wrong = try await b.submit(page, form: "localAccountForm", ["logonIdentifier": alice.email, "password": "nope-nope"])
            #expect(wrong.body.contains("Votre mot de passe est incorrect."))
            let mfa = try await b.submit(wrong, form: "localAccountForm", ["logonIdentifier": alice.email, "password": alice.password])
            #expect(mfa.body.contains("<html lang=\"fr\">") && mfa.body.contains("Envoyer le code de vérification"))
            #expect(mfa.body.contains("id=\"ReadOnlyEmail_ver_but_send\""))
        }
    }

    @Test func theProfileAndResetPagesSpeakFrenchToo() async throws {
        try await TestTenant.with { t in
            let b = Browser(t)
            _ = try await b.signIn(email: alice.email, password: alice.password)
            let profile = try await b.get(authorizeURL(policy: "B2C_1_edit_profile", extra: ["ui_locales": "fr"]))
            #expect(profile.body.contains("<html lang=\"fr\">") && profile.body.contains("Modifiez votre profil"))
            #expect(profile.body.contains(">Prénom</label>") && profile.body.contains("id=\"givenName\""))
            let empty = try await b.submit(profile, form: "attributeVerification", ["displayName": " "])
            #expect(empty.body.contains("Le nom d&#39;affichage est obligatoire."))

            let reset = try await b.get(authorizeURL(policy: "B2C_1_reset", extra: ["ui_locales": "fr"]))
            #expect(reset.body.contains("<html lang=\"fr\">") && reset.body.contains("Réinitialisez votre mot de passe"))
            let unknown = try await b.submit(reset, form: "attributeVerification", ["email": "nobody@contoso.com"])
            #expect(unknown.body.contains("Aucun compte n&#39;a été trouvé"))
            let sent = try await b.submit(unknown, form: "attributeVerification", ["email": bob.email])
            #expect(sent.body.contains("Un code de vérification a été envoyé à"))
            let code = try #require((try await t.admin(.GET, "/outbox").json["messages"]?.arrayValue)?.first?["code"]?.stringValue)
            let weak = try await b.submit(
                sent, form: "attributeVerification", ["verificationCode": code, "newPassword": "short", "reenterPassword": "short"])
            #expect(weak.body.contains("entre 8 et 64 caractères"))
        }
    }

    @Test func aUserFlowsOverridesReplaceItsStrings() async throws {
        try await TestTenant.with(seed: Self.seed) { t in
            let fr = try await Self.page(t, policy: "B2C_1_custom_words", uiLocales: "fr")
            #expect(fr.body.contains(">Entrer</button>") && fr.body.contains("Mot de passe oublié ?"))
            let en = try await Self.page(t, policy: "B2C_1_custom_words")
            #expect(en.body.contains(">Sign in</button>"), "an override is for its language only")
        }
    }

    @Test func theSeedReadsB2CsOverrideFormat() throws {
        func parse(_ languages: String) throws -> EmulatorSeed.Languages {
            try parsePolicySeed("\"languages\": \(languages)").languages
        }
        let l = try parse(
            #"{"default": "fr", "enabled": ["en", "fr"], "overrides": {"fr": {"LocalizedStrings": ["#
                + #"{"ElementType": "UxElement", "StringId": "button_signin", "Override": true, "Value": "Entrer"},"#
                + #"{"ElementType": "UxElement", "StringId": "heading", "Override": false, "Value": "ignored"}]}}}"#)
        #expect(l.defaultLanguage == "fr" && l.overrides["fr"] == ["button_signin": "Entrer"])
        #expect(throws: JSONPathError.self) { try parse(#"{"enabled": ["english!"]}"#) }
        #expect(throws: JSONPathError.self) { try parse(#"{"enabled": []}"#) }
    }
}
