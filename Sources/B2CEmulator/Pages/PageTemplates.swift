import Mustache

/// The tenant's markup — its pages, the emulator's own pages, its SAML messages — as Mustache templates, compiled once.
///
/// Use: `PageTemplates.render("signin", context)`, where `context` maps names to plain values: `String`, `Bool` (a
/// `{{#flag}}…{{/flag}}` section), `[[String: Any]]` (a repeated section), nested `[String: Any]` or any `MustacheParent`
/// (`{{t.button_signin}}` reads a `PageStrings`). Leave a key out rather than store an optional: an `Optional.none` inside
/// `Any` counts as present. A name a section's item lacks is looked up in the outer context, so give items all their keys.
///
/// `{{name}}` is escaped by `HTML.escape`, per Unicode scalar, for every template of the library: each one starts with our
/// content-type pragma (added when it is registered), because the library's own HTML escaper goes by `Character`, and a
/// `"` followed by a combining mark is one `Character` that it would write raw. `{{{name}}}` (unescaped) is not used.
///
/// A new page adds its templates to one of the tables below (or a new one listed in `all`). Templates are Swift strings,
/// not resources: the release ships bare binaries. Mustache's whitespace rule to keep in mind: a line holding nothing but
/// a section or partial tag is removed, newline and all; write such tags beside the markup they guard.
enum PageTemplates {
    /// Renders the template `name` (a programming error if there is none).
    static func render(_ name: String, _ context: [String: Any]) -> String {
        guard let out = library.render(context, withTemplate: name) else { preconditionFailure("no page template '\(name)'") }
        return out
    }

    static let library: MustacheLibrary = {
        MustacheContentTypes.register(ScalarEscapedHTML(), named: contentType)
        var library = MustacheLibrary()
        for table in all {
            for (name, text) in table {
                precondition(library.getTemplate(named: name) == nil, "two page templates are named '\(name)'")
                do { try library.register("{{% CONTENT_TYPE: \(contentType)}}" + text, named: name) } catch {
                    preconditionFailure("page template '\(name)': \(error)")
                }
            }
        }
        return library
    }()

    static let all = [
        frame, UnifiedSSPTemplates.unifiedSSP, SelfAssertedTemplates.selfAsserted, MultifactorTemplates.multifactor,
        GlobalExceptionTemplates.globalException, EmulatorPageTemplates.emulatorPages, SAMLMessagesTemplates.samlMessages,
        JourneyPageTemplates.journeyPages, CustomPolicyTemplates.pages,
    ]

    private static let contentType = "B2C_HTML"

    /// The plain page (no layout) around every tenant page: `{{<page}}{{$title}}…{{/title}}{{$body}}…{{/body}}{{/page}}`.
    /// `lang` is the page's language. `attribute` is one `<li>` of a self-asserted page's attribute list; `newPassword` the
    /// new password typed twice (the reset's page and a password change due).
    static let frame = [
        "page": """
        <!DOCTYPE html>
        <html lang="{{lang}}"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
        <title>{{$title}}{{/title}}</title>
        <style>\(PageStyles.content)\(PageStyles.plain)</style></head>
        <body><main>{{$body}}{{/body}}</main></body></html>
        """,
        "newPassword": """
        <label for="newPassword">{{t.newPassword_label}}</label>
        <input type="password" id="newPassword" name="newPassword" autocomplete="new-password">
        <label for="reenterPassword">{{t.reenterPassword_label}}</label>
        <input type="password" id="reenterPassword" name="reenterPassword" autocomplete="new-password">
        """,
        "attribute": """
        <li class="{{name}}_li"><div class="attrEntry"><label for="{{name}}">{{label}}</label>\
        {{#checkbox}}<input type="checkbox" id="{{name}}" name="{{name}}" value="true"{{#checked}} checked{{/checked}}>{{/checkbox}}\
        {{#number}}<input type="number" id="{{name}}" name="{{name}}" value="{{value}}"{{#required}} required{{/required}}>{{/number}}\
        {{#text}}<input type="text" id="{{name}}" name="{{name}}" value="{{value}}"{{#required}} required{{/required}}>{{/text}}\
        </div></li>
        """,
    ]
}

/// Every `{{value}}` of the tenant's templates: `HTML.escape`, which goes by Unicode scalar.
private struct ScalarEscapedHTML: MustacheContentType {
    func escapeText(_ text: String) -> String { HTML.escape(text) }
}

/// `{{t.button_signin}}`: a page's words, by B2C's string id.
extension PageStrings: MustacheParent {
    func child(named name: String) -> Any? { self[name] }
}

/// A transaction's URLs under `/{tenant}/{policy}/emulator/`: `{{action.signin}}` for a form, `{{link.cancel}}` for a
/// link (the transaction in its query).
struct PageURLs: MustacheParent {
    let prefix: String
    let query: String
    /// Every name is the prefix itself: a page whose forms all post to one step (a custom policy's page).
    var fixed = false

    func child(named name: String) -> Any? { fixed ? prefix + query : prefix + name + query }
}
