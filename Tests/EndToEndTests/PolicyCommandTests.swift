@testable import B2CEmulator
import B2CKit
import Foundation
import Testing

/// `b2c policy` (docs/client.md, deploying custom policies): the example set with `{Settings:…}` placeholders, uploaded by the
/// built b2c as the tenant's `policy-deploy` app in inheritance order, per environment.
@Suite struct PolicyCommandTests {
    static let deploy = ["B2C_CLIENT_SECRET": EmulatorSeed.defaultPolicyDeploySecret]

    /// The example policies with the tenant's name as a placeholder, and a settings file of two environments.
    static func folder(_ w: World) throws -> URL {
        let dir = w.dir.appendingPathComponent("policies")
        try FileManager.default.copyItem(at: packageRoot.appendingPathComponent("Examples/custom-policies"), to: dir)
        for name in try FileManager.default.contentsOfDirectory(atPath: dir.path) {
            let file = dir.appendingPathComponent(name)
            let text = try String(contentsOf: file, encoding: .utf8).replacingOccurrences(
                of: "contoso.onmicrosoft.com", with: "{Settings:Tenant}")
            try Data(text.utf8).write(to: file)
        }
        let settings = """
            {"Environments": [
              {"Name": "Local", "Production": false, "Tenant": "contoso.onmicrosoft.com", "PolicySettings": {"FacebookAppId": "1"}},
              {"Name": "Production", "Production": true, "Tenant": "fabrikam.onmicrosoft.com", "PolicySettings": {}}]}
            """
        try Data(settings.utf8).write(to: dir.appendingPathComponent("appsettings.json"))
        return dir
    }

