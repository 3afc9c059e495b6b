import Foundation

/// The pages' CSS: one stylesheet for what the tenant puts in a page (labels above full-width fields, primary buttons,
/// links laid out apart, lists without bullets), and a theme per look — the default pages' and the three built-in layouts'
/// (Classic, Ocean Blue, Slate Gray), each modelled on how B2C's own looks. Inline `<style>` and `data:` images only: the
/// pages' Content-Security-Policy restricts scripts, not styles or images, and a page needs nothing from elsewhere.
/// Tests/browser/page_looks.py measures the result in Chromium.
enum PageStyles {
    /// The text fields a theme styles alike.
    static let fields = "input:not([type=checkbox]):not([type=radio]):not([type=hidden]),select"

    /// The page's own elements, coloured and sized by the theme's custom properties. Its selectors name elements, roles and
    /// the classes every page has, never an id or class that only some pages have (tests look for those in the page).
    static let content = """
        *,*::before,*::after{box-sizing:border-box}
        html{font-size:15px}
        body{margin:0;font-family:"Segoe UI",SegoeUI,"Helvetica Neue",Helvetica,Arial,sans-serif;line-height:1.4;color:var(--text)}
        #api,main{text-align:left}
        h1{font-size:1.6rem;font-weight:600;margin:0 0 4px}
        h2{font-size:1.1rem;font-weight:600;margin:0 0 8px}
        p{margin:0 0 12px}
        .tenant{color:var(--muted);font-size:.85rem;margin:0 0 20px}
        label{display:block;margin:16px 0 6px;font-weight:600}
        \(fields){display:block;width:100%;height:var(--field-height);margin:0;padding:0 14px;font:inherit;color:var(--text);\
        background:#fff;border:var(--field-border);border-radius:var(--radius);box-shadow:var(--field-shadow);outline:none}
        input:focus,select:focus{border-color:var(--accent)}
        input[readonly]{background:#f4f4f4}
        input[type=checkbox]{flex:none;order:-1;width:18px;height:18px;margin:0 8px 0 0;accent-color:var(--accent)}
        div:has(>input[type=checkbox]){display:flex;align-items:center;margin-top:16px}
        div:has(>input[type=checkbox])>label{margin:0;font-weight:400}
        ul,li{list-style:none;margin:0;padding:0}
        button{display:block;width:100%;min-height:var(--button-height);margin:24px 0 0;padding:8px 16px;font:inherit;\
        font-weight:600;color:#fff;background:var(--accent);border:1px solid transparent;border-radius:var(--radius);cursor:pointer}
        button:hover{background:var(--accent-hover)}
        button:disabled{opacity:.4;cursor:default}
        a{color:var(--accent);text-decoration:none}
        a:hover{text-decoration:underline}
        .entry-item:has(>a){display:grid;grid-template-columns:1fr auto;column-gap:16px;align-items:baseline}
        .entry-item>label{grid-area:1/1}
        .entry-item>a{grid-area:1/2;font-size:.9rem}
        .entry-item>input{grid-area:2/1/3/3}
        .links{display:flex;flex-wrap:wrap;justify-content:space-between;align-items:baseline;gap:8px 24px;margin-top:24px}
        .create p{margin:0}
        .note{margin:20px 0 0;font-size:.85rem;color:var(--muted)}
        [role=alert]{margin:0 0 16px;padding:10px 12px;color:var(--error);background:#fdf2f2;border-left:3px solid var(--error)}
        .verify button{margin-top:12px}
        .verify div{margin-top:12px;font-size:.9rem;color:var(--muted)}
        #api>input+div{margin-top:12px}
        p button{display:inline;width:auto;min-height:0;margin:0;padding:0;font-weight:400;color:var(--accent);background:none;border:0}
        p button:hover{background:none;text-decoration:underline}
        [role=form] button{margin-top:10px;font-weight:400;color:var(--text);background:#fff;border-color:#c8c8c8}
        [role=form] button:hover{background:#f2f2f2}
        [role=form]+div:has(>h2){display:flex;align-items:center;gap:12px;margin:24px 0 0;color:var(--muted)}
        [role=form]+div:has(>h2)::before,[role=form]+div:has(>h2)::after{content:"";flex:1;border-top:1px solid #d6d6d6}
        [role=form]+div h2{margin:0;font-size:.9rem;font-weight:400}
        button#cancel{color:var(--accent);background:#fff;border-color:currentColor}
        #api img,main img{display:block;width:200px;max-width:100%;margin:16px auto}
        details{margin:16px 0}
        summary{cursor:pointer;color:var(--accent)}
        code{font-family:Consolas,"Liberation Mono",monospace;word-break:break-all}
        """

