@testable import B2CEmulator
import B2CKit
import Foundation
import Testing

/// `b2c users` (docs/client.md, managing test users): the built b2c as the tenant's `user-admin` app, through the tenant's
/// Microsoft Graph; the people it makes sign in with the passwords they were given.
@Suite struct UsersCommandTests {
    /// A configuration for the app named (the tenant's user-admin, or another), beside the world's own.
    static func config(_ w: World, app name: String) throws -> String {
        let app = try #require(w.server.emulator.app(named: name))
        let path = w.dir.appendingPathComponent("\(name).json").path
        try Data(w.server.emulator.clientConfiguration(baseURL: w.server.baseURL, caFile: w.caPath, app: app).serialized().utf8)
            .write(to: URL(fileURLWithPath: path))
        return path
    }

    static let admin = ["B2C_CLIENT_SECRET": EmulatorSeed.defaultUserAdminSecret]

    @Test func createdUsersSignInWithTheirPasswords() async throws {
        try await World.with { w in
            let config = try Self.config(w, app: "user-admin")
            let created = try await w.b2c(
                [
                    "users", "create", "--email", "erin@contoso.com", "--display-name", "Erin", "--password-stdin", "--attribute",
                    "extension_LoyaltyId=L-7", "--config", config, "-o", "table",
                ], extra: Self.admin, stdin: "Erin-2026-pass!\n")
            #expect(created.status == 0 && created.stdout.contains("Created erin@contoso.com"), "\(created.stderr)")
            // ROPC and the browser, with the password given.
            let ropc = try await w.b2c(
                ["signin", "--policy", "B2C_1_ROPC_Auth", "--username", "erin@contoso.com", "--password-stdin"], stdin: "Erin-2026-pass!\n")
            #expect(ropc.status == 0, "\(ropc.stderr)")
            let browser = try await w.b2c(["signin"], as: (email: "erin@contoso.com", password: "Erin-2026-pass!", oid: "erin"))
            #expect(browser.status == 0, "\(browser.stderr)")
            // The attribute is the tenant's extension_LoyaltyId: in her tokens.
            let claims = try await w.b2c(["token", "--decode", "-o", "json", "--account", "erin@contoso.com"])
            #expect(claims.stdout.contains("\"extension_LoyaltyId\": \"L-7\""), "\(claims.stdout)")

            // A generated password is printed once, and signs in.
            let generated = try await w.b2c(
                ["users", "create", "--username", "sam.w", "--generate-password", "--config", config, "-o", "json"], extra: Self.admin)
            let password = try #require(generated.json["password"]?.stringValue, "\(generated.stdout) \(generated.stderr)")
            let sam = try await w.b2c(
                ["signin", "--policy", "B2C_1_ROPC_Auth", "--username", "sam.w", "--password-stdin"], stdin: password + "\n")
            #expect(sam.status == 0, "\(sam.stderr)")

            // The same sign-in name again: refused, said plainly (exit 1).
            let again = try await w.b2c(
                ["users", "create", "--email", "erin@contoso.com", "--password-stdin", "--config", config], extra: Self.admin,
                stdin: "X-2026-pass!\n")
            #expect(again.status == 1 && again.stderr.contains("exists already"), "\(again.stderr)")
            // A password B2C refuses: Graph's words.
            let weak = try await w.b2c(
                ["users", "create", "--email", "weak@contoso.com", "--password-stdin", "--config", config], extra: Self.admin,
                stdin: "weak\n")
            #expect(weak.status == 1 && weak.stderr.contains("password complexity"), "\(weak.stderr)")

            let list = try await w.b2c(["users", "list", "--filter", "er", "--config", config, "-o", "json"], extra: Self.admin)
            #expect(list.json.arrayValue?.compactMap { $0["displayName"]?.stringValue } == ["Erin"], "\(list.stdout)")
            let update = try await w.b2c(
                ["users", "update", "erin@contoso.com", "--display-name", "Erin E", "--disable-account", "--config", config],
                extra: Self.admin)
            #expect(update.status == 0, "\(update.stderr)")
            let shown = try await w.b2c(["users", "show", "erin@contoso.com", "--config", config, "-o", "json"], extra: Self.admin)
            #expect(shown.json["displayName"] == "Erin E" && shown.json["accountEnabled"] == false, "\(shown.stdout)")
            // Disabled, she gets no token: a refresh of her stored account and a new ROPC sign-in are refused (exit 1,
            // nothing stored), and no new sign-in is suggested.
            let refresh = try await w.b2c(["token", "--account", "erin@contoso.com", "--force-refresh"])
            #expect(refresh.status == 1 && refresh.stderr.contains("is disabled in the tenant (AADSTS50057)"), "\(refresh.stderr)")
            #expect(!refresh.stderr.contains("Run: b2c signin"), "\(refresh.stderr)")
            let listed = try await w.b2c(["accounts", "-o", "json"])
            #expect(listed.stdout.contains("\"refreshRefused\": \"account disabled\""), "\(listed.stdout)")
            let refused = try await w.b2c(
                ["signin", "--policy", "B2C_1_ROPC_Auth", "--username", "erin@contoso.com", "--password-stdin"], stdin: "Erin-2026-pass!\n")
            #expect(refused.status == 1 && refused.stderr.contains("of erin@contoso.com is disabled"), "\(refused.stderr)")
            #expect(
                try await w.b2c(["users", "update", "erin@contoso.com", "--enable-account", "--config", config], extra: Self.admin).status
                    == 0)
            let reset = try await w.b2c(
                ["users", "set-password", "erin@contoso.com", "--password-stdin", "--config", config], extra: Self.admin,
                stdin: "Erin-2027-pass!\n")
            #expect(reset.status == 0, "\(reset.stderr)")
            #expect(
                try await w.b2c(
                    ["signin", "--policy", "B2C_1_ROPC_Auth", "--username", "erin@contoso.com", "--password-stdin"],
                    stdin: "Erin-2027-pass!\n"
                ).status == 0)

