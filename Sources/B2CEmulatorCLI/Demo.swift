import ArgumentParser
import B2CCLI
import B2CEmulator
import B2CKit
import Foundation

/// The README's first command: the whole job against the embedded local tenant, step by step.
struct DemoCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "demo",
        abstract: "Run the whole job against an in-process local tenant: sign-ins per policy, edit profile, accounts, API calls, sign-out.",
        discussion: """
            Starts the emulator in this process (HTTPS with its own CA), then uses the real authorization-code + PKCE flow \
            through a loopback redirect. A scripted user agent fills the emulator's pages; with --browser, your browser \
            ($BROWSER, else xdg-open/open) opens and you sign in as the people named. The tenant, its CA key and the store \
            are temporary (removed on exit, Ctrl-C included) unless --keep is given.
            """)
    @Option(
        help: ArgumentHelp(
            "Keep the store, configuration and CA in this directory (created if needed) instead of a temporary one.", valueName: "dir"))
    var keep: String?
    @Flag(help: "Sign in with your own browser ($BROWSER, else xdg-open/open) instead of the scripted user agent.") var browser = false
    @Flag(name: .shortAndLong, help: "Trace HTTP requests to stderr (URLs without query values; never tokens, codes or passwords).")
    var verbose = false

    func run() async throws {
        let fm = FileManager.default
        // A temporary store is encrypted with a key that lives only as long as the demo; a kept one needs a key that
        // outlives it: the key store, or B2C_STORE_KEY.
        let storeKeys: StoreKeySources = keep == nil ? .ephemeral() : .system()
        let dir =
            keep.map { URL(fileURLWithPath: $0) }
            ?? fm.temporaryDirectory.appendingPathComponent("b2c-demo-\(getpid())-\(Random.token(bytes: 4))")
        // A kept store without a key to outlive the demo would be a tenant and a configuration with no accounts: say so
        // before anything is created.
        if let keep, !storeKeys.offersKey {
            throw CLIError(
                "--keep keeps the store, and its key must outlive the demo: this session has no keyring (no D-Bus session bus) and "
                    + "B2C_STORE_KEY is not set. Set one (`export B2C_STORE_KEY=$(openssl rand -base64 32)`, and keep it for the "
                    + "commands the demo prints) or run in a desktop session; nothing was created in '\(keep)'.",
                exitCode: ExitStatus.configuration)
        }
        let created = !fm.fileExists(atPath: dir.path)
        do { try fm.createDirectory(at: dir, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700]) } catch {
            throw CLIError("cannot create '\(dir.path)': \(error.localizedDescription)", exitCode: ExitStatus.error)
        }
        defer { if keep == nil { Self.remove(dir) } }
        // Ctrl-C or SIGTERM: say so, remove the temporary tenant (its CA key, the tokens), exit 2.
        let interrupt = cancelOnInterrupt(message: "cancelled; the demo's temporary tenant was removed") { [keep] in
            if keep == nil { Self.remove(dir) }
        }
        defer { interrupt.forEach { $0.cancel() } }

        let demo = try await DemoRun.start(in: dir, keys: storeKeys, kept: keep != nil, created: created, command: self)
        do {
            try await demo.steps()
        } catch {
            // Whatever failed, the HTTP clients and the tenant are shut down before the error is reported.
            await demo.stop()
            switch error {
            case let e as B2CError: throw CLIError("step \(demo.step) failed: \(e.description)", exitCode: exitStatus(e.kind))
            case let e as CLIError: throw CLIError("step \(demo.step) failed: \(e.message)", exitCode: e.exitCode)
            default: throw CLIError("step \(demo.step) failed: \(error)", exitCode: ExitStatus.error)
            }
        }
        await demo.stop()
    }
}

/// One run of the demo: the tenant and the client it set up, who is at the browser, and the steps, which read top to
/// bottom in the order they print.
final class DemoRun {
    let emulator: B2CEmulator
    let server: EmulatorServer
    let caFile: String
    let configPath: URL
    let config: ClientConfiguration
    let store: TokenStore
    let client: B2CClient
    let directory: URL
    let storeKeys: StoreKeySources
    let kept: Bool
    let trace: (@Sendable (String) -> Void)?
    let realBrowser: Bool
    let scripted: ScriptedBrowserUI
    /// A person gets five minutes per page; the scripted agent answers in well under a second, so when it fails (its error
    /// is printed) the demo stops after 30 s instead of waiting out a person's timeout.
    var waitSeconds: Int { realBrowser ? 300 : 30 }
    private(set) var step = 0

