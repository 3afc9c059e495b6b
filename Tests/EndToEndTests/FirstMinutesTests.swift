import B2CEmulator
import B2CKit
import Foundation
import Testing

/// What a new user of gh, az or kubelogin meets in the first minutes: never hang, fall back, speak plainly
/// (issue 10, items 2–15), each through the built binary.
@Suite struct FirstMinutesTests {
    /// A shell script used as $BROWSER or as a command on PATH.
    static func script(_ w: World, _ name: String, _ body: String) throws -> String {
        let path = w.dir.appendingPathComponent(name).path
        try Data("#!/bin/sh\n\(body)\n".utf8).write(to: URL(fileURLWithPath: path))
        chmod(path, 0o755)
        return path
    }

    // MARK: items 2, 3: start failures end the process at once

    @Test func emulatorServeThatCannotListenSaysWhyAndExitsFive() async throws {
        try await World.with { w in
            let busy = try await run(
                b2cBinary, ["emulator", "serve", "--port", String(w.server.port)], environment: w.environment(as: nil))
            #expect(
                busy.status == 5 && busy.stderr.contains("127.0.0.1:\(w.server.port)") && busy.stderr.contains("in use"), "\(busy.stderr)")
            let bad = try await run(b2cBinary, ["emulator", "serve", "--host", "256.1.1.1"], environment: w.environment(as: nil))
            #expect(bad.status == 5 && bad.stderr.contains("256.1.1.1") && bad.stderr.contains("unknown"), "\(bad.stderr)")
            let unknown = try await run(
                b2cBinary, ["emulator", "serve", "--host", "no-such-host.invalid"], environment: w.environment(as: nil))
            #expect(unknown.status == 5 && unknown.stderr.contains("no-such-host.invalid"), "\(unknown.stderr)")
        }
    }

    @Test func emulatorServeStopsOnSignalsAndAnInMemoryTenantTakesItsCAKeyAlong() async throws {
        try await World.with { w in
            for sig in [SIGINT, SIGTERM] {
                let out = w.dir.appendingPathComponent("wild-\(sig).json")
                let p = try LiveProcess(
                    b2cBinary, ["emulator", "serve", "--tls", "--host", "0.0.0.0", "--config-out", out.path],
                    environment: w.environment(as: nil))
                try await p.waitForOutput("; CA ")
                let ca = try #require(p.stdout.components(separatedBy: "; CA ").last?.trimmingCharacters(in: .whitespacesAndNewlines))
                #expect(FileManager.default.fileExists(atPath: ca))
                // Bound to a wildcard address, the written configuration names an address a client can reach.
                let written = try JSONValue.parse(Data(contentsOf: out))
                #expect(written["authorityHost"]?.stringValue?.hasPrefix("https://127.0.0.1:") == true, "\(written)")
                #expect(p.stdout.contains("(listening on 0.0.0.0:"), "\(p.stdout)")
                p.signal(sig)
                let r = await p.finish()
                #expect(r.status == 0, "signal \(sig): \(r.stderr)")
                #expect(
                    !FileManager.default.fileExists(atPath: URL(fileURLWithPath: ca).deletingLastPathComponent().path),
                    "the temporary CA (and its key) are removed on stop")
            }
        }
    }

    @Test func signinOnABusyPortSaysSoAndTimeoutBoundsTheWait() async throws {
        try await World.with { w in
            let busy = try await w.b2c(["signin", "--port", String(w.server.port)], as: alice)
            #expect(busy.status == 1 && busy.stderr.contains("port \(w.server.port) on 127.0.0.1 is in use"), "\(busy.stderr)")
            #expect(!busy.stderr.contains("open:"), "no URL before the listener is there")
            let idle = try Self.script(w, "idle-browser", "exit 0")
            let waited = try await w.b2c(["signin", "--timeout", "2"], extra: ["BROWSER": idle])
            #expect(waited.status == 1 && waited.stderr.contains("no answer from the browser within 2 s"), "\(waited.stderr)")
        }
    }

    // MARK: item 4: $BROWSER falls back

    @Test func browserEntriesFallBackAndSayWhenNoneWorks() async throws {
        try await World.with { w in
            let ok = try await w.b2c(["signin"], as: alice, extra: ["BROWSER": "false:\(agent.path)"])
            #expect(ok.status == 0, "\(ok.stderr)")
            // The commands' own complaints are shown only with --verbose.
            #expect(!ok.stderr.contains("'false'"), "\(ok.stderr)")
            let verbose = try await w.b2c(
                ["signin", "--verbose", "--prompt", "login"], as: alice, extra: ["BROWSER": "false:\(agent.path)"])
            #expect(verbose.status == 0 && verbose.stderr.contains("the browser command 'false' failed (exit 1)"), "\(verbose.stderr)")
            // Nothing works: a failing entry, then an xdg-open without a desktop. With no terminal to paste the address
            // into, nothing can answer: b2c stops at once, with what each command said.
            let bin = w.dir.appendingPathComponent("bin")
            try FileManager.default.createDirectory(at: bin, withIntermediateDirectories: true)
            _ = try Self.script(w, "bin/xdg-open", "echo 'xdg-open: no method available for opening' >&2; exit 3")
            let path = bin.path + ":/usr/bin:/bin"
            // A --timeout that outlasts the two launches even on a loaded machine: the stop must come from the launches.
            let none = try await w.b2c(["signin", "--timeout", "8"], extra: ["BROWSER": "false", "PATH": path])
            #expect(none.status == 1, "\(none.stderr)")
            #expect(
                none.stderr.contains(
                    "could not start a browser ('false' failed (exit 1); 'xdg-open' failed (exit 3): xdg-open: no method available "
                        + "for opening), and there is no terminal to paste the address into"), "\(none.stderr)")
            #expect(none.stderr.contains("--no-browser") && none.stderr.contains("no method available"), "\(none.stderr)")
            #expect(!none.stderr.contains("no answer from the browser within 8 s"), "\(none.stderr)")
        }
    }

    // MARK: item 5: no sign-in is born revoked

    @Test func aSignInRightAfterARevokeOrResetRefreshes() async throws {
        try await World.with { w in
            #expect(try await w.b2c(["signin"], as: alice, jar: "a").status == 0)
            _ = try await w.admin("POST", "/users/\(alice.email)/revoke")
            #expect(try await w.b2c(["signin", "--prompt", "login"], as: alice, jar: "a").status == 0)
            let refreshed = try await w.b2c(["token", "--force-refresh"])
            #expect(refreshed.status == 0, "a sign-in after the revoke is not revoked: \(refreshed.stderr)")
            // The forgot-password detour: reset, then the resumed sign-in; its first refresh works at once.
            let detour = try await w.b2c(
                ["signin", "--prompt", "login"], as: alice, jar: "a",
                extra: ["B2C_AGENT_ACTION": "forgot", "B2C_AGENT_NEW_PASSWORD": "Alice-new-2026!"])
            #expect(detour.status == 0, "\(detour.stderr)")
            let after = try await w.b2c(["token", "--force-refresh"])
            #expect(after.status == 0, "\(after.stderr)")
        }
    }

    // MARK: item 6: an answer for another sign-in

    @Test func anAnswerWithAnotherStateIsRefusedOnThePageAndTheSignInGoesOn() async throws {
        try await World.with { w in
            let page = w.dir.appendingPathComponent("stale-page.txt").path
            let browser = try Self.script(
                w, "old-tab-then-agent",
                """
                python3 - "$1" > '\(page)' <<'EOF'
                import sys, urllib.parse, urllib.request, urllib.error
                redirect = urllib.parse.parse_qs(urllib.parse.urlparse(sys.argv[1]).query)["redirect_uri"][0]
                try:
                    urllib.request.urlopen(redirect + "?code=stale&state=an-old-tab")
                except urllib.error.HTTPError as e:
                    print(e.code, e.read().decode())
                EOF
                exec '\(agent.path)' "$1"
                """)
            let r = try await w.b2c(["signin"], as: alice, extra: ["BROWSER": browser, "no_proxy": "*"])
            #expect(r.status == 0 && r.stdout.contains("Signed in as alice@contoso.com"), "\(r.stderr)")
            let shown = try String(contentsOfFile: page, encoding: .utf8)
            #expect(shown.hasPrefix("400") && shown.contains("Not for this sign-in") && !shown.contains("Signed in"), "\(shown)")
        }
    }

    // MARK: item 7: edit-profile for the person named

    @Test func editProfileRefusesSomeoneElseAndStoresNothing() async throws {
        try await World.with { w in
            #expect(try await w.b2c(["signin"], as: alice, jar: "alice").status == 0)
            #expect(try await w.b2c(["signin", "--prompt", "login"], as: bob, jar: "bob").status == 0)
            let before = try w.storeSnapshot()
            let r = try await w.b2c(
                ["edit-profile", "--account", alice.email], as: bob, jar: "bob", extra: ["B2C_AGENT_DISPLAY_NAME": "Mallory"])
            #expect(r.status == 1, "\(r.stdout) \(r.stderr)")
            #expect(r.stderr.contains("alice@contoso.com was named, but bob@contoso.com signed in to B2C_1_edit_profile"), "\(r.stderr)")
            #expect(try w.storeSnapshot() == before)
        }
    }

    // MARK: items 8, 9: the network in plain words, proxies and trust from the environment

    @Test func networkFailuresAreSaidInPlainWords() async throws {
        try await World.with { w in
            func configured(_ host: String, known: String, caFile: Bool = true) throws {
                try w.editConfig { o in
                    o["authorityHost"] = .string(host)
                    o["knownAuthorities"] = [.string(known)]
                    o["nativeAuth"] = nil
                    if !caFile { o["caFile"] = nil }
                }
            }
            try configured("http://127.0.0.1:1", known: "127.0.0.1:1")
            let refused = try await w.b2c(["signin", "--no-browser"])
            #expect(
                refused.status == 5
                    && refused.stderr.contains("nothing listens on 127.0.0.1:1 (connection refused) — is the emulator running?"),
                "\(refused.stderr)")
            try configured("https://no-such-host.invalid", known: "no-such-host.invalid")
            let unknown = try await w.b2c(["signin", "--no-browser"])
            #expect(unknown.status == 5 && unknown.stderr.contains("unknown host 'no-such-host.invalid'"), "\(unknown.stderr)")
            try configured(w.server.baseURL, known: "127.0.0.1:\(w.server.port)", caFile: false)
            let untrusted = try await w.b2c(["signin", "--no-browser"])
            #expect(
                untrusted.status == 5 && untrusted.stderr.contains("signed by an unknown authority")
                    && untrusted.stderr.contains("SSL_CERT_FILE"),
                "\(untrusted.stderr)")
            for internals in ["CERTIFICATE_VERIFY_FAILED", ".cc:", "errno", "NIO"] {
                #expect(![refused, unknown, untrusted].contains { $0.stderr.contains(internals) }, "library text '\(internals)' leaked")
            }
            // SSL_CERT_FILE names the CA instead of caFile.
            let trusted = try await w.b2c(["signin"], as: alice, extra: ["SSL_CERT_FILE": w.caPath])
            #expect(trusted.status == 0, "\(trusted.stderr)")
            // Beside SSL_CERT_DIR (here a directory without the CA), the file is trusted as well; a file that is not PEM
            // certificates is refused by its variable's name, before any request.
            let noCA = w.dir.appendingPathComponent("no-ca-dir")
            try FileManager.default.createDirectory(at: noCA, withIntermediateDirectories: true)
            let both = try await w.b2c(["signin"], as: alice, extra: ["SSL_CERT_FILE": w.caPath, "SSL_CERT_DIR": noCA.path])
            #expect(both.status == 0, "\(both.stderr)")
            let garbage = w.dir.appendingPathComponent("garbage.pem")
            try Data("-----BEGIN CERTIFICATE-----\nnot base64\n-----END CERTIFICATE-----\n".utf8).write(to: garbage)
            let unreadable = try await w.b2c(["signin"], as: alice, extra: ["SSL_CERT_FILE": garbage.path, "SSL_CERT_DIR": noCA.path])
            #expect(
                unreadable.status == 3 && unreadable.stderr.contains("named by SSL_CERT_FILE"), "\(unreadable.status) \(unreadable.stderr)")
        }
    }

    @Test func proxiesFromTheEnvironmentCarryTheRequestsAndNoProxyBypassesThem() async throws {
        try await World.with(hostNames: ["b2c.test"]) { w in
            let log = w.dir.appendingPathComponent("proxy.log").path
            let proxy = try LiveProcess(
                URL(fileURLWithPath: "/usr/bin/python3"), [packageRoot.appendingPathComponent("Tests/support/connect_proxy.py").path, log],
                environment: [:])
            defer { proxy.signal(SIGKILL) }  // the test runner passes its blocked signals on: SIGTERM would wait forever
            try await proxy.waitForOutput("\n")
            let port = proxy.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
            // The tenant under a name that resolves nowhere: only the proxy reaches it.
            let host = "b2c.test:\(w.server.port)"
            try w.editConfig { o in
                o["authorityHost"] = .string("https://\(host)")
                o["knownAuthorities"] = [.string(host)]
                o["nativeAuth"] = nil
                o["apis"] = []
            }
            let viaProxy = ["HTTPS_PROXY": "http://127.0.0.1:\(port)"]
            let clientID = try #require(try JSONValue.parse(Data(contentsOf: URL(fileURLWithPath: w.configPath)))["clientId"]?.stringValue)
            let ropc = try await w.b2c(
                ["signin", "--policy", "B2C_1_ROPC_Auth", "--username", alice.email, "--password-stdin"], extra: viaProxy,
                stdin: alice.password + "\n")
            #expect(ropc.status == 0, "\(ropc.stderr)")
            let refreshed = try await w.b2c(
                ["token", "--policy", "B2C_1_ROPC_Auth", "--force-refresh", "--scope", clientID], extra: viaProxy)
            #expect(refreshed.status == 0, "\(refreshed.stderr)")
            let seen = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
            #expect(seen.contains("CONNECT \(host)"), "the requests went through the proxy: \(seen)")
            // NO_PROXY names the host: it goes direct, and the name does not resolve.
            let direct = try await w.b2c(
                ["token", "--policy", "B2C_1_ROPC_Auth", "--force-refresh", "--scope", clientID],
                extra: viaProxy.merging(["NO_PROXY": "localhost,.test"]) { $1 })
            #expect(direct.status == 5 && direct.stderr.contains("unknown host 'b2c.test'"), "\(direct.stderr)")
            let badProxy = try await w.b2c(
                ["token", "--policy", "B2C_1_ROPC_Auth", "--force-refresh"], extra: ["HTTPS_PROXY": "socks5://127.0.0.1:1"])
            #expect(badProxy.status == 3 && badProxy.stderr.contains("only http:// proxies"), "\(badProxy.stderr)")
        }
    }

    // MARK: item 10: the browser on another machine

    @Test func noBrowserAcceptsTheAddressThePersonPastes() async throws {
        try await World.with { w in
            let p = try LiveProcess(b2cBinary, ["signin", "--no-browser"], environment: w.environment(as: alice))
            try await p.waitFor("Waiting for the browser")
            let url = try #require(
                p.stderr.split(separator: "\n").first { $0.hasPrefix("  https://") }?.trimmingCharacters(in: .whitespaces))
            // The browser elsewhere ends on the loopback address, which does not reach this machine: the person copies it.
            let copied = try await run(agent, [url], environment: w.environment(as: alice).merging(["B2C_AGENT_DELIVER": "0"]) { $1 })
            #expect(copied.status == 0, "\(copied.stderr)")
            p.write("this is not it")
            try await p.waitFor("that is not the URL the browser ended on")
            p.write(copied.stdout.trimmingCharacters(in: .whitespacesAndNewlines))
            let r = await p.finish()
            #expect(r.status == 0 && r.stdout.contains("Signed in as alice@contoso.com"), "\(r.stderr)")
        }
    }

    // MARK: item 11: command habits

    @Test func commandHabitsOfGhAndAzUsers() async throws {
        try await World.with { w in
            let version = try await w.b2c(["--version"])
            #expect(version.status == 0 && version.stdout.hasPrefix("b2c "), "\(version.stdout)")
            let typo = try await w.b2c(["sigin"])
            #expect(typo.status == 64 && typo.stderr.contains("Did you mean `b2c signin`?"), "\(typo.stderr)")
            #expect(try await w.b2c(["login"], as: alice, jar: "alice").status == 0, "login is signin")
            #expect(try await w.b2c(["login", "--prompt", "login"], as: bob, jar: "bob").status == 0)
            let status = try await w.b2c(["status", "-o", "json"])
            #expect(status.json["people"]?.arrayValue?.count == 2, "status is accounts")
            let json = try await w.b2c(["token", "--output", "json"])
            #expect(json.json["accountId"]?.stringValue == "\(bob.oid)-b2c_1_susi.\(tenantID)", "\(json.stdout)")
            #expect(try await w.b2c(["token", "-o", "json"]).json["tokenType"] == "Bearer")
            #expect(try await w.b2c(["token", "--min-valid", "-5"]).status == 0)
            // switch with the account as its argument, by the local part of the email, under the default policy.
            let switched = try await w.b2c(["switch", "alice"])
            #expect(
                switched.status == 0 && switched.stdout.contains("alice@contoso.com is now the current account of B2C_1_susi"),
                "\(switched.stderr)")
            let nobody = try await w.b2c(["token", "--account", "nobody"])
            #expect(
                nobody.status == 4 && nobody.stderr.contains("signed in under B2C_1_susi:") && nobody.stderr.contains(bob.email),
                "\(nobody.stderr)")
            let unknownPolicy = try await w.b2c(["accounts", "--policy", "B2C_1_nope"])
            #expect(unknownPolicy.status == 3 && unknownPolicy.stderr.contains("B2C_1_nope"), "\(unknownPolicy.stderr)")
            #expect(try await w.b2c(["logout", "--all"]).status == 0, "logout is signout")
        }
    }

    // MARK: item 12: readable output

    @Test func timesAreDatesAndAClockProblemIsCalledOne() async throws {
        try await World.with { w in
            #expect(try await w.b2c(["signin"], as: alice, jar: "alice").status == 0)
            let who = try await w.b2c(["whoami", "-o", "table"])
            // An hour's token, read some seconds (on a loaded machine, minutes) after it was made: "(in 60 min)" and below.
            let minutes = who.stdout.firstMatch(of: /UTC \(in (\d+) min\)/).flatMap { Int($0.1) }
            #expect(who.stdout.contains("id-token claim exp") && (50...60).contains(minutes ?? -1), "\(who.stdout)")
            #expect(who.stdout.contains(" UTC (") && who.stdout.contains(" s ago)"), "iat/auth_time in the past: \(who.stdout)")
            let table = try await w.b2c(["accounts", "-o", "table"])
            #expect(table.stdout.contains("0a11ce00…") && !table.stdout.contains("-b2c_1_susi."), "short ids in tables: \(table.stdout)")
            // This machine's clock two hours ahead: the new id token has expired on arrival, and the message says why.
            let skewed = try await w.b2c(["signin", "--prompt", "login"], as: alice, jar: "alice", extra: ["B2C_CLOCK_OFFSET": "7200"])
            #expect(skewed.status == 1 && skewed.stderr.contains("clock skew"), "\(skewed.stderr)")
        }
    }

    // MARK: item 14: the demo

    @Test func theDemoIgnoresBrowserUnlessAskedAndCleansUpWhenStopped() async throws {
        try await World.with { w in
            let env = w.environment(as: nil).merging(["BROWSER": "false"]) { $1 }
            let kept = w.dir.appendingPathComponent("kept")
            let demo = try await run(b2cBinary, ["demo", "--keep", kept.path], environment: env)
            #expect(demo.status == 0, "the scripted agent signs in though $BROWSER is set: \(demo.stderr)")
            #expect(
                demo.stdout.contains("b2c emulator serve --tls --state \(kept.appendingPathComponent("tenant").path) --port "),
                "\(demo.stdout)")
            // --browser with a browser that starts (and so is waited for; one that cannot start, with no terminal to paste
            // into, ends the wait at once — below), then a signal.
            for sig in [SIGINT, SIGTERM] {
                let p = try LiveProcess(b2cBinary, ["demo", "--browser"], environment: env.merging(["BROWSER": "true"]) { $1 })
                try await p.waitFor("Waiting for the browser")
                let configLine = try #require(p.stdout.split(separator: "\n").first { $0.contains("client configuration: ") })
                let dir = URL(fileURLWithPath: String(configLine.split(separator: " ").last!)).deletingLastPathComponent()
                #expect(FileManager.default.fileExists(atPath: dir.appendingPathComponent("tenant").path))
                p.signal(sig)
                let r = await p.finish()
                #expect(r.status == 2 && r.stderr.contains("cancelled"), "\(r.stderr)")
                #expect(!FileManager.default.fileExists(atPath: dir.path), "the temporary tenant, its CA key and the tokens are gone")
            }
            // No browser can start and no terminal: the demo stops at once, and still removes its temporary tenant.
            let stopped = try await run(b2cBinary, ["demo", "--browser"], environment: env)
            #expect(stopped.status == 1 && stopped.stderr.contains("could not start a browser"), "\(stopped.stderr)")
            let configLine = try #require(stopped.stdout.split(separator: "\n").first { $0.contains("client configuration: ") })
            let dir = URL(fileURLWithPath: String(configLine.split(separator: " ").last!)).deletingLastPathComponent()
            #expect(!FileManager.default.fileExists(atPath: dir.path), "the temporary tenant, its CA key and the tokens are gone")
        }
    }

    // MARK: item 15

    @Test func policiesReportAMissingCAFileAndCheckEachPolicy() async throws {
        try await World.with { w in
            let check = try await w.b2c(["policies", "--check", "-o", "json"])
            #expect(check.status == 0, "\(check.stdout) \(check.stderr)")
            #expect(check.json["policies"]?.arrayValue?.allSatisfy { $0["status"] == "ok" } == true, "\(check.stdout)")
            // A B2C_1A_ policy is named for what it is: a custom policy, whose claims are its relying party's.
            let custom = check.json["policies"]?.arrayValue?.first { $0["name"]?.stringValue?.hasPrefix("B2C_1A_") == true }
            #expect(custom?["detail"]?.stringValue?.contains("a custom policy") == true, "\(check.stdout)")
            try w.editConfig { o in o["policies"] = .array((o["policies"]?.arrayValue ?? []) + [["name": "B2C_1_gone", "role": "signIn"]]) }
            let gone = try await w.b2c(["policies", "--check", "-o", "table"])
            #expect(
                gone.status == 3 && gone.stdout.contains("B2C_1_gone") && gone.stdout.contains("AADB2C99002"),
                "\(gone.stdout) \(gone.stderr)")
            try w.editConfig { o in o["caFile"] = .string(w.dir.appendingPathComponent("no-such-ca.pem").path) }
            for args in [["policies"], ["policies", "--check"]] {
                let r = try await w.b2c(args + ["-o", "table"])
                #expect(r.status == 3 && r.stderr.contains("no-such-ca.pem") && r.stderr.contains("does not exist"), "\(args): \(r.stderr)")
            }
        }
    }

    @Test func theResetHintNamesEditProfileAndTheAgentReportsAPageThatFails() async throws {
        try await World.with { w in
            #expect(try await w.b2c(["signin"], as: alice, jar: "alice").status == 0)
            #expect(try await w.b2c(["edit-profile"], as: alice, jar: "alice").status == 0)
            let reset = try await w.b2c(["reset-password"], as: alice, jar: "alice", extra: ["B2C_AGENT_NEW_PASSWORD": "Alice-new-2026!"])
            #expect(reset.status == 0, "\(reset.stderr)")
            #expect(reset.stdout.contains("b2c edit-profile --policy B2C_1_edit_profile --account alice@contoso.com"), "\(reset.stdout)")
            #expect(!reset.stdout.contains("signin --policy B2C_1_edit_profile"), "\(reset.stdout)")
            // The agent on a page that fails: its error, exit 1, no crash.
            let broken = try await run(
                agent, ["\(w.server.baseURL)/contoso.onmicrosoft.com/B2C_1_nope/oauth2/v2.0/authorize?client_id=x"],
                environment: w.environment(as: alice))
            #expect(
                broken.status == 1 && broken.stderr.hasPrefix("b2c-test-agent: ") && broken.stderr.contains("AADB2C99002"),
                "\(broken.stderr)")
            #expect(!broken.stderr.contains("Fatal error"))
        }
    }
}
