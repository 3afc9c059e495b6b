import B2CEmulator
import Crypto
import Foundation
import NIOConcurrencyHelpers
import TestSupport
import Testing

@testable import B2CKit

let alice = ScriptedBrowser.Persona(email: "alice@contoso.com", password: "Alice-dev-2026!")
let bob = ScriptedBrowser.Persona(email: "bob@contoso.com", password: "Bob-dev-2026!")

/// An in-memory tenant on a real loopback socket (plain HTTP: loopback needs no TLS), a client configuration for it, a
/// private encrypted store, and clocks a test can move: the tenant's and the client's apart (skew) or together (time).
/// A flow's rules are checked here in-process, in milliseconds; what only the binary shows stays in EndToEndTests.
final class LocalTenant: Sendable {
    let tenant: LocalTenantServer
    var emulator: B2CEmulator { tenant.emulator }
    var server: EmulatorServer { tenant.server }
    let config: ClientConfiguration
    let home: URL
    let key = SymmetricKey(size: .bits256)
    /// Seconds the client's clock is ahead of the machine's.
    let clientOffset = NIOLockedValueBox(0)
    let progress = NIOLockedValueBox<[String]>([])
    /// Every scripted browser a test made (each holds an HTTP client, shut down when the tenant stops).
    let browsers = NIOLockedValueBox<[ScriptedBrowser]>([])

    static func with(seed: EmulatorSeed = .default, _ body: (LocalTenant) async throws -> Void) async throws {
        let server = try await LocalTenantServer.start(seed: seed)
        let home = temporaryDirectory("b2ckit")
        let tenant = LocalTenant(
            tenant: server, home: home,
            config: try ClientConfiguration.parse(
                Data(server.emulator.clientConfiguration(baseURL: server.baseURL, caFile: nil).serialized().utf8), source: "policies.json"))
        defer { try? FileManager.default.removeItem(at: home) }
        do { try await body(tenant) } catch {
            await tenant.stop()
            throw error
        }
        await tenant.stop()
    }

    private func stop() async {
        for b in browsers.withLockedValue({ $0 }) { await b.shutdown() }
        await tenant.stop()
    }

    private init(tenant: LocalTenantServer, home: URL, config: ClientConfiguration) {
        self.tenant = tenant; self.home = home; self.config = config
    }

    /// A client of this tenant on the shared store (each call is another "process" on the same files). Its requests wait up
    /// to a minute: the whole suite starts at once on CI's two cores, and a tenant in this process may be slow to get a turn
    /// (CI once saw a discovery document take over 10 s there); no test here is about the client's timeout.
    func client(_ config: ClientConfiguration? = nil) throws -> B2CClient {
        let offset = clientOffset
        return try B2CClient(
            config: config ?? self.config, store: try TokenStore(directory: home, keys: .ephemeral(key)), timeoutSeconds: 60,
            clock: { Int(Date().timeIntervalSince1970) + offset.withLockedValue { $0 } })
    }

    /// The client for the length of `body`, shut down however it ends.
    func withClient<T>(_ body: (B2CClient) async throws -> T) async throws -> T {
        let c = try client()
        do {
            let r = try await body(c)
            await c.shutdown()
            return r
        } catch {
            await c.shutdown()
            throw error
        }
    }

    /// Time passes for both sides.
    func advance(_ seconds: Int) throws {
        try emulator.clock.advance(by: seconds)
        clientOffset.withLockedValue { $0 += seconds }
    }

    var helloScopes: [String] { config.apis[0].scopes }

    /// Alice (or another) signed in with her password at the ROPC policy.
    @discardableResult
    func signInWithPassword(_ who: ScriptedBrowser.Persona = alice) async throws -> Account {
        try await withClient {
            try await $0.signInWithPassword(policyName: nil, username: who.email, password: who.password, scopes: helloScopes)
        }
    }

    /// Grants of one kind the tenant answered (its token log), e.g. `refresh_token`.
    func grants(_ type: String) throws -> Int { try emulator.store.requests.entries().filter { $0.grantType == type }.count }

    /// The person at the browser: the scripted user agent, run in-process against the URL the flow shows.
    func browser(_ who: ScriptedBrowser.Persona) throws -> BrowserUI {
        let b = try ScriptedBrowser(caFile: nil)
        browsers.withLockedValue { $0.append(b) }
        return BrowserUI(b, who, progress)
    }
}

/// The scripted browser as the flow's `InteractionUI`: it walks the pages as `persona` and delivers the answer to the
/// loopback listener. A walk that fails is recorded (and the flow then times out or gets the page's error).
struct BrowserUI: InteractionUI {
    let browser: ScriptedBrowser
    let persona: ScriptedBrowser.Persona
    let lines: NIOLockedValueBox<[String]>
    let failure = NIOLockedValueBox<String?>(nil)

    init(_ browser: ScriptedBrowser, _ persona: ScriptedBrowser.Persona, _ lines: NIOLockedValueBox<[String]>) {
        self.browser = browser; self.persona = persona; self.lines = lines
    }

    func present(url: URL, purpose: String) async {
        do { try await browser.run(url, as: persona) } catch { failure.withLockedValue { $0 = "\(error)" } }
    }

    func progress(_ text: String) { lines.withLockedValue { $0.append(text) } }
}