    static let alice = (email: "alice@contoso.com", password: "Alice-dev-2026!")
    static let bob = (email: "bob@contoso.com", password: "Bob-dev-2026!")

    /// The tenant in this process (HTTPS with its own CA), its client configuration, the store and the client.
    static func start(in dir: URL, keys: StoreKeySources, kept: Bool, created: Bool, command: DemoCommand) async throws -> DemoRun {
        let emulator = try B2CEmulator(seed: .default, store: try EmulatorStore.file(directory: dir.appendingPathComponent("tenant")))
        let tls = try EmulatorTLS.loadOrCreate(in: dir.appendingPathComponent("tenant"))
        let server: EmulatorServer
        do { server = try await EmulatorServer.start(emulator, tls: tls) } catch {
            throw CLIError("cannot start the local tenant: \(error)", exitCode: ExitStatus.network)
        }
        let configPath = dir.appendingPathComponent("policies.json")
        var trace: (@Sendable (String) -> Void)?
        if command.verbose { trace = { line in Terminal.err("b2c: http \(line)\n") } }
        do {
            try Data((emulator.clientConfiguration(baseURL: server.baseURL, caFile: tls.caPath.path).serialized(pretty: true) + "\n").utf8)
                .write(to: configPath, options: .atomic)
            let config = try ClientConfiguration.load(path: configPath.path)
            let store = try TokenStore(directory: dir.appendingPathComponent("store"), keys: keys)
            try store.prepareForTokens()
            return DemoRun(
                emulator: emulator, server: server, caFile: tls.caPath.path, configPath: configPath, config: config, store: store,
                client: try B2CClient(config: config, store: store, trace: trace), directory: dir, storeKeys: keys, kept: kept,
                trace: trace, realBrowser: command.browser)
        } catch {
            await server.stop()
            if kept && created { try? FileManager.default.removeItem(at: dir) }  // a kept directory that holds nothing usable goes
            throw CLIError("cannot set up the client for the local tenant in '\(dir.path)': \(error)", exitCode: ExitStatus.error)
        }
    }

    private init(
        emulator: B2CEmulator, server: EmulatorServer, caFile: String, configPath: URL, config: ClientConfiguration, store: TokenStore,
        client: B2CClient, directory: URL, storeKeys: StoreKeySources, kept: Bool, trace: (@Sendable (String) -> Void)?,
        realBrowser: Bool
    ) {
        self.emulator = emulator; self.server = server; self.caFile = caFile; self.configPath = configPath; self.config = config
        self.store = store; self.client = client; self.directory = directory; self.storeKeys = storeKeys; self.kept = kept
        self.trace = trace; self.realBrowser = realBrowser
        scripted = ScriptedBrowserUI(caFile: caFile, directory: directory)
    }

    func stop() async {
        await scripted.shutdown()
        await client.shutdown()
        await server.stop()
        // The tenant's database closed before its folder is removed: a connection still open could make a file there
        // (a WAL index) while the folder is being deleted, and leave it behind (seen once beside a busy test suite).
        emulator.store.close()
    }

    func heading(_ text: String) { step += 1; writeOut("\n[\(step)] \(text)") }
    func detail(_ text: String) { writeOut("    " + text.replacingOccurrences(of: "\n", with: "\n    ")) }
    func describe(_ a: Account) -> String { "account \(a.id) under \(a.policy)" }

    /// Who is at the browser: the scripted agent as that person (one cookie jar per person), or you, told whom to sign in as.
    func ui(_ who: (email: String, password: String), jar: String, displayName: String? = nil) -> InteractionUI {
        if realBrowser {
            return GuidedBrowserUI(
                hint: "sign in as \(who.email) / \(who.password)" + (displayName.map { ", then set the display name to '\($0)'" } ?? ""))
        }
        return scripted.persona(ScriptedBrowser.Persona(email: who.email, password: who.password, displayName: displayName), jar: jar)
    }

