@testable import B2CEmulator
import B2CKit
import Foundation
import Testing

/// `b2c signin --device-code` (docs/client.md): the built b2c polls while the scripted browser types its code at the
/// tenant's verification page and signs in; a decline and a B2C configuration are refused plainly, nothing stored.
@Suite struct DeviceCodeSignInTests {
    /// Starts `b2c signin --device-code -o json` and returns it with its first line (the code and the page).
    static func start(_ w: World) async throws -> (LiveProcess, JSONValue) {
        let p = try LiveProcess(b2cBinary, ["signin", "--device-code", "-o", "json"], environment: w.environment(as: nil))
        try await p.waitForOutput("verification_uri")
        let first = p.stdout.split(separator: "\n").first.map(String.init) ?? ""
        return (p, try JSONValue.parse(Data(first.utf8)))
    }

    @Test func aCodeTypedAtThePageSignsTheDeviceIn() async throws {
        try await World.with(seed: .defaultExternalID) { w in
            let (p, prompt) = try await Self.start(w)
            let code = try #require(prompt["user_code"]?.stringValue), uri = try #require(prompt["verification_uri"]?.stringValue)
            var env = w.environment(as: alice)
            env["B2C_AGENT_EMAIL"] = nil
            let typed = try await run(
                emulatorBinary, ["browser", "--as", alice.email, "--ca", w.caPath, "--device-code", code, uri], environment: env)
            #expect(typed.status == 0, "\(typed.stderr)")
            let done = await p.finish()
            #expect(done.status == 0 && done.stdout.contains("\"signedIn\":\"alice@contoso.com\""), "\(done.stdout) \(done.stderr)")
            let token = try await w.b2c(["token", "--api", "hello"])
            #expect(token.status == 0, "the account is stored like any sign-in's: \(token.stderr)")

            // Declined at the page: exit 2, nothing stored.
            _ = try await w.b2c(["signout", "--all", "--yes"])
            let (q, second) = try await Self.start(w)
            let page = try await run(
                emulatorBinary,
                [
                    "browser", "--as", alice.email, "--ca", w.caPath, "--device-code", "NOPE",
                    try #require(second["verification_uri"]?.stringValue),
                ],
                environment: env)
            #expect(page.status == 1 && page.stderr.contains("wasn"), "a wrong code is said: \(page.stderr)")
            q.signal(SIGINT)
            let cancelled = await q.finish()
            #expect(cancelled.status == 2, "Ctrl-C cancels: \(cancelled.stderr)")
            #expect(try await w.b2c(["accounts", "-o", "json"]).json["people"] == .array([]), "nothing stored")
        }
    }

    @Test func aB2CConfigurationIsRefusedBeforeAnythingIsSent() async throws {
        try await World.with { w in
            let r = try await w.b2c(["signin", "--device-code"])
            #expect(r.status == 64 && r.stderr.contains("External ID"), "\(r.stderr)")
        }
    }
}
