import B2CProtocol
import Foundation
import Hummingbird

/// A custom policy's self-asserted profile as B2C renders it: the combined sign-in (`unifiedssp`: `#localAccountForm`,
/// `#next`, `#forgotPassword`, `#createAccount` when the profile has a `SignUpTarget`) or a self-asserted page
/// (`selfasserted`: `#attributeVerification`, `#continue`, `#cancel`). Each shown claim's element id and field name is its
/// claim type id (`#signInName`, `#newPassword`, `#extension_loyaltyId`); an email to verify (`Verified.Email`) has
/// B2C's classic buttons (`#email_ver_but_send`, `#email_ver_input`, `#email_ver_but_verify`).
enum CustomPolicyTemplates {
    static let pages = [
        "policy-field": """
        <li class="{{id}}_li"><div class="attrEntry"><label for="{{id}}">{{label}}</label>\
        {{#select}}<select id="{{id}}" name="{{id}}">{{#options}}<option value="{{value}}"{{#selected}} selected{{/selected}}>\
        {{text}}</option>{{/options}}</select>{{/select}}\
        {{^select}}<input type="{{type}}" id="{{id}}" name="{{id}}" value="{{value}}"{{#readOnly}} readonly{{/readOnly}}\
        {{#autocomplete}} autocomplete="{{autocomplete}}"{{/autocomplete}}>{{/select}}\
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
        "policy-unified": """
        {{<page}}{{$title}}{{t.heading}}{{/title}}{{$body}}<div id="api" data-name="Unified">
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
        <a id="forgotPassword" href="{{link.forgot}}">{{t.forgotpassword_link}}</a>
        <div class="buttons"><button type="submit" id="next" name="next" value="next">{{t.button_signin}}</button></div>
        </div>
        </form>{{/local}}
        <div class="links">{{#signUp}}<div class="create"><p>{{t.createaccount_intro}} \
        <a id="createAccount" href="{{link.policysignup}}">{{t.createaccount_one_link}}</a></p></div>{{/signUp}}\
        {{^signUp}}<span></span>{{/signUp}}<a id="cancel" href="{{link.cancel}}">{{t.cancel}}</a></div>
        </div>{{/body}}{{/page}}
        """,
        "policy-selfasserted": """
        {{<page}}{{$title}}{{heading}}{{/title}}{{$body}}<div id="api" data-name="SelfAsserted">
        <h1>{{heading}}</h1><p class="tenant">{{tenant}} · b2c emulator</p>
        {{#error}}<div class="error pageLevel" id="claimVerificationServerError" aria-hidden="false">\
        <div class="error" id="error" role="alert">{{error}}</div></div>{{/error}}
        <form id="attributeVerification" method="post" action="{{action.policy}}">
        <input type="hidden" name="tx" value="{{tx}}">
        <div id="attributeList"><ul>{{#fields}}{{>policy-field}}{{/fields}}</ul></div>
        <div class="buttons"><button type="submit" id="continue" name="step" value="continue">{{button}}</button>\
        <a id="cancel" href="{{link.cancel}}">{{t.cancel}}</a></div>
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

    /// The profile's output claims that a person sees: those whose claim type has a `UserInputType`, in order.
    static func fields(_ profile: TechnicalProfile, policy: EffectivePolicy) -> [Field] {
        var out: [Field] = []
        for claim in profile.displayClaims + profile.outputClaims {
            guard let id = claim["ClaimTypeReferenceId"].map({ policy.declaredID(.claimType, $0) }), !out.contains(where: { $0.id == id }),
                let type = policy.element(.claimType, id), let input = type.child("UserInputType")?.trimmedText, input != "Paragraph"
            else { continue }
            let options = type.at("Restriction")?.all("Enumeration").map { ($0["Value"] ?? "", $0["Text"] ?? $0["Value"] ?? "") } ?? []
            let html: String
            switch input {
            case "Password": html = "password"
            case "EmailBox": html = "email"
            case "DropdownSingleSelect", "RadioSingleSelect": html = "select"
            default: html = id.lowercased().contains("email") || id == "signInName" ? "email" : "text"
            }
            out.append(
                Field(
                    id: id, label: type.child("DisplayName")?.trimmedText ?? id, type: html,
                    required: claim["Required"] == "true", readOnly: input == "Readonly",
                    verify: claim["PartnerClaimType"] == "Verified.Email",
                    options: options, help: type.child("UserHelpText")?.trimmedText))
        }
        return out
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
        _ tx: AuthorizeTransaction, profile: TechnicalProfile?, state: PolicyJourneyState, run: PolicyRun, error: String?
    ) -> Response {
        let unified =
            state.combined
            || profile?.metadata("ContentDefinitionReferenceId").flatMap { run.policy.element(.contentDefinition, $0) }?
                .child("DataUri")?.trimmedText.contains("unifiedssp") == true
        // The providers' buttons: each exchange's profile gives the label (its DisplayName); a form's id names the mock
        // provider it goes to (`idp_facebook`), else the exchange.
        let journey = try? run.journey()
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
        let fields: [[String: Any]] = (profile.map { Self.fields($0, policy: run.policy) } ?? []).map { f in
            let value = f.type == "password" ? "" : inputs[f.id]?.text ?? ""
            var row: [String: Any] = [
                "id": f.id, "label": f.label, "type": f.type, "value": value, "readOnly": f.readOnly, "select": f.type == "select",
                "options": f.options.map { ["value": $0.value, "text": $0.text, "selected": $0.value == value] as [String: Any] },
                "verify": f.verify && !unified, "sent": state.codeSentTo != nil,
                "verified": !value.isEmpty && state.verified.contains(value.lowercased()),
                "autocomplete": f.type == "password" ? (unified ? "current-password" : "new-password") : (f.type == "email" ? "email" : ""),
            ]
            if let help = f.help { row["help"] = help }
            if (row["autocomplete"] as? String)?.isEmpty == true { row["autocomplete"] = false }
            return row
        }
        var values: [String: Any] = [
            "fields": fields, "signUp": state.combined && profile?.metadata("SignUpTarget") != nil,
            "heading": profile?.node.child("DisplayName")?.trimmedText ?? profile?.id ?? "",
            "button": profile?.metadata("language.button_continue") ?? "Continue", "providers": providers,
            "social": !providers.isEmpty, "local": profile != nil,
        ]
        if let error { values["error"] = error }
        return parts.pages.page(unified ? "policy-unified" : "policy-selfasserted", tx, values)
    }
}
