import B2CProtocol
import Foundation
import Hummingbird

/// A custom policy's self-asserted profile as B2C renders it: the combined sign-in (`unifiedssp`: `#localAccountForm`,
/// `#next`, `#forgotPassword`, `#createAccount` when the profile has a `SignUpTarget`) or a self-asserted page
/// (`selfasserted`: `#attributeVerification`, `#continue`, `#cancel`). Each shown claim's element id and field name is its
/// claim type id (`#signInName`, `#newPassword`, `#extension_loyaltyId`; radio buttons' group, each button
/// `#{claim}_{value}`); an email to verify (`Verified.Email`) has B2C's classic buttons (`#email_ver_but_send`,
/// `#email_ver_input`, `#email_ver_but_verify`).
enum CustomPolicyTemplates {
    static let pages = [
        "policy-field": """
        <li class="{{id}}_li"><div class="attrEntry"><label for="{{id}}">{{label}}</label>\
        {{#select}}<select id="{{id}}" name="{{id}}">{{#options}}<option value="{{value}}"{{#selected}} selected{{/selected}}>\
        {{text}}</option>{{/options}}</select>{{/select}}\
        {{#radio}}<div id="{{id}}" class="radio" role="radiogroup">{{#options}}<input type="radio" id="{{id}}_{{value}}" \
        name="{{id}}" value="{{value}}"{{#selected}} checked{{/selected}}><label for="{{id}}_{{value}}">{{text}}</label>\
        {{/options}}</div>{{/radio}}\
        {{^select}}{{^radio}}<input type="{{type}}" id="{{id}}" name="{{id}}" value="{{value}}"{{#readOnly}} readonly{{/readOnly}}\
        {{#autocomplete}} autocomplete="{{autocomplete}}"{{/autocomplete}}>{{/radio}}{{/select}}\
        {{#help}}<div class="helpText">{{help}}</div>{{/help}}\
        {{#verify}}<div class="buttons verify">{{^sent}}{{^verified}}<button type="submit" name="step" value="send" \
        id="{{id}}_ver_but_send" formnovalidate class="sendButton">{{t.ver_but_send}}</button>{{/verified}}{{/sent}}\
        {{#sent}}<div id="{{id}}_info" class="verificationInfoText">{{t.ver_info_msg}}</div>\
        <label id="{{id}}_ver_input_label" for="{{id}}_ver_input">{{t.ver_input}}</label><input type="text" id="{{id}}_ver_input" \
        name="email_ver_input" maxlength="6" inputmode="numeric" autocomplete="one-time-code">\
        <button type="submit" name="step" value="verify" id="{{id}}_ver_but_verify" formnovalidate class="verifyButton">\
        {{t.ver_but_verify}}</button><button type="submit" name="step" value="send" id="{{id}}_ver_but_resend" formnovalidate \
        class="sendButton">{{t.ver_but_resend}}</button>{{/sent}}\
        {{#verified}}<div id="{{id}}_success" class="verificationSuccessText">{{t.ver_success_msg}}</div>\
        <button type="submit" name="step" value="edit" id="{{id}}_ver_but_edit" formnovalidate class="editButton">\
        {{t.ver_but_edit}}</button>{{/verified}}</div>{{/verify}}</div></li>
        """,
        // A display control (`VerificationControl`): its claims, then B2C's buttons `{control}_but_send_code`, `_verify_code`,
        // `_send_new_code`, `_change_claims`; each posts the page's form with `step` = `{control}:{action}`.
        "policy-control": """
        <li class="{{id}}_li"><div class="verificationControlContent" id="{{id}}">\
        {{#error}}<div id="{{id}}_error_message" class="error" role="alert">{{error}}</div>{{/error}}\
        <ul>{{#fields}}{{>policy-field}}{{/fields}}</ul>\
        {{#sent}}<div id="{{id}}_info" class="verificationInfoText">{{t.verification_control_code_sent}}</div>{{/sent}}\
        <div class="buttons">{{^sent}}{{^verified}}<button type="submit" name="step" value="{{id}}:SendCode" id="{{id}}_but_send_code" \
        formnovalidate class="sendCode">{{t.verification_control_but_send_code}}</button>{{/verified}}{{/sent}}\
        {{#sent}}<button type="submit" name="step" value="{{id}}:VerifyCode" id="{{id}}_but_verify_code" formnovalidate \
        class="verifyCode">{{t.verification_control_but_verify_code}}</button><button type="submit" name="step" \
        value="{{id}}:SendCode" id="{{id}}_but_send_new_code" formnovalidate class="sendNewCode">\
        {{t.verification_control_but_send_new_code}}</button>{{/sent}}\
        {{#verified}}<div id="{{id}}_success_message" class="verificationSuccessText">{{t.ver_success_msg}}</div>\
        <button type="submit" name="step" value="{{id}}:change" id="{{id}}_but_change_claims" formnovalidate class="changeClaims">\
        {{t.verification_control_but_change_claims}}</button>{{/verified}}</div></div></li>
        """,
        "policy-unified": """
        {{<page}}{{$title}}{{t.heading}}{{/title}}{{$body}}<div id="api" data-name="{{dataName}}">
        <h1>{{t.heading}}</h1><p class="tenant">{{tenant}} · b2c emulator</p>
        {{#social}}<div class="social" role="form"><div class="intro"><h2>{{t.social_intro}}</h2></div>
        <div class="options">
        {{#providers}}<div><form id="idp_{{id}}" method="post" action="{{action.policy}}">\
        <input type="hidden" name="tx" value="{{tx}}"><input type="hidden" name="step" value="exchange">\
        <input type="hidden" name="exchange" value="{{exchange}}">\
        <button type="submit" class="accountButton" id="{{exchange}}">{{label}}</button></form></div>
        {{/providers}}</div></div>
        {{#local}}<div class="divider"><h2>{{t.divider_title}}</h2></div>{{/local}}{{/social}}
        {{#error}}<div class="error" id="error" role="alert">{{error}}</div>{{/error}}{{#local}}
        <form id="localAccountForm" method="post" action="{{action.policy}}">
        <input type="hidden" name="tx" value="{{tx}}">
        <div class="entry"><ul>{{#fields}}{{>policy-field}}{{/fields}}</ul>
        {{#showForgot}}<a id="forgotPassword" href="{{link.forgot}}">{{t.forgotpassword_link}}</a>{{/showForgot}}
        <div class="buttons"><button type="submit" id="next" name="next" value="next">{{t.button_signin}}</button></div>
        </div>
        </form>{{/local}}
        <div class="links">{{#signUp}}<div class="create"><p>{{t.createaccount_intro}} \
        <a id="createAccount" href="{{link.policysignup}}">{{t.createaccount_one_link}}</a></p></div>{{/signUp}}\
        {{^signUp}}<span></span>{{/signUp}}{{#showCancel}}<a id="cancel" href="{{link.cancel}}">{{t.cancel}}</a>{{/showCancel}}</div>
        </div>{{/body}}{{/page}}
        """,
        "policy-selfasserted": """
        {{<page}}{{$title}}{{heading}}{{/title}}{{$body}}<div id="api" data-name="SelfAsserted">
        <h1>{{heading}}</h1><p class="tenant">{{tenant}} · b2c emulator</p>
        {{#error}}<div class="error pageLevel" id="claimVerificationServerError" aria-hidden="false">\
        <div class="error" id="error" role="alert">{{error}}</div></div>{{/error}}
        <form id="attributeVerification" method="post" action="{{action.policy}}">
        <input type="hidden" name="tx" value="{{tx}}">
        <div id="attributeList"><ul>{{#items}}{{#control}}{{>policy-control}}{{/control}}{{#field}}{{>policy-field}}{{/field}}\
        {{/items}}</ul></div>
        <div class="buttons">{{#showContinue}}<button type="submit" id="continue" name="step" value="continue">{{button}}</button>\
        {{/showContinue}}{{#showCancel}}<a id="cancel" href="{{link.cancel}}">{{t.cancel}}</a>{{/showCancel}}</div>
        </form>
        </div>{{/body}}{{/page}}
        """,
    ]
}

