import ArgumentParser
import B2CKit
import Foundation

struct ResetPasswordCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "reset-password",
        abstract: "Reset a person's password in the browser (the resetPassword policy).",
        discussion: "The tenant revokes the person's refresh tokens on a reset; their other accounts stay listed and need a new sign-in.")
    @OptionGroup var options: ClientOptions
    @OptionGroup var flow: BrowserFlowOptions

    func run() async throws {
        let client = try options.makeClient()
        let (account, dropped, remedies) = try await withInteractiveClient(client) { c -> (Account, [Account], [Remedy]) in
            let (account, dropped) = try await c.resetPassword(
                selector: flow.account, policyName: flow.policy, options: flow.interactive,
                ui: TerminalUI(openBrowser: !flow.noBrowser))
            return (account, dropped, c.signInRemedies(for: dropped))
        }
        let commands = remedies.compactMap { remedy -> String? in
            guard case let .signIn(policy, method, hint) = remedy else { return nil }
            return CLIError.signInCommandLine(policy: policy, method: method, loginHint: hint)
        }
        let who = AccountSelection.email(account) ?? account.oid
        writeOut("Password of \(who) reset under \(account.policy).")
        if !dropped.isEmpty {
            writeOut("The tenant revoked the other sign-ins of \(who); to use them again run:")
            for c in commands { writeOut("  \(c)") }
        }
    }
}
