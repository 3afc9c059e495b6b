import ArgumentParser
import B2CKit
import Foundation

struct DeviceCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "device", abstract: "Show the device mode (personal or shared) and what sign-out does in it.",
        discussion: "Without any configuration (none named, none found), reports the whole store, grouped by authority host and client id.")
    @OptionGroup var options: ClientOptions
    @OptionGroup var output: OutputOptions

    func run() async throws {
        guard let config = try options.settings.loadConfigurationIfPresent() else {
            let overview = StoreOverview(store: try options.settings.openStore())
            writeErr("no configuration found: reporting every configuration's accounts in \(overview.path)")
            return Output.writeDevice(
                config: nil, storePath: overview.path, storage: try overview.storageStatus(), accounts: try overview.accounts(),
                format: output.format)
        }
        let client = try options.settings.makeClient(config: config)
        try await withClient(client) { c in
            Output.writeDevice(
                config: c.config, storePath: c.storePath, storage: try c.storageStatus(), accounts: try c.accountsInScope(),
                format: output.format)
        }
    }
}