/// The pages of a custom policy's self-asserted profiles.
struct CustomPolicyPages {
    let parts: JourneyParts

    /// A claim the page shows: its claim type's display name, input type and restriction.
    struct Field {
        var id: String
        var label: String
        var type: String
        var required: Bool
        var readOnly: Bool
        /// An address the page verifies with a code (`PartnerClaimType="Verified.Email"`).
        var verify: Bool
        var options: [(value: String, text: String)]
        var help: String?
    }

    /// The claims a person sees: the profile's display claims when it has any (B2C then shows no output claim), else its
    /// output claims; each whose claim type has a `UserInputType`, in order. A display control's claims are the control's.
    static func fields(_ profile: TechnicalProfile, policy: EffectivePolicy) -> [Field] {
        var out: [Field] = []
        for claim in profile.displayClaims.isEmpty ? profile.outputClaims : profile.displayClaims {
            if var f = field(claim, policy: policy), !out.contains(where: { $0.id == f.id }) {
                // `setting.operatingMode` `Username`: the sign-in name is a user name, not an address.
                if f.id == "signInName", profile.metadata("setting.operatingMode")?.lowercased() == "username" { f.type = "text" }
                out.append(f)
            }
        }
        return out
    }

    /// A self-asserted profile's `setting.<name>` metadata item as a boolean (`true` / `false`, any case), else `otherwise`
    /// (self-asserted-technical-profile.md's defaults).
    static func setting(_ profile: TechnicalProfile?, _ name: String, _ otherwise: Bool) -> Bool {
        switch profile?.metadata("setting.\(name)")?.lowercased() {
        case "true": true
        case "false": false
        default: otherwise
        }
    }