    func steps() async throws {
        writeOut(
            "b2c demo: the whole job against the embedded local tenant "
                + "(\(realBrowser ? "your browser ($BROWSER)" : "a scripted user agent fills the pages"))")
        heading("Local tenant \(emulator.tenantName) (\(emulator.tenantID)) at \(server.baseURL), HTTPS with its own CA")
        detail("policies: \(config.policies.map { "\($0.name) (\($0.role.rawValue))" }.joined(separator: ", "))")
        detail("client configuration: \(configPath.path)")
        detail(
            "token store: \(store.path)"
                + (!kept
                    ? " (temporary, encrypted with a key that lives only as long as the demo; --keep DIR keeps it)"
                    : " (encrypted with a key from \((try? store.storageStatus())?.source?.place ?? "the key store"))"))
        try await signIns()
        try await secondFactor()
        try await federated()
        try await profileAndAPI()
        try await daemonStep()
        try await signOut()
        writeOut("\nDone: \(step) steps against \(server.baseURL).")
        if kept {
            writeOut("State kept in \(directory.path). Restart the tenant on the same port and use the kept accounts with:")
            writeOut("  b2c emulator serve --tls --state \(directory.appendingPathComponent("tenant").path) --port \(server.port)")
            writeOut("  B2C_CONFIG=\(configPath.path) B2C_HOME=\(directory.appendingPathComponent("store").path) b2c accounts")
        }
    }

