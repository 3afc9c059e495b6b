import AsyncHTTPClient
@testable import B2CEmulator
import B2CKit
import Foundation
import NIOCore
import Testing

/// `b2c signin --device-code` (docs/client.md): the built b2c polls while the scripted browser types its code at the
/// tenant's verification page and signs in; a code declined at the page or left to expire, Ctrl-C and a B2C configuration
/// end it plainly, nothing stored. The poll's `slow_down` is FlowPathTests.aSlowDownAddsFiveSecondsToEveryLaterPoll (in
/// process: it needs the waits shortened).
@Suite struct DeviceCodeSignInTests {
    /// Starts `b2c signin --device-code -o json` and returns it with its first line (the code and the page).
    static func start(_ w: World) async throws -> (LiveProcess, JSONValue) {
        let p = try LiveProcess(b2cBinary, ["signin", "--device-code", "-o", "json"], environment: w.environment(as: nil))
        try await p.waitForOutput("verification_uri")
        let first = p.stdout.split(separator: "\n").first.map(String.init) ?? ""
        return (p, try JSONValue.parse(Data(first.utf8)))
    }

    /// The person types the code at the page and presses "Cancel sign-in on that device"; the page's words come back.
    static func decline(_ w: World, _ prompt: JSONValue) async throws -> String {
        let code = try #require(prompt["user_code"]?.stringValue), uri = try #require(prompt["verification_uri"]?.stringValue)
        var req = HTTPClientRequest(url: uri)
        req.method = .POST
        req.headers.add(name: "Content-Type", value: "application/x-www-form-urlencoded")
        req.body = .bytes(ByteBuffer(string: "otc=\(code)&answer=decline"))
        let res = try await w.http.execute(req, timeout: .seconds(10))
        return String(buffer: try await res.body.collect(upTo: 1 << 20))
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

            // A wrong code is said at the page; Ctrl-C then cancels the device's sign-in: exit 2, nothing stored.
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

    /// The device's next poll after the person declines (`authorization_declined`) or the code expires (`expired_token`)
    /// ends the sign-in: exit 2 or 1 as docs/exit-codes.md says, in words, nothing stored.
    @Test(arguments: [("declined", Int32(2), "the sign-in was declined at"), ("expired", Int32(1), "expired before anyone signed in")])
    func aCodeDeclinedAtThePageOrExpiredStoresNothing(ending: String, status: Int32, said: String) async throws {
        try await World.with(seed: .defaultExternalID) { w in
            let (p, prompt) = try await Self.start(w)
            defer { p.signal(SIGKILL) }
            if ending == "declined" {
                let page = try await Self.decline(w, prompt)
                #expect(page.contains("Sign-in cancelled"), "\(page.prefix(400))")
            } else {
                try await w.advanceClock(DeviceAuthorization.lifetime + 1)
            }
            try await w.eventually("b2c gives up at its next poll") { !p.isRunning }
            let ended = await p.finish()
            #expect(ended.status == status && ended.stderr.contains(said), "\(ended.stderr)")
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