    static func field(_ claim: PolicyNode, policy: EffectivePolicy) -> Field? {
        guard let id = claim["ClaimTypeReferenceId"].map({ policy.declaredID(.claimType, $0) }),
            let type = policy.element(.claimType, id), let input = type.child("UserInputType")?.trimmedText, input != "Paragraph"
        else { return nil }
        let options = type.at("Restriction")?.all("Enumeration").map { ($0["Value"] ?? "", $0["Text"] ?? $0["Value"] ?? "") } ?? []
        let html: String
        switch input {
        case "Password": html = "password"
        case "EmailBox": html = "email"
        case "DropdownSingleSelect": html = "select"
        case "RadioSingleSelect": html = "radio"
        default: html = id.lowercased().contains("email") || id == "signInName" ? "email" : "text"
        }
        return Field(
            id: id, label: type.child("DisplayName")?.trimmedText ?? id, type: html,
            required: claim["Required"] == "true", readOnly: input == "Readonly",
            verify: claim["PartnerClaimType"] == "Verified.Email",
            options: options, help: type.child("UserHelpText")?.trimmedText)
    }

    /// A `VerificationControl` the page shows (reference: display-controls.md): its claims, the one that takes the code
    /// (`ControlClaimType="VerificationCode"`), and its actions' validation profiles (`SendCode`, `VerifyCode`).
    struct Control {
        var id: String
        var fields: [Field]
        var codeClaim: String?
        var actions: [String: [PolicyNode]]
        /// How the page names what it verifies: its first claim's label.
        var label: String { fields.first { $0.id != codeClaim }?.label.lowercased() ?? id }
    }

    /// The verification controls among the profile's display claims, in order.
    static func controls(_ profile: TechnicalProfile, policy: EffectivePolicy) -> [Control] {
        profile.displayClaims.compactMap { claim in
            guard let id = claim["DisplayControlReferenceId"], let node = policy.element(.displayControl, id),
                node["UserInterfaceControlType"] == "VerificationControl"
            else { return nil }
            let claims = node.at("DisplayClaims")?.all("DisplayClaim") ?? []
            var actions: [String: [PolicyNode]] = [:]
            for action in node.at("Actions")?.all("Action") ?? [] {
                actions[action["Id"] ?? ""] = action.descendants.filter { $0.name == "ValidationClaimsExchangeTechnicalProfile" }
            }
            return Control(
                id: id, fields: claims.compactMap { field($0, policy: policy) },
                codeClaim: claims.first { $0["ControlClaimType"] == "VerificationCode" }?["ClaimTypeReferenceId"].map {
                    policy.declaredID(.claimType, $0)
                }, actions: actions)
        }
    }

    /// What the page sent for each claim it shows (passwords as typed, other values trimmed).
    static func values(_ form: [String: String], profile: TechnicalProfile, policy: EffectivePolicy) -> [String: String] {
        var out: [String: String] = [:]
        for field in fields(profile, policy: policy) where !field.readOnly {
            guard let v = form[field.id] else { continue }
            out[field.id] = field.type == "password" ? v : v.trimmingCharacters(in: .whitespacesAndNewlines)
        }
        return out
    }

