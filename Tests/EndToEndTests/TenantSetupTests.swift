@testable import B2CEmulator
import B2CKit
import Foundation
import Testing
import _CryptoExtras

/// `b2c init`, profiles and `policies --check` against the emulator, through the built binary (issue 13, items 3–4).
@Suite struct TenantSetupTests {
    /// The flags that describe this world's tenant to `b2c init`.
    static func initFlags(_ w: World) -> [String] {
        [
            "--tenant", "contoso.onmicrosoft.com", "--tenant-id", tenantID, "--host", w.server.baseURL, "--client-id",
            EmulatorSeed.defaultClientID, "--policy", "B2C_1_susi=signUpSignIn", "--policy", "B2C_1_edit_profile=editProfile",
            "--api", "hello", "--api-url", w.server.baseURL + "/hello", "--scope", "https://contoso.onmicrosoft.com/helloapi/demo.read",
            "--ca-file", w.caPath,
        ]
    }

    @Test func initWritesAConfigurationThatWorksAndChecksItAgainstTheTenant() async throws {
        try await World.with { w in
            let dir = w.dir.appendingPathComponent("project")
            try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
            let noConfig = ["B2C_CONFIG": "", "XDG_CONFIG_HOME": w.dir.appendingPathComponent("xdg").path]
            let made = try await w.b2c(["init"] + Self.initFlags(w) + ["-o", "json"], extra: noConfig, directory: dir)
            #expect(made.status == 0, "\(made.stderr)")
            #expect(made.json["policies"]?.arrayValue?.map { $0["status"] } == ["ok", "ok"], "\(made.stdout)")
            let written = try ClientConfiguration.load(path: dir.appendingPathComponent("policies.json").path)
            #expect(written.clientID == EmulatorSeed.defaultClientID && written.policies.count == 2 && written.tenantID == tenantID)
            // ./policies.json is found; the person signs in with it.
            #expect(try await w.b2c(["signin"], as: alice, extra: noConfig, directory: dir).status == 0)
            #expect(try await w.b2c(["call-api", "--api", "hello"], extra: noConfig, directory: dir).status == 0)

            // Never over an existing file without --force.
            let before = try Data(contentsOf: dir.appendingPathComponent("policies.json"))
            let again = try await w.b2c(["init"] + Self.initFlags(w) + ["--client-id", webAppID], extra: noConfig, directory: dir)
            #expect(again.status == 3 && again.stderr.contains("--force"), "\(again.stderr)")
            #expect(try Data(contentsOf: dir.appendingPathComponent("policies.json")) == before)

            // A policy the tenant does not know: written, and the check says which (exit 3).
            let unknown = try await w.b2c(
                ["init", "--force", "-o", "table"] + Self.initFlags(w) + ["--policy", "B2C_1_nope=signIn"], extra: noConfig, directory: dir)
            #expect(
                unknown.status == 3 && unknown.stdout.contains("B2C_1_nope") && unknown.stdout.contains("MISCONFIGURED"),
                "\(unknown.stdout)")
            // An unreachable host: written, exit 5.
            var flags = Self.initFlags(w)
            flags[flags.firstIndex(of: "--host")! + 1] = "http://127.0.0.1:1"  // nothing listens there
            let down = try await w.b2c(["init", "--out", "down.json", "-o", "table"] + flags, extra: noConfig, directory: dir)
            #expect(down.status == 5 && down.stdout.contains("UNREACHABLE"), "\(down.stdout) \(down.stderr)")
            // Missing answers without a terminal: the flag to give.
            let missing = try await w.b2c(
                ["init", "--out", "x.json", "--tenant", "contoso.onmicrosoft.com"], extra: noConfig, directory: dir)
            #expect(missing.status == 64 && missing.stderr.contains("--client-id"), "\(missing.stderr)")
            #expect(!FileManager.default.fileExists(atPath: dir.appendingPathComponent("x.json").path))
        }
    }

    @Test func profilesAreChosenPerCommandOrPerShellAndListed() async throws {
        try await World.with { w in
            let xdg = w.dir.appendingPathComponent("xdg")
            let base = ["B2C_CONFIG": "", "XDG_CONFIG_HOME": xdg.path]
            let empty = w.dir.appendingPathComponent("empty")
            try FileManager.default.createDirectory(at: empty, withIntermediateDirectories: true)
            #expect(
                try await w.b2c(["init", "--profile", "dev", "--no-check"] + Self.initFlags(w), extra: base, directory: empty).status == 0)
            var daemon = Self.initFlags(w)
            daemon[daemon.firstIndex(of: "--client-id")! + 1] = daemonID
            daemon[daemon.firstIndex(of: "--scope")! + 1] = "https://contoso.onmicrosoft.com/helloapi/.default"
            #expect(try await w.b2c(["init", "--profile", "ci", "--no-check"] + daemon, extra: base, directory: empty).status == 0)
            let list = try await w.b2c(["profiles", "-o", "json"], extra: base.merging(["B2C_PROFILE": "ci"]) { $1 })
            let profiles = list.json["profiles"]?.arrayValue ?? []
            #expect(profiles.map { $0["name"] } == ["ci", "dev"] && profiles.map { $0["active"] } == [true, false], "\(list.stdout)")
            #expect(profiles.first?["clientId"] == .string(daemonID))

            // --profile per command, B2C_PROFILE per shell; one store holds both without collisions.
            #expect(try await w.b2c(["signin", "--profile", "dev"], as: alice, extra: base, directory: empty).status == 0)
            let app = try await w.b2c(
                ["token", "--app"], extra: base.merging(["B2C_PROFILE": "ci", "B2C_CLIENT_SECRET": daemonSecret]) { $1 },
                directory: empty)
            #expect(app.status == 0, "\(app.stderr)")
            let dev = try await w.b2c(["accounts", "--profile", "dev", "-o", "json"], extra: base, directory: empty)
            #expect(dev.json["people"]?.arrayValue?.count == 1 && dev.json["applications"] == .array([]), "\(dev.stdout)")
            let ci = try await w.b2c(["accounts", "-o", "json"], extra: base.merging(["B2C_PROFILE": "ci"]) { $1 }, directory: empty)
            #expect(ci.json["people"] == .array([]) && ci.json["applications"]?.arrayValue?.count == 1, "\(ci.stdout)")

            // A profile that does not exist lists those that do; --config and --profile together are refused.
            let nope = try await w.b2c(["accounts", "--profile", "prod"], extra: base, directory: empty)
            #expect(nope.status == 3 && nope.stderr.contains("profiles: ci, dev"), "\(nope.stderr)")
            let both = try await w.b2c(["accounts", "--profile", "dev", "--config", w.configPath], extra: base, directory: empty)
            #expect(both.status == 64)
        }
    }
}

