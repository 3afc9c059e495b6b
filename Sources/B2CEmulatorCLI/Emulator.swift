import ArgumentParser
import B2CCLI
import B2CEmulator
import B2CKit
import Foundation
import Logging

struct EmulatorCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "emulator",
        abstract: "A local Azure AD B2C tenant for development and tests.",
        shouldDisplay: false,  // `b2c emulator …`'s word, handed over: b2c-emulator's own list names the commands themselves
        subcommands: [
            Serve.self, DefaultSeed.self, ExamplePoliciesCommand.self, ExampleMigrationFunctionCommand.self, BrowserCommand.self,
            HealthCommand.self, PageCommand.self,
            WaitCommand.self, JourneysCommand.self,
        ])
}

extension EmulatorCommand {
    /// `b2c-emulator page`: a policy's page in its layout, offline, for whoever designs the layout.
    struct PageCommand: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "page",
            abstract: "Print a policy's page (unifiedssp, selfasserted, multifactor, globalexception) inside a page layout.",
            discussion: """
                Renders offline, with a sample sign-in: the tenant's page of that type put into the layout's first empty \
                <div id="api"></div>, the layout's head and CSS kept, its scripts taken out unless the policy enables \
                JavaScript. --layout (a file, an http(s) URL, or classic, oceanBlue, slateGray) overrides the policy's \
                pageLayouts. Exit codes: 0 the page was printed; 3 an unknown policy or page type, a bad --seed, or a \
                layout that cannot be read or has no empty <div id="api">.
                """)

        @Argument(help: "The policy, such as B2C_1_susi.") var policy: String
        @Argument(
            help: "The page type: unifiedssp, selfasserted, multifactor or globalexception (error).",
            completion: .list(EmulatorSeed.PageLayouts.PageType.userFlowPages.map(\.rawValue))) var pageType: String
        @Option(
            help: ArgumentHelp("The layout: a file, an http(s) URL, or classic, oceanBlue, slateGray.", valueName: "layout"),
            completion: .list(["classic", "oceanBlue", "slateGray"])) var layout: String?
        @Option(help: ArgumentHelp("The seed whose policy to render (default: the built-in seed).", valueName: "file")) var seed: String?
        @Option(help: "The page's language (its ui_locales).") var language = "en"

        func run() async throws {
            let seedValue = try BrowserCommand.seed(seed)
            do {
                print(try await PagePreview.render(seed: seedValue, policy: policy, pageType: pageType, layout: layout, language: language))
            } catch let e as PagePreview.Failure {
                throw CLIError(e.description, exitCode: ExitStatus.configuration)
            }
        }
    }

    struct DefaultSeed: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "default-seed",
            abstract: "Print the built-in seed (tenant, policies, apps, APIs, users) as JSON, a starting point for --seed.")

        @Flag(help: "The default twin instead: the same tenant with its External ID side's app registrations (serve --twin).")
        var twin = false

        func run() async throws {
            print((twin ? EmulatorSeed.defaultTwin : .default).json.serialized(pretty: true))
        }
    }

    /// `b2c-emulator example-policies DIR`: the custom-policy set to start from, written where the user says.
    /// `b2c-emulator example-migration-function DIR`: the just-in-time password migration function, where the user says.
    struct ExampleMigrationFunctionCommand: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "example-migration-function",
            abstract: "Write an OnPasswordSubmit function in Python (just-in-time password migration) into a folder.",
            discussion: """
                The file: migrate_password.py (needs joserfc, PyJWT[crypto], requests and cryptography). It accepts calls \
                only with a token of the tenant named by --tenant, decrypts the password the tenant sends, checks it \
                against the legacy B2C tenant's ROPC user flow and answers MigratePassword, Retry or Block; \
                `python3 migrate_password.py --help` says how to run it. An existing file is never replaced (exit 1). See \
                docs/migration.md.
                """)

        @Argument(help: ArgumentHelp("The folder to write migrate_password.py into.", valueName: "dir")) var directory: String

        func run() async throws {
            let file = URL(fileURLWithPath: directory).appendingPathComponent(ExampleMigrationFunction.fileName)
            guard !FileManager.default.fileExists(atPath: file.path) else {
                FileHandle.standardError.write(Data("b2c-emulator: \(file.path) already exists; nothing was written.\n".utf8))
                throw ExitCode(1)
            }
            do {
                try FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
                try Data((ExampleMigrationFunction.text + "\n").utf8).write(to: file, options: .withoutOverwriting)
            } catch {
                FileHandle.standardError.write(
                    Data("b2c-emulator: could not write \(file.path): is the folder writable, and is there room?\n".utf8))
                throw ExitCode(1)
            }
            print("Wrote \(file.path).")
        }
    }

    struct ExamplePoliciesCommand: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "example-policies",
            abstract: "Write a small custom-policy set (B2C's schema, the default tenant) into a folder, for --custom-policies.",
            discussion: """
                The files: TrustFrameworkBase.xml, TrustFrameworkExtensions.xml and four relying parties — B2C_1A_signup_signin \
                (sign-up with a verified email, or sign-in), B2C_1A_ProfileEdit, B2C_1A_PasswordReset and \
                B2C_1A_signup_signin_social_mfa (Facebook through the tenant's mock, then a code to the phone). The folder is \
                made if it does not exist; a file already there is never replaced (exit 1, nothing written). Then serve them:

                  b2c-emulator serve --custom-policies DIR
                """)

        @Argument(help: ArgumentHelp("The folder to write the files into.", valueName: "dir")) var directory: String

        func run() async throws {
            let dir = URL(fileURLWithPath: directory)
            let fm = FileManager.default
            let taken = ExamplePolicies.files.map { dir.appendingPathComponent($0.name) }.filter { fm.fileExists(atPath: $0.path) }
            guard taken.isEmpty else {
                FileHandle.standardError.write(
                    Data(
                        ("b2c-emulator: \(taken.map(\.path).joined(separator: ", ")) already exists; nothing was written. Choose an "
                            + "empty folder.\n").utf8))
                throw ExitCode(1)
            }
            do {
                try fm.createDirectory(at: dir, withIntermediateDirectories: true)
                for file in ExamplePolicies.files {
                    try Data((file.xml + "\n").utf8).write(to: dir.appendingPathComponent(file.name), options: .withoutOverwriting)
                }
            } catch {
                FileHandle.standardError.write(
                    Data(
                        "b2c-emulator: could not write the example policies into \(dir.path): is the folder writable, and is there room?\n"
                            .utf8))
                throw ExitCode(1)
            }
            print("Wrote \(ExamplePolicies.files.map(\.name).joined(separator: ", ")) into \(dir.path).")
        }
    }

    struct Serve: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "serve",
            abstract: "Serve the local tenant until Ctrl-C.",
            discussion: """
                Prints one line with the base URL, the tenant and the admin endpoint, then serves until SIGINT/SIGTERM.
                Without --state the tenant lives in memory. A malformed --seed exits with code 3.

                In a container, where arguments are awkward to pass (GitHub Actions services), the environment stands in for \
                options that are not given: B2C_EMULATOR_HOST, _PORT, _PUBLIC_URL, _LOG_FORMAT, _SEED, _STATE, _CONFIG_OUT, \
                _ADMIN_TOKEN_FILE and _ADMIN_TOKEN_REQUIRED (true or false). An option on the command line wins over its \
                variable.

                A client has --read-timeout seconds to send a whole request; at most --max-connections are served at once, \
                and further ones wait to be accepted: a slow or silent client cannot hold the tenant.
                """)

        @Option(help: "Address to listen on. Default: 127.0.0.1 (0.0.0.0 in the container image).") var host: String?
        @Option(
            help: ArgumentHelp(
                "Port to listen on; 0 picks a free port. Default: 0, or with --state the port the tenant served on last (its "
                    + "issuer, and so every account its clients keep, names it)."))
        var port: Int?
        @Option(
            name: .customLong("host-name"), parsing: .singleValue,
            help: ArgumentHelp(
                "Another name clients reach the tenant under (repeatable): requests naming any other host are refused, and with "
                    + "--tls the certificate covers it.", valueName: "name"))
        var hostNames: [String] = []
        @Flag(help: "Serve HTTPS with the emulator's own CA (written to the state directory; its path is printed).") var tls = false
        @Option(help: ArgumentHelp("Keep the tenant's state (SQLite) in this directory across restarts.", valueName: "dir")) var state:
            String?
        @Flag(help: "Keep the tenant's state in memory only (the default when --state is not given).") var inMemory = false
        @Option(help: ArgumentHelp("Tenant, policies, apps, APIs and users as JSON (see `b2c emulator default-seed`).", valueName: "file"))
        var seed: String?
        @Option(help: ArgumentHelp("Write a client policies.json that targets this emulator.", valueName: "file")) var configOut: String?
        @Option(
            help: ArgumentHelp(
                "Load every custom-policy file (*.xml) of this folder, base before child, with B2C's upload checks.", valueName: "dir"))
        var customPolicies: String?
        @Option(
            help: ArgumentHelp(
                "With --tls: also write the CA (PEM, readable by all) to this file, such as a directory a container's host mounts; "
                    + "--config-out's caFile then names it relative to the configuration's directory.", valueName: "file"))
        var caOut: String?
        @Option(
            help: ArgumentHelp(
                "Say in this file how the start went (starting, ready with the URL, or failed with the reason); removed when the "
                    + "tenant stops. `b2c-emulator wait FILE` reads it.", valueName: "file"))
        var readyFile: String?
        @Option(
            help: ArgumentHelp(
                "With --config-out: write this app's settings instead (a web app or daemon: appsettings-style, with its secret).",
                valueName: "name or client id")) var app: String?
        @Option(
            help: ArgumentHelp(
                "With --config-out: the client policies.json names this app (default: the public client), e.g. the daemon for "
                    + "`b2c token --app`.", valueName: "name or client id")) var client: String?
        @Flag(help: "Serve the tenant as Entra External ID: no policy in its URLs, v2.0 tokens (or a seed's tenantType).")
        var externalId = false
        @Flag(
            help: ArgumentHelp(
                "Serve the directory as a B2C tenant and, on a second port, as its External ID side (High Scale Compatibility: "
                    + "the same people, each side its own apps, issuer and keys). A seed with a twin section does this without "
                    + "the flag; the default seed gets the External ID side's default apps."))
        var twin = false
        @Option(
            help: ArgumentHelp(
                "The twin's External ID side's port. Default: 0, or with --state the port it served on last.", valueName: "port"))
        var twinPort: Int?
        @Option(
            help: ArgumentHelp(
                "Write a client policies.json for the twin's External ID side (its public client) to this file.", valueName: "file"))
        var twinConfigOut: String?
        @Flag(name: .shortAndLong, help: "Log each request (method, path, status; never secrets) to stderr.") var verbose = false
        @Option(
            help: ArgumentHelp(
                "Log one line per request to stdout (method, path without query, status, milliseconds; never secrets): text or "
                    + "json.", valueName: "format"))
        var logFormat: RequestLogFormat?
        @Option(
            help: ArgumentHelp(
                "The URL clients reach the tenant at, when it is not the address it listens on (a container's published port, a "
                    + "proxy): the issuer, discovery's endpoints and --config-out use it, never a request's Host.",
                valueName: "url"))
        var publicUrl: String?
        @Option(
            help: ArgumentHelp(
                "Open the admin surface to other machines (a container's host): a new random token is written to this file "
                    + "(0600), and requests that are not from this machine must send it as Authorization: Bearer <token>.",
                valueName: "file"))
        var adminTokenFile: String?
        @Flag(
            inversion: .prefixedNo,
            help: ArgumentHelp(
                "Require the admin token from loopback peers too (the container image's default: a port forwarder may make the "
                    + "host's connections loopback ones). Without --admin-token-file the admin surface then answers no one."))
        var adminTokenRequired: Bool?
        @Option(
            help: ArgumentHelp(
                "Seconds a client has to send a whole request, head and body, from when it connects or gets its previous answer "
                    + "(an idle connection is closed then too).", valueName: "seconds"))
        var readTimeout = Int(ConnectionLimits.defaultReadTimeout.components.seconds)
        @Option(
            help: ArgumentHelp(
                "Connections served at once; more wait to be accepted. Default: three quarters of the descriptors left "
                    + "(ulimit -n), at most 10000.", valueName: "n"))
        var maxConnections: Int?

        mutating func validate() throws {
            try applyEnvironment(ProcessInfo.processInfo.environment)
            if let port, !(0...65535).contains(port) { throw ValidationError("--port must be between 0 and 65535, got \(port).") }
            if let twinPort, !(0...65535).contains(twinPort) {
                throw ValidationError("--twin-port must be between 0 and 65535, got \(twinPort).")
            }
            if twin && externalId {
                throw ValidationError(
                    "--twin serves a B2C tenant and its External ID side; --external-id serves only the latter. Give one.")
            }
            if !(1...86_400).contains(readTimeout) {
                throw ValidationError("--read-timeout must be between 1 and 86400 seconds, got \(readTimeout).")
            }
            if let maxConnections, maxConnections < 1 {
                throw ValidationError("--max-connections must be 1 or more, got \(maxConnections).")
            }
            if state != nil && inMemory { throw ValidationError("--state and --in-memory exclude each other; give one.") }
            if app != nil && configOut == nil {
                throw ValidationError("--app names the app whose settings --config-out writes; add --config-out FILE.")
            }
            if client != nil && configOut == nil {
                throw ValidationError("--client names the app --config-out's policies.json is for; add --config-out FILE.")
            }
            if client != nil && app != nil { throw ValidationError("--app writes an app's settings, --client a policies.json; give one.") }
            if caOut != nil && !tls { throw ValidationError("--ca-out writes the CA of --tls; add --tls.") }
            if let publicUrl {
                guard let url = URL(string: publicUrl), let scheme = url.scheme?.lowercased(), ["http", "https"].contains(scheme),
                    url.host != nil, url.path.isEmpty || url.path == "/", url.query == nil
                else {
                    throw ValidationError(
                        "--public-url takes an origin such as http://127.0.0.1:8443 (scheme, host and port; no path), not '\(publicUrl)'.")
                }
            }
        }

        /// What a container passes as environment (GitHub Actions `services:` can pass no arguments): each
        /// `B2C_EMULATOR_<OPTION>` stands for its option when the option is not given.
        static let environmentOptions = [
            "B2C_EMULATOR_HOST", "B2C_EMULATOR_PORT", "B2C_EMULATOR_PUBLIC_URL", "B2C_EMULATOR_LOG_FORMAT", "B2C_EMULATOR_SEED",
            "B2C_EMULATOR_STATE", "B2C_EMULATOR_CONFIG_OUT", "B2C_EMULATOR_ADMIN_TOKEN_FILE", "B2C_EMULATOR_ADMIN_TOKEN_REQUIRED",
            "B2C_EMULATOR_CUSTOM_POLICIES",
        ]

        mutating func applyEnvironment(_ environment: [String: String]) throws {
            func value(_ name: String) -> String? { environment[name].flatMap { $0.isEmpty ? nil : $0 } }
            host = host ?? value("B2C_EMULATOR_HOST")
            if port == nil, let text = value("B2C_EMULATOR_PORT") {
                guard let n = Int(text) else {
                    throw ValidationError("B2C_EMULATOR_PORT must be a port number (0–65535), not '\(text)'.")
                }
                port = n
            }
            if logFormat == nil, let text = value("B2C_EMULATOR_LOG_FORMAT") {
                guard let format = RequestLogFormat(rawValue: text) else {
                    throw ValidationError("B2C_EMULATOR_LOG_FORMAT must be text or json, not '\(text)'.")
                }
                logFormat = format
            }
            publicUrl = publicUrl ?? value("B2C_EMULATOR_PUBLIC_URL")
            seed = seed ?? value("B2C_EMULATOR_SEED")
            if state == nil && !inMemory { state = value("B2C_EMULATOR_STATE") }
            configOut = configOut ?? value("B2C_EMULATOR_CONFIG_OUT")
            customPolicies = customPolicies ?? value("B2C_EMULATOR_CUSTOM_POLICIES")
            adminTokenFile = adminTokenFile ?? value("B2C_EMULATOR_ADMIN_TOKEN_FILE")
            if adminTokenRequired == nil, let text = value("B2C_EMULATOR_ADMIN_TOKEN_REQUIRED") {
                guard let required = ["true": true, "false": false][text] else {
                    throw ValidationError("B2C_EMULATOR_ADMIN_TOKEN_REQUIRED must be true or false, not '\(text)'.")
                }
                adminTokenRequired = required
            }
        }

        /// `serve`, saying in --ready-file how its start went.
        func run() async throws {
            let ready = readyFile.map(ReadyFile.init)
            ready?.write(.starting(pid: getpid()))
            do {
                try await serve(ready)
            } catch {
                ready?.write(.failed(pid: getpid(), reason: (error as? CLIError)?.message ?? "\(error)"))
                throw error
            }
            ready?.remove()
        }

        /// The start sequence of `serve`, in order: seed, state, TLS, request log, admin surface, listen, configuration out.
        private func serve(_ ready: ReadyFile?) async throws {
            let host = self.host ?? "127.0.0.1"
            try installExecutor()
            let (store, tlsDirectory) = try openState()
            // An in-memory tenant leaves nothing behind: its CA (and the CA's private key) go when it stops.
            defer { if state == nil { try? FileManager.default.removeItem(at: tlsDirectory) } }
            let (emulator, externalSide) = try makeTenant(store)
            if twinConfigOut != nil && externalSide == nil {
                throw CLIError(
                    "--twin-config-out writes the twin's External ID side's configuration; add --twin", exitCode: ExitStatus.usage)
            }
            emulator.answer(to: hostNames)
            if let customPolicies { try loadCustomPolicies(emulator, from: customPolicies) }
            var tlsMaterial: EmulatorTLS?
            if tls {
                do { tlsMaterial = try EmulatorTLS.loadOrCreate(in: tlsDirectory, extraHostNames: [host] + hostNames) } catch {
                    throw CLIError(
                        "cannot create the emulator's TLS certificate in '\(tlsDirectory.path)': \(error)", exitCode: ExitStatus.error)
                }
            }
            if let tlsMaterial, let caOut { try writeCA(tlsMaterial, to: caOut) }
            if let publicUrl, let url = URL(string: publicUrl) { emulator.serve(publicURL: url) }
            try openAdminSurface(emulator)
            if let externalSide {
                externalSide.answer(to: hostNames)
                try openAdminSurface(externalSide)
            }
            let limits = ConnectionLimits(readTimeout: .seconds(readTimeout), maxConnections: maxConnections)
            if verbose {
                FileHandle.standardError.write(
                    Data(
                        ("b2c-emulator: at most \(limits.maxConnections) connections at once (more wait to be accepted); a client has "
                            + "\(readTimeout) s to send a request\n").utf8))
            }
            let server = try await listen(emulator, host: host, tls: tlsMaterial, limits: limits)
            // What clients use: the public URL when there is one, else the address it listens on.
            let baseURL = emulator.publicOrigin ?? server.baseURL
            if let configOut {
                do { try writeConfiguration(to: configOut, emulator, baseURL: baseURL, caFile: caFile(tlsMaterial, configOut)) } catch {
                    await server.stop()
                    throw error
                }
            }
            let listening = ["0.0.0.0", "::"].contains(host) || emulator.publicOrigin != nil
            let wildcard = listening ? " (listening on \(host.contains(":") ? "[\(host)]" : host):\(server.port))" : ""
            var line =
                "b2c emulator: \(baseURL)\(wildcard) tenant \(emulator.tenantName) (\(emulator.tenantID)); admin "
                + "\(baseURL)/_admin (\(adminAccess))"
            if let tlsMaterial { line += "; CA \(tlsMaterial.caPath.path)" }
            var twinServer: EmulatorServer?
            if let externalSide {
                let other = try await startTwin(externalSide, beside: server, host: host, tls: tlsMaterial, limits: limits)
                twinServer = other
                line += "\nb2c emulator: External ID side \(other.baseURL) (the same directory; no policy in its URLs)"
            }
            FileHandle.standardOutput.write(Data((line + "\n").utf8))
            ready?.write(.ready(pid: getpid(), url: baseURL))
            try await wait(server, twinServer)
        }

        /// Requests run on the event loops' threads (the runtime's global-executor hook) unless B2C_EMULATOR_EXECUTOR=default
        /// keeps Swift's own executor: a way out should the hook ever misbehave.
        private func installExecutor() throws {
            let executor = ProcessInfo.processInfo.environment["B2C_EMULATOR_EXECUTOR"].flatMap { $0.isEmpty ? nil : $0 } ?? "event-loops"
            guard ["event-loops", "default"].contains(executor) else {
                throw CLIError("B2C_EMULATOR_EXECUTOR must be event-loops or default, not '\(executor)'.", exitCode: ExitStatus.usage)
            }
            // The token endpoint's signatures (RS256Signer): made together in the processor's lanes, unless 0.
            let batches = ProcessInfo.processInfo.environment["B2C_EMULATOR_RSA_BATCHES"].flatMap { $0.isEmpty ? nil : $0 } ?? "1"
            guard ["0", "1"].contains(batches) else {
                throw CLIError("B2C_EMULATOR_RSA_BATCHES must be 1 or 0, not '\(batches)'.", exitCode: ExitStatus.usage)
            }
            let lanes = ProcessInfo.processInfo.environment["B2C_EMULATOR_RSA_LANES"] ?? ""
            guard RS256Signer.Lanes(rawValue: lanes) != nil else {
                throw CLIError(
                    "B2C_EMULATOR_RSA_LANES must be avx2, avx512ifma or empty (the fastest the processor has), not '\(lanes)'.",
                    exitCode: ExitStatus.usage)
            }
            let onEventLoops = executor == "event-loops" && EventLoopExecutor.install()
            if verbose {
                let why = executor == "default" ? "B2C_EMULATOR_EXECUTOR=default" : "another global-executor hook is set"
                let place = onEventLoops ? "on the \(EventLoopExecutor.loops) event-loop threads" : "on Swift's default executor (\(why))"
                FileHandle.standardError.write(Data("b2c-emulator: requests run \(place)\n".utf8))
            }
        }

        /// The tenant of the seed, and its External ID side when the seed makes a twin.
        private func makeTenant(_ store: EmulatorStore) throws -> (B2CEmulator, B2CEmulator?) {
            do {
                let seedValue = try loadSeed()
                if seedValue.twin != nil { return try B2CEmulator.twin(seed: seedValue, store: store) }
                return (try B2CEmulator(seed: seedValue, store: store), nil)
            } catch let e as CLIError { throw e } catch {
                throw CLIError("cannot start the emulator with this state and seed: \(error)", exitCode: ExitStatus.configuration)
            }
        }

        /// The twin's External ID side listening, and its configuration written (`--twin-config-out`); on a failure both
        /// listeners stop.
        private func startTwin(
            _ externalSide: B2CEmulator, beside server: EmulatorServer, host: String, tls: EmulatorTLS?, limits: ConnectionLimits
        ) async throws -> EmulatorServer {
            let other: EmulatorServer
            do { other = try await listenTwin(externalSide, host: host, tls: tls, limits: limits) } catch {
                await server.stop()
                throw error
            }
            guard let twinConfigOut else { return other }
            do {
                try writeFile(
                    Data(
                        (externalSide.clientConfiguration(baseURL: other.baseURL, caFile: caFile(tls, twinConfigOut))
                            .serialized(pretty: true) + "\n").utf8), to: twinConfigOut, mode: 0o644)
                try? ConfigurationTrust(storeDirectory: StoreLocation.directory()).allow(ConfigurationTrust.read(twinConfigOut))
            } catch {
                await server.stop()
                await other.stop()
                throw CLIError("--twin-config-out: \(error)", exitCode: ExitStatus.error)
            }
            return other
        }

        /// Until the listener ends; with a twin, until either ends (a signal reaches both), which ends the tenant.
        private func wait(_ server: EmulatorServer, _ twinServer: EmulatorServer?) async throws {
            guard let twinServer else { return try await server.wait() }
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { try await server.wait() }
                group.addTask { try await twinServer.wait() }
                try await group.next()
                await server.stop()
                await twinServer.stop()
                group.cancelAll()
            }
        }

        /// The twin's External ID side's listener: `--twin-port`, else (with `--state`) its port of last time, else any.
        private func listenTwin(
            _ emulator: B2CEmulator, host: String, tls: EmulatorTLS?, limits: ConnectionLimits
        ) async throws -> EmulatorServer {
            let portFile = state.map { URL(fileURLWithPath: $0).appendingPathComponent("twin-port") }
            let chosen = twinPort ?? portFile.flatMap(Self.lastPort) ?? 0
            let server: EmulatorServer
            do {
                server = try await EmulatorServer.start(
                    emulator, host: host, port: chosen, tls: tls, handleSignals: true, logger: requestLogger, limits: limits)
            } catch {
                throw CLIError("cannot listen for the External ID side on port \(chosen): \(error)", exitCode: ExitStatus.network)
            }
            if let portFile, server.port != chosen { try? Data("\(server.port)\n".utf8).write(to: portFile, options: .atomic) }
            return server
        }

        /// `--custom-policies DIR`: a folder that cannot be read, or a policy B2C would refuse, stops the start (exit 3).
        private func loadCustomPolicies(_ emulator: B2CEmulator, from path: String) throws {
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue else {
                throw CLIError(
                    "--custom-policies names '\(path)', which is not a folder; give the folder that holds the policy files (*.xml).",
                    exitCode: ExitStatus.configuration)
            }
            let started = ContinuousClock.now
            do { try emulator.customPolicies.load(directory: URL(fileURLWithPath: path)) } catch let e as PolicyLoadError {
                throw CLIError("a custom policy of \(path) is refused: \(e.description)", exitCode: ExitStatus.configuration)
            } catch {
                throw CLIError(
                    "cannot read the custom policies of \(path): \(error.localizedDescription)", exitCode: ExitStatus.configuration)
            }
            if verbose {
                let ms = String(format: "%.1f", (ContinuousClock.now - started) / .milliseconds(1))
                let ids = emulator.customPolicies.ids
                let line = "b2c-emulator: custom policies: \(ids.joined(separator: ", ")) (\(ids.count) read and checked in \(ms) ms)\n"
                FileHandle.standardError.write(Data(line.utf8))
            }
        }

        /// The seed (`--seed`, else the default tenant), as an External ID tenant with `--external-id`.
        private func loadSeed() throws -> EmulatorSeed {
            var seedValue: EmulatorSeed
            if let seed {
                let data: Data
                do { data = try LocalFile.read(seed) } catch {
                    throw CLIError("the seed file \(error)", exitCode: ExitStatus.configuration)
                }
                do { seedValue = try EmulatorSeed.parse(data, externalId: externalId) } catch let e as JSONPathError {
                    throw CLIError("the seed file '\(seed)' is invalid: \(e.path) \(e.message)", exitCode: ExitStatus.configuration)
                }
            } else {
                seedValue = twin ? .defaultTwin : .default
            }
            if twin && seedValue.twin == nil {
                throw CLIError(
                    "--twin needs the External ID side's app registrations: the seed file '\(seed ?? "")' has no twin section "
                        + "(see `b2c-emulator default-seed --twin`)", exitCode: ExitStatus.configuration)
            }
            if externalId && seedValue.twin != nil {
                throw CLIError(
                    "--external-id serves an External ID tenant, and the seed is a twin (a B2C tenant with its External ID side); "
                        + "leave out --external-id", exitCode: ExitStatus.configuration)
            }
            if externalId { seedValue.tenant.externalId = true }
            if seedValue.tenant.externalId && seedValue.externalIdFlow == nil {
                throw CLIError(
                    "--external-id needs a user flow of kind signUpSignIn in the seed: it is the app's user flow",
                    exitCode: ExitStatus.configuration)
            }
            return seedValue
        }

        /// The tenant's state (`--state DIR`, else memory) and where its TLS material lives (a temporary directory then).
        private func openState() throws -> (EmulatorStore, URL) {
            do {
                if let state {
                    let dir = URL(fileURLWithPath: state)
                    return (try EmulatorStore.file(directory: dir), dir)
                }
                return (
                    try EmulatorStore.inMemory(),
                    FileManager.default.temporaryDirectory.appendingPathComponent("b2c-emulator-\(getpid())-\(Random.token(bytes: 4))")
                )
            } catch {
                throw CLIError("cannot open the emulator state in '\(state ?? "memory")': \(error)", exitCode: ExitStatus.error)
            }
        }

        /// One line per request (`--log-format`), or the framework's log with `--verbose`; nil: quiet.
        private var requestLogger: Logger? {
            if let logFormat {
                var l = Logger(label: "b2c.emulator") { _ in RequestLogHandler(format: logFormat) }
                l.logLevel = .info
                return l
            }
            guard verbose else { return nil }
            var l = Logger(label: "b2c.emulator")
            l.logLevel = .info
            return l
        }

        /// Who the admin surface answers, in the start line's words.
        private var adminAccess: String {
            switch (adminTokenRequired == true, adminTokenFile != nil) {
            case (true, true): "with the token only"
            case (true, false): "closed: the token is required and there is no --admin-token-file"
            case (false, true): "loopback, or with the token"
            case (false, false): "loopback only"
            }
        }

        /// `--admin-token-file`: the admin surface answers other machines that present the token written there (0600);
        /// with `--admin-token-required`, loopback ones too.
        private func openAdminSurface(_ emulator: B2CEmulator) throws {
            if adminTokenRequired == true { emulator.requireAdminToken() }
            guard let adminTokenFile else { return }
            let token = Random.token(bytes: 32)
            do {
                try makeParentDirectories(of: adminTokenFile)
                try writeFile(Data((token + "\n").utf8), to: adminTokenFile, mode: 0o600)
            } catch {
                throw CLIError("--admin-token-file: \(error)", exitCode: ExitStatus.error)
            }
            emulator.openAdmin(token: token)
            let who = adminTokenRequired == true ? "requests" : "other machines"
            FileHandle.standardError.write(
                Data(
                    ("b2c-emulator: warning: the admin surface (clock, faults, users, outbox) answers \(who) that present the "
                        + "token in \(adminTokenFile); keep that file to the tests that drive this tenant\n").utf8))
        }

        /// Listens on `--port`, else (with `--state`) the port the tenant served on last, else any free port.
        private func listen(
            _ emulator: B2CEmulator, host: String, tls: EmulatorTLS?, limits: ConnectionLimits
        ) async throws -> EmulatorServer {
            // With --state the tenant keeps its port: the issuer names it, and clients keep their accounts per issuer.
            let portFile = state.map { URL(fileURLWithPath: $0).appendingPathComponent("port") }
            let lastPort = port == nil ? portFile.flatMap(Self.lastPort) : nil
            func start(_ port: Int) async throws -> EmulatorServer {
                try await EmulatorServer.start(
                    emulator, host: host, port: port, tls: tls, handleSignals: true, logger: requestLogger, limits: limits)
            }
            var server: EmulatorServer?
            if port == nil, lastPort == nil, portFile != nil {
                for candidate in Self.keepablePorts() {
                    do {
                        server = try await start(candidate)
                        break
                    } catch let e as EmulatorStartError where e.portInUse {
                        continue
                    } catch {
                        break  // not the port: said by the start below
                    }
                }
            }
            if server == nil {
                do {
                    server = try await start(port ?? lastPort ?? 0)
                } catch let e as EmulatorStartError where e.portInUse && lastPort != nil {
                    throw CLIError(
                        "cannot listen on port \(lastPort ?? 0), where the tenant in '\(state ?? "")' served last: another program "
                            + "holds it. Stop that program, or give --port (0 for any free port) — the accounts clients keep for the "
                            + "old address will not match a new one.", exitCode: ExitStatus.network)
                } catch {
                    throw CLIError("\(error)", exitCode: ExitStatus.network)
                }
            }
            guard let server else { preconditionFailure("started or thrown above") }
            if let portFile, server.port != lastPort {
                try? Data("\(server.port)\n".utf8).write(to: portFile, options: .atomic)
            }
            return server
        }

        /// `--ca-out`: the CA's certificate, readable by all (a container's host reads it as another user).
        private func writeCA(_ tls: EmulatorTLS, to path: String) throws {
            let pem = tls.caCertificatePEM.hasSuffix("\n") ? tls.caCertificatePEM : tls.caCertificatePEM + "\n"
            do {
                try makeParentDirectories(of: path)
                try writeFile(Data(pem.utf8), to: path, mode: 0o644)
                try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: path)
            } catch { throw CLIError("--ca-out: \(error)", exitCode: ExitStatus.error) }
        }

        /// The CA `--config-out` names: `--ca-out`'s copy by its path from the configuration's directory (b2c resolves a
        /// relative caFile there), so that a host reading both through one mount finds it; else the state directory's.
        private func caFile(_ tls: EmulatorTLS?, _ configOut: String) -> String? {
            guard tls != nil, let caOut else { return tls?.caPath.path }
            let from = URL(fileURLWithPath: configOut).standardizedFileURL.deletingLastPathComponent().pathComponents
            let to = URL(fileURLWithPath: caOut).standardizedFileURL.pathComponents
            let shared = zip(from, to).prefix { $0 == $1 }.count
            return (Array(repeating: "..", count: from.count - shared) + to[shared...]).joined(separator: "/")
        }

        /// `--config-out`: the client configuration (of `--client`), or an app's settings (`--app`, with its secret: 0600).
        private func writeConfiguration(to path: String, _ emulator: B2CEmulator, baseURL: String, caFile: String?) throws {
            var json = emulator.clientConfiguration(baseURL: baseURL, caFile: caFile)
            if let client {
                let registration = try Self.registration(client, of: emulator)
                json = emulator.clientConfiguration(baseURL: baseURL, caFile: caFile, app: registration)
            }
            if let app {
                let registration = try Self.registration(app, of: emulator)
                json = emulator.appSettings(baseURL: baseURL, app: registration, caFile: caFile)
            }
            do {
                // An app's settings hold its secret: only the owner reads them (written aside, then renamed into place).
                try makeParentDirectories(of: path)
                try writeFile(Data((json.serialized(pretty: true) + "\n").utf8), to: path, mode: app == nil ? 0o644 : 0o600)
            } catch {
                throw CLIError("--config-out: \(error)", exitCode: ExitStatus.error)
            }
            // Written by the user's own command, as `b2c init` writes one: b2c may use it from the working directory.
            if app == nil {
                try? ConfigurationTrust(storeDirectory: StoreLocation.directory()).allow(ConfigurationTrust.read(path))
            }
        }

        /// Ports to try for a new `--state` tenant, which keeps its first port: below the kernel's ephemeral range
        /// (`/proc/sys/net/ipv4/ip_local_port_range`), where the kernel never hands a port to another program's outgoing
        /// connection or port-0 listener, so the port is still free when the tenant restarts. Empty (any free port, as
        /// before) when the range cannot be read or leaves no room.
        static func keepablePorts() -> [Int] {
            guard let text = try? String(contentsOfFile: "/proc/sys/net/ipv4/ip_local_port_range", encoding: .utf8),
                let low = text.split(whereSeparator: \.isWhitespace).first.flatMap({ Int($0) }), low > 11_000
            else { return [] }
            return (0..<8).map { _ in Int.random(in: 10_000..<low) }
        }

        /// The port a `--state` tenant served on last, if it recorded one.
        static func lastPort(_ file: URL) -> Int? {
            guard let text = try? String(contentsOf: file, encoding: .utf8),
                let n = Int(text.trimmingCharacters(in: .whitespacesAndNewlines)),
                (1...65535).contains(n)
            else { return nil }
            return n
        }

        /// The seed's app of that name or client id; none stops the tenant and lists the apps there are.
        static func registration(_ name: String, of emulator: B2CEmulator) throws -> EmulatorSeed.App {
            guard let registration = emulator.app(named: name) else {
                throw CLIError(
                    "no app '\(name)' in the seed (apps: \(emulator.seed.apps.map(\.name).joined(separator: ", ")))",
                    exitCode: ExitStatus.configuration)
            }
            return registration
        }

    }
}

