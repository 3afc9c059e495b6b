import B2CProtocol
import Foundation

/// The words of the tenant's pages, by B2C's string ids where B2C has one (`button_signin`, `forgotpassword_link`,
/// `ver_but_send`, …), in English (B2C's default strings) and French; a user flow's overrides (B2C's user-flow JSON,
/// `LocalizedStrings` entries with `"Override": true`) replace them per language.
struct PageStrings: Sendable {
    /// The page language (`<html lang>`).
    let language: String
    private let table: [String: String]

    init(language: String, overrides: [String: String] = [:]) {
        self.language = language
        let base = Self.catalog[Self.primary(language)] ?? [:]
        table = Self.catalog["en"]!.merging(base) { $1 }.merging(overrides) { $1 }
    }

    subscript(_ id: String) -> String { table[id] ?? id }

    /// `fr-FR` → `fr`: the catalog is per language, not per region.
    static func primary(_ tag: String) -> String { String(tag.lowercased().split(separator: "-").first ?? "") }

    /// Languages with the emulator's own translations.
    static var translated: [String] { catalog.keys.sorted() }

    /// The page language of a request (reference §6.1): the first of `ui_locales` the user flow has enabled, else the
    /// first of the browser's `Accept-Language` (by weight) it has enabled, else its default.
    static func resolve(uiLocales: String?, acceptLanguage: String?, settings: EmulatorSeed.Languages) -> String {
        func enabled(_ tag: String) -> String? {
            let t = tag.lowercased()
            return settings.enabled.first { $0.lowercased() == t } ?? settings.enabled.first { primary($0) == primary(t) }
        }
        for tag in (uiLocales ?? "").split(whereSeparator: { $0 == " " || $0 == "," }) {
            if let found = enabled(String(tag)) { return found }
        }
        let weighted = (acceptLanguage ?? "").split(separator: ",").compactMap { part -> (String, Double)? in
            let pieces = part.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }
            guard let tag = pieces.first, !tag.isEmpty, tag != "*" else { return nil }
            let q = pieces.dropFirst().first { $0.hasPrefix("q=") }.flatMap { Double($0.dropFirst(2)) } ?? 1
            return (tag, q)
        }
        for (tag, q) in weighted.sorted(by: { $0.1 > $1.1 }) where q > 0 {
            if let found = enabled(tag) { return found }
        }
        return settings.defaultLanguage
    }

    static let catalog: [String: [String: String]] = ["en": english, "fr": french]

    static let english: [String: String] = [
        "verification_control_but_send_code": "Send Code", "verification_control_but_verify_code": "Verify Code",
        "verification_control_but_send_new_code": "Send New Code", "verification_control_but_change_claims": "Change",
        "verification_control_code_sent": "Verification code has been sent. Please copy it to the input box below.",
        // Edit profile and password reset (the emulator's ids where B2C's are not documented).
        "profile_title": "Edit profile", "profile_heading": "Edit your profile", "signed_in_as": "Signed in as",
        "error_displayName_required": "Display Name is required.", "reset_title": "Reset password",
        "reset_heading": "Reset your password", "reset_code_sent": "A verification code has been sent to",
        "reset_outbox_note": "In the emulator it is in the outbox", "resend_code": "Send a new code",
        "reset_account_not_found": "An account could not be found for the provided user ID.",
        "reset_too_many_attempts": "You've made too many incorrect attempts. Please send a new code.",
        "reset_code_mismatch":
            "The verification code you have entered does not match our records. Please try again, or request a new code.",
        "password_length": "The password must be between 8 and 64 characters.",
        "password_classes": "The password must have at least 3 of: a lowercase letter, an uppercase letter, a digit, a symbol.",
        // Unified sign-up or sign-in (api.signuporsignin).
        "heading": "Sign in", "social_intro": "Sign in with your social account", "divider_title": "OR",
        "local_intro_email": "Sign in with your email address", "logonIdentifier_label": "Email Address",
        "password_label": "Password", "forgotpassword_link": "Forgot your password?", "button_signin": "Sign in",
        "createaccount_intro": "Don't have an account?", "createaccount_one_link": "Sign up now", "remember_me": "Keep me signed in",
        "cancel": "Cancel", "requiredField_credentials": "Please enter your email address and your password.",
        "UserMessageIfInvalidPassword": "Your password is incorrect.",
        "UserMessageIfPasswordExpired": "Your password has expired: choose a new one with “Forgot your password?”.",
        "UserMessageIfUserAccountDisabled": "Your account has been locked. Contact your support person to unlock it, then try again.",
        // The new password an administrator asked for (forceChangePasswordNextSignIn; the emulator's ids).
        "password_change_title": "Change password", "password_change_heading": "Choose a new password",
        "password_change_intro": "Your administrator asks you to choose a new password before you go on.",
        "password_change_same": "The new password must differ from the one you signed in with.",
        "UserMessageIfClaimsPrincipalDoesNotExist": "We can't seem to find your account.",
        // Local sign-up (api.localaccountsignup) and the social sign-up page.
        "signup_heading": "Create your account", "social_signup_heading": "Complete your profile", "email_label": "Email Address",
        "newPassword_label": "New Password", "reenterPassword_label": "Confirm New Password", "displayName_label": "Display Name",
        "givenName_label": "Given Name", "surname_label": "Surname", "button_continue": "Create", "button_continue_generic": "Continue",
        "error_passwordEntryMismatch":
            "The password entry fields do not match. Please enter the same password in both fields and try again.",
        "UserMessageIfClaimsPrincipalAlreadyExists": "A user with the specified ID already exists. Please choose a different one.",
        "error_invalid_email": "Please enter a valid email address.", "required_displayName": "Display Name is required.",
        "password_help": "Passwords: 8–64 characters with at least three of lower case, upper case, digits and symbols.",
        // Email verification (self-asserted pages).
        "mfa_heading": "Security verification", "mfa_email_intro": "Enter the verification code in the email to continue.",
        "ver_but_send": "Send verification code", "ver_but_verify": "Verify code", "ver_but_resend": "Send new code",
        "ver_input": "Verification code",
        "ver_info_msg": "Verification code has been sent to your inbox. Please copy it to the input box below.",
        "ver_success_msg": "E-mail address verified. You can now continue.", "ver_fail_retry": "That code is incorrect. Please try again.",
        "ver_fail_code_expired": "That code is expired. Please request a new code.", "ver_but_edit": "Change e-mail",
        "UserMessageIfClaimNotVerified": "Claim not verified: Email Address", "required_field": "This information is required.",
        "error_fieldIncorrect": "One or more fields are filled out incorrectly. Please check your entries and try again.",
        // The phone factor (api.phonefactor).
        "phone_heading": "Verify your phone",
        "intro_entry_mixed": "Enter a number below that we can send a code via SMS or phone to authenticate you.",
        "intro_mixed": "We have the following number on record for you. We can send a code via SMS or phone to authenticate you.",
        "country_label": "Country/Region", "number_label": "Phone number", "button_send_code": "Send Code", "button_verify": "Call Me",
        "button_verify_code": "Verify Code", "text_button_send_second_code": "send a new code",
        "code_intro": "Enter your verification code below, or", "code_sent": "A code has been sent to",
        "error_incorrect_code":
            "The verification code you have entered does not match our records. Please try again, or request a new code.",
        "error_throttled": "You hit the limit on the number of verification attempts. Try again shortly.",
        "error_448": "The phone number you provided is unreachable.", "error_invalid_number": "The phone number you provided is not valid.",
        // The authenticator app.
        "totp_heading": "Set up your authenticator app",
        "totp_intro":
            "Scan the QR code with an authenticator app (Microsoft Authenticator, or any app that supports TOTP), then select Continue.",
        "totp_trouble": "Still having trouble?", "totp_account": "Account Name", "totp_secret": "Secret",
        "otp_heading": "Enter your code", "otp_intro": "Enter the verification code from your authenticator app.",
        "otp_label": "Enter your code", "button_verify_otp": "Verify",
    ]

    static let french: [String: String] = [
        "verification_control_but_send_code": "Envoyer le code", "verification_control_but_verify_code": "Vérifier le code",
        "verification_control_but_send_new_code": "Envoyer un nouveau code", "verification_control_but_change_claims": "Modifier",
        "verification_control_code_sent": "Le code de vérification a été envoyé. Copiez-le dans la zone ci-dessous.",
        "profile_title": "Modifier le profil", "profile_heading": "Modifiez votre profil", "signed_in_as": "Connecté en tant que",
        "error_displayName_required": "Le nom d'affichage est obligatoire.", "reset_title": "Réinitialiser le mot de passe",
        "reset_heading": "Réinitialisez votre mot de passe", "reset_code_sent": "Un code de vérification a été envoyé à",
        "reset_outbox_note": "Dans l'émulateur, il est dans la boîte d'envoi", "resend_code": "Envoyer un nouveau code",
        "reset_account_not_found": "Aucun compte n'a été trouvé pour cet identifiant.",
        "reset_too_many_attempts": "Trop de tentatives incorrectes. Envoyez un nouveau code.",
        "reset_code_mismatch": "Ce code de vérification ne correspond pas. Réessayez ou demandez un nouveau code.",
        "password_length": "Le mot de passe doit comporter entre 8 et 64 caractères.",
        "password_classes":
            "Le mot de passe doit contenir au moins 3 éléments parmi : une minuscule, une majuscule, un chiffre, un symbole.",
        "heading": "Connexion", "social_intro": "Connectez-vous avec votre compte de réseau social", "divider_title": "OU",
        "local_intro_email": "Connectez-vous avec votre adresse e-mail", "logonIdentifier_label": "Adresse e-mail",
        "password_label": "Mot de passe", "forgotpassword_link": "Mot de passe oublié ?", "button_signin": "Se connecter",
        "createaccount_intro": "Vous n'avez pas de compte ?", "createaccount_one_link": "Inscrivez-vous maintenant",
        "remember_me": "Rester connecté", "cancel": "Annuler",
        "requiredField_credentials": "Saisissez votre adresse e-mail et votre mot de passe.",
        "UserMessageIfInvalidPassword": "Votre mot de passe est incorrect.",
        "UserMessageIfPasswordExpired": "Votre mot de passe a expiré : choisissez-en un nouveau avec « Mot de passe oublié ? ».",
        "UserMessageIfUserAccountDisabled":
            "Votre compte a été verrouillé. Contactez votre support pour le déverrouiller, puis réessayez.",
        "password_change_title": "Changer le mot de passe", "password_change_heading": "Choisissez un nouveau mot de passe",
        "password_change_intro": "Votre administrateur vous demande de choisir un nouveau mot de passe avant de continuer.",
        "password_change_same": "Le nouveau mot de passe doit être différent de celui avec lequel vous vous êtes connecté.",
        "UserMessageIfClaimsPrincipalDoesNotExist": "Nous ne trouvons pas votre compte.",
        "signup_heading": "Créez votre compte", "social_signup_heading": "Complétez votre profil", "email_label": "Adresse e-mail",
        "newPassword_label": "Nouveau mot de passe", "reenterPassword_label": "Confirmez le nouveau mot de passe",
        "displayName_label": "Nom d'affichage", "givenName_label": "Prénom", "surname_label": "Nom", "button_continue": "Créer",
        "button_continue_generic": "Continuer",
        "error_passwordEntryMismatch":
            "Les mots de passe saisis ne correspondent pas. Saisissez le même mot de passe dans les deux champs.",
        "UserMessageIfClaimsPrincipalAlreadyExists": "Un utilisateur avec cet identifiant existe déjà. Choisissez-en un autre.",
        "error_invalid_email": "Saisissez une adresse e-mail valide.", "required_displayName": "Le nom d'affichage est obligatoire.",
        "password_help":
            "Mots de passe : 8 à 64 caractères, avec au moins trois types parmi minuscules, majuscules, chiffres et symboles.",
        "mfa_heading": "Vérification de sécurité",
        "mfa_email_intro": "Saisissez le code de vérification reçu par e-mail pour continuer.",
        "ver_but_send": "Envoyer le code de vérification", "ver_but_verify": "Vérifier le code",
        "ver_but_resend": "Envoyer un nouveau code",
        "ver_input": "Code de vérification",
        "ver_info_msg": "Un code de vérification a été envoyé dans votre boîte de réception. Copiez-le dans la zone ci-dessous.",
        "ver_success_msg": "Adresse e-mail vérifiée. Vous pouvez continuer.", "ver_fail_retry": "Ce code est incorrect. Réessayez.",
        "ver_fail_code_expired": "Ce code a expiré. Demandez un nouveau code.", "ver_but_edit": "Modifier l'adresse e-mail",
        "UserMessageIfClaimNotVerified": "Revendication non vérifiée : adresse e-mail",
        "required_field": "Cette information est obligatoire.",
        "error_fieldIncorrect": "Un ou plusieurs champs sont mal renseignés. Vérifiez vos saisies et réessayez.",
        "phone_heading": "Vérifiez votre téléphone",
        "intro_entry_mixed":
            "Saisissez ci-dessous un numéro auquel nous pouvons envoyer un code par SMS ou par appel pour vous authentifier.",
        "intro_mixed":
            "Voici le numéro enregistré pour vous. Nous pouvons y envoyer un code par SMS ou par appel pour vous authentifier.",
        "country_label": "Pays/Région", "number_label": "Numéro de téléphone", "button_send_code": "Envoyer le code",
        "button_verify": "M'appeler", "button_verify_code": "Vérifier le code", "text_button_send_second_code": "envoyer un nouveau code",
        "code_intro": "Saisissez votre code de vérification ci-dessous, ou", "code_sent": "Un code a été envoyé au",
        "error_incorrect_code":
            "Le code de vérification saisi ne correspond pas à nos données. Réessayez ou demandez un nouveau code.",
        "error_throttled": "Vous avez atteint le nombre maximal de tentatives de vérification. Réessayez dans quelques instants.",
        "error_448": "Le numéro de téléphone fourni est injoignable.",
        "error_invalid_number": "Le numéro de téléphone fourni n'est pas valide.",
        "totp_heading": "Configurez votre application d'authentification",
        "totp_intro":
            "Scannez le code QR avec une application d'authentification (Microsoft Authenticator, ou toute application TOTP), "
            + "puis sélectionnez Continuer.",
        "totp_trouble": "Vous rencontrez toujours des problèmes ?", "totp_account": "Nom du compte", "totp_secret": "Secret",
        "otp_heading": "Saisissez votre code", "otp_intro": "Saisissez le code de vérification de votre application d'authentification.",
        "otp_label": "Saisissez votre code", "button_verify_otp": "Vérifier",
    ]
}
