@testable import B2CEmulator
import B2CKit
import Foundation
import Testing

/// What a newcomer met on a clean machine (issue 22): each test failed on the code before it.
@Suite struct NewcomerTests {
    /// A clean machine: HOME of its own, the built programs on PATH, nothing else (no keyring, no B2C_*).
    static func clean(_ home: URL, _ extra: [String: String] = [:]) -> [String: String] {
        ["HOME": home.path, "PATH": "\(buildDir.path):/usr/bin:/bin"].merging(extra) { $1 }
    }

    static func fresh(_ w: World, _ name: String) throws -> URL {
        let d = w.dir.appendingPathComponent("\(name)-\(UUID().uuidString.prefix(6))")
        try FileManager.default.createDirectory(at: d, withIntermediateDirectories: true)
        return d
    }

    /// Item 1: without a key source, `--app` works, says once that nothing was cached, and leaves no token behind.
    @Test func anAppTokenNeedsNoStoreKey() async throws {
        try await World.with { w in
            let daemon = try #require(w.server.emulator.app(named: "daemon"))
            let home = try Self.fresh(w, "home")
            let config = home.appendingPathComponent("daemon.json")
            try Data(
                w.server.emulator.clientConfiguration(baseURL: w.server.baseURL, caFile: w.caPath, app: daemon).serialized().utf8
            ).write(to: config)
            let env = Self.clean(home, ["B2C_CONFIG": config.path, "B2C_CLIENT_SECRET": daemonSecret])
            let token = try await run(b2cBinary, ["token", "--app", "--api", "hello"], environment: env, directory: home)
            #expect(token.status == 0, "\(token.stderr)")
            #expect(JWT.payload(of: token.stdout.trimmingCharacters(in: .whitespacesAndNewlines))?["azp"]?.stringValue == daemonID)
            #expect(token.stderr.components(separatedBy: "was not cached").count - 1 == 1, "\(token.stderr)")
            #expect(token.stderr.contains("B2C_STORE_KEY"), "\(token.stderr)")
            let call = try await run(b2cBinary, ["call-api", "--app", "--api", "hello"], environment: env, directory: home)
            #expect(call.status == 0 && call.stdout.contains("hello.read.all"), "\(call.stdout) \(call.stderr)")
            #expect(call.stderr.components(separatedBy: "was not cached").count - 1 == 1, "\(call.stderr)")
            // With a key, the same command caches it (the second is a hit) and says nothing of the kind.
            var keyed = env
            keyed["B2C_STORE_KEY"] = w.storeKey
            _ = try await run(b2cBinary, ["token", "--app", "--api", "hello"], environment: keyed, directory: home)
            let hit = try await run(b2cBinary, ["token", "--app", "--api", "hello", "-o", "json"], environment: keyed, directory: home)
            #expect(hit.json["fromCache"]?.boolValue == true && !hit.stderr.contains("not cached"), "\(hit.stdout) \(hit.stderr)")
        }
    }

    /// Item 1: `--config-out` creates the directories it needs, 0700.
    @Test func configOutCreatesItsDirectories() async throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("b2c-configout-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: root) }
        let p = try LiveProcess(
            emulatorBinary, ["serve", "--in-memory", "--config-out", "ci/deep/policies.json"], environment: Self.clean(root),
            directory: root)
        try await p.waitForOutput("b2c emulator: ")
        p.signal(SIGTERM)
        _ = await p.finish()
        let attributes = try FileManager.default.attributesOfItem(atPath: root.appendingPathComponent("ci/deep").path)
        #expect((attributes[.posixPermissions] as? Int) == 0o700)
        #expect(FileManager.default.fileExists(atPath: root.appendingPathComponent("ci/deep/policies.json").path))
    }

