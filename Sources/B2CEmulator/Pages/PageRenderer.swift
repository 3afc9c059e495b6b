import B2CProtocol
import Foundation
import Hummingbird

/// The user-facing pages of the user flows. Plain HTML forms that work without JavaScript, with the element ids of B2C's
/// own pages so that browser automation written for B2C works here. Each page type's templates and the method that fills
/// them share a file: `UnifiedSSP.swift`, `SelfAsserted.swift`, `Multifactor.swift`, `GlobalException.swift`,
/// `EmulatorPages.swift` — each a protocol of its pages over `PageMaking`, which the renderer conforms to.
struct PageRenderer: UnifiedSSPPages, SelfAssertedPages, MultifactorPages, GlobalExceptionPages, EmulatorOwnPages {
    let tenantName: String
    let clock: EmulatorClock
    let seed: EmulatorSeed

    /// The words of a transaction's pages: its language, with its user flow's overrides.
    func strings(_ tx: AuthorizeTransaction) -> PageStrings {
        PageStrings(language: tx.language, overrides: seed.policy(named: tx.policy)?.languages.overrides[tx.language] ?? [:])
    }

    /// What every page of a transaction reads: `lang`, `tenant`, `t` (its words), `tx` (its id), `action.NAME` and
    /// `link.NAME` (its URLs); `values` add the page's own.
    func context(_ tx: AuthorizeTransaction, _ t: PageStrings, _ values: [String: Any] = [:]) -> [String: Any] {
        let prefix = "/\(tx.tenantSegment)/\(tx.policy.lowercased())/emulator/"
        let base: [String: Any] = [
            "lang": t.language, "tenant": tenantName, "t": t, "tx": tx.id, "action": PageURLs(prefix: prefix, query: ""),
            "link": PageURLs(prefix: prefix, query: "?tx=" + FormEncoding.escape(tx.id)),
        ]
        return base.merging(values) { $1 }
    }

    /// A transaction's page: the template `name` with the transaction's context and `values`.
    func page(_ name: String, _ tx: AuthorizeTransaction, _ values: [String: Any] = [:], headers: [(String, String)] = []) -> Response {
        .html(PageTemplates.render(name, context(tx, strings(tx), values)), headers: headers)
    }
}

/// What a page type's methods use: the tenant, its clock and seed, a transaction's words and context, and the page
/// made from a template.
protocol PageMaking: Sendable {
    var tenantName: String { get }
    var clock: EmulatorClock { get }
    var seed: EmulatorSeed { get }
    func strings(_ tx: AuthorizeTransaction) -> PageStrings
    func context(_ tx: AuthorizeTransaction, _ t: PageStrings, _ values: [String: Any]) -> [String: Any]
    func page(_ name: String, _ tx: AuthorizeTransaction, _ values: [String: Any], headers: [(String, String)]) -> Response
}

extension PageMaking {
    /// A transaction's page without extra headers.
    func page(_ name: String, _ tx: AuthorizeTransaction, _ values: [String: Any] = [:]) -> Response {
        page(name, tx, values, headers: [])
    }
}
