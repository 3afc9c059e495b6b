// Sign in, get a token silently, call the API: B2CKit as a library (docs/library.md).
import B2CKit
import Foundation

/// Shows the sign-in page: in $BROWSER when it is set, else as a URL to open by hand.
struct BrowserLauncher: InteractionUI {
    func present(url: URL, purpose: String) async {
        print("Open this URL to \(purpose): \(url.absoluteString)")
        guard let browser = ProcessInfo.processInfo.environment["BROWSER"], !browser.isEmpty else { return }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", "\(browser) \"$1\"", "browser", url.absoluteString]
        try? process.run()
    }

    func progress(_ text: String) { FileHandle.standardError.write(Data((text + "\n").utf8)) }
}

let environment = ProcessInfo.processInfo.environment
let client = try B2CClient(
    config: try ClientConfiguration.load(path: environment["B2C_CONFIG"] ?? "policies.json"),
    store: try TokenStore(directory: StoreLocation.directory()))
do {
    // A token from the cache or a refresh; when nobody is signed in yet, a browser sign-in first.
    let scopes = try client.config.resourceScopes(api: nil, scopes: [])
    let token: SilentResult
    do {
        token = try await client.acquireTokenSilently(policyName: nil, selector: nil, scopes: scopes)
    } catch let e as B2CError where e.kind == .interactionRequired {
        let account = try await client.signInInteractively(policyName: nil, options: InteractiveOptions(), ui: BrowserLauncher())
        print("Signed in as \(account.email ?? account.oid) under \(account.policy)")
        token = try await client.acquireTokenSilently(policyName: nil, selector: account.id, scopes: scopes)
    }
    print("Token for \(token.account.policy), valid until \(Date(timeIntervalSince1970: Double(token.accessToken.expiresOn)))")

    // The configured API's base URL (or a path below it), with the token only where the configuration lets it go.
    let answer = try await client.callAPI(APICallRequest(url: "/hello", api: nil))
    print("HTTP \(answer.status): \(String(decoding: answer.body, as: UTF8.self))")
} catch let e as B2CError {
    FileHandle.standardError.write(Data("error: \(e)\n".utf8))
    await client.shutdown()
    exit(1)
}
await client.shutdown()
