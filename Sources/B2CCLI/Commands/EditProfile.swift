import ArgumentParser
import B2CKit
import Foundation

struct EditProfileCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "edit-profile",
        abstract: "Edit the profile of a signed-in person in the browser (the editProfile policy); every policy then shows the new name.")
    @OptionGroup var options: ClientOptions
    @OptionGroup var flow: BrowserFlowOptions

    func run() async throws {
        let client = try options.makeClient()
        let result = try await withInteractiveClient(client) { c in
            try await c.editProfile(
                selector: flow.account, policyName: flow.policy, options: flow.interactive,
                ui: TerminalUI(openBrowser: !flow.noBrowser, verbose: options.verbose))
        }
        let who = result.account.email ?? result.account.oid
        writeOut("Profile of \(who) saved under \(result.account.policy).")
        let fields: [(String, String?, String?)] = [
            ("name", result.before?.name, result.after?.name),
            ("given name", result.before?.givenName, result.after?.givenName),
            ("family name", result.before?.familyName, result.after?.familyName),
        ]
        for (label, old, new) in fields {
            if old != new {
                writeOut("  \(label): \(old ?? "-") → \(new ?? "-")")
            } else {
                writeOut("  \(label): \(new ?? "-") (unchanged)")
            }
        }
    }
}