            // Deleting needs a yes; without a terminal, --yes.
            let unasked = try await w.b2c(["users", "delete", "erin@contoso.com", "--config", config], extra: Self.admin)
            #expect(unasked.status == 64 && unasked.stderr.contains("--yes"), "\(unasked.stderr)")
            #expect(try await w.b2c(["users", "delete", "erin@contoso.com", "--yes", "--config", config], extra: Self.admin).status == 0)
            let gone = try await w.b2c(["users", "show", "erin@contoso.com", "--config", config], extra: Self.admin)
            #expect(gone.status == 1 && gone.stderr.contains("no user erin@contoso.com"), "\(gone.stderr)")
        }
    }

    @Test func namesAndAttributesAreGivenAtCreationAndChanged() async throws {
        try await World.with { w in
            let config = try Self.config(w, app: "user-admin")
            let created = try await w.b2c(
                [
                    "users", "create", "--email", "gil@contoso.com", "--given-name", "Gil", "--surname", "Grey", "--generate-password",
                    "--config", config, "-o", "json",
                ], extra: Self.admin)
            #expect(created.json["givenName"] == "Gil" && created.json["surname"] == "Grey", "\(created.stdout) \(created.stderr)")
            let update = try await w.b2c(
                [
                    "users", "update", "gil@contoso.com", "--given-name", "Gilbert", "--surname", "Gray", "--attribute", "city=Paris",
                    "--attribute", "extension_LoyaltyId=L-8", "--config", config,
                ], extra: Self.admin)
            #expect(update.status == 0, "\(update.stderr)")
            let shown = try await w.b2c(["users", "show", "gil@contoso.com", "--config", config, "-o", "json"], extra: Self.admin)
            #expect(shown.json["givenName"] == "Gilbert" && shown.json["surname"] == "Gray", "\(shown.stdout)")
            // The attributes, as the tenant holds them (Graph's own answer leaves them out unless selected).
            let people = try await w.admin("GET", "/users")["users"]?.arrayValue ?? []
            let gil = try #require(people.first { $0["email"] == "gil@contoso.com" }, "\(people)")
            #expect(gil["attributes"]?["city"] == "Paris" && gil["attributes"]?["extension_LoyaltyId"] == "L-8", "\(gil)")
        }
    }

    /// Graph's page of `--page-size` and its `@odata.nextLink`: every page is read, and `--limit` stops across them.
    @Test func aListReadsEveryPage() async throws {
        try await World.with { w in
            let config = try Self.config(w, app: "user-admin")
            let csv = w.dir.appendingPathComponent("three.csv")
            try Data("email,displayName\np1@contoso.com,P One\np2@contoso.com,P Two\np3@contoso.com,P Three\n".utf8).write(to: csv)
            let imported = try await w.b2c(["users", "import", csv.path, "--generate-passwords", "--config", config], extra: Self.admin)
            #expect(imported.status == 0, "\(imported.stderr)")
            func ids(_ extra: [String]) async throws -> [String] {
                let r = try await w.b2c(["users", "list", "--config", config, "-o", "json"] + extra, extra: Self.admin)
                #expect(r.status == 0, "\(r.stderr)")
                return r.json.arrayValue?.compactMap { $0["id"]?.stringValue } ?? []
            }
            let onePage = try await ids([])
            #expect(onePage.count == 5, "the seed's two and the three imported: \(onePage)")
            #expect(try await ids(["--page-size", "2"]) == onePage, "three pages of two")
            #expect(try await ids(["--page-size", "2", "--limit", "3"]) == Array(onePage.prefix(3)))
        }
    }

    @Test func anImportReportsEachRowAndResumes() async throws {
        try await World.with { w in
            let config = try Self.config(w, app: "user-admin")
            let csv = w.dir.appendingPathComponent("testers.csv")
            try Data(
                ("email,displayName,password,city\nt1@contoso.com,Tester One,T1-2026-pass!,Lyon\n"
                    + "t2@contoso.com,\"Two, Tester\",,Paris\n,Nobody,X,\n")
                    .utf8
            )
            .write(to: csv)
            let first = try await w.b2c(["users", "import", csv.path, "--config", config, "-o", "json"], extra: Self.admin)
            #expect(first.status == 1 && first.stderr.contains("1 created, 0 already there, 2 failed"), "\(first.stderr)")
            #expect(first.json.arrayValue?.map { $0["outcome"] } == ["created", "failed", "failed"], "\(first.stdout)")
            let second = try await w.b2c(
                ["users", "import", csv.path, "--config", config, "--generate-passwords", "-o", "json"], extra: Self.admin)
            let outcomes = second.json.arrayValue ?? []
            #expect(outcomes.map { $0["outcome"] } == ["exists", "created", "failed"], "\(second.stdout)")
            let password = try #require(outcomes[1]["password"]?.stringValue)
            #expect(
                try await w.b2c(
                    ["signin", "--policy", "B2C_1_ROPC_Auth", "--username", "t2@contoso.com", "--password-stdin"], stdin: password + "\n"
                ).status == 0)
            let json = w.dir.appendingPathComponent("testers.json")
            try Data(#"[{"username": "u.three", "displayName": "Three", "password": "U3-2026-pass!"}]"#.utf8).write(to: json)
            #expect(try await w.b2c(["users", "import", json.path, "--config", config], extra: Self.admin).status == 0)
        }
    }

    @Test func aMissingPermissionAndAThrottleAreSaidPlainly() async throws {
        try await World.with { w in
            let daemon = try Self.config(w, app: "daemon")
            let refused = try await w.b2c(["users", "list", "--config", daemon], extra: ["B2C_CLIENT_SECRET": daemonSecret])
            #expect(refused.status == 3 && refused.stderr.contains("User.ReadWrite.All"), "\(refused.stderr)")
            let config = try Self.config(w, app: "user-admin")
            _ = try await w.admin("POST", "/faults", ["endpoint": "graph", "kind": "status429", "count": 1])
            let throttled = try await w.b2c(["users", "list", "--config", config, "-o", "json"], extra: Self.admin)
            #expect(
                throttled.status == 0 && (throttled.json.arrayValue?.count ?? 0) >= 2, "the throttle is waited out: \(throttled.stderr)")
        }
    }

    /// Graph answering 429 to every try: after three waits of its `Retry-After`, b2c stops with Graph's words and exit 5.
    @Test func aThrottleThatDoesNotEndIsSaidPlainly() async throws {
        try await World.with { w in
            let config = try Self.config(w, app: "user-admin")
            _ = try await w.admin("POST", "/faults", ["endpoint": "graph", "kind": "status429", "count": 100])
            let p = try LiveProcess(
                b2cBinary, ["users", "list", "--config", config, "-o", "json"], environment: w.environment(as: nil, extra: Self.admin))
            defer { p.signal(SIGKILL) }
            try await w.eventually("b2c gives up", seconds: 30) { !p.isRunning }
            let throttled = await p.finish()
            #expect(throttled.status == 5 && throttled.stdout.isEmpty, "\(throttled.stdout) \(throttled.stderr)")
            #expect(
                throttled.stderr.hasPrefix("b2c: ") && throttled.stderr.contains("429 TooManyRequests")
                    && throttled.stderr.contains("still throttled after three waits") && throttled.stderr.split(separator: "\n").count == 1,
                "\(throttled.stderr)")
            let left = try await w.admin("GET", "/faults")["faults"]?.arrayValue?.first?["remaining"]
            #expect(left == 96, "the first try and three more: \(left ?? .null)")
        }
    }

    /// An administrator's `--force-change-password`: native authentication refuses the password it was given
    /// (`password_expired`, exit 4) until the person chooses a new one in the browser.
    @Test func aPasswordChangeAskedAtCreationIsAskedAtTheNextSignIn() async throws {
        try await World.with(seed: .defaultExternalID) { w in
            let config = try Self.config(w, app: "user-admin")
            let created = try await w.b2c(
                ["users", "create", "--email", "fay@contoso.com", "--password-stdin", "--force-change-password", "--config", config],
                extra: Self.admin, stdin: "Fay-2026-pass!\n")
            #expect(created.status == 0, "\(created.stderr)")
            let native = try await w.b2c(
                ["signin", "--native", "--username", "fay@contoso.com", "--password-stdin"], stdin: "Fay-2026-pass!\n")
            #expect(native.status == 4 && native.stderr.contains("must be changed before it signs in"), "\(native.stderr)")
            let browser = try await w.b2c(
                ["signin"], as: (email: "fay@contoso.com", password: "Fay-2026-pass!", oid: "fay"),
                extra: ["B2C_AGENT_NEW_PASSWORD": "Fay-2027-pass!"])
            #expect(browser.status == 0, "\(browser.stderr)")
            let again = try await w.b2c(
                ["signin", "--native", "--username", "fay@contoso.com", "--password-stdin"], stdin: "Fay-2027-pass!\n")
            #expect(again.status == 0, "the new password: \(again.stderr)")
        }
    }

    /// At a terminal, `users delete` asks: "n" keeps the person (exit 2), "y" deletes them.
    @Test(arguments: [("n", Int32(2)), ("y", Int32(0))])
    func deletingAtATerminalAsks(answer: String, status: Int32) async throws {
        try await World.with { w in
            let config = try Self.config(w, app: "user-admin")
            let p = try LiveProcess(
                b2cBinary, ["users", "delete", bob.email, "--config", config], environment: w.environment(as: nil, extra: Self.admin),
                terminal: true)
            defer { p.signal(SIGKILL) }
            try await p.waitFor("b2c: delete Bob Example (\(bob.email), \(bob.oid))? [y/N] ")
            p.write(answer)
            try await w.eventually("b2c ends") { !p.isRunning }
            let r = await p.finish()
            #expect(r.status == status, "\(r.stdout) \(r.stderr)")
            let shown = try await w.b2c(["users", "show", bob.email, "--config", config], extra: Self.admin)
            #expect(shown.status == (answer == "y" ? 1 : 0), "\(shown.stdout) \(shown.stderr)")
        }
    }

    @Test func anExternalIDUserSignsInNatively() async throws {
        try await World.with(seed: .defaultExternalID) { w in
            let config = try Self.config(w, app: "user-admin")
            let created = try await w.b2c(
                ["users", "create", "--email", "nia@contoso.com", "--display-name", "Nia", "--password-stdin", "--config", config],
                extra: Self.admin, stdin: "Nia-2026-pass!\n")
            #expect(created.status == 0, "\(created.stderr)")
            let native = try await w.b2c(
                ["signin", "--native", "--username", "nia@contoso.com", "--password-stdin"], stdin: "Nia-2026-pass!\n")
            #expect(native.status == 0, "\(native.stderr)")
            let named = try await w.b2c(
                ["users", "create", "--username", "nia2", "--generate-password", "--config", config], extra: Self.admin)
            #expect(named.status == 64 && named.stderr.contains("email address"), "\(named.stderr)")
        }
    }

    /// The people `b2c users create` and `import` made, read back by Microsoft's Graph SDK for Python with their attributes.
    @Test func microsoftsGraphSDKSeesThePeopleB2CMade() async throws {
        try await World.with { w in
            let config = try Self.config(w, app: "user-admin")
            let created = try await w.b2c(
                [
                    "users", "create", "--email", "gwen@contoso.com", "--display-name", "Gwen", "--attribute", "city=Lyon", "--attribute",
                    "extension_LoyaltyId=L-9", "--generate-password", "--config", config,
                ], extra: Self.admin)
            #expect(created.status == 0, "\(created.stderr)")
            let csv = w.dir.appendingPathComponent("more.csv")
            try Data("email,displayName,password,city,extension_LoyaltyId\nhal@contoso.com,Hal,Hal-2026-pass!,Nice,L-10\n".utf8).write(
                to: csv)
            #expect(try await w.b2c(["users", "import", csv.path, "--config", config], extra: Self.admin).status == 0)
            let extensions = EmulatorSeed.default.tenant.extensionsAppIdOrDefault
            for (email, name, city, loyalty) in [("gwen@contoso.com", "Gwen", "Lyon", "L-9"), ("hal@contoso.com", "Hal", "Nice", "L-10")] {
                let r = try await run(
                    packageRoot.appendingPathComponent("Tests/interop/run.sh"),
                    ["graph_users_interop.py", w.server.baseURL, w.caPath, extensions, "--read", email],
                    environment: ProcessInfo.processInfo.environment)
                #expect(r.status == 0, "\(r.stdout) \(r.stderr.suffix(2000))")
                let seen = try JSONValue.parse(Data((r.stdout.split(separator: "\n").last.map(String.init) ?? "{}").utf8))
                #expect(
                    seen["displayName"]?.stringValue == name && seen["city"]?.stringValue == city
                        && seen["loyaltyId"]?.stringValue == loyalty
                        && seen["signIn"]?.stringValue == email, "\(seen)")
            }
        }
    }
}
