@testable import B2CEmulator
import B2CKit
import Foundation
import Testing

let daemonID = EmulatorSeed.defaultDaemonID, daemonSecret = EmulatorSeed.defaultDaemonSecret
let webAppID = EmulatorSeed.defaultWebAppID, webAppSecret = EmulatorSeed.defaultWebAppSecret

/// b2c as the app itself (client credentials) and as a confidential web app, through the built binary (issue 13, items 1–2).
@Suite struct AppIdentityTests {
    /// This world's configuration rewritten for another app of the default tenant, e.g. the daemon.
    static func configure(_ w: World, client: String, confidential: Bool = false, scopes: [String]? = nil) throws {
        try w.editConfig { o in
            o["clientId"] = .string(client)
            o["nativeAuth"] = nil
            if confidential { o["confidential"] = true }
            if let scopes, var api = o["apis"]?.arrayValue?.first?.objectValue {
                api["scopes"] = JSONValue(scopes)
                o["apis"] = [.object(api)]
            }
        }
    }

    @Test func theAppGetsItsOwnTokenOnceCachesItAndCallsTheAPIAsItself() async throws {
        try await World.with { w in
            try Self.configure(w, client: daemonID, scopes: ["https://contoso.onmicrosoft.com/helloapi/.default"])
            let env = ["B2C_CLIENT_SECRET": daemonSecret]
            // 16 processes at once: one client-credentials request, the others wait for it and serve the cached token.
            let runs = try await withThrowingTaskGroup(of: Run.self) { group in
                for _ in 0..<16 { group.addTask { try await w.b2c(["token", "--app", "--api", "hello"], extra: env) } }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(runs.allSatisfy { $0.status == 0 }, "\(runs.map(\.stderr))")
            #expect(Set(runs.map(\.stdout)).count == 1, "every process printed the same token")
            #expect(try await w.tokenLog().filter { $0["grantType"] == "client_credentials" }.count == 1)
            let claims = try #require(JWT.payload(of: runs[0].stdout.trimmingCharacters(in: .whitespacesAndNewlines)))
            #expect(claims["azp"] == .string(daemonID) && claims["scp"] == "hello.read.all" && claims["aud"] != .string(daemonID))

            let json = try await w.b2c(["token", "--app", "-o", "json"], extra: env)
            #expect(json.json["fromCache"] == true && json.json["resource"] == "https://contoso.onmicrosoft.com/helloapi/.default")
            // A cache hit needs no secret.
            #expect(try await w.b2c(["token", "--app"]).status == 0)

            let call = try await w.b2c(["call-api", "--app", "--api", "hello"], extra: env)
            #expect(call.status == 0 && call.json["application"] == .string(daemonID), "\(call.stdout) \(call.stderr)")
            #expect(call.stderr.contains("as the app \(daemonID)"))

            // Listed as an application, not a person; --all and --app forget it.
            let accounts = try await w.b2c(["accounts", "-o", "json"])
            #expect(accounts.json["people"] == .array([]))
            #expect(accounts.json["applications"]?.arrayValue?.first?["clientId"] == .string(daemonID), "\(accounts.stdout)")
            #expect(try await w.b2c(["accounts", "-o", "table"]).stdout.contains("helloapi/.default"))
            let forgot = try await w.b2c(["signout", "--app"])
            #expect(forgot.status == 0 && forgot.stdout.contains("Forgot 1 app token"))
            #expect(try await w.b2c(["accounts", "-o", "json"]).json["applications"] == .array([]))
        }
    }

    @Test func secretsComeFromStdinTheEnvironmentOrAPrivateFileNeverAnArgument() async throws {
        try await World.with { w in
            try Self.configure(w, client: daemonID, scopes: ["https://contoso.onmicrosoft.com/helloapi/.default"])
            _ = try await w.b2c(["accounts"])  // the store exists; what follows must not change it
            let before = try w.storeSnapshot()
            // On the command line: refused before anything is sent.
            let argument = try await w.b2c(["token", "--app", "--client-secret", daemonSecret])
            #expect(argument.status == 64 && argument.stderr.contains("never takes a secret as an argument"), "\(argument.stderr)")
            #expect(!argument.stderr.contains(daemonSecret) && !argument.stdout.contains(daemonSecret))
            // None at all, empty, a file others can read.
            let none = try await w.b2c(["token", "--app"])
            #expect(
                none.status == 3 && none.stderr.contains("B2C_CLIENT_SECRET") && none.stderr.contains("pipe it to --client-secret-stdin"),
                "\(none.stderr)")
            let empty = try await w.b2c(["token", "--app"], extra: ["B2C_CLIENT_SECRET": ""])
            #expect(empty.status == 3 && empty.stderr.contains("is empty"), "\(empty.stderr)")
            let file = w.dir.appendingPathComponent("daemon.secret")
            try Data((daemonSecret + "\n").utf8).write(to: file)
            try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: file.path)
            try w.editConfig { $0["clientSecretFile"] = .string(file.path) }
            let open = try await w.b2c(["token", "--app"])
            #expect(open.status == 3 && open.stderr.contains("mode 0644") && open.stderr.contains("chmod 600"), "\(open.stderr)")
            #expect(try w.storeSnapshot() == before, "refused requests store nothing")
            #expect(try await w.tokenLog().filter { $0["grantType"] == "client_credentials" }.isEmpty, "nothing reached the tenant")
            // The file once private; standard input; each works.
            try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: file.path)
            #expect(try await w.b2c(["token", "--app"]).status == 0)
            try w.editConfig { $0["clientSecretFile"] = nil }
            let stdin = try await w.b2c(["token", "--app", "--force-refresh", "--client-secret-stdin"], stdin: daemonSecret + "\n")
            #expect(stdin.status == 0, "\(stdin.stderr)")
        }
    }

    @Test func theTenantsRefusalsSayWhatToChange() async throws {
        try await World.with { w in
            try Self.configure(w, client: daemonID, scopes: ["https://contoso.onmicrosoft.com/helloapi/.default"])
            _ = try await w.b2c(["accounts"])  // the store exists; what follows must not change it
            let before = try w.storeSnapshot()
            let wrong = try await w.b2c(["token", "--app"], extra: ["B2C_CLIENT_SECRET": "not-the-secret"])
            #expect(
                wrong.status == 3 && wrong.stderr.contains("AADB2C90081") && wrong.stderr.contains("B2C_CLIENT_SECRET"), "\(wrong.stderr)")
            #expect(!wrong.stderr.contains("not-the-secret"))
            let scope = try await w.b2c(
                ["token", "--app", "--scope", "https://contoso.onmicrosoft.com/helloapi/demo.read"],
                extra: ["B2C_CLIENT_SECRET": daemonSecret])
            #expect(scope.status == 64 && scope.stderr.contains("/.default"), "\(scope.stderr)")
            #expect(try w.storeSnapshot() == before)
            // The web app holds no app role of the API.
            try Self.configure(w, client: webAppID, scopes: ["https://contoso.onmicrosoft.com/helloapi/demo.read"])
            let role = try await w.b2c(["token", "--app"], extra: ["B2C_CLIENT_SECRET": webAppSecret])
            #expect(
                role.status == 3 && role.stderr.contains("AADB2C90205") && role.stderr.contains("Grant admin consent"), "\(role.stderr)")
            // A public client cannot use client credentials.
            try Self.configure(w, client: EmulatorSeed.defaultClientID)
            let publicClient = try await w.b2c(["token", "--app"], extra: ["B2C_CLIENT_SECRET": "x"])
            #expect(publicClient.status == 3 && publicClient.stderr.contains("AADB2C90084"), "\(publicClient.stderr)")
            #expect(try w.storeSnapshot() == before)
        }
    }

    /// A web-type registration with an http://localhost redirect, end to end: the code and the refresh carry its secret
    /// (Basic here, post by default); without `confidential` the tenant's AADB2C90079 says what to set.
    @Test func aConfidentialWebAppSignsInAndRefreshesWithItsSecret() async throws {
        try await World.with { w in
            try Self.configure(w, client: webAppID, scopes: ["https://contoso.onmicrosoft.com/helloapi/demo.read"])
            let plain = try await w.b2c(["signin"], as: alice)
            #expect(
                plain.status == 3 && plain.stderr.contains("AADB2C90079") && plain.stderr.contains("\"confidential\": true"),
                "\(plain.stderr)")
            try w.editConfig {
                $0["confidential"] = true; $0["clientAuthMethod"] = "client_secret_basic"
            }
            let secret = ["B2C_CLIENT_SECRET": webAppSecret]
            let signin = try await w.b2c(["signin", "--prompt", "login"], as: alice, extra: secret)
            #expect(signin.status == 0, "\(signin.stderr)")
            #expect(try await w.b2c(["token", "--force-refresh"]).status == 3, "a refresh needs the secret too")
            let refreshed = try await w.b2c(["token", "--force-refresh"], extra: secret)
            #expect(refreshed.status == 0, "\(refreshed.stderr)")
            let call = try await w.b2c(["call-api", "--api", "hello"], extra: secret)
            #expect(call.status == 0 && call.json["name"] == "Alice Example", "\(call.stderr)")
        }
    }
}
