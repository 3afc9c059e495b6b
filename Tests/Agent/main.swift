// b2c-test-agent: a scripted user agent for end-to-end tests, used as $BROWSER. The work is B2CEmulator's
// ScriptedBrowser (also behind `b2c demo`); this wrapper reads the persona from the environment.
//
// Environment: B2C_AGENT_EMAIL, B2C_AGENT_PASSWORD, B2C_AGENT_CA (PEM), B2C_AGENT_JAR (file),
// B2C_AGENT_ACTION = signin (default) | cancel | forgot | wrong-then-right | cancel-signup | cancel-reset-code | wrong-codes | signup,
// B2C_AGENT_PHONE (the number a phone factor registers), B2C_AGENT_TOTP_SECRET (an authenticator registered elsewhere),
// B2C_AGENT_IDP (sign in with this social provider of the page, as B2C_AGENT_EMAIL), B2C_AGENT_KEEP_SIGNED_IN=1,
// B2C_AGENT_DISPLAY_NAME / _GIVEN_NAME / _SURNAME (edit profile, sign-up), B2C_AGENT_NEW_PASSWORD (reset),
// B2C_AGENT_ATTRIBUTES (sign-up: name=value pairs separated by ';'),
// B2C_AGENT_ADMIN_TOKEN_FILE (the tenant's admin token, for its outbox and clock, when it requires one),
// B2C_AGENT_RECORD (a file to which the delivered redirect URL is appended: the secrets test looks for its code),
// B2C_AGENT_DELIVER=0 (stop before the answer reaches the app and print its URL on stdout, as a person would copy it).
import B2CEmulator
import Foundation

let env = ProcessInfo.processInfo.environment
func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("b2c-test-agent: \(message)\n".utf8))
    exit(1)
}
guard CommandLine.arguments.count >= 2, let start = URL(string: CommandLine.arguments[1]) else { fail("usage: b2c-test-agent URL") }
guard let action = ScriptedBrowser.Action(rawValue: env["B2C_AGENT_ACTION"] ?? "signin") else {
    fail("B2C_AGENT_ACTION must be signin, cancel, forgot, wrong-then-right, cancel-signup, cancel-reset-code, wrong-codes or signup")
}
var persona = ScriptedBrowser.Persona(
    email: env["B2C_AGENT_EMAIL"] ?? "", password: env["B2C_AGENT_PASSWORD"] ?? "", action: action,
    newPassword: env["B2C_AGENT_NEW_PASSWORD"], displayName: env["B2C_AGENT_DISPLAY_NAME"],
    givenName: env["B2C_AGENT_GIVEN_NAME"], surname: env["B2C_AGENT_SURNAME"], phone: env["B2C_AGENT_PHONE"],
    totpSecret: env["B2C_AGENT_TOTP_SECRET"])
persona.idp = env["B2C_AGENT_IDP"]
persona.keepSignedIn = env["B2C_AGENT_KEEP_SIGNED_IN"] == "1"
for pair in (env["B2C_AGENT_ATTRIBUTES"] ?? "").split(separator: ";") {
    let kv = pair.split(separator: "=", maxSplits: 1)
    if kv.count == 2 { persona.attributes[String(kv[0])] = String(kv[1]) }
}
// The HTTP client is always shut down before the process ends (a client dropped without it traps), and a failure is one
// line on stderr with exit 1.
let browser: ScriptedBrowser
let adminToken = env["B2C_AGENT_ADMIN_TOKEN_FILE"].map { path in
    guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { fail("cannot read B2C_AGENT_ADMIN_TOKEN_FILE='\(path)'") }
    return text.trimmingCharacters(in: .whitespacesAndNewlines)
}
do { browser = try ScriptedBrowser(caFile: env["B2C_AGENT_CA"], jarPath: env["B2C_AGENT_JAR"], adminToken: adminToken) } catch {
    fail("cannot read the CA file B2C_AGENT_CA='\(env["B2C_AGENT_CA"] ?? "")': \(error)")
}
do {
    let deliver = env["B2C_AGENT_DELIVER"] != "0"
    // The answer is recorded before the app has it: the test reads the file once b2c is done, and this process may
    // still be running then.
    let record = env["B2C_AGENT_RECORD"]
    let delivered = try await browser.run(start, as: persona, deliver: deliver) { answer in
        guard let record,
            let h = FileHandle(forWritingAtPath: record)
                ?? {
                    _ = FileManager.default.createFile(atPath: record, contents: nil)
                    return FileHandle(forWritingAtPath: record)
                }()
        else { return }
        h.seekToEndOfFile()
        h.write(Data((answer.absoluteString + "\n").utf8))
        try? h.close()
    }
    if !deliver { print(delivered.absoluteString) }
    await browser.shutdown()
    exit(0)
} catch {
    await browser.shutdown()
    fail("\(error) (at \(start.absoluteString.prefix(120)))")
}