/// How `serve --log-format` writes its request lines.
enum RequestLogFormat: String, ExpressibleByArgument, CaseIterable, Sendable { case text, json }

/// One line per request on stdout, as text (`2026-11-25T13:50:46Z GET /path 200 3ms`) or as a JSON object with
/// `time`, `method`, `path`, `status` and `ms` — what a container's log collector reads. Paths carry no query (where
/// codes and tokens would be).
struct RequestLogHandler: LogHandler {
    let format: RequestLogFormat
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .info

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        let fields = event.metadata ?? [:]
        // The server's own messages: problems go to stderr, the rest (its start) is the start line's business.
        guard fields["method"] != nil else {
            if event.level >= .warning { FileHandle.standardError.write(Data("b2c-emulator: \(event.message)\n".utf8)) }
            return
        }
        let time = Date().ISO8601Format()
        func value(_ key: String) -> String { fields[key].map { "\($0)" } ?? "" }
        let line: String
        switch format {
        case .text:
            line = "\(time) \(value("method")) \(value("path")) \(value("status")) \(value("ms"))ms"
        case .json:
            var o: [String: JSONValue] = [
                "time": .string(time), "method": .string(value("method")), "path": .string(value("path")),
            ]
            if let status = Int(value("status")) { o["status"] = JSONValue(status) } else { o["status"] = .string(value("status")) }
            if let ms = Int(value("ms")) { o["ms"] = JSONValue(ms) }
            line = JSONValue.object(o).serialized()
        }
        FileHandle.standardOutput.write(Data((line + "\n").utf8))
    }
}