    /// The frame shared by the layouts (not the default pages): B2C's branding slots, and no emulator line under the heading.
    static let branding = """
        #background_branding_container{position:fixed;top:0;right:0;bottom:0;left:0;z-index:-1;background:var(--backdrop)}
        #background_branding_container img{display:block;width:100%;height:100%;object-fit:cover}
        .companyLogo{display:block;height:var(--logo-height);max-width:100%}
        #api .tenant{display:none}
        #api h1{margin-bottom:12px}
        """

    /// The default pages (no layout): Ocean Blue's look without a logo (the tenant's name under the heading says whose page
    /// it is).
    static let plain = """
        :root{\(oceanBlueColours)}
        body{display:flex;min-height:100vh;align-items:center;justify-content:center;padding:32px 16px;\
        background:\(oceanBlueBackdrop)}
        main{width:100%;max-width:470px;padding:40px 45px;background:#fff;border-radius:4px;box-shadow:0 4px 24px rgba(0,0,0,.18)}
        """

    /// Ocean Blue's colours and sizes, the default pages' too.
    static let oceanBlueColours = """
        --accent:#2a6fc9;--accent-hover:#1a5db4;--text:#1f1f1f;--muted:#5f5f5f;--error:#b3261e;--radius:8px;--field-height:48px;\
        --field-border:1px solid #e3e7ef;--field-shadow:0 2px 10px rgba(0,20,140,.14);--button-height:48px;--logo-height:56px;\
        --backdrop:#0e66b8
        """

    /// Ocean Blue's blue behind the panel when the background image is not drawn (the default pages draw it with CSS).
    static let oceanBlueBackdrop = """
        radial-gradient(circle at 18% -12%,rgba(255,255,255,.07) 0 46%,transparent 46%) fixed,\
        radial-gradient(circle at 86% 112%,rgba(255,255,255,.08) 0 56%,transparent 56%) fixed,linear-gradient(#1872c3,#0a61b2) fixed
        """

    /// Ocean Blue: a white panel in the middle of a blue backdrop, the logo centred over it, tall rounded fields with a soft
    /// shadow and full-width rounded blue buttons.
    static let oceanBlue = """
        :root{\(oceanBlueColours)}
        .container{display:flex;min-height:100vh;align-items:center;justify-content:center;padding:32px 16px}
        .row,.col-lg-6{width:100%;max-width:470px}
        .panel{padding:40px 45px;background:#fff;border-radius:4px;box-shadow:0 4px 24px rgba(0,0,0,.18)}
        .companyLogo{margin:0 auto 24px}
        """

    /// Slate Gray: a white panel on a grey backdrop, the logo at the left, underlined fields, square blue buttons at the
    /// right as Microsoft accounts' pages have them.
    static let slateGray = """
        :root{--accent:#0067b8;--accent-hover:#005aa1;--text:#1b1b1b;--muted:#5c5c5c;--error:#c42b1c;--radius:0;--field-height:36px;\
        --field-border:1px solid #666;--field-shadow:none;--button-height:36px;--logo-height:36px;--backdrop:#b1b1b1}
        \(fields){border-width:0 0 1px;padding:0 2px}
        input:focus,select:focus{border-bottom-width:2px}
        button{width:auto;min-width:108px;margin-left:auto}
        [role=form] button{width:100%}
        .container{display:flex;min-height:100vh;align-items:center;justify-content:center;padding:32px 16px}
        .row,.col-lg-6{width:100%;max-width:440px}
        .panel{padding:44px;background:#fff;box-shadow:0 2px 6px rgba(0,0,0,.2)}
        .companyLogo{margin:0 0 20px}
        """

