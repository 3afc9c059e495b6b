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
                ui: TerminalUI(openBrowser: !flow.noBrowser, verbose: options.verbose))
            return (account, dropped, c.signInRemedies(for: dropped))
        }
        let commands = remedies.compactMap { remedy -> String? in
            guard case let .signIn(policy, method, hint) = remedy else { return nil }
            return CLIError.signInCommandLine(policy: policy, method: method, loginHint: hint)
        }
        let who = AccountSelection.email(account) ?? account.oid
        writeOut("Password of \(who) reset under \(account.policy).")
        // B2C revokes the person's refresh tokens on a reset: every sign-in made before it is over, here and elsewhere.
        if dropped.isEmpty {
            writeOut("The reset revoked the earlier sign-ins of \(who) (their refresh tokens); none was kept on this machine.")
        } else {
            writeOut("The reset revoked the earlier sign-ins of \(who) (their refresh tokens); to use them again here run:")
            for c in commands { writeOut("  \(c)") }
        }
    }
}