    /// Two people under one policy, and one of them under a second policy through her browser session.
    private func signIns() async throws {
        let (alice, bob) = (Self.alice, Self.bob)
        heading("alice@contoso.com signs in to B2C_1_susi (authorization code + PKCE, loopback redirect on 127.0.0.1)")
        let a1 = try await client.signInInteractively(
            policyName: "B2C_1_susi", options: InteractiveOptions(timeoutSeconds: waitSeconds), ui: ui(alice, jar: "alice"))
        detail(describe(a1))
        scripted.showSteps(detail)

        heading("bob@contoso.com signs in to B2C_1_susi (a browser of his own; prompt=login)")
        let b1 = try await client.signInInteractively(
            policyName: "B2C_1_susi", options: InteractiveOptions(prompt: "login", timeoutSeconds: waitSeconds), ui: ui(bob, jar: "bob"))
        detail(describe(b1))
        let current = try client.selectedAccount(policy: "B2C_1_susi", selector: nil).account
        detail("B2C_1_susi now has two accounts; the current one is \(current.id == b1.id ? "Bob's (the last sign-in)" : current.id)")

        heading("alice@contoso.com signs in to a second policy, B2C_1_signin: her browser session answers, no password typed")
        let a2 = try await client.signInInteractively(
            policyName: "B2C_1_signin", options: InteractiveOptions(loginHint: alice.email, timeoutSeconds: waitSeconds),
            ui: ui(alice, jar: "alice"))
        detail(describe(a2) + " (same person: oid \(a2.oid))")
        scripted.showSteps(detail)
    }

    /// A policy with MFA: her browser session answers the password, and an emailed code is the second factor.
    private func secondFactor() async throws {
        heading("alice@contoso.com signs in to B2C_1_susi_mfa: after the password step, a code sent by email (MFA)")
        if realBrowser { detail("the code is in the tenant's outbox: \(server.baseURL)/_admin/outbox") }
        let a = try await client.signInInteractively(
            policyName: "B2C_1_susi_mfa", options: InteractiveOptions(loginHint: Self.alice.email, timeoutSeconds: waitSeconds),
            ui: ui(Self.alice, jar: "alice"))
        detail(describe(a))
        scripted.showSteps(detail)
        if let sent = try emulator.store.outbox.messages(to: Self.alice.email).first(where: { $0.purpose == "mfa" }) {
            detail("the outbox: an \(sent.channel.rawValue) to \(sent.recipient) (GET /_admin/outbox shows its code)")
        }
    }

    /// A person with no local account signs up through a social provider (the tenant's mock Google).
    private func federated() async throws {
        heading("carol@gmail.com signs up with Google at B2C_1_susi_social (the tenant's mock provider; idp in her tokens)")
        let carol: (email: String, password: String) = ("carol@gmail.com", "")
        let persona: InteractionUI
        if realBrowser {
            persona = GuidedBrowserUI(hint: "choose Google and sign in there as \(carol.email), then complete the profile")
        } else {
            var p = ScriptedBrowser.Persona(email: carol.email, password: "", displayName: "Carol Gee")
            p.idp = "google"
            persona = scripted.persona(p, jar: "carol")
        }
        let c = try await client.signInInteractively(
            policyName: "B2C_1_susi_social", options: InteractiveOptions(timeoutSeconds: waitSeconds), ui: persona)
        let provider = c.claims["idp"]?.stringValue ?? "?"
        detail(describe(c) + " · identity provider \(provider)" + (c.claims["newUser"] == true ? ", new user" : ""))
        scripted.showSteps(detail)
    }

    /// Alice edits her profile; the API is called with each person's token, and with Alice's refreshed one.
    private func profileAndAPI() async throws {
        let (alice, bob) = (Self.alice, Self.bob)
        heading("alice@contoso.com edits her profile (B2C_1_edit_profile)")
        let edited = try await client.editProfile(
            selector: alice.email, policyName: nil, options: InteractiveOptions(timeoutSeconds: waitSeconds),
            ui: ui(alice, jar: "alice", displayName: "Alice Demo"))
        detail("display name: \(edited.before?.name ?? "-") → \(edited.after?.name ?? "-"), shown under every policy she holds")

        heading("Accounts, per person and per policy")
        try listAccounts()

        heading("The sample API, called with each person's token (acquired silently: no browser)")
        for who in [alice.email, bob.email] {
            var req = APICallRequest(url: nil, api: "hello")
            req.account = who
            let r = try await client.callAPI(req)
            detail("GET \(r.url.absoluteString) as \(who) → HTTP \(r.status) \(String(decoding: r.body, as: UTF8.self))")
        }
        // Alice's cached token predates her edit; a refresh with B2C_1_susi's own refresh token carries the new name.
        let refreshed = try await client.acquireTokenSilently(
            policyName: "B2C_1_susi", selector: alice.email, scopes: config.apis.first?.scopes ?? [], minValid: 300, forceRefresh: true)
        var again = APICallRequest(url: nil, api: "hello")
        again.account = alice.email
        let r = try await client.callAPI(again)
        detail(
            "Alice's token was issued before her edit; after a refresh with B2C_1_susi's own refresh token (valid "
                + "\(refreshed.accessToken.expiresOn - client.now()) s): HTTP \(r.status) \(String(decoding: r.body, as: UTF8.self))")
    }

    /// Bob signs out here and in the browser.
    private func signOut() async throws {
        heading("bob@contoso.com signs out here and in the browser (end_session)")
        let removed = try client.signOut(policyName: nil, selector: Self.bob.email, all: false).removed
        detail("forgot \(removed.map(\.id).joined(separator: ", "))")
        let ended = try await client.endBrowserSession(
            policyName: "B2C_1_susi", ui: ui(Self.bob, jar: "bob"), timeoutSeconds: realBrowser ? 120 : 30)
        detail(
            ended
                ? "the browser session is ended: his next sign-in shows the sign-in page"
                : "the browser did not come back from the sign-out page")
        detail("access tokens already issued stay valid until they expire")

        heading("Accounts afterwards")
        try listAccounts()
    }

    /// The daemon path: no person, the app's own token (client credentials), its secret from B2C_CLIENT_SECRET as a CI job
    /// gives it (here the daemon's development secret, never printed).
    private func daemonStep() async throws {
        guard let daemon = emulator.seed.apps.first(where: { !$0.applicationPermissions.isEmpty }),
            let secret = daemon.secrets.first?.value
        else { return }
        heading("The daemon app calls the API as itself: an app-only token (client credentials), its secret from B2C_CLIENT_SECRET")
        let path = directory.appendingPathComponent("daemon.json")
        try Data((emulator.clientConfiguration(baseURL: server.baseURL, caFile: caFile, app: daemon).serialized(pretty: true) + "\n").utf8)
            .write(to: path, options: .atomic)
        var environment = ProcessInfo.processInfo.environment
        environment["B2C_CLIENT_SECRET"] = secret
        let client = try B2CClient(
            config: try ClientConfiguration.load(path: path.path),
            store: try TokenStore(directory: directory.appendingPathComponent("store"), keys: storeKeys),
            trace: trace, secrets: ClientSecretSource(environment: environment))
        do {
            detail("as a CI job runs it: B2C_CLIENT_SECRET=… B2C_CONFIG=\(path.path) b2c call-api --app --api hello")
            var req = APICallRequest(url: nil, api: "hello")
            req.app = true
            let r = try await client.callAPI(req)
            let token = try await client.acquireAppToken(
                resource: try client.config.appResource(api: "hello", scope: nil), policyName: nil, minValid: 60, forceRefresh: false)
            detail(
                "token for \(token.token.resource) (scp \(JWT.payload(of: token.token.secret)?["scp"]?.stringValue ?? "-"), "
                    + "sub = the app's service principal; \(token.fromCache ? "from the cache" : "new"))")
            detail(
                "GET \(r.url.absoluteString) as the app \(daemon.clientId) → HTTP \(r.status) \(String(decoding: r.body, as: UTF8.self))")
            await client.shutdown()
        } catch {
            await client.shutdown()
            throw error
        }
    }

    private func listAccounts() throws {
        detail(Output.peopleTable(try client.listAccounts(policy: nil), now: client.now()))
    }
}

/// The demo's scripted user agent: one cookie jar per person, like separate browsers.
final class ScriptedBrowserUI: @unchecked Sendable {
    let caFile: String
    let directory: URL
    private var browsers: [String: ScriptedBrowser] = [:]
    private var lastSteps: [String] = []
    private let lock = NSLock()

