import AsyncHTTPClient
import B2CEmulator
import B2CProtocol
import Foundation
import NIOCore
import Testing

/// The served tenant (`b2c-emulator serve`, whose event loops run the requests' tasks) makes the signatures that wait on
/// one loop at the same moment together (RS256Signer; four at a time through AVX-512 IFMA, two through AVX2, where the
/// processor has them and a pass pays). Grants sent many at once, as a load test sends them: every token verifies against
/// the published keys, and the tenant's counts say each signature went through the loops' batches, some of them together,
/// wherever batches pay.
@Suite struct SigningBatchTests {
    /// The signatures a pass of the lanes the tenant picks makes here (4 with IFMA, 2 with AVX2), nil without lanes.
    static func perPass(_ lanes: RS256Signer.Lanes) -> Int? {
        let text = (try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8)) ?? ""
        let flags = Set(text.split(separator: "\n").first { $0.hasPrefix("flags") }?.split(separator: " ").map(String.init) ?? [])
        switch lanes {
        case .fastest: return flags.contains("avx512ifma") ? 4 : flags.contains("avx2") ? 2 : nil
        case .avx512ifma: return flags.contains("avx512ifma") ? 4 : nil
        case .avx2: return flags.contains("avx2") ? 2 : nil
        }
    }

    /// `b2c-emulator serve --in-memory` on a free port, in a home of its own, for the length of `body`; stopped (exit 0)
    /// however `body` ends. `body` gets the tenant's base URL and an HTTP client.
    static func withServedTenant(
        _ extra: [String: String] = [:], _ body: (String, HTTPClient) async throws -> Void
    ) async throws {
        let home = FileManager.default.temporaryDirectory.appendingPathComponent("b2c-batches-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: home, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: home) }
        let environment = ["HOME": home.path, "PATH": "/usr/bin:/bin"].merging(extra) { $1 }
        let tenant = try LiveProcess(emulatorBinary, ["serve", "--port", "0", "--in-memory"], environment: environment)
        let http = HTTPClient(eventLoopGroupProvider: .singleton)
        do {
            try await tenant.waitForOutput("b2c emulator: http://")
            try await body(String(try #require(tenant.stdout.split(separator: " ").first { $0.hasPrefix("http://") })), http)
            try await http.shutdown()
        } catch {
            try? await http.shutdown()
            tenant.signal(SIGKILL)
            throw error
        }
        tenant.signal(SIGTERM)
        #expect(await tenant.finish().status == 0)
    }

    /// In the lanes the tenant picks (the fastest here) and in AVX2's, which a processor without IFMA gets: with libcrypto's
    /// IFMA masked as well (`OPENSSL_ia32cap`), as on such a processor, where AVX2's pass is timed against libcrypto's
    /// signatures without IFMA (against them with IFMA it does not pay, and no batch would be made).
    @Test(arguments: [RS256Signer.Lanes.fastest, .avx2])
    func grantsSentAtOnceAreSignedTogetherAndEachTokenVerifies(_ lanes: RS256Signer.Lanes) async throws {
        let environment = ["B2C_EMULATOR_RSA_LANES": lanes.rawValue].merging(lanes == .avx2 ? ["OPENSSL_ia32cap": ":~0x200000"] : [:]) {
            $1
        }
        try await Self.withServedTenant(environment) { base, http in
            try await Self.sendAndVerify(http, base: base, lanes: lanes)
        }
    }

    static func sendAndVerify(_ http: HTTPClient, base: String, lanes: RS256Signer.Lanes) async throws {
        // A start probes nothing: the lanes are probed when two signatures first wait together.
        let before = try await http.execute(HTTPClientRequest(url: "\(base)/_admin/stats"), timeout: .seconds(30))
        let unprobed = try JSONValue.parse(Data(buffer: try await before.body.collect(upTo: 1 << 20)))["signing"]
        #expect(unprobed?["passCost"] == .null && unprobed?["batches"]?.boolValue == false, "\(String(describing: unprobed))")
        let tenantName = "contoso.onmicrosoft.com"
        let clientCredentials = FormEncoding.encode([
            ("grant_type", "client_credentials"), ("client_id", "7c2f1d3b-8e5a-4f4c-8b9d-3a6e2f1c8d0b"),
            ("client_secret", "Daemon-dev-secret-2026"), ("scope", "https://contoso.onmicrosoft.com/helloapi/.default"),
        ])
        let client = EmulatorSeed.defaultClientID
        let password = FormEncoding.encode([
            ("grant_type", "password"), ("client_id", client), ("username", "alice@contoso.com"),
            ("password", "Alice-dev-2026!"), ("scope", "openid \(client)"),
        ])
        // 48 client-credentials grants (one signature each) and 24 password grants (an access token, then the id token
        // that carries its hash), 24 at a time.
        let grants =
            Array(repeating: ("b2c_1_susi", clientCredentials), count: 48) + Array(repeating: ("b2c_1_ropc_auth", password), count: 24)
        var answers: [(policy: String, body: JSONValue)] = []
        for wave in stride(from: 0, to: grants.count, by: 24) {
            let part = grants[wave..<min(wave + 24, grants.count)]
            answers += try await withThrowingTaskGroup(of: (String, JSONValue).self) { group in
                for (policy, form) in part {
                    group.addTask {
                        var request = HTTPClientRequest(url: "\(base)/\(tenantName)/\(policy)/oauth2/v2.0/token")
                        request.method = .POST
                        request.headers.add(name: "Content-Type", value: "application/x-www-form-urlencoded")
                        request.body = .bytes(ByteBuffer(string: form))
                        let response = try await http.execute(request, timeout: .seconds(60))
                        let body = try await response.body.collect(upTo: 1 << 20)
                        #expect(response.status == .ok, "\(String(buffer: body))")
                        return (policy, try JSONValue.parse(Data(buffer: body)))
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
        }
        var keys: [String: JWKSet] = [:]
        for policy in ["b2c_1_susi", "b2c_1_ropc_auth"] {
            let response = try await http.execute(
                HTTPClientRequest(url: "\(base)/\(tenantName)/\(policy)/discovery/v2.0/keys"), timeout: .seconds(30))
            keys[policy] = try JWKSet.parse(Data(buffer: try await response.body.collect(upTo: 1 << 20)))
        }
        var signatures = 0
        for answer in answers {
            let names = answer.policy == "b2c_1_susi" ? ["access_token"] : ["access_token", "id_token"]
            for name in names {
                let token = try #require(answer.body[name]?.stringValue, "\(answer.policy) \(name)")
                try JWT.decode(token).verifySignature(with: try #require(keys[answer.policy]))
                signatures += 1
            }
        }
        #expect(signatures == 96)

        let statsResponse = try await http.execute(HTTPClientRequest(url: "\(base)/_admin/stats"), timeout: .seconds(30))
        let stats = try JSONValue.parse(Data(buffer: try await statsResponse.body.collect(upTo: 1 << 20)))
        let signing = try #require(stats["signing"], "\(stats)")
        // With lanes the tenant timed a pass against signatures made alone, and batches exactly when a full pass is the
        // cheaper; each pass then held at least the smallest batch that pays.
        let cost = signing["passCost"]?.doubleValue, smallest = signing["smallestBatch"]?.lenientInt ?? -1
        let perPass = Self.perPass(lanes)
        #expect((cost != nil) == (perPass != nil), "\(signing)")
        let pays = cost.flatMap { cost in perPass.flatMap { RS256Signer.smallestPayingBatch(passCost: cost, perPass: $0) } }
        #expect(signing["batches"]?.boolValue == (pays != nil), "\(signing)")
        #expect(smallest == (pays ?? 0), "\(signing)")
        let name = lanes == .fastest ? (perPass == 4 ? "avx512ifma" : "avx2") : lanes.rawValue
        #expect(signing["lanes"]?.stringValue == (pays != nil ? name : nil), "\(signing)")
        #expect(signing["fallbacks"]?.lenientInt == 0, "\(signing)")
        if pays != nil {
            let together = signing["together"]?.lenientInt ?? 0, alone = signing["alone"]?.lenientInt ?? 0
            let passes = signing["passes"]?.lenientInt ?? 0
            #expect(together + alone == signatures, "\(signing)")
            #expect(together > 0, "no two signatures were made together: \(signing)")
            #expect(together >= passes * smallest, "a pass held fewer than \(smallest): \(signing)")
        }
    }

    /// `B2C_EMULATOR_RSA_BATCHES=0` signs one at a time (and says so in the stats); a value other than 0 or 1 is refused
    /// before anything starts, and so is a `B2C_EMULATOR_RSA_LANES` that names no lanes.
    @Test func batchesTurnOffAndABadValueIsRefused() async throws {
        try await Self.withServedTenant(["B2C_EMULATOR_RSA_BATCHES": "0"]) { base, http in
            let response = try await http.execute(HTTPClientRequest(url: "\(base)/_admin/stats"), timeout: .seconds(30))
            let stats = try JSONValue.parse(Data(buffer: try await response.body.collect(upTo: 1 << 20)))
            #expect(stats["signing"]?["batches"]?.boolValue == false, "\(stats)")
        }
        let home = FileManager.default.temporaryDirectory
        let bad = try await run(
            emulatorBinary, ["serve", "--in-memory"],
            environment: ["HOME": home.path, "PATH": "/usr/bin:/bin", "B2C_EMULATOR_RSA_BATCHES": "yes"],
            directory: home)
        #expect(bad.status == 64 && bad.stderr.contains("B2C_EMULATOR_RSA_BATCHES must be 1 or 0, not 'yes'"), "\(bad.stderr)")
        let badLanes = try await run(
            emulatorBinary, ["serve", "--in-memory"],
            environment: ["HOME": home.path, "PATH": "/usr/bin:/bin", "B2C_EMULATOR_RSA_LANES": "sse2"], directory: home)
        #expect(
            badLanes.status == 64
                && badLanes.stderr.contains(
                    "B2C_EMULATOR_RSA_LANES must be avx2, avx512ifma or empty (the fastest the processor has), not 'sse2'"),
            "\(badLanes.stderr)")
    }
}