    @Test func aFolderDeploysBaseBeforeChildPerEnvironment() async throws {
        try await World.with { w in
            let config = try UsersCommandTests.config(w, app: "policy-deploy")
            let dir = try Self.folder(w)
            let unfilled = try await w.b2c(["policy", "upload", dir.path, "--config", config], extra: Self.deploy)
            #expect(unfilled.status == 64 && unfilled.stderr.contains("{Settings:Tenant}"), "\(unfilled.stderr)")
            let plan = try await w.b2c(["policy", "upload", dir.path, "--env", "Production", "--dry-run", "--config", config, "-o", "json"])
            let order = plan.json.arrayValue?.compactMap { $0["policyId"]?.stringValue } ?? []
            #expect(
                order.prefix(2) == ["B2C_1A_TrustFrameworkBase", "B2C_1A_TrustFrameworkExtensions"] && order.count == 6, "\(plan.stdout)")
            #expect(plan.json.arrayValue?.first?["substitutions"]?["Tenant"] == "fabrikam.onmicrosoft.com")
            #expect(
                plan.json.arrayValue?.first?["request"]?.stringValue?.hasSuffix(
                    "/beta/trustFramework/policies/B2C_1A_TrustFrameworkBase/$value") == true)
            #expect(w.server.emulator.customPolicies.ids.isEmpty, "a dry run sends nothing")
            // A real tenant's configuration (no graph key): Microsoft's Graph, in the same order.
            var real = try JSONValue.parse(Data(contentsOf: URL(fileURLWithPath: config))).objectValue ?? [:]
            real["graph"] = nil
            let realConfig = w.dir.appendingPathComponent("real.json")
            try Data(JSONValue.object(real).serialized().utf8).write(to: realConfig)
            let realPlan = try await w.b2c([
                "policy", "upload", dir.path, "--env", "Production", "--dry-run", "--config", realConfig.path, "-o", "json",
            ])
            #expect(
                realPlan.json.arrayValue?.first?["request"]?.stringValue
                    == "PUT https://graph.microsoft.com/beta/trustFramework/policies/B2C_1A_TrustFrameworkBase/$value",
                "\(realPlan.stdout) \(realPlan.stderr)")

            let up = try await w.b2c(["policy", "upload", dir.path, "--env", "Local", "--config", config], extra: Self.deploy)
            #expect(
                up.status == 0
                    && up.stdout.components(separatedBy: "\n").first
                        == "Uploaded B2C_1A_TrustFrameworkBase (\(dir.path)/TrustFrameworkBase.xml)",
                "\(up.stdout)\(up.stderr)")
            let list = try await w.b2c(["policy", "list", "--config", config, "-o", "json"], extra: Self.deploy)
            #expect(list.json.arrayValue?.count == 6, "\(list.stdout)")
            // The relying party signs people in.
            #expect(try await w.b2c(["signin", "--policy", "B2C_1A_signup_signin"], as: alice).status == 0)
            let xml = try await w.b2c(["policy", "download", "B2C_1A_ProfileEdit", "--config", config], extra: Self.deploy)
            #expect(xml.stdout.contains("PolicyId=\"B2C_1A_ProfileEdit\"") && !xml.stdout.contains("{Settings:"))

            // A child the tenant refuses: B2C's message with the element, and what was and was not uploaded.
            let broken = w.dir.appendingPathComponent("broken")
            try FileManager.default.createDirectory(at: broken, withIntermediateDirectories: true)
            try Data(
                """
                <TrustFrameworkPolicy xmlns="http://schemas.microsoft.com/online/cpim/schemas/2013/06" PolicySchemaVersion="0.3.0.0"
                  TenantId="contoso.onmicrosoft.com" PolicyId="B2C_1A_Broken">
                  <BasePolicy><TenantId>contoso.onmicrosoft.com</TenantId><PolicyId>B2C_1A_TrustFrameworkExtensions</PolicyId></BasePolicy>
                  <RelyingParty><DefaultUserJourney ReferenceId="NoSuchJourney" /></RelyingParty>
                </TrustFrameworkPolicy>
                """.utf8
            ).write(to: broken.appendingPathComponent("Broken.xml"))
            let refused = try await w.b2c(["policy", "upload", broken.path, "--config", config], extra: Self.deploy)
            #expect(
                refused.status == 1 && refused.stderr.contains("NoSuchJourney") && refused.stderr.contains("not uploaded: B2C_1A_Broken"),
                "\(refused.stderr)")

            let unasked = try await w.b2c(["policy", "delete", "B2C_1A_ProfileEdit", "--config", config], extra: Self.deploy)
            #expect(unasked.status == 64)
            #expect(
                try await w.b2c(["policy", "delete", "B2C_1A_ProfileEdit", "--yes", "--config", config], extra: Self.deploy).status == 0)
            let gone = try await w.b2c(["policy", "download", "B2C_1A_ProfileEdit", "--config", config], extra: Self.deploy)
            #expect(gone.status == 1 && gone.stderr.contains("no policy B2C_1A_ProfileEdit"), "\(gone.stderr)")
            // Another app, without Policy.ReadWrite.TrustFramework.
            let admin = try UsersCommandTests.config(w, app: "user-admin")
            let denied = try await w.b2c(["policy", "list", "--config", admin], extra: UsersCommandTests.admin)
            #expect(denied.status == 3 && denied.stderr.contains("Policy.ReadWrite.TrustFramework"), "\(denied.stderr)")
        }
    }

    /// A folder whose BasePolicy chain loops and a folder with two files of one policy id are refused before anything is
    /// sent; a base that is neither in the folder nor in the tenant is the tenant's refusal, and nothing is uploaded.
    @Test func aLoopADuplicateAndAMissingBaseAreRefused() async throws {
        func policy(_ id: String, base: String?) -> String {
            let basePolicy = base.map {
                "<BasePolicy><TenantId>contoso.onmicrosoft.com</TenantId><PolicyId>\($0)</PolicyId></BasePolicy>"
            }
            return """
                <TrustFrameworkPolicy xmlns="http://schemas.microsoft.com/online/cpim/schemas/2013/06" PolicySchemaVersion="0.3.0.0"
                  TenantId="contoso.onmicrosoft.com" PolicyId="\(id)">\(basePolicy ?? "")</TrustFrameworkPolicy>
                """
        }
        func folder(_ w: World, _ name: String, _ files: [String: String]) throws -> String {
            let dir = w.dir.appendingPathComponent(name)
            try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
            for (file, xml) in files { try Data(xml.utf8).write(to: dir.appendingPathComponent(file)) }
            return dir.path
        }
        try await World.with { w in
            let config = try UsersCommandTests.config(w, app: "policy-deploy")
            let loop = try folder(
                w, "loop", ["A.xml": policy("B2C_1A_A", base: "B2C_1A_B"), "B.xml": policy("B2C_1A_B", base: "B2C_1A_A")])
            let looped = try await w.b2c(["policy", "upload", loop, "--config", config], extra: Self.deploy)
            #expect(looped.status == 64 && looped.stderr.contains("BasePolicy chain loops: B2C_1A_A, B2C_1A_B"), "\(looped.stderr)")
            let twice = try folder(w, "twice", ["A.xml": policy("B2C_1A_A", base: nil), "Copy of A.xml": policy("B2C_1A_A", base: nil)])
            let duplicate = try await w.b2c(["policy", "upload", twice, "--config", config], extra: Self.deploy)
            #expect(duplicate.status == 64 && duplicate.stderr.contains("are both B2C_1A_A"), "\(duplicate.stderr)")
            let orphan = try folder(w, "orphan", ["C.xml": policy("B2C_1A_C", base: "B2C_1A_Nowhere")])
            let missing = try await w.b2c(["policy", "upload", orphan, "--config", config], extra: Self.deploy)
            #expect(
                missing.status == 1 && missing.stderr.contains("B2C_1A_Nowhere") && missing.stderr.contains("does not exist")
                    && missing.stderr.contains("not uploaded: B2C_1A_C"), "\(missing.stderr)")
            let list = try await w.b2c(["policy", "list", "--config", config, "-o", "json"], extra: Self.deploy)
            #expect(list.json.arrayValue?.compactMap(\.stringValue).contains("B2C_1A_C") == false, "\(list.stdout)")
        }
    }
}