    func page(
        _ tx: AuthorizeTransaction, profile: TechnicalProfile?, state: PolicyJourneyState, run: PolicyRun, error: String?,
        controlError: [String: String] = [:]
    ) -> Response {
        let definition = profile?.metadata("ContentDefinitionReferenceId")
        let unified =
            state.combined
            || definition.flatMap { run.policy.element(.contentDefinition, $0) }?.child("DataUri")?.trimmedText.contains("unifiedssp")
                == true
        let localized = PolicyLocalization(run.policy, contentDefinition: definition, language: tx.language)
        // The providers' buttons: each exchange's profile gives the label (its DisplayName); a form's id names the mock
        // provider it goes to (`idp_facebook`), else the exchange.
        let journey = (try? run.journey()).flatMap { try? run.current($0, state) }
        let providers: [[String: Any]] = state.choices.map { exchange in
            let tp = journey.flatMap { try? run.profile(ofExchange: exchange, in: $0) }
            return [
                "exchange": exchange, "label": tp?.node.child("DisplayName")?.trimmedText ?? exchange,
                "id": tp.flatMap(PolicyRun.mockProvider)?.rawValue ?? exchange,
            ]
        }
        var inputs = state.claims
        for claim in profile?.inputClaims ?? [] {
            if let id = claim["ClaimTypeReferenceId"].map({ run.policy.declaredID(.claimType, $0) }),
                let v = run.value(of: claim, id, in: state.claims)
            {
                inputs[id] = v
            }
        }
        func row(_ f: Field, lockedBy control: String? = nil) -> [String: Any] {
            let value = f.type == "password" ? "" : inputs[f.id]?.text ?? ""
            var row: [String: Any] = [
                "id": f.id, "label": localized.claims[f.id]?["DisplayName"] ?? f.label, "type": f.type, "value": value,
                "select": f.type == "select", "radio": f.type == "radio",
                "readOnly": f.readOnly || control.map { state.controls[$0] != nil } == true,
                "options": f.options.map { ["value": $0.value, "text": $0.text, "selected": $0.value == value] as [String: Any] },
                "verify": f.verify && !unified, "sent": state.codeSentTo != nil,
                "verified": !value.isEmpty && state.verified.contains(value.lowercased()),
                "autocomplete": f.type == "password" ? (unified ? "current-password" : "new-password") : (f.type == "email" ? "email" : ""),
            ]
            if let help = localized.claims[f.id]?["UserHelpText"] ?? f.help { row["help"] = help }
            if (row["autocomplete"] as? String)?.isEmpty == true { row["autocomplete"] = false }
            return row
        }
        let fields: [[String: Any]] = (profile.map { Self.fields($0, policy: run.policy) } ?? []).map { row($0) }
        // The self-asserted page's list: the display claims in order, each a control or a field.
        let controls = profile.map { Self.controls($0, policy: run.policy) } ?? []
        var items: [[String: Any]] = []
        for claim in profile.map({ $0.displayClaims.isEmpty ? $0.outputClaims : $0.displayClaims }) ?? [] {
            if let id = claim["DisplayControlReferenceId"], let control = controls.first(where: { $0.id == id }) {
                let status = state.controls[id]
                var c: [String: Any] = [
                    "id": id, "sent": status == "sent", "verified": status == "verified",
                    "fields": control.fields.filter { $0.id != control.codeClaim || status == "sent" }.map {
                        row($0, lockedBy: $0.id == control.codeClaim ? nil : id)
                    },
                ]
                if let message = controlError[id] { c["error"] = message }
                items.append(["control": c])
            } else if let f = Self.field(claim, policy: run.policy), let r = fields.first(where: { ($0["id"] as? String) == f.id }) {
                items.append(["field": r])
            }
        }
        var values: [String: Any] = [
            "fields": fields, "items": items,
            "signUp": state.combined && profile?.metadata("SignUpTarget") != nil && Self.setting(profile, "showSignupLink", true),
            "showCancel": Self.setting(profile, "showCancelButton", true),
            "showContinue": Self.setting(profile, "showContinueButton", true),
            "showForgot": profile?.metadata("setting.forgotPasswordLinkLocation")?.lowercased() != "none",
            "heading": profile?.node.child("DisplayName")?.trimmedText ?? profile?.id ?? "",
            "button": profile?.metadata("language.button_continue") ?? "Continue", "providers": providers,
            "social": !providers.isEmpty, "local": profile != nil,
            // Buttons only (a selection step without a local sign-in) is B2C's provider selection page.
            "dataName": profile == nil && !providers.isEmpty ? "IdpSelections" : "Unified",
        ]
        if let error { values["error"] = error }
        if !localized.ux.isEmpty { values["t"] = PageStrings(language: tx.language, overrides: localized.ux) }
        return parts.pages.page(unified ? "policy-unified" : "policy-selfasserted", tx, values)
    }
}
