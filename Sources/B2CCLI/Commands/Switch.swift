import ArgumentParser
import B2CKit
import Foundation

struct SwitchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "switch", abstract: "Make an account the current one of a policy.",
        discussion: """
            Examples:
              b2c switch bob@contoso.com
              b2c switch alice --policy B2C_1_signin
            """)
    @OptionGroup var options: ClientOptions
    @Argument(help: "Email, its local part, oid, account id or a unique prefix.") var selector: String?
    @Option(help: "The policy; default: the signUpSignIn policy.") var policy: String?
    @Option(help: "The same as the argument.") var account: String?

    func validate() throws {
        if selector != nil && account != nil { throw ValidationError("give the account once: as the argument or with --account.") }
        if selector == nil && account == nil { throw ValidationError("name the account to switch to (email, oid or account id).") }
    }

    func run() async throws {
        let client = try options.makeClient()
        try await withClient(client) { c in
            let a = try c.switchAccount(policy: policy, selector: selector ?? account ?? "")
            writeOut("\(a.email ?? a.oid) is now the current account of \(a.policy).")
        }
    }
}
