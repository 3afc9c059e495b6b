import AsyncHTTPClient
import B2CProtocol
import Foundation
import NIOHTTP1
import Testing

@testable import B2CEmulator

/// Just-in-time password migration (docs/migration.md): an External ID tenant's `OnPasswordSubmit` listener calls the
/// example function (Examples/jit-migration/migrate_password.py, in Python with joserfc), which decrypts the password's
/// JWE and checks it against a legacy B2C tenant by ROPC; each action, each way an answer breaks the contract, and that no
/// person is lost on the way.
@Suite(.serialized) struct JITMigrationTests {
    static let extensionApp = "7d0b4f6c-9e5a-4c1b-8d7f-2a6e0c9b5d3f"
    static let flag = GraphUsersTests.extensionFlag

    /// A legacy B2C tenant (TLS: the function checks passwords there), the function, and the new External ID tenant whose
    /// directory has the legacy people, moved through Graph with temporary passwords and marked for migration.
    static func withMigration(
        certificate override: String? = nil, _ body: (TestTenant, TestTenant, PythonService) async throws -> Void
    ) async throws {
        let legacy = try await TestTenant.start(tls: true)
        let dir = temporaryDirectory()
        let ca = dir.appendingPathComponent("legacy-ca.pem")
        try Data(try #require(legacy.server.tls?.caCertificatePEM).utf8).write(to: ca)
        let function = try await PythonService(
            "jit_function.py",
            [
                "--keys", dir.appendingPathComponent("keys").path, "--legacy", legacy.base + "/contoso.onmicrosoft.com/B2C_1_ROPC_Auth",
                "--legacy-client", clientID, "--legacy-ca", ca.path, "--app-id", extensionApp,
            ])
        var seed = EmulatorSeed.defaultExternalID
        seed.users = []
        var ext = EmulatorSeed.AuthenticationExtension(
            event: .onPasswordSubmit, url: try #require(function.started["url"]?.stringValue), appId: extensionApp, clientIds: [clientID])
        ext.migrationProperty = flag.replacingOccurrences(of: "extension_", with: "extension_")
        ext.encryptionCertificate = override ?? function.started["certificate"]?.stringValue
        // Entra's ceiling is 2000 ms; a CI machine running the whole suite on two cores can take longer than that for the
        // function's first call (its discovery and JWKS fetches, a TLS handshake and a ROPC sign-in at the legacy tenant), and
        // the timeout is not what these tests are about: a seed made in code is not held to the JSON seed's range.
        ext.timeoutMs = 6000
        seed.authenticationExtensions = [ext]
        let new = try await TestTenant.start(seed: seed)
        do {
            // The function trusts this tenant's keys only; it learns its address now that it has one.
            let told = try await new.request(
                .POST, try #require(function.started["url"]?.stringValue) + "_tenant",
                json: ["tenant": .string(new.base + "/contoso.onmicrosoft.com")])
            #expect(told.status == 200)
            let token = try await GraphUsersTests.appToken(new)
            for (email, name) in [(alice.email, "Alice"), (bob.email, "Bob")] {
                let moved = try await GraphUsersTests.graph(
                    new, .POST, "/users", token: token,
                    GraphUsersTests.localUser(email, name, password: "Temporary-\(name)-2026!", extra: [flag: true]))
                #expect(moved.status == 201, "\(moved.body)")
            }
            try await body(legacy, new, function)
        } catch {
            await new.stop()
            await legacy.stop()
            function.stop()
            try? FileManager.default.removeItem(at: dir)
            throw error
        }
        await new.stop()
        await legacy.stop()
        function.stop()
        try? FileManager.default.removeItem(at: dir)
    }

    static func calls(_ t: TestTenant, _ function: PythonService) async throws -> Int {
        try await t.get((function.started["url"]?.stringValue ?? "") + "_calls").json["calls"]?.lenientInt ?? -1
    }

    static func mode(_ t: TestTenant, _ function: PythonService, _ mode: String) async throws {
        #expect(
            try await t.request(.POST, (function.started["url"]?.stringValue ?? "") + "_mode", json: ["mode": .string(mode)]).status == 200)
    }

    /// The browser's sign-in through the new tenant's page (no policy in its URLs).
    static func signIn(_ t: TestTenant, _ email: String, _ password: String) async throws -> TestResponse {
        let b = Browser(t)
        let url = authorizeURL(policy: "_", pkce: PKCE()).replacingOccurrences(
            of: "/contoso.onmicrosoft.com/_/", with: "/contoso.onmicrosoft.com/")
        return try await b.signInOnPage(try await b.get(url), email, password)
    }

    static func marked(_ t: TestTenant, _ email: String) async throws -> JSONValue? {
        let token = try await GraphUsersTests.appToken(t)
        let filter = "identities/any(c:c/issuerAssignedId eq '\(email)' and c/issuer eq 'contoso.onmicrosoft.com')"
        let found = try await GraphUsersTests.graph(
            t, .GET, "/users?" + FormEncoding.encode(["$filter": filter, "$select": "id,\(flag)"]), token: token)
        return found.json["value"]?.arrayValue?.first?[flag]
    }

    @Test func theFirstSignInMovesThePasswordAndTheFunctionIsNeverAskedAgain() async throws {
        try await Self.withMigration { _, new, function in
            // A wrong password: the legacy tenant refuses it too (Retry), the person stays marked.
            // (Counts of calls, not exact numbers: Entra retries a call once when the function is slow, and a loaded machine
            // can make it slow.)
            let retried = try await Self.signIn(new, alice.email, "Not-her-2026-pw!")
            #expect(retried.status == 200 && retried.body.contains("Your password is incorrect."), "\(retried.body.prefix(400))")
            #expect(try await Self.marked(new, alice.email) == true)
            let afterRetry = try await Self.calls(new, function)
            #expect(afterRetry >= 1)
            // Her legacy password: migrated, signed in, the mark cleared.
            let moved = try await Self.signIn(new, alice.email, alice.password)
            #expect(moved.redirectParams["code"] != nil, "\(moved.status) \(moved.body.prefix(400))")
            let afterMigration = try await Self.calls(new, function)
            #expect(afterMigration > afterRetry)
            #expect(try await Self.marked(new, alice.email) == false)
            // From now on the tenant knows the password: the function is not called, the temporary password is gone.
            #expect(try await Self.signIn(new, alice.email, alice.password).redirectParams["code"] != nil)
            #expect(try await Self.signIn(new, alice.email, "Temporary-Alice-2026!").body.contains("Your password is incorrect."))
            #expect(try await Self.calls(new, function) == afterMigration, "never called again")
            // The recorder shows the call, never the password (nor its JWE).
            let journeys = try await new.admin(.GET, "/journeys?user=\(alice.email)").json["journeys"]?.arrayValue ?? []
            var seen = ""
            for j in journeys {
                if let id = j["id"]?.stringValue { seen += try await new.admin(.GET, "/journeys/\(id)").body }
            }
            #expect(seen.contains("onPasswordSubmit") && seen.contains("MigratePassword"), "\(seen.prefix(2000))")
            #expect(!seen.contains(alice.password) && seen.contains("not kept"), "the JWE is not kept")
        }
    }

    @Test func nativeSignInRunsTheSameMigration() async throws {
        try await Self.withMigration { _, new, function in
            let tokens = try await new.nativePasswordTokens(bob.email, bob.password)
            #expect(tokens.status == 200, "\(tokens.body)")
            let calls = try await Self.calls(new, function)
            let marked = try await Self.marked(new, bob.email)
            #expect(calls >= 1 && marked == false)
        }
    }

    @Test func aBlockShowsThePageAndABrokenAnswerLosesNoOne() async throws {
        try await Self.withMigration { _, new, function in
            try await Self.mode(new, function, "block")
            let blocked = try await Self.signIn(new, alice.email, alice.password)
            #expect(
                blocked.body.contains("Your old account is locked.") && blocked.redirectParams["code"] == nil, "\(blocked.body.prefix(600))"
            )
            for (mode, code) in [("wrongNonce", "AADSTS1003003"), ("slow", "AADSTS1003005")] {
                try await Self.mode(new, function, mode)
                let failed = try await Self.signIn(new, alice.email, alice.password)
                #expect(failed.body.contains(code) && failed.redirectParams["code"] == nil, "\(mode): \(failed.body.prefix(600))")
            }
            // A replayed answer (the one before, with its own nonce) is refused the same way.
            try await Self.mode(new, function, "replay")
            let replayed = try await Self.signIn(new, alice.email, alice.password)
            #expect(replayed.body.contains("AADSTS1003003") && replayed.body.contains("nonce"), "\(replayed.body.prefix(600))")
            // Nobody lost: still marked, the temporary password still the tenant's.
            #expect(try await Self.marked(new, alice.email) == true)
            try await Self.mode(new, function, "normal")
            #expect(try await Self.signIn(new, alice.email, alice.password).redirectParams["code"] != nil)
        }
    }

