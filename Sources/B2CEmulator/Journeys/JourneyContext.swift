import B2CProtocol
import Foundation
import Hummingbird

/// What a browser journey's steps use: the tenant's parts. `AuthorizeEndpoint` holds them and makes each step from itself
/// (`SecondFactorStep(self)`); a step makes the next one the same way.
protocol JourneyContext: JourneyCallouts {
    var pages: PageRenderer { get }
    var sessions: Sessions { get }
}

/// The tenant's parts, held by a step.
struct JourneyParts: Sendable {
    let seed: EmulatorSeed
    let store: EmulatorStore
    let clock: EmulatorClock
    let issuer: TokenIssuer
    let pages: PageRenderer
    let sessions: Sessions
    let customPolicies: CustomPolicies

    init(
        seed: EmulatorSeed, store: EmulatorStore, clock: EmulatorClock, issuer: TokenIssuer, pages: PageRenderer, sessions: Sessions,
        customPolicies: CustomPolicies
    ) {
        (self.seed, self.store, self.clock, self.issuer, self.pages, self.sessions) = (seed, store, clock, issuer, pages, sessions)
        self.customPolicies = customPolicies
    }
}

/// A step of a browser journey: a small type with the parts, entered when the journey reaches it and resumed by the
/// requests its step (`JourneyStep`) takes.
protocol JourneyStepType: JourneyContext {
    var parts: JourneyParts { get }
    init(parts: JourneyParts)
}

extension JourneyStepType {
    /// The step with the parts of the type that makes it (`SecondFactorStep(self)`).
    init(_ c: some JourneyStepType) { self.init(parts: c.parts) }

    var seed: EmulatorSeed { parts.seed }
    var store: EmulatorStore { parts.store }
    var clock: EmulatorClock { parts.clock }
    var issuer: TokenIssuer { parts.issuer }
    var pages: PageRenderer { parts.pages }
    var sessions: Sessions { parts.sessions }
}

// MARK: answers to the app

extension JourneyContext {
    /// A step of journey `id`: an error page it ends with is the journey's end in the recorder.
    func recording(_ id: String, _ step: () async throws -> Response) async throws -> Response {
        do { return try await step() } catch let e as PageError {
            store.journeys.end(id, outcome: e.code ?? "error page", ["message": .string(e.message)])
            throw e
        }
    }

    /// An error for the app, as its response mode sends it; the journey ends with its code.
    func redirectError(_ reply: ReplyTo, _ f: OAuthFailure, headers: [(String, String)] = []) -> Response {
        var params = [("error", f.error), ("error_description", f.description(at: clock.date))]
        if let state = reply.state { params.append(("state", state)) }
        return sendReply(reply, params, headers: headers)
    }

    /// The one way every journey's answer goes back to the app (query, fragment or form_post), recorded as its end.
    func sendReply(_ r: ReplyTo, _ params: [(String, String)], headers: [(String, String)] = []) -> Response {
        let sent = Dictionary(params, uniquingKeysWith: { a, _ in a })
        if let error = sent["error"] {
            let code = sent["error_description"].flatMap { $0.split(separator: ":").first.map(String.init) } ?? error
            store.journeys.end(
                r.journey, outcome: code.hasPrefix("AAD") ? code : error,
                ["error": .string(error), "error_description": .string(sent["error_description"] ?? "")])
        } else {
            store.journeys.end(r.journey, outcome: "tokens", ["returned": JSONValue(params.map(\.0)), "responseMode": .string(r.mode)])
        }
        switch r.mode {
        case "form_post":
            return HTML.autoPostPage(to: r.redirectUri, params, goingBackTo: "back to the application", headers: headers)
        case "fragment":
            return .redirect(r.redirectUri + "#" + FormEncoding.encode(params), headers: headers)
        default:
            let sep = r.redirectUri.contains("?") ? "&" : "?"
            return .redirect(r.redirectUri + sep + FormEncoding.encode(params), headers: headers)
        }
    }
}