    /// Item 2: a `--state` tenant comes back on its port, so accounts survive a restart; a taken port is exit 5, said.
    @Test func aStateTenantKeepsItsPortAndItsAccounts() async throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("b2c-state-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: root) }
        let key = Data((0..<32).map { _ in UInt8.random(in: 0...255) }).base64EncodedString()
        let env = Self.clean(root, ["B2C_STORE_KEY": key, "B2C_CONFIG": root.appendingPathComponent("policies.json").path])
        func serve() async throws -> LiveProcess {
            let p = try LiveProcess(
                emulatorBinary, ["serve", "--state", "tenant", "--config-out", "policies.json"], environment: env, directory: root)
            try await p.waitForOutput("b2c emulator: ")
            return p
        }
        let first = try await serve()
        let port1 = try String(contentsOf: root.appendingPathComponent("tenant/port"), encoding: .utf8)
        // Taken below the kernel's ephemeral range, where no other program is given it before the restart.
        let ephemeral = try String(contentsOfFile: "/proc/sys/net/ipv4/ip_local_port_range", encoding: .utf8)
        let low = ephemeral.split(whereSeparator: \.isWhitespace).first.flatMap { Int($0) } ?? 32768
        #expect((10_000..<low).contains(Int(port1.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0), "\(port1)")
        var signin = env
        signin["BROWSER"] = "b2c-emulator browser --as alice@contoso.com"
        let s = try await run(b2cBinary, ["signin"], environment: signin, directory: root)
        #expect(s.status == 0, "\(s.stderr)")
        first.signal(SIGTERM)
        _ = await first.finish()

        let second = try await serve()
        let port2 = try String(contentsOf: root.appendingPathComponent("tenant/port"), encoding: .utf8)
        #expect(port1 == port2 && second.stdout.contains("127.0.0.1:\(port1.trimmingCharacters(in: .whitespacesAndNewlines))"))
        let token = try await run(b2cBinary, ["token", "--force-refresh"], environment: env, directory: root)
        #expect(token.status == 0, "the account did not survive the restart: \(token.stderr)")

        // Its port taken by another tenant: the restart says so (exit 5) and names --port.
        let third = try await run(emulatorBinary, ["serve", "--state", "tenant"], environment: env, directory: root)
        #expect(third.status == 5 && third.stderr.contains("served last") && third.stderr.contains("--port"), "\(third.stderr)")
        second.signal(SIGTERM)
        _ = await second.finish()
    }