    init(caFile: String, directory: URL) { self.caFile = caFile; self.directory = directory }

    func browser(_ jar: String) throws -> ScriptedBrowser {
        try lock.withLock {
            if let b = browsers[jar] { return b }
            let b = try ScriptedBrowser(caFile: caFile)
            browsers[jar] = b
            return b
        }
    }

    func persona(_ p: ScriptedBrowser.Persona, jar: String) -> InteractionUI { PersonaUI(owner: self, persona: p, jar: jar) }

    func record(_ steps: [String]) { lock.withLock { lastSteps = steps } }

    func showSteps(_ detail: (String) -> Void) {
        let steps = lock.withLock { lastSteps }
        if !steps.isEmpty { detail("pages: " + steps.joined(separator: ", ")) }
    }

    func shutdown() async {
        for b in lock.withLock({ Array(browsers.values) }) { await b.shutdown() }
    }

    struct PersonaUI: InteractionUI {
        let owner: ScriptedBrowserUI
        let persona: ScriptedBrowser.Persona
        let jar: String

        func present(url: URL, purpose: String) async {
            do {
                let b = try owner.browser(jar)
                try await b.run(url, as: persona)
                owner.record(b.steps)
            } catch {
                writeErr("the scripted user agent failed: \(error)")
            }
        }

        func progress(_ text: String) {}
    }
}

/// With a real browser: open it and say who to sign in as.
struct GuidedBrowserUI: InteractionUI {
    let hint: String
    /// The terminal's own browser opening, kept: it says when no browser can start and no one can paste.
    private let terminal = TerminalUI(openBrowser: true)

    init(hint: String) { self.hint = hint }

    func present(url: URL, purpose: String) async {
        writeErr("in the browser, \(hint)")
        await terminal.present(url: url, purpose: purpose)
    }
    func progress(_ text: String) { writeErr(text) }
    func unanswerable() -> AsyncStream<String>? { terminal.unanswerable() }
}

extension DemoCommand {
    /// Removes the temporary tenant's folder; a file made in it while it was being removed gets a second try.
    static func remove(_ dir: URL) {
        for _ in 0..<3 where FileManager.default.fileExists(atPath: dir.path) {
            try? FileManager.default.removeItem(at: dir)
            if FileManager.default.fileExists(atPath: dir.path) { usleep(50_000) }
        }
    }
}
