@testable import B2CEmulator
import B2CKit
import Foundation
import Testing

/// The CI snippet of docs/ci.md, run verbatim: its `env:` (the secret from the CI's store is the daemon's development secret
/// here) and each `run:` line, in bash, with the built b2c on PATH, against the emulator (issue 13, item 8).
@Suite struct ReadmeCITests {
    /// The snippet is the job of a repository whose `ci/policies.json` names its tenant: here the test's local tenant plays
    /// that tenant, and the repository's secret store gives the daemon's secret. The job runs as a runner would, in a clean
    /// environment (no keyring, no B2C_STORE_KEY: the first-run failure of issue 22, item 1).
    @Test func theCISnippetRunsAsWritten() async throws {
        try await World.with { w in
            let readme = try String(contentsOf: packageRoot.appendingPathComponent("docs/ci.md"), encoding: .utf8)
            guard readme.contains("<!-- ci-snippet: start -->") else {
                throw SnapshotError(message: "docs/ci.md has no ci-snippet markers")
            }
            let job = try #require(try DocsTests.blocks(of: "docs/ci.md").first { $0.inSnippet && $0.language == "yaml" })
            let root = w.dir.appendingPathComponent("runner")
            let checkout = root.appendingPathComponent("repo"), home = root.appendingPathComponent("home")
            try FileManager.default.createDirectory(at: checkout.appendingPathComponent("ci"), withIntermediateDirectories: true)
            try FileManager.default.createDirectory(at: home, withIntermediateDirectories: true)
            // The daemon's configuration, committed, as `b2c-emulator serve --config-out ci/policies.json --client daemon` writes it.
            let daemon = try #require(w.server.emulator.app(named: "daemon"))
            let config = w.server.emulator.clientConfiguration(baseURL: w.server.baseURL, caFile: w.caPath, app: daemon)
            try Data(config.serialized(pretty: true).utf8).write(to: checkout.appendingPathComponent("ci/policies.json"))

            let r = try await DocsTests.runJob(job, checkout: checkout, home: home, secrets: ["B2C_DAEMON_SECRET": daemonSecret])
            #expect(r.ok, "\(r.report)")
            #expect(!r.report.contains(daemonSecret), "the secret was printed")
            #expect(r.report.contains("hello.read.all") && r.report.contains("as the app \(daemonID)"), "\(r.report)")
            // No key on the runner: the token is not cached, said once per command.
            #expect(r.report.components(separatedBy: "the app token was not cached").count - 1 == 2, "\(r.report)")

            // Without the secret the first step fails with the reason (the job would stop there).
            let missing = try await DocsTests.runJob(job, checkout: checkout, home: home, secrets: ["B2C_DAEMON_SECRET": ""])
            #expect(
                !missing.ok && missing.report.contains("B2C_CLIENT_SECRET") && missing.report.contains("(step 1 exited 3)"),
                "\(missing.report)")
        }
    }
}
