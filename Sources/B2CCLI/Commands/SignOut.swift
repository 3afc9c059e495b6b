import ArgumentParser
import B2CKit
import Foundation

struct SignOutCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "signout", abstract: "Forget accounts and their tokens on this machine; --browser also ends the B2C browser session.",
        discussion: """
            In shared-device mode (deviceMode "shared" in the configuration) any sign-out forgets every account and ends the browser \
            session.
            Without any configuration (none named, none found), --all forgets every account in the store.
            """,
        aliases: ["logout"])
    @OptionGroup var options: ClientOptions
    @Option(help: "Only this policy's account.") var policy: String?
    @Option(help: "Email, oid, account id or a unique prefix (an email or oid signs the person out of every policy).") var account: String?
    @Flag(help: "Every account, and the app's own tokens.") var all = false
    @Flag(help: "Only the app's own tokens (from `b2c token --app`).") var app = false
    @Flag(help: "Also end the B2C session in the browser (the policy's end_session endpoint), so the next sign-in shows the form.")
    var browser = false
    @Flag(help: "With --browser: print the sign-out URL only; do not start a browser.") var noBrowser = false
    @Option(help: "Seconds to wait for the browser to come back from the sign-out page.") var timeout = 120
    @Flag(
        name: [.customShort("y"), .long],
        help: "Without a configuration, --all signs out every configuration's accounts: do it without asking (needed without a terminal).")
    var yes = false

    func validate() throws {
        if app && (all || policy != nil || account != nil || browser) {
            throw ValidationError("--app forgets the app's own tokens only; --all forgets them with every account.")
        }
    }

    func run() async throws {
        guard let config = try options.settings.loadConfigurationIfPresent() else { return try signOutEverywhere() }
        let client = try options.settings.makeClient(config: config)
        // The local sign-out first, said at once: an interrupted browser step cannot leave it in doubt.
        let (outcome, ended) = try await withClient(client) { c -> (SignOutOutcome, Bool?) in
            let outcome = try c.signOut(policyName: policy, selector: account, all: all, apps: app)
            if outcome.sharedDevice { writeOut("Shared-device mode: every account on this device is signed out.") }
            if !app { report(outcome.removed) }
            if app || outcome.removedAppTokens > 0 { reportAppTokens(outcome.removedAppTokens) }
            guard browser || outcome.endBrowserSession else { return (outcome, nil) }
            let interrupt = cancelOnInterrupt(
                message: "interrupted: the sign-out here is done, but the browser session may still be open; run "
                    + "`b2c signout --browser --all` again, or close the browser")
            defer { interrupt.forEach { $0.cancel() } }
            let ended = try await c.endBrowserSession(
                policyName: outcome.removed.first?.policy ?? policy, ui: TerminalUI(openBrowser: !noBrowser, verbose: options.verbose),
                timeoutSeconds: timeout)
            return (outcome, ended)
        }
        switch ended {
        case true?: writeOut("The browser session is ended: the next sign-in shows the sign-in page.")
        case false?:
            throw CLIError(
                "the accounts were forgotten here, but the browser did not come back from the sign-out page, so the browser session may "
                    + "still be open. Run `b2c signout --browser --all` again or close the browser.",
                exitCode: ExitStatus.error)
        case nil: break
        }
        if !outcome.removed.isEmpty {
            writeErr(
                "access tokens already issued stay valid until they expire (up to an hour)"
                    + (ended == nil ? "; the browser session is untouched (add --browser to end it)" : ""))
        }
    }

    /// No configuration: only `--all` makes sense, and it means the whole store.
    func signOutEverywhere() throws {
        guard all, policy == nil, account == nil, !browser else {
            let located = try options.settings.locate()
            throw CLIError(
                "no configuration found (looked for \(located.searched.joined(separator: ", "))), so only `b2c signout --all` (every "
                    + "account in the store) can run. Pass --config FILE or set B2C_CONFIG to sign out of one configuration.",
                exitCode: ExitStatus.configuration)
        }
        let overview = StoreOverview(store: try options.settings.openStore())
        try confirmSigningOutEverything(overview)
        writeErr("no configuration found: signing out every account in \(overview.path)")
        let (removed, appTokens) = try overview.signOutEverything()
        report(removed, withScope: true)
        if appTokens > 0 { reportAppTokens(appTokens) }
        if !removed.isEmpty {
            writeErr("access tokens already issued stay valid until they expire (up to an hour); browser sessions are untouched")
        }
    }

    /// Every configuration's accounts go (production profiles' too): listed and asked at a terminal, else only with --yes.
    func confirmSigningOutEverything(_ overview: StoreOverview) throws {
        let accounts = try overview.accounts()
        let apps = try overview.applications()
        guard !yes, !accounts.isEmpty || !apps.isEmpty else { return }
        let scopes = Dictionary(grouping: accounts) { "\($0.environment) · client \($0.clientID)" }
        var lines = scopes.keys.sorted().map { scope in
            let people = Set(scopes[scope, default: []].map { $0.email ?? $0.oid }).sorted()
            let count = scopes[scope, default: []].count
            return "  \(scope): \(people.joined(separator: ", ")) (\(count) account\(count == 1 ? "" : "s"))"
        }
        if !apps.isEmpty { lines.append("  \(apps.count) app token\(apps.count == 1 ? "" : "s") (client credentials)") }
        let what =
            "no configuration found, so --all signs out every account in \(overview.path), of every configuration:\n"
            + lines.joined(separator: "\n")
        guard Prompt.stdinIsTerminal else {
            throw CLIError(
                what + "\nNothing was signed out. Add --yes to sign them all out, or name a configuration (--config, --profile) "
                    + "to sign out of it only.", exitCode: ExitStatus.usage)
        }
        writePrompt("b2c: \(what)\nSign them all out? [y/N] ")
        guard let answer = Prompt.line()?.trimmingCharacters(in: .whitespaces).lowercased(), ["y", "yes"].contains(answer) else {
            throw CLIError("nothing was signed out", exitCode: ExitStatus.cancelled)
        }
    }

    func reportAppTokens(_ n: Int) {
        writeOut(
            n == 0 ? "No app tokens to forget." : "Forgot \(n) app token\(n == 1 ? "" : "s") (the app's own, from client credentials).")
    }

    func report(_ removed: [Account], withScope: Bool = false) {
        if removed.isEmpty { writeOut("No accounts to sign out.") }
        for a in removed {
            writeOut(
                "Signed out \(a.email ?? a.oid) from \(a.policy) (\(a.id))"
                    + (withScope ? " at \(a.environment), client \(a.clientID)." : "."))
        }
    }
}