    /// Items 3 and 4: `init` asks for the API (and asks again for a policy without a role); a configuration without an API
    /// gives a token for the app itself; a daemon's configuration (client credentials only) is written.
    @Test func initAsksForTheAPIAndWritesADaemonsConfiguration() async throws {
        try await World.with { w in
            let home = try Self.fresh(w, "init")
            var env = w.environment(as: nil)
            env["B2C_CONFIG"] = nil
            env["HOME"] = home.path
            env["XDG_CONFIG_HOME"] = home.appendingPathComponent(".config").path
            let p = try LiveProcess(
                b2cBinary,
                [
                    "init", "--tenant", "contoso.onmicrosoft.com", "--host", w.server.baseURL, "--client-id", EmulatorSeed.defaultClientID,
                    "--ca-file", w.caPath,
                ],
                environment: env, terminal: true, directory: home)
            try await p.waitFor("Policies as NAME=ROLE")
            p.write("B2C_1_susi")
            try await p.waitFor("try again")
            p.write("B2C_1_susi=signUpSignIn")
            try await p.waitFor("The API the app calls")
            p.write("")
            let written = await p.finish()
            #expect(written.status == 0, "\(written.stderr)")
            let config = try JSONValue.parse(try Data(contentsOf: home.appendingPathComponent("policies.json")))
            #expect(config["apis"] == nil)

            // No API: the sign-in and the token are for the app itself (its client id as the scope).
            var user = w.environment(as: alice)
            user["B2C_CONFIG"] = home.appendingPathComponent("policies.json").path
            let s = try await run(b2cBinary, ["signin"], environment: user, directory: home)
            #expect(s.status == 0, "\(s.stderr)")
            let t = try await run(b2cBinary, ["token", "--force-refresh"], environment: user, directory: home)
            #expect(t.status == 0, "\(t.stderr)")
            #expect(
                JWT.payload(of: t.stdout.trimmingCharacters(in: .whitespacesAndNewlines))?["aud"]?.stringValue
                    == EmulatorSeed.defaultClientID)

            // The daemon's configuration: a clientCredentials policy alone.
            let daemon = try await run(
                b2cBinary,
                [
                    "init", "--out", "daemon/policies.json", "--tenant", "contoso.onmicrosoft.com", "--host", w.server.baseURL,
                    "--client-id", daemonID, "--policy", "B2C_1_susi=clientCredentials", "--api", "hello", "--api-url",
                    w.server.baseURL + "/hello", "--scope", "https://contoso.onmicrosoft.com/helloapi/demo.read", "--ca-file", w.caPath,
                ],
                environment: env, directory: home)
            #expect(daemon.status == 0, "\(daemon.stderr)")
            var app = env
            app["B2C_CONFIG"] = home.appendingPathComponent("daemon/policies.json").path
            app["B2C_CLIENT_SECRET"] = daemonSecret
            let token = try await run(b2cBinary, ["token", "--app", "--api", "hello"], environment: app, directory: home)
            #expect(token.status == 0, "\(token.stderr)")
        }
    }

    /// Item 9: `--app` with a public client's configuration says whose configuration it needs.
    @Test func anAppTokenForAPublicClientNamesTheDaemonsConfiguration() async throws {
        try await World.with { w in
            let r = try await w.b2c(["token", "--app", "--api", "hello"], extra: ["B2C_CLIENT_SECRET": "not-a-secret-of-this-app"])
            #expect(r.status == 3, "\(r.stderr)")
            #expect(r.stderr.contains("public client's configuration") && r.stderr.contains("--client daemon"), "\(r.stderr)")
            #expect(!r.stderr.contains("Remove \"confidential\""), "\(r.stderr)")
        }
    }

    /// Item 5: External ID, native sign-in of an unknown person: exit 4, "no account", and no `--policy` advice.
    @Test func anUnknownPersonOnExternalIDIsNoAccount() async throws {
        try await World.with(seed: .defaultExternalID) { w in
            let r = try await w.b2c(
                ["signin", "--native", "--username", "nobody@contoso.com", "--password-stdin"], stdin: "Whatever-2026!\n")
            #expect(r.status == 4, "\(r.stderr)")
            #expect(r.stderr.contains("no account nobody@contoso.com") && !r.stderr.contains("--policy"), "\(r.stderr)")
        }
    }

    /// Item 6: no browser can start: the opener's noise is hidden, the person is asked for the address at a terminal
    /// (and it is taken); a tenant that does not answer is said before anyone is sent to a browser.
    @Test func aHeadlessSignInAsksForThePastedAddress() async throws {
        try await World.with { w in
            var env = w.environment(as: nil)
            env["BROWSER"] = "/nonexistent/browser"
            env["PATH"] = "/usr/bin:/bin"  // no xdg-open here either, as on a server
            let p = try LiveProcess(b2cBinary, ["signin"], environment: env, terminal: true)
            try await p.waitFor("could not start a browser")
            #expect(p.stderr.contains("paste here the address"), "\(p.stderr)")
            #expect(
                !p.stderr.contains("not found\n") && !p.stderr.contains("/nonexistent/browser: "), "the opener's own output: \(p.stderr)")
            let url = try #require(
                p.stderr.split(separator: "\n").first { $0.contains("/authorize?") }?.trimmingCharacters(in: .whitespaces))
            // The person opens it on another machine and copies the address the browser ended on.
            var agentEnv = w.environment(as: alice)
            agentEnv["B2C_AGENT_DELIVER"] = "0"
            let copied = try await run(agent, [url], environment: agentEnv)
            p.write(copied.stdout.trimmingCharacters(in: .whitespacesAndNewlines))
            let r = await p.finish()
            #expect(r.status == 0 && r.stdout.contains("Signed in as alice@contoso.com"), "\(r.stdout) \(r.stderr)")

            // A tenant that does not answer: said before any URL is shown (exit 5), not after the wait for a browser (which
            // would end in exit 1, "no answer from the browser").
            await w.stop()
            let down = try await w.b2c(["signin"], as: alice)
            #expect(down.status == 5 && !down.stderr.contains("open:"), "\(down.stderr)")
        }
    }

    /// Item 7: B2C_CONFIG beats B2C_PROFILE (as documented), and when they disagree it is said, and `profiles` marks no
    /// profile as the one in use.
    @Test func aLeftOverB2CConfigIsSaidWhenItBeatsTheProfile() async throws {
        try await World.with { w in
            let home = try Self.fresh(w, "profiles")
            let profiles = home.appendingPathComponent(".config/b2c/profiles")
            try FileManager.default.createDirectory(at: profiles, withIntermediateDirectories: true)
            try FileManager.default.copyItem(atPath: w.configPath, toPath: profiles.appendingPathComponent("dev.json").path)
            var env = w.environment(as: nil)
            env["HOME"] = home.path
            env["XDG_CONFIG_HOME"] = home.appendingPathComponent(".config").path
            env["B2C_PROFILE"] = "dev"
            let both = try await run(b2cBinary, ["policies"], environment: env, directory: home)
            #expect(both.status == 0 && both.stderr.contains("B2C_CONFIG (") && both.stderr.contains("Unset B2C_CONFIG"), "\(both.stderr)")
            #expect(both.stderr.contains("configuration \(w.configPath) (B2C_CONFIG)"), "\(both.stderr)")
            let listed = try await run(b2cBinary, ["profiles", "-o", "table"], environment: env, directory: home)
            #expect(!listed.stdout.contains("dev *") && listed.stdout.contains("comes first and is in use"), "\(listed.stdout)")
            env["B2C_CONFIG"] = nil
            let profile = try await run(b2cBinary, ["policies"], environment: env, directory: home)
            #expect(profile.stderr.contains("(B2C_PROFILE=dev)") && !profile.stderr.contains("Unset"), "\(profile.stderr)")
        }
    }

    /// Item 8: without a configuration, `signout --all` lists every configuration's accounts and asks; without a terminal
    /// it needs --yes.
    @Test func signingOutEveryConfigurationAsksFirst() async throws {
        try await World.with { w in
            let s = try await w.b2c(["signin"], as: alice)
            #expect(s.status == 0, "\(s.stderr)")
            let (extra, empty) = try w.withoutConfiguration()
            var env = w.environment(as: nil, extra: extra)
            env["HOME"] = w.home.path
            let refused = try await run(b2cBinary, ["signout", "--all"], environment: env, directory: empty)
            #expect(
                refused.status == 64 && refused.stderr.contains("alice@contoso.com") && refused.stderr.contains("--yes"),
                "\(refused.stderr)")
            let p = try LiveProcess(b2cBinary, ["signout", "--all"], environment: env, terminal: true, directory: empty)
            try await p.waitFor("[y/N]")
            p.write("n")
            let declined = await p.finish()
            #expect(declined.status == 2 && declined.stderr.contains("nothing was signed out"), "\(declined.stderr)")
            let listed = try await w.b2c(["accounts", "-o", "json"])
            #expect(listed.stdout.contains(alice.email))
            let yes = try await run(b2cBinary, ["signout", "--all", "--yes"], environment: env, directory: empty)
            #expect(yes.status == 0 && yes.stdout.contains("Signed out alice@contoso.com"), "\(yes.stdout) \(yes.stderr)")
        }
    }

    /// Item 13: an interrupted `signout --browser` says the local sign-out happened.
    @Test func anInterruptedBrowserSignOutSaysTheLocalOneHappened() async throws {
        try await World.with { w in
            #expect(try await w.b2c(["signin"], as: alice).status == 0)
            let r = try await runAndSignal(
                b2cBinary, ["signout", "--account", alice.email, "--browser", "--no-browser"], environment: w.environment(as: nil),
                marker: "Waiting for the browser", signal: SIGINT)
            #expect(r.status == 2 && r.stdout.contains("Signed out alice@contoso.com"), "\(r.stdout) \(r.stderr)")
            #expect(r.stderr.contains("the sign-out here is done"), "\(r.stderr)")
        }
    }

    /// Item 13: the no-configuration hint names `b2c init` and an example that exists; reset-password says it revoked.
    @Test func smallerNewcomerItems() async throws {
        try await World.with { w in
            let (extra, empty) = try w.withoutConfiguration()
            let none = try await w.b2c(["token"], extra: extra, directory: empty)
            #expect(none.status == 3 && none.stderr.contains("b2c init"), "\(none.stderr)")
            let example = packageRoot.appendingPathComponent("policies.example.json").standardizedFileURL.path
            #expect(none.stderr.contains(example) && FileManager.default.fileExists(atPath: example), "\(none.stderr)")

            #expect(try await w.b2c(["signin"], as: alice).status == 0)
            let reset = try await w.b2c(
                ["reset-password", "--account", alice.email], as: alice, extra: ["B2C_AGENT_NEW_PASSWORD": "Alice-new-2026!"])
            #expect(reset.status == 0 && reset.stdout.contains("The reset revoked the earlier sign-ins"), "\(reset.stdout) \(reset.stderr)")
        }
    }

    /// Item 13: `demo --keep DIR` without a key says so and leaves nothing behind.
    @Test func aKeptDemoWithoutAKeyLeavesNothing() async throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("b2c-keep-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: root) }
        let keep = root.appendingPathComponent("kept")
        let r = try await run(emulatorBinary, ["demo", "--keep", keep.path], environment: Self.clean(root))
        #expect(r.status == 3 && r.stderr.contains("B2C_STORE_KEY") && r.stderr.contains("nothing was created"), "\(r.stderr)")
        #expect(!FileManager.default.fileExists(atPath: keep.path))
    }
}
