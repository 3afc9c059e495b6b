import ArgumentParser
import B2CKit
import Foundation

struct WhoAmICommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "whoami", abstract: "Show the selected account, its person and its id-token claims.")
    @OptionGroup var options: ClientOptions
    @Option(help: "The policy; default: the signUpSignIn policy.") var policy: String?
    @Option(help: "Email, oid, account id or a unique prefix.") var account: String?
    @OptionGroup var output: OutputOptions

    func run() async throws {
        let client = try options.makeClient()
        try await withClient(client) { c in
            let selected = try c.selectedAccount(policy: policy, selector: account)
            if let n = selected.notice { writeErr(n) }
            Output.writeWhoAmI(selected.account, person: selected.person, format: output.format, now: c.now())
        }
    }
}