    /// `UpdatePassword` (the legacy password is right but the new tenant wants another): the page says the password must
    /// be changed, nothing is migrated; native authentication answers `password_expired`. Native `Retry` and `Block` give
    /// the wrong-password and blocked answers the browser gives.
    @Test func updatePasswordRetryAndBlockOnBothSignIns() async throws {
        try await Self.withMigration { _, new, function in
            try await Self.mode(new, function, "update")
            let page = try await Self.signIn(new, alice.email, alice.password)
            #expect(page.body.contains("Your password has expired") && page.redirectParams["code"] == nil, "\(page.body.prefix(600))")
            let native = try await new.nativePasswordTokens(alice.email, alice.password)
            #expect(native.status == 400 && native.json["suberror"]?.stringValue == "password_expired", "\(native.body)")
            #expect(try await Self.marked(new, alice.email) == true, "UpdatePassword migrates nothing")
            try await Self.mode(new, function, "normal")
            let retried = try await new.nativePasswordTokens(alice.email, "Not-her-2026-pw!")
            #expect(retried.status == 400 && retried.json["error_codes"]?.arrayValue?.first?.lenientInt == 50126, "\(retried.body)")
            try await Self.mode(new, function, "block")
            let blocked = try await new.nativePasswordTokens(alice.email, alice.password)
            #expect(
                blocked.status == 400 && blocked.json["error"]?.stringValue == "access_denied"
                    && (blocked.json["error_description"]?.stringValue ?? "").contains("Your old account is locked."), "\(blocked.body)")
            #expect(try await Self.marked(new, alice.email) == true, "nobody lost")
        }
    }

    /// The example function accepts a caller's token only from the tenant it was told about. A token from anyone else's
    /// issuer — here one hosting its own discovery document and keys, with the right audience and `azp` — is refused
    /// before anything is decrypted or sent to the legacy tenant (an oracle for passwords otherwise).
    @Test func theFunctionRefusesATokenFromAnotherIssuer() async throws {
        try await Self.withMigration { _, new, function in
            let forger = try await PythonService("forged_issuer.py", ["--audience", Self.extensionApp])
            defer { forger.stop() }
            let forged = try #require(forger.started["token"]?.stringValue)
            let url = try #require(function.started["url"]?.stringValue)
            let event: JSONValue = ["data": ["encryptedPasswordContext": "not.a.real.jwe.value"]]
            let refused = try await new.request(.POST, url, json: event, headers: [("Authorization", "Bearer " + forged)])
            #expect(refused.status == 401, "\(refused.status) \(refused.body)")
            #expect(try await Self.marked(new, alice.email) == true)
        }
    }

    @Test func aPasswordEncryptedToAnotherKeyIsAFunctionsRefusal() async throws {
        let other = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: other) }
        let service = try await PythonService(
            "jit_function.py",
            ["--keys", other.path, "--legacy", "http://127.0.0.1:9", "--legacy-client", clientID, "--app-id", Self.extensionApp])
        let certificate = try #require(service.started["certificate"]?.stringValue)
        service.stop()
        try await Self.withMigration(certificate: certificate) { _, new, function in
            let failed = try await Self.signIn(new, alice.email, alice.password)
            #expect(failed.body.contains("AADSTS1003002") && failed.redirectParams["code"] == nil, "\(failed.body.prefix(600))")
            let calls = try await Self.calls(new, function)
            let marked = try await Self.marked(new, alice.email)
            #expect(calls >= 1 && marked == true)
        }
    }

    @Test func anOnPasswordSubmitExtensionNeedsItsPropertyAndCertificate() throws {
        func refused(_ members: String) -> String {
            let json = """
                {"event": "onPasswordSubmit", "url": "http://127.0.0.1:9/", "appId": "\(Self.extensionApp)"\(members)}
                """
            do {
                _ = try JSONDecoder().decode(EmulatorSeed.AuthenticationExtension.self, from: Data(json.utf8))
                return "read"
            } catch let e as JSONPathError { return "\(e.path) \(e.message)" } catch { return "\(error)" }
        }
        #expect(refused("").contains("migrationProperty is required"))
        #expect(refused(#", "migrationProperty": "extension_x_toBeMigrated""#).contains("encryptionCertificate is required"))
        #expect(
            refused(#", "migrationProperty": "extension_x_toBeMigrated", "encryptionCertificate": "/nonexistent.pem""#)
                .contains("cannot be read"))
        #expect(refused(#", "migrationProperty": "extension_x_a", "encryptionAlgorithm": "RSA1_5""#).contains("RSA-OAEP-256"))
    }

    /// `b2c-emulator example-migration-function DIR` writes Examples/jit-migration/migrate_password.py, byte for byte, and
    /// never replaces a file.
    @Test func theExampleFunctionIsWrittenAsTheExamplesFolderHasIt() async throws {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let wrote = try await runOffThePool(b2cBinary, ["emulator", "example-migration-function", dir.path])
        #expect(wrote.status == 0 && wrote.stdout.contains("migrate_password.py"), "\(wrote.stderr)")
        let example = packageRoot.appendingPathComponent("Examples/jit-migration/migrate_password.py")
        #expect(try Data(contentsOf: dir.appendingPathComponent("migrate_password.py")) == Data(contentsOf: example))
        let again = try await runOffThePool(b2cBinary, ["emulator", "example-migration-function", dir.path])
        #expect(again.status == 1 && again.stderr.contains("already exists"), "\(again.stderr)")
    }
}
