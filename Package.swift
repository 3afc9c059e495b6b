// swift-tools-version:6.1
import PackageDescription

// `--static-swift-stdlib` links with `-export-dynamic` (the runtime's link file), which puts every public symbol of every
// package module (GRDB, NIO, X509…) into the dynamic symbol table. Nothing looks them up, but each start pays for it: the
// runtime's first `dladdr` scans that table. The figures are in bench/README.md, "The lean client".
let leanStart: [LinkerSetting] = [.unsafeFlags(["-Xlinker", "--no-export-dynamic"], .when(platforms: [.linux]))]
// The fast path is one static executable (the Swift runtime, SQLite, libcrypto's SHA-256 and AES-GCM, the C library): no
// dynamic loader, no relocations against shared libraries at start (bench/README.md, "token cache hit").
let fastStart: [LinkerSetting] = [.unsafeFlags(["-static-executable"], .when(platforms: [.linux], configuration: .release))]

let package = Package(
    name: "b2c",
    platforms: [.macOS(.v14)],
    products: [
        .library(name: "B2CProtocol", targets: ["B2CProtocol"]),
        .library(name: "B2CKit", targets: ["B2CKit"]),
        .library(name: "B2CEmulator", targets: ["B2CEmulator"]),
        .executable(name: "b2c", targets: ["b2c"]),
        .executable(name: "b2c-client", targets: ["b2c-client"]),
        .executable(name: "b2c-emulator", targets: ["b2c-emulator"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-crypto", from: "4.5.2"),
        .package(url: "https://github.com/apple/swift-certificates", from: "1.21.1"),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.37.6"),
        .package(url: "https://github.com/apple/swift-asn1", from: "1.7.4"),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.4.0"),
        .package(url: "https://github.com/vapor/jwt-kit", from: "5.8.0"),
        .package(url: "https://github.com/hummingbird-project/swift-mustache", from: "2.1.1"),
    ],
    targets: [
        // Wire values both sides speak (JSON, forms, base64url, PKCE, JWT/JWKS, B2C errors, request values) and the
        // shared vocabulary (policy roles, the policy-id rule, loopback and secure URLs): the emulator needs no client.
        .target(
            name: "B2CProtocol",
            dependencies: [
                "B2CFastPath",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
            ]
        ),
        // The freedesktop Secret Service over D-Bus, spoken directly (no libsecret or libdbus at build or run time).
        .target(name: "SecretService"),
        // What a token cache hit needs and nothing more: the question a `b2c token` command asks, the answer the full client
        // files for it, the store's sealed secrets, the token's printed forms. Shared by B2CKit and the fast path.
        .target(name: "B2CFastPath", dependencies: ["CStoreCrypto"]),
        // libcrypto's archive, so that only SHA-256, AES and GCM are linked in (the shared library's start costs more than a
        // cache hit's lookup).
        .target(name: "CStoreCrypto", linkerSettings: [.unsafeFlags(["-Xlinker", "-l:libcrypto.a"])]),
        // The tenant's RS256 signatures through the same libcrypto (the faster RSA on every machine measured; bench/README.md,
        // "Signing at the machine's limit"). A target of its own, so that the client's fast path links none of RSA. Optimised
        // in debug builds too: the lanes' passes are timed at load against libcrypto's signatures, and unoptimised they never
        // pay, so the tests of a debug build would never see a tenant sign in batches.
        .target(
            name: "CTokenSigning", cSettings: [.unsafeFlags(["-O2"])],
            linkerSettings: [.unsafeFlags(["-Xlinker", "-l:libcrypto.a"])]),
        .systemLibrary(name: "CSQLite", path: "Sources/CSQLite"),
        // Non-variadic shims over the Linux key syscalls (no libkeyutils): the cache of the store's unwrapped data key.
        .target(name: "CKeyring"),
        // The Swift runtime's global-executor hook, reached by linking (a static standard library hides it from dlsym).
        .target(name: "CExecutorHook"),
        .target(
            name: "B2CKit",
            dependencies: [
                "B2CProtocol",
                "B2CFastPath",
                "SecretService",
                "CKeyring",
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ]
        ),
        .target(
            name: "B2CEmulator",
            dependencies: [
                "B2CProtocol",
                "B2CFastPath",
                "CTokenSigning",
                "CSQLite",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTLS", package: "hummingbird"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Mustache", package: "swift-mustache"),
            ],
            // ICU as Foundation ships it (`_FoundationICU`): a custom policy's regular expressions run with ICU's match time
            // limit, which NSRegularExpression does not offer (CustomPolicies/PolicyRegex.swift).
            linkerSettings: [.linkedLibrary("_FoundationICU")]
        ),
        // The client's commands. It does not link the emulator: `b2c emulator …` and `b2c demo` hand over to b2c-emulator,
        // so that a token cache hit does not pay for the tenant's code at start-up (bench/README.md, "lean client").
        .target(
            name: "B2CCLI",
            dependencies: [
                "B2CKit",
                "B2CFastPath",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        // `b2c`: the fast path of `b2c token` (a cache hit answered from the store), and the hand-over to the full client.
        .executableTarget(name: "b2c", dependencies: ["B2CFastPath", "CSQLite", "CKeyring"], linkerSettings: fastStart),
        // `b2c-client`: every command, and every `b2c token` the fast path hands over.
        .executableTarget(name: "b2c-client", dependencies: ["B2CCLI", "B2CKit"], linkerSettings: leanStart),
        // The local tenant's commands (`emulator serve`, `emulator default-seed`, `demo`), in their own program.
        .target(
            name: "B2CEmulatorCLI",
            dependencies: [
                "B2CCLI", "B2CKit", "B2CEmulator",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                "CExecutorHook",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ]
        ),
        .executableTarget(name: "b2c-emulator", dependencies: ["B2CEmulatorCLI"], linkerSettings: leanStart),
        // A scripted user agent that end-to-end tests use as $BROWSER.
        .executableTarget(
            name: "b2c-test-agent",
            dependencies: ["B2CEmulator"],
            path: "Tests/Agent"
        ),
        // docs/library.md's example program: B2CKit as a library (run by LibraryExampleTests against a local tenant).
        .executableTarget(name: "b2c-library-example", dependencies: ["B2CKit"], path: "Examples/LibraryExample"),
        // The measuring half of the emulator benchmarks (bench/README.md): the signing bound with the emulator's own RSA
        // code, and a pipeline's worth of concurrent clients.
        .executableTarget(
            name: "b2c-bench",
            dependencies: [
                "B2CEmulator", "B2CProtocol", "B2CKit",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
            ],
            path: "bench/Tool"
        ),
        // How tests start programs: posix_spawn with a process group, default signals and no stray descriptors, not
        // Foundation's Process (Tests/ChildProcess/ChildProcess.swift says why).
        .target(name: "CChildProcess", path: "Tests/CChildProcess"),
        .target(name: "ChildProcess", dependencies: ["CChildProcess"], path: "Tests/ChildProcess"),
        // The one way tests start a local tenant (LocalTenantServer), beside ChildProcess, the one way they start programs.
        .target(
            name: "TestSupport",
            dependencies: ["B2CEmulator", "ChildProcess", .product(name: "NIOSSL", package: "swift-nio-ssl")],
            path: "Tests/TestSupport"),
        .testTarget(
            name: "B2CKitTests",
            dependencies: ["B2CKit", "B2CEmulator", "TestSupport"]
        ),
        .testTarget(
            name: "SecretServiceTests",
            dependencies: ["SecretService", "ChildProcess"]
        ),
        .testTarget(
            name: "B2CCLITests",
            dependencies: ["B2CCLI", "B2CKit"]
        ),
        .testTarget(
            name: "B2CEmulatorTests",
            dependencies: [
                "B2CKit", "B2CEmulator", "ChildProcess", "TestSupport",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ],
            // Golden files the tests read from the source tree (SeedRefusalTests), not resources.
            exclude: ["Fixtures"]
        ),
        .testTarget(
            name: "EndToEndTests",
            dependencies: [
                "B2CKit", "B2CEmulator", "B2CCLI", "B2CEmulatorCLI", "ChildProcess", "TestSupport",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
