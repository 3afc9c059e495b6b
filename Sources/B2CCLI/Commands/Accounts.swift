import ArgumentParser
import B2CKit
import Foundation

struct AccountsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "accounts", abstract: "List people and, under each, their accounts per policy.",
        discussion:
            "Without any configuration (none named, none found), lists every account in the store, grouped by authority host and client "
            + "id.",
        aliases: ["status"])
    @OptionGroup var options: ClientOptions
    @Option(help: "Only accounts of this policy.") var policy: String?
    @OptionGroup var output: OutputOptions

    func run() async throws {
        guard let config = try options.settings.loadConfigurationIfPresent() else {
            let overview = StoreOverview(store: try options.settings.openStore())
            let groups = try overview.people(policy: policy)
            let apps = policy == nil ? try overview.applications() : []
            writeErr("no configuration found: listing every configuration's accounts in \(overview.path)")
            Output.writeStore(groups, applications: apps, format: output.format, now: Int(Date().timeIntervalSince1970))
            return
        }
        let client = try options.settings.makeClient(config: config)
        try await withClient(client) { c in
            Output.writePeople(
                try c.listAccounts(policy: policy), applications: policy == nil ? try c.listApplications() : [], format: output.format,
                now: c.now(), policy: policy)
        }
    }
}
