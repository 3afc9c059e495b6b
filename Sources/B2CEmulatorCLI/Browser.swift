import ArgumentParser
import B2CCLI
import B2CEmulator
import B2CKit
import Foundation

/// `b2c-emulator browser`: a scripted browser for the local tenant, made to be `$BROWSER` — b2c (or any tool that opens a
/// URL with `$BROWSER`) hands it the authorize URL, and it fills the tenant's pages as the named person would and delivers
/// the answer to the app's redirect URI. A sign-in without a person at the keyboard: CI jobs, SSH sessions, the docs' own
/// examples. It works only with the local tenant's pages (their element ids), never a real tenant's.
struct BrowserCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "browser",
        abstract: "A scripted browser for the local tenant, to use as $BROWSER: signs in as the named person.",
        discussion: """
            The password is the seed's (the default seed's, or --seed FILE's), or $B2C_EMULATOR_PASSWORD; never an argument.
            Examples:
              BROWSER='b2c-emulator browser --as alice@contoso.com' b2c signin
              BROWSER='b2c-emulator browser --as bob@contoso.com --ca state/ca.pem' b2c signin --prompt login
              BROWSER='b2c-emulator browser --as alice@contoso.com --action cancel' b2c signin     (exits 2: cancelled)
              BROWSER='b2c-emulator browser --as alice@contoso.com --phone +14255550123' b2c signin --policy B2C_1_susi_mfa
              BROWSER='b2c-emulator browser --as carol@gmail.com --idp google' b2c signin --policy B2C_1_susi_social
              b2c-emulator browser --as alice@contoso.com --device-code CODE http://127.0.0.1:8443/contoso.onmicrosoft.com/devicelogin
              B2C_EMULATOR_PASSWORD='Dana-2026-pw!' \\
                BROWSER='b2c-emulator browser --as dana@contoso.com --action signup --given-name Dana --surname Diaz' b2c signin
            A second factor is done as the person would: codes from the tenant's outbox, the authenticator's code from its \
            secret (registered in this browser's jar, the seed's totpSecret, or $B2C_EMULATOR_TOTP_SECRET).
            --action signup creates the account on the sign-up page: the email verified with the code from the outbox, the \
            password from $B2C_EMULATOR_PASSWORD, the names, and the user flow's other attributes from --attribute name=value.
            A tenant that wants its admin token (serve --admin-token-file, the container image) gets it from --admin-token-file \
            or $B2C_EMULATOR_ADMIN_TOKEN_FILE: the file serve wrote (the same variable tells serve where to write it).
            Exit codes: 0 the answer was delivered; 1 the pages did not go as expected; 3 an unknown person, a bad --seed/--ca, or \
            the admin surface refused the browser (no or a stale admin token); \
            64 a page asked twice for something only an option gives (it names the field and the option).
            """)

    @Option(name: .customLong("as"), help: ArgumentHelp("The person who signs in (an email of the seed).", valueName: "email"))
    var email: String
    @Option(help: ArgumentHelp("The tenant's seed, for the person's password (default: the built-in seed).", valueName: "file"))
    var seed: String?
    @Option(help: ArgumentHelp("The tenant's CA (PEM), for a tenant served with --tls.", valueName: "file")) var ca: String?
    @Option(help: ArgumentHelp("Keep cookies (the tenant's browser session) in this file across runs.", valueName: "file"))
    var jar: String?
    @Option(
        help: ArgumentHelp(
            "The tenant's admin token, for reading its outbox and clock when it requires one (serve --admin-token-file FILE, the "
                + "container image): the file serve wrote. Default: $B2C_EMULATOR_ADMIN_TOKEN_FILE.", valueName: "file"))
    var adminTokenFile: String?
    @Option(
        help: ArgumentHelp(
            "What the person does: signin, cancel, forgot (with $B2C_EMULATOR_NEW_PASSWORD), wrong-then-right, cancel-signup, "
                + "cancel-reset-code, wrong-codes (every second-factor code wrong), signup (with $B2C_EMULATOR_PASSWORD)."),
        completion: .list(ScriptedBrowser.Action.allCases.map(\.rawValue)))
    var action = "signin"
    @Option(help: "On the profile or sign-up page: the (new) display name.") var displayName: String?
    @Option(help: "On the profile or sign-up page: the (new) given name.") var givenName: String?
    @Option(help: "On the profile or sign-up page: the (new) surname.") var surname: String?
    @Option(
        name: .customLong("attribute"),
        help: ArgumentHelp(
            "On the sign-up page: an attribute of the user flow (city=Lyon, extension_LoyaltyId=L-1); repeatable.",
            valueName: "name=value"))
    var attributes: [String] = []
    @Option(help: ArgumentHelp("The number to register when a phone factor is asked for the first time (E.164).", valueName: "number"))
    var phone: String?
    @Option(
        help: ArgumentHelp(
            "Sign in with this provider of the page as --as: a built-in one (google, facebook, microsoft, …; no password needed) "
                + "or an OpenID Connect provider's id (its page asks for $B2C_EMULATOR_PASSWORD).",
            valueName: "provider"),
        completion: .list(EmulatorSeed.IdentityProvider.allCases.filter { $0 != .local }.map(\.rawValue)))
    var idp: String?
    @Flag(help: "Check \"Keep me signed in\" on the sign-in page (a policy with kmsi): the tenant's session outlives the browser.")
    var keepSignedIn = false
    @Option(
        help: ArgumentHelp(
            "The code a device shows (b2c signin --device-code): typed at the verification page URL, then the sign-in.",
            valueName: "code"))
    var deviceCode: String?
    @Argument(help: "The URL to open (what $BROWSER is given).") var url: String

    func run() async throws {
        guard let start = URL(string: url), let scheme = start.scheme, ["http", "https"].contains(scheme), start.host != nil else {
            throw CLIError("'\(url)' is not an http(s) URL to open", exitCode: ExitStatus.usage)
        }
        guard let act = ScriptedBrowser.Action(rawValue: action) else {
            throw CLIError(
                "--action is signin, cancel, forgot, wrong-then-right, cancel-signup, cancel-reset-code, wrong-codes or signup; "
                    + "not '\(action)'",
                exitCode: ExitStatus.usage)
        }
        if let phone, !EmulatorSeed.isE164(phone) {
            throw CLIError("--phone must be E.164, such as +14255550123; not '\(phone)'", exitCode: ExitStatus.usage)
        }
        let collected = try collectedAttributes()
        let environment = ProcessInfo.processInfo.environment
        let builtIn = idp.flatMap(EmulatorSeed.IdentityProvider.init(rawValue:))
        if let idp,
            builtIn == .local || (builtIn == nil && idp.range(of: #"^[A-Za-z][A-Za-z0-9_-]{0,63}$"#, options: .regularExpression) == nil)
        {
            let social = EmulatorSeed.IdentityProvider.allCases.filter { $0 != .local }.map(\.rawValue)
            throw CLIError(
                "--idp is one of \(social.joined(separator: ", ")) or the id of an OpenID Connect provider of the seed; not '\(idp)'",
                exitCode: ExitStatus.usage)
        }
        let (password, totpSecret) = try credentials(environment, action: act, builtInProvider: builtIn != nil)
        let newPassword = environment["B2C_EMULATOR_NEW_PASSWORD"].flatMap { $0.isEmpty ? nil : $0 }
        if act == .forgot && newPassword == nil {
            throw CLIError("--action forgot sets a new password: give it in B2C_EMULATOR_NEW_PASSWORD", exitCode: ExitStatus.usage)
        }
        let tokenFile = adminTokenFile ?? environment["B2C_EMULATOR_ADMIN_TOKEN_FILE"].flatMap { $0.isEmpty ? nil : $0 }
        let tokenOption = adminTokenFile != nil ? "--admin-token-file" : "B2C_EMULATOR_ADMIN_TOKEN_FILE"
        let adminToken = try tokenFile.map { try Self.adminToken($0, option: tokenOption) }
        let browser: ScriptedBrowser
        do { browser = try ScriptedBrowser(caFile: ca, jarPath: jar, adminToken: adminToken) } catch {
            throw CLIError("cannot read the CA file '\(ca ?? "")': it must be a PEM certificate", exitCode: ExitStatus.configuration)
        }
        var persona = ScriptedBrowser.Persona(
            email: email, password: password, action: act, newPassword: newPassword, displayName: displayName, givenName: givenName,
            surname: surname, phone: phone, totpSecret: totpSecret)
        persona.idp = idp
        persona.keepSignedIn = keepSignedIn
        persona.attributes = collected
        persona.deviceCode = deviceCode
        do {
            _ = try await browser.run(start, as: persona)
            await browser.shutdown()
        } catch {
            await browser.shutdown()
            throw Self.stopped(at: start, error, tokenFile: tokenFile, tokenOption: tokenOption)
        }
    }

    /// `--attribute name=value`, each.
    func collectedAttributes() throws -> [String: String] {
        var collected: [String: String] = [:]
        for pair in attributes {
            guard let eq = pair.firstIndex(of: "="), eq != pair.startIndex else {
                throw CLIError("--attribute is name=value, such as city=Lyon; not '\(pair)'", exitCode: ExitStatus.usage)
            }
            collected[String(pair[..<eq])] = String(pair[pair.index(after: eq)...])
        }
        return collected
    }

    /// The password to type (B2C_EMULATOR_PASSWORD, else the seed's person's; none at a built-in provider's page) and the
    /// authenticator's secret (B2C_EMULATOR_TOTP_SECRET, else the seed's person's).
    func credentials(_ environment: [String: String], action: ScriptedBrowser.Action, builtInProvider: Bool) throws -> (String, String?) {
        let totpSecret = environment["B2C_EMULATOR_TOTP_SECRET"].flatMap { $0.isEmpty ? nil : $0 }
        if let given = environment["B2C_EMULATOR_PASSWORD"], !given.isEmpty { return (given, totpSecret) }
        if builtInProvider { return ("", totpSecret) }  // the provider's page asks for none
        if action == .signup {
            throw CLIError("--action signup chooses a password: give it in B2C_EMULATOR_PASSWORD", exitCode: ExitStatus.usage)
        }
        let users = try Self.seed(seed).users
        guard let user = users.first(where: { $0.email.caseInsensitiveCompare(email) == .orderedSame }) else {
            throw CLIError(
                "no person \(email) in \(seed.map { "the seed \($0)" } ?? "the built-in seed") (people: "
                    + "\(users.map(\.email).joined(separator: ", "))); or give the password in B2C_EMULATOR_PASSWORD",
                exitCode: ExitStatus.configuration)
        }
        return (user.password, totpSecret ?? user.totpSecret)
    }

    /// Why the scripted browser stopped, with what to do when the admin surface refused it.
    static func stopped(at start: URL, _ error: Error, tokenFile: String?, tokenOption: String) -> CLIError {
        let needsOption = (error as? ScriptedBrowser.Failure)?.needsOption == true
        if (error as? ScriptedBrowser.Failure)?.adminRefused == true {
            let remedy =
                tokenFile == nil
                ? "give --admin-token-file FILE or B2C_EMULATOR_ADMIN_TOKEN_FILE (the file serve --admin-token-file wrote)"
                : "is \(tokenFile ?? "") (\(tokenOption)) the file of the tenant's last start?"
            return CLIError("the scripted browser stopped at \(start.host ?? ""): \(error); \(remedy)", exitCode: ExitStatus.configuration)
        }
        return CLIError(
            "the scripted browser stopped at \(start.host ?? ""): \(error)", exitCode: needsOption ? ExitStatus.usage : ExitStatus.error)
    }

    /// The token in the file `serve --admin-token-file` wrote (one line).
    static func adminToken(_ path: String, option: String) throws -> String {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else {
            throw CLIError("cannot read the admin token file '\(path)' (\(option))", exitCode: ExitStatus.configuration)
        }
        let token = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !token.isEmpty else {
            throw CLIError("the admin token file '\(path)' (\(option)) is empty", exitCode: ExitStatus.configuration)
        }
        return token
    }

    static func seed(_ path: String?) throws -> EmulatorSeed {
        guard let path else { return .default }
        do { return try EmulatorSeed.parse(try Data(contentsOf: URL(fileURLWithPath: path))) } catch let e as JSONPathError {
            throw CLIError("the seed file '\(path)' is invalid: \(e.path) \(e.message)", exitCode: ExitStatus.configuration)
        } catch {
            throw CLIError("cannot read the seed file '\(path)'", exitCode: ExitStatus.configuration)
        }
    }
}