    /// Classic: a white panel down the right of the page over the background image, the logo at its top left, plain boxed
    /// fields and full-width blue buttons.
    static let classic = """
        :root{--accent:#0072c6;--accent-hover:#005a9e;--text:#262626;--muted:#666;--error:#c42b1c;--radius:2px;--field-height:40px;\
        --field-border:1px solid #bababa;--field-shadow:none;--button-height:40px;--logo-height:44px;--backdrop:#dde5ee}
        #panel{width:500px;max-width:100%;min-height:100vh;margin-left:auto;background:#fff;box-shadow:-2px 0 16px rgba(0,0,0,.14)}
        .panel_layout{width:100%;border-collapse:collapse}
        #panel_left{width:0;padding:0}
        #panel_center{padding:64px 56px;vertical-align:top}
        .companyLogo{margin:0 0 32px}
        """

    /// A grey mark where the tenant's banner logo goes (B2C shows a neutral one until a logo is uploaded).
    static let logo = dataURI(
        """
        <svg xmlns="http://www.w3.org/2000/svg" width="60" height="56" viewBox="0 0 60 56"><g fill="none" stroke="#9e9e9e" \
        stroke-width="2.5"><rect x="11" y="2" width="38" height="38" rx="7"/><circle cx="30" cy="21" r="9"/></g>\
        <rect x="4" y="48" width="52" height="5" rx="2.5" fill="#c4c4c4"/></svg>
        """)

    /// Backgrounds for `#background_branding_container`: drawn here, not fetched.
    static let oceanBlueBackground = dataURI(
        """
        <svg xmlns="http://www.w3.org/2000/svg" width="1600" height="900" viewBox="0 0 1600 900" preserveAspectRatio="xMidYMid slice">\
        <defs><linearGradient id="g" x2="0" y2="1"><stop offset="0" stop-color="#1872c3"/><stop offset="1" stop-color="#0a61b2"/>\
        </linearGradient></defs><rect width="1600" height="900" fill="url(#g)"/>\
        <circle cx="290" cy="-110" r="760" fill="#fff" fill-opacity=".07"/><circle cx="1380" cy="1010" r="900" fill="#fff" \
        fill-opacity=".08"/></svg>
        """)

    static let slateGrayBackground = dataURI(
        """
        <svg xmlns="http://www.w3.org/2000/svg" width="1600" height="900" viewBox="0 0 1600 900" preserveAspectRatio="xMidYMid slice">\
        <rect width="1600" height="900" fill="#b6b6b6"/><path d="M1500 0H1600V900H160Z" fill="#acacac"/></svg>
        """)

    static let classicBackground = dataURI(
        """
        <svg xmlns="http://www.w3.org/2000/svg" width="1600" height="900" viewBox="0 0 1600 900" preserveAspectRatio="xMidYMid slice">\
        <defs><linearGradient id="g" x2="1" y2="1"><stop offset="0" stop-color="#e9eff5"/><stop offset="1" stop-color="#cfdbe8"/>\
        </linearGradient></defs><rect width="1600" height="900" fill="url(#g)"/><path d="M0 640C260 560 520 610 780 700S1300 800 1600 \
        690V900H0Z" fill="#fff" fill-opacity=".35"/><circle cx="420" cy="300" r="170" fill="#fff" fill-opacity=".25"/></svg>
        """)

    /// An SVG as a `data:` URL, percent-encoded so that it sits in an HTML attribute as it is.
    static func dataURI(_ svg: String) -> String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~/:=,()")
        return "data:image/svg+xml," + (svg.addingPercentEncoding(withAllowedCharacters: allowed) ?? "")
    }
}
