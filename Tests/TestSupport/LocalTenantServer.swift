import B2CEmulator
import Foundation
import NIOSSL

/// The one way a test starts a local tenant: the emulator in this process on an ephemeral loopback port, over plain HTTP
/// or TLS (its CA made in a directory of its own unless the test names one), and stopped with its database closed and
/// its temporary files gone. Each suite's helper (TestTenant, LocalTenant, World) adds what it asks of the tenant.
public final class LocalTenantServer: Sendable {
    public let server: EmulatorServer
    /// The TLS material the listener serves, when it serves TLS.
    public let tls: EmulatorTLS?
    /// A directory this helper made (for the CA) and removes when it stops.
    private let madeDirectory: URL?

    public var emulator: B2CEmulator { server.emulator }
    public var baseURL: String { server.baseURL }

    private init(server: EmulatorServer, tls: EmulatorTLS?, madeDirectory: URL?) {
        self.server = server; self.tls = tls; self.madeDirectory = madeDirectory
    }

    /// A tenant of `seed`, its database in memory or in `stateDirectory`.
    public static func start(
        seed: EmulatorSeed = .default, tls: Bool = false, stateDirectory: URL? = nil, tlsDirectory: URL? = nil,
        hostNames: [String] = [], limits: ConnectionLimits = .init()
    ) async throws -> LocalTenantServer {
        let store = try stateDirectory.map { try EmulatorStore.file(directory: $0) } ?? EmulatorStore.inMemory()
        return try await start(
            try B2CEmulator(seed: seed, store: store), tls: tls, tlsDirectory: tlsDirectory ?? stateDirectory, hostNames: hostNames,
            limits: limits)
    }

    /// The listener of a tenant the test made (a twin's side, one with a seed built in place).
    public static func start(
        _ emulator: B2CEmulator, tls: Bool = false, tlsDirectory: URL? = nil, hostNames: [String] = [],
        limits: ConnectionLimits = .init()
    ) async throws -> LocalTenantServer {
        var material: EmulatorTLS?
        var made: URL?
        if tls {
            let directory = tlsDirectory ?? temporaryDirectory("b2c-test-ca")
            if tlsDirectory == nil { made = directory }
            material = try EmulatorTLS.loadOrCreate(in: directory, extraHostNames: hostNames)
        }
        let server = try await EmulatorServer.start(emulator, tls: material, limits: limits)
        return LocalTenantServer(server: server, tls: material, madeDirectory: made)
    }

    /// The two sides of a twin tenant over one in-memory store, each on a listener of its own; with `tls`, both serve one
    /// certificate of one CA (made in `tlsDirectory`, or in a directory of its own).
    public static func twin(
        seed: EmulatorSeed = .defaultTwin, tls: Bool = false, tlsDirectory: URL? = nil
    ) async throws -> (b2c: LocalTenantServer, externalId: LocalTenantServer) {
        let sides = try B2CEmulator.twin(seed: seed, store: try EmulatorStore.inMemory())
        let shared = tls ? (tlsDirectory ?? temporaryDirectory("b2c-test-ca")) : nil
        let b2c = try await start(sides.b2c, tls: tls, tlsDirectory: shared)
        // The External ID side removes the CA directory it shares when it stops, if this call made it.
        let externalId = try await start(sides.externalId, tls: tls, tlsDirectory: shared)
        if tls && tlsDirectory == nil, let shared {
            return (b2c, LocalTenantServer(server: externalId.server, tls: externalId.tls, madeDirectory: shared))
        }
        return (b2c, externalId)
    }

    /// A client TLS configuration that trusts this tenant's CA (the system's roots when it serves plain HTTP).
    public func clientTLS() throws -> TLSConfiguration {
        var configuration = TLSConfiguration.makeClientConfiguration()
        if let tls {
            configuration.trustRoots = .certificates([try NIOSSLCertificate(bytes: Array(tls.caCertificatePEM.utf8), format: .pem)])
        }
        return configuration
    }

    /// Stops the listener (awaited), closes the database (a suite starts hundreds of tenants: their files must not add
    /// up) and removes the directory this helper made.
    public func stop() async {
        await server.stop()
        emulator.store.close()
        if let madeDirectory { try? FileManager.default.removeItem(at: madeDirectory) }
    }

    /// A tenant for the length of `body`, stopped however `body` ends.
    public static func with<T>(
        seed: EmulatorSeed = .default, tls: Bool = false, limits: ConnectionLimits = .init(),
        _ body: (LocalTenantServer) async throws -> T
    ) async throws -> T {
        let tenant = try await start(seed: seed, tls: tls, limits: limits)
        do {
            let out = try await body(tenant)
            await tenant.stop()
            return out
        } catch {
            await tenant.stop()
            throw error
        }
    }
}

/// A fresh directory path under the system's temporary directory (not created).
public func temporaryDirectory(_ prefix: String) -> URL {
    FileManager.default.temporaryDirectory.appendingPathComponent("\(prefix)-\(UUID().uuidString)")
}
