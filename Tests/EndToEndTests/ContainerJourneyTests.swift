import B2CKit
import Foundation
import Testing

/// What the host needs of a tenant run as the container image (issue 37, items 1 and 2): the scripted browser reads the
/// outbox with the admin token (and says so when it has none), and `--ca-out` gives the host the CA of `--tls` where the
/// configuration `--config-out` writes can name it. The image's own command line and environment run the built tenant;
/// scripts/test-image.sh does the same through podman.
@Suite struct ContainerJourneyTests {
    /// b2c on the host with the configuration the tenant wrote in `out/`, and `browser` as $BROWSER.
    static func signIn(_ directory: URL, policy: String, browser: String, extra: [String: String] = [:]) async throws -> Run {
        let home = directory.appendingPathComponent("home")
        try FileManager.default.createDirectory(at: home, withIntermediateDirectories: true)
        let env = [
            "HOME": home.path, "PATH": "\(buildDir.path):/usr/bin:/bin",
            "B2C_STORE_KEY": Data(repeating: 7, count: 32).base64EncodedString(),
            "B2C_CONFIG": directory.appendingPathComponent("out/policies.json").path, "BROWSER": browser,
        ].merging(extra) { $1 }
        return try await run(b2cBinary, ["signin", "--policy", policy, "--timeout", "30"], environment: env, directory: directory)
    }

    /// An emailed code after the password (B2C_1_susi_mfa): without the token the browser says the admin surface refused it
    /// and which option gives the token; with `--admin-token-file`, or the variable serve itself reads, the sign-in ends.
    @Test func theScriptedBrowserReadsTheOutboxWithTheAdminToken() async throws {
        try await ContainerImageTests.withImageTenant(["--admin-token-file", "out/admin-token", "--config-out", "out/policies.json"]) {
            p, _ in
            let directory = try #require(p.process.currentDirectoryURL)
            let browser = "'\(emulatorBinary.path)' browser --as alice@contoso.com"
            let refused = try await Self.signIn(directory, policy: "B2C_1_susi_mfa", browser: browser)
            #expect(refused.status != 0, "\(refused.stderr)")
            #expect(
                refused.stderr.contains("admin surface refused /_admin/outbox (HTTP 403)")
                    && refused.stderr.contains("--admin-token-file FILE or B2C_EMULATOR_ADMIN_TOKEN_FILE")
                    && !refused.stderr.contains("no code in the outbox"), "\(refused.stderr)")
            let token = directory.appendingPathComponent("out/admin-token").path
            let option = try await Self.signIn(directory, policy: "B2C_1_susi_mfa", browser: "\(browser) --admin-token-file '\(token)'")
            #expect(option.status == 0, "\(option.stderr)")
            let variable = try await Self.signIn(
                directory, policy: "B2C_1_susi_mfa", browser: "\(browser) --jar jar.json", extra: ["B2C_EMULATOR_ADMIN_TOKEN_FILE": token])
            #expect(variable.status == 0, "\(variable.stderr)")
        }
    }

    /// `--tls --ca-out out/ca.pem --config-out out/policies.json`: the CA readable by all, and the configuration naming it
    /// relative to its own directory, so a host that mounts `out/` anywhere signs in over https.
    @Test func caOutGivesTheHostTheCAByAPathTheConfigurationResolves() async throws {
        try await ContainerImageTests.withImageTenant([
            "--tls", "--ca-out", "out/ca.pem", "--config-out", "out/policies.json", "--admin-token-file", "out/admin-token",
        ]) { p, _ in
            let directory = try #require(p.process.currentDirectoryURL)
            let ca = directory.appendingPathComponent("out/ca.pem").path
            let mode = try #require(try FileManager.default.attributesOfItem(atPath: ca)[.posixPermissions] as? Int)
            #expect(mode == 0o644)
            let pem = try String(contentsOfFile: ca, encoding: .utf8)
            #expect(pem.hasPrefix("-----BEGIN CERTIFICATE-----") && pem.hasSuffix("-----END CERTIFICATE-----\n"), "\(pem)")
            let config = try JSONValue.parse(try Data(contentsOf: directory.appendingPathComponent("out/policies.json")))
            #expect(config["caFile"]?.stringValue == "ca.pem", "\(config)")
            let browser = "'\(emulatorBinary.path)' browser --as alice@contoso.com --ca '\(ca)'"
            let r = try await Self.signIn(directory, policy: "B2C_1_susi", browser: browser)
            #expect(r.status == 0, "\(r.stderr)")
        }
        let root = FileManager.default.temporaryDirectory
        let r = try await run(emulatorBinary, ["serve", "--ca-out", "ca.pem"], environment: ["HOME": root.path], directory: root)
        #expect(r.status == 64 && r.stderr.contains("--ca-out writes the CA of --tls; add --tls."), "\(r.status) \(r.stderr)")
    }
}