/// `b2c jwt decode`, `b2c jwt verify` and `b2c token --decode` (issue 13, item 6).
@Suite struct TokenInspectionTests {
    @Test func decodeShowsClaimsWithDatesAndSaysWhichPartOfABadTokenIsWrong() async throws {
        try await World.with { w in
            #expect(try await w.b2c(["signin"], as: alice).status == 0)
            let token = try await w.b2c(["token"]).stdout
            let table = try await w.b2c(["jwt", "decode", "-o", "table"], stdin: token)
            #expect(table.status == 0 && table.stdout.contains("unverified") && table.stdout.contains("expires in"), "\(table.stdout)")
            #expect(table.stdout.contains("tfp") && table.stdout.contains("UTC"))
            // The key column is as wide as the longest key, plus the two spaces before the values (issue 22, item 13).
            let rows = table.stdout.split(separator: "\n").dropFirst().map(String.init).filter { !$0.hasPrefix(" ") }
            let width = rows.map { $0.components(separatedBy: "  ").first!.count }.max() ?? 0
            #expect(width > 0 && width <= 20, "\(table.stdout)")
            for row in rows {
                let chars = Array(row)
                #expect(chars.count > width + 2 && String(chars[width..<width + 2]) == "  " && chars[width + 2] != " ", "\(row)")
            }
            let json = try await w.b2c(["jwt", "decode", "-o", "json"], stdin: "Authorization: Bearer " + token)
            #expect(json.json["verified"] == false && json.json["claims"]?["tfp"] == "B2C_1_susi" && json.json["header"]?["alg"] == "RS256")
            let decoded = try await w.b2c(["token", "--decode", "-o", "json"])
            #expect(
                decoded.json["claims"]?["scp"] != nil && !decoded.stdout.contains(token.trimmingCharacters(in: .whitespacesAndNewlines)))
            for (bad, part) in [("abc.def", "3 parts"), ("!!!.e30.sig", "header (part 1)"), ("e30.bm90IGpzb24.c2ln", "payload (part 2)")] {
                let r = try await w.b2c(["jwt", "decode"], stdin: bad)
                #expect(r.status == 1 && r.stderr.contains(part), "\(bad): \(r.stderr)")
            }
            #expect(try await w.b2c(["jwt", "decode"], stdin: "\n").status == 64)
        }
    }

    @Test func verifyExplainsEachFailureInB2CTerms() async throws {
        try await World.with { w in
            #expect(try await w.b2c(["signin"], as: alice).status == 0)
            let access = try await w.b2c(["token", "--api", "hello"]).stdout
            let ok = try await w.b2c(["jwt", "verify", "--api", "hello", "-o", "json"], stdin: access)
            #expect(ok.status == 0 && ok.json["valid"] == true, "\(ok.stdout) \(ok.stderr)")

            #expect(ok.json["subject"] == "person" && ok.stderr.contains("(a person's token)"), "\(ok.stdout) \(ok.stderr)")
            #expect(ok.json["checks"]?.arrayValue?.first?["detail"]?.stringValue?.hasPrefix("a person's token") == true)

            // An id token is not an access token for the API.
            let library = try w.libraryClient()
            let idToken = try library.selectedAccount(policy: nil, selector: nil).account.idToken
            await library.shutdown()
            let id = try await w.b2c(["jwt", "verify", "--api", "hello"], stdin: idToken)
            #expect(id.status == 1 && id.stdout.contains("id token"), "\(id.stdout)")

            // A custom policy's token checked against a user flow: the other policy type's key.
            #expect(try await w.b2c(["signin", "--policy", "B2C_1A_signup_signin"], as: alice).status == 0)
            let custom = try await w.b2c(["token", "--policy", "B2C_1A_signup_signin"]).stdout
            #expect(try await w.b2c(["jwt", "verify"], stdin: custom).status == 0, "the policy it names is checked by default")
            let crossed = try await w.b2c(["jwt", "verify", "--policy", "B2C_1_susi"], stdin: custom)
            #expect(
                crossed.status == 1 && crossed.stdout.contains("belongs to B2C_1A_signup_signin") && crossed.stdout.contains("IDX10501"),
                "\(crossed.stdout)")

            // A key in no key set, and an expired token.
            let key = try _RSA.Signing.PrivateKey(keySize: .bits2048)
            var claims = try #require(JWT.payload(of: access.trimmingCharacters(in: .whitespacesAndNewlines)))
            let forged = try JWT.sign(claims: .object(claims), kid: "not-a-b2c-key", key: key)
            let stranger = try await w.b2c(["jwt", "verify"], stdin: forged)
            #expect(stranger.status == 1 && stranger.stdout.contains("in no key set"), "\(stranger.stdout)")
            claims["exp"] = JSONValue(Int(Date().timeIntervalSince1970) - 3600)
            let signer = try w.server.emulator.keys.current(.userFlow)
            let expired = try await w.b2c(
                ["jwt", "verify"], stdin: try JWT.sign(claims: .object(claims), kid: signer.kid, key: signer.key))
            #expect(expired.status == 1 && expired.stdout.contains("expired"), "\(expired.stdout)")
        }
    }

    /// Issue 22, item 11: the app-only token `b2c token --app --api hello` returns holds application permissions (B2C puts
    /// the granted app roles in `scp`), not the API's delegated scopes; verify accepts it and says it checked the app's token.
    @Test func verifyAcceptsTheAppOnlyTokenTheAppGotAndSaysWhoseTokenItIs() async throws {
        try await World.with { w in
            try AppIdentityTests.configure(w, client: daemonID, scopes: ["https://contoso.onmicrosoft.com/helloapi/.default"])
            let token = try await w.b2c(["token", "--app", "--api", "hello"], extra: ["B2C_CLIENT_SECRET": daemonSecret])
            #expect(token.status == 0, "\(token.stderr)")
            let table = try await w.b2c(["jwt", "verify", "--api", "hello", "-o", "table"], stdin: token.stdout)
            #expect(table.status == 0, "\(table.stdout) \(table.stderr)")
            #expect(table.stdout.contains("hello.read.all: application permissions"), "\(table.stdout)")
            #expect(table.stderr.contains("valid for B2C_1_susi (an app-only token)"), "\(table.stderr)")
            let json = try await w.b2c(["jwt", "verify", "--api", "hello", "-o", "json"], stdin: token.stdout)
            #expect(json.json["valid"] == true && json.json["subject"] == "app", "\(json.stdout)")

            // The same rules on the public app's configuration (the API's delegated scopes in apis[]): still the app's token.
            try AppIdentityTests.configure(
                w, client: EmulatorSeed.defaultClientID, scopes: ["https://contoso.onmicrosoft.com/helloapi/demo.read"])
            #expect(try await w.b2c(["jwt", "verify", "--api", "hello"], stdin: token.stdout).status == 0)

            // An app-only token without any permission is refused, and says why.
            var claims = try #require(JWT.payload(of: token.stdout.trimmingCharacters(in: .whitespacesAndNewlines)))
            claims["scp"] = ""
            let signer = try w.server.emulator.keys.current(.userFlow)
            let bare = try await w.b2c(
                ["jwt", "verify", "--api", "hello"], stdin: try JWT.sign(claims: .object(claims), kid: signer.kid, key: signer.key))
            #expect(bare.status == 1 && bare.stdout.contains("has none") && bare.stderr.contains("(an app-only token)"), "\(bare.stdout)")
        }
    }

    /// A custom policy whose issuer names no policy (`AuthenticationContextReferenceClaimPattern` `None`): its id token has
    /// neither `acr` nor `tfp`, and b2c still takes it (the code it redeemed was this policy's), then refreshes it.
    @Test func aCustomPolicyWhoseTokensNameNoPolicySignsInAndRefreshes() async throws {
        try await World.with { w in
            let dir = w.dir.appendingPathComponent("custom-policies")
            try FileManager.default.copyItem(at: packageRoot.appendingPathComponent("Examples/custom-policies"), to: dir)
            let base = dir.appendingPathComponent("TrustFrameworkBase.xml")
            let anchor = "<Item Key=\"SendTokenResponseBodyWithJsonNumbers\">true</Item>"
            let xml = try String(contentsOf: base, encoding: .utf8)
            #expect(xml.contains(anchor), "the example issuer profile changed; update this test")
            try xml.replacingOccurrences(of: anchor, with: anchor + "<Item Key=\"AuthenticationContextReferenceClaimPattern\">None</Item>")
                .write(to: base, atomically: true, encoding: .utf8)
            try w.server.emulator.customPolicies.load(directory: dir)
            let signin = try await w.b2c(["signin", "--policy", "B2C_1A_signup_signin"], as: alice)
            #expect(signin.status == 0 && signin.stdout.contains("under B2C_1A_signup_signin"), "\(signin.stdout) \(signin.stderr)")
            let library = try w.libraryClient()
            let idToken = try library.selectedAccount(policy: "B2C_1A_signup_signin", selector: nil).account.idToken
            await library.shutdown()
            let claims = try JWT.decode(idToken).claims
            #expect(claims["acr"] == nil && claims["tfp"] == nil && claims["sub"]?.stringValue == alice.oid, "\(claims.keys.sorted())")
            let refreshed = try await w.b2c(["token", "--policy", "B2C_1A_signup_signin", "--force-refresh"])
            #expect(refreshed.status == 0, "\(refreshed.stderr)")
        }
    }
}
