// swift-tools-version:6.0
// The Apple In-App Purchase crediting backend: three services (Gateway,
// PaymentsService, PointsService) over a gRPC-compatible runtime built on
// nghttp2 and protobuf-c, with PostgreSQL through libpq and crypto through
// OpenSSL. No outside Swift packages: only the toolchain and Debian's C libs.
import PackageDescription

let package = Package(
    name: "IAPCredits",
    platforms: [.macOS(.v14), .iOS(.v16)],
    products: [
        .executable(name: "Gateway", targets: ["Gateway"]),
        .executable(name: "PaymentsService", targets: ["PaymentsService"]),
        .executable(name: "PointsService", targets: ["PointsService"]),
        .executable(name: "Demo", targets: ["Demo"]),
        .library(name: "RPCCore", targets: ["RPCCore"]),
        .library(name: "RPCRuntime", targets: ["RPCRuntime"]),
        .library(name: "IAPCreditsClient", targets: ["IAPCreditsClient"]),
    ],
    targets: [
        // MARK: C libraries from Debian (pkg-config names as in the issue).
        .systemLibrary(name: "CNGHTTP2", pkgConfig: "libnghttp2", providers: [.apt(["libnghttp2-dev"])]),
        .systemLibrary(name: "CProtobufC", pkgConfig: "libprotobuf-c", providers: [.apt(["libprotobuf-c-dev"])]),
        .systemLibrary(name: "COpenSSL", pkgConfig: "openssl", providers: [.apt(["libssl-dev"])]),
        .systemLibrary(name: "CLibPQ", pkgConfig: "libpq", providers: [.apt(["libpq-dev"])]),
        // Linux's epoll, eventfd and socket headers for RPCRuntime's I/O (libc, nothing to link).
        .systemLibrary(name: "CEventIO"),

        // MARK: Contracts: protobuf-c code generated from Protos/ and its Swift face.
        .target(
            name: "CContracts",
            path: "Sources/CContracts",
            cSettings: [.headerSearchPath("include")],
            linkerSettings: [.linkedLibrary("protobuf-c")]
        ),
        .target(name: "Contracts", dependencies: ["CContracts", "CProtobufC", "RPCCore"]),

        // MARK: Infrastructure.
        // gRPC's protocol without I/O: status, metadata, errors, framing, routing.
        .target(name: "RPCCore"),
        // The transport: event loop, sockets, HTTP/2 on nghttp2, TLS, client, server.
        .target(name: "RPCRuntime", dependencies: ["RPCCore", "CEventIO", "CNGHTTP2", "COpenSSL", "Locking"]),
        .target(name: "PostgresClient", dependencies: ["CLibPQ", "CEventIO", "UUIDText", "Locking"]),
        .target(name: "StrictJSON"),
        // UUIDs as 36-byte text, read and written without sscanf/sprintf.
        .target(name: "UUIDText"),
        // The field rules all three services share (ids, codes, the email identity).
        .target(name: "FieldRules", dependencies: ["UUIDText"]),
        // The lock every module uses: the standard library's Mutex, or one ThreadSanitizer sees
        // when built with -DTSAN_VISIBLE_LOCKS (scripts/thread-check.sh).
        .target(name: "Locking"),
        // Prometheus metrics: families, the text exposition, /proc, the IAP names (no C).
        .target(name: "Metrics", dependencies: ["Locking"]),
        // JSON-line logging every library can use (lines written by StrictJSON's writer).
        .target(name: "Logging", dependencies: ["StrictJSON", "UTCTime", "Locking"]),
        // RFC 3339 and HTTP-date timestamps, written and read (no C, no Foundation formatter).
        .target(name: "UTCTime"),
        // The one home of SHA-256, HMAC, ES256, strict base64 and PEM (docs/ARCHITECTURE.md).
        .target(name: "CryptoPrimitives", dependencies: ["COpenSSL"]),
        .target(name: "AppStoreVerification", dependencies: ["COpenSSL", "CryptoPrimitives", "StrictJSON"]),
        // Apple's App Store Server API over HTTP/2 + TLS (RPCRuntime's loop), ES256 JWTs.
        .target(
            name: "AppStoreServerAPI",
            dependencies: ["RPCCore", "RPCRuntime", "CryptoPrimitives", "StrictJSON", "UTCTime", "Locking"]),
        // StoreKit 1 app receipts read locally (PKCS #7 / ASN.1, DER and BER) in Swift; base64 from CryptoPrimitives.
        .target(name: "AppReceipt", dependencies: ["CryptoPrimitives", "UTCTime"]),
        .executableTarget(name: "JWSBench", dependencies: ["AppStoreVerification"], path: "bench/jws"),
        .target(name: "BenchSupport", path: "bench/support"),
        .executableTarget(
            name: "PointsBench", dependencies: ["RPCRuntime", "Contracts", "ServiceKit", "BenchSupport"],
            path: "bench/points/swift"),
        .executableTarget(
            name: "SagaBench", dependencies: ["RPCRuntime", "Contracts", "ServiceKit", "BenchSupport", "StrictJSON"],
            path: "bench/saga/swift"),
        .executableTarget(name: "GatewayBench", dependencies: ["AppStoreVerification"], path: "bench/gateway/swift"),
        .executableTarget(
            name: "FaultBench",
            dependencies: ["AppStoreVerification", "RPCCore", "RPCRuntime", "Contracts", "IAPCreditsClient"],
            path: "bench/fault/swift"),
        // The self-pipe signal handler behind ServiceKit's ShutdownSignal.
        .target(name: "CSignalPipe"),
        .target(
            name: "ServiceKit",
            dependencies: [
                "RPCCore", "RPCRuntime", "CSignalPipe", "AdminServer", "Metrics", "Logging", "UTCTime", "Locking",
            ]),
        // What a service that owns a database adds: the pool from DATABASE_URL, `migrate`, the health probe.
        .target(
            name: "ServiceKitDatabase",
            dependencies: ["ServiceKit", "PostgresClient", "RPCRuntime", "Metrics", "Logging", "Locking"]),
        // grpc.health.v1 answered from ServiceKit's HealthMonitor.
        .target(name: "RPCHealthService", dependencies: ["RPCCore", "Contracts", "ServiceKit"]),
        // HTTP/1.1 + h2c (and TLS with ALPN) on one port, on RPCRuntime's loop:
        // the gateway's public listener and every process's admin listener.
        .target(name: "HTTPServer", dependencies: ["RPCCore", "RPCRuntime", "UTCTime", "Locking"]),
        // GET /metrics, /livez and /readyz of every process, on HTTPServer.
        .target(name: "AdminServer", dependencies: ["HTTPServer", "Metrics", "RPCRuntime"]),

        // MARK: The three services.
        .executableTarget(
            name: "PointsService",
            dependencies: [
                "ServiceKit", "ServiceKitDatabase", "RPCHealthService", "RPCCore", "RPCRuntime", "Contracts",
                "PostgresClient", "CryptoPrimitives", "FieldRules", "StrictJSON", "AdminServer", "Metrics", "Logging",
                "UUIDText",
            ]
        ),
        .executableTarget(
            name: "PaymentsService",
            dependencies: [
                "ServiceKit", "ServiceKitDatabase", "RPCHealthService", "RPCCore", "RPCRuntime", "Contracts",
                "PostgresClient", "AppStoreVerification", "AppStoreServerAPI", "CryptoPrimitives", "StrictJSON",
                "FieldRules", "AppReceipt", "AdminServer", "Metrics", "Logging", "UTCTime", "UUIDText", "Locking",
            ]
        ),
        .executableTarget(
            name: "Gateway",
            dependencies: [
                "ServiceKit", "RPCCore", "RPCRuntime", "HTTPServer", "AdminServer", "Metrics", "Contracts",
                "CryptoPrimitives", "StrictJSON", "FieldRules", "Logging", "UTCTime", "Locking",
            ]
        ),
        // A whole purchase through the running gateway, printed step by step (scripts/run.sh).
        .executableTarget(name: "Demo", dependencies: ["AppStoreVerification", "CryptoPrimitives", "StrictJSON"]),
        // A unary echo server on RPCRuntime for interop tests and the benchmark.
        .executableTarget(name: "EchoServer", dependencies: ["RPCCore", "RPCRuntime", "Contracts", "ServiceKit"]),
        // The same echo with protobuf-c as codec, for bench/rpc/run.sh.
        .executableTarget(
            name: "RPCBenchServer", dependencies: ["RPCCore", "RPCRuntime", "CContracts"], path: "bench/rpc/swift"),

        // The app's side (docs/CLIENT.md): Foundation only, so it builds for iOS too.
        .target(name: "IAPCreditsClient"),

        // MARK: Tests.
        .target(name: "TestSupport", dependencies: ["PostgresClient", "CryptoPrimitives"], path: "Tests/TestSupport"),
        .testTarget(name: "StrictJSONTests", dependencies: ["StrictJSON"]),
        .testTarget(name: "CryptoPrimitivesTests", dependencies: ["CryptoPrimitives"]),
        // Fixtures are read from the source tree (#filePath), not bundled.
        .testTarget(name: "MetricsTests", dependencies: ["Metrics"], exclude: ["Fixtures"]),
        .testTarget(name: "LoggingTests", dependencies: ["Logging", "StrictJSON"]),
        .testTarget(name: "UTCTimeTests", dependencies: ["UTCTime"]),
        .testTarget(name: "UUIDTextTests", dependencies: ["UUIDText"]),
        .testTarget(name: "FieldRulesTests", dependencies: ["FieldRules", "TestSupport"]),
        .testTarget(name: "ContractsTests", dependencies: ["Contracts"]),
        .testTarget(name: "RPCCoreTests", dependencies: ["RPCCore"]),
        .testTarget(
            name: "RPCRuntimeTests", dependencies: ["RPCCore", "RPCRuntime", "Contracts", "TestSupport", "CNGHTTP2"]),
        // Pure tests (no PostgreSQL) and, beside them, the database-backed
        // …IntegrationTests: `swift test --filter` of a pure target needs no cluster.
        .testTarget(name: "PostgresClientTests", dependencies: ["PostgresClient"]),
        .testTarget(
            name: "PostgresClientIntegrationTests",
            dependencies: ["PostgresClient", "RPCRuntime", "ServiceKitDatabase"]),
        .testTarget(
            name: "AppStoreVerificationTests",
            dependencies: ["AppStoreVerification", "CryptoPrimitives", "TestSupport"],
            resources: [.copy("Fixtures")]
        ),
        .testTarget(
            name: "ServiceKitTests",
            dependencies: [
                "ServiceKit", "ServiceKitDatabase", "Metrics", "RPCCore", "RPCRuntime", "Logging", "TestSupport",
                "PostgresClient", "UTCTime",
            ]),
        .testTarget(
            name: "RPCHealthServiceTests",
            dependencies: ["RPCHealthService", "ServiceKit", "Contracts", "RPCCore", "RPCRuntime"]),
        .testTarget(name: "AppReceiptTests", dependencies: ["AppReceipt", "TestSupport"]),
        .testTarget(
            name: "AppStoreServerAPITests",
            dependencies: [
                "AppStoreServerAPI", "RPCCore", "AppStoreVerification", "StrictJSON", "CryptoPrimitives", "TestSupport",
                "UTCTime",
            ]),
        .testTarget(
            name: "PointsServiceTests",
            dependencies: ["PointsService", "Contracts", "RPCCore", "TestSupport", "FieldRules", "ServiceKit"]),
        .testTarget(
            name: "PointsServiceIntegrationTests",
            dependencies: [
                "PointsService", "Logging", "PostgresClient", "Contracts", "RPCCore", "RPCRuntime", "TestSupport",
                "FieldRules", "ServiceKit", "ServiceKitDatabase",
            ]),
        .testTarget(
            name: "PaymentsServiceTests",
            dependencies: [
                "PaymentsService", "AppStoreVerification", "Contracts", "RPCCore", "TestSupport", "FieldRules",
                "AppStoreServerAPI", "ServiceKit", "Metrics",
            ]),
        .testTarget(
            name: "PaymentsServiceIntegrationTests",
            dependencies: [
                "PaymentsService", "AppStoreVerification", "CryptoPrimitives", "PostgresClient", "Contracts", "RPCCore",
                "RPCRuntime", "TestSupport", "StrictJSON", "Locking", "Logging",
            ]),
        .testTarget(
            name: "GatewayTests",
            dependencies: [
                "Gateway", "HTTPServer", "Metrics", "Contracts", "RPCCore", "RPCRuntime", "ServiceKit",
                "CryptoPrimitives", "TestSupport", "StrictJSON", "FieldRules", "Logging",
            ]),
        .testTarget(
            name: "AdminServerTests",
            dependencies: ["AdminServer", "HTTPServer", "Metrics", "RPCRuntime", "TestSupport"]),
        .testTarget(name: "HTTPServerTests", dependencies: ["HTTPServer", "RPCRuntime", "TestSupport", "UTCTime"]),
        .target(
            name: "IAPCreditsClientTestSupport", dependencies: ["IAPCreditsClient"],
            path: "Tests/IAPCreditsClientTestSupport"),
        .testTarget(
            name: "IAPCreditsClientTests", dependencies: ["IAPCreditsClient", "IAPCreditsClientTestSupport", "Gateway"]),
        .testTarget(
            name: "IAPCreditsClientIntegrationTests",
            dependencies: [
                "IAPCreditsClient", "IAPCreditsClientTestSupport", "AppStoreVerification", "PostgresClient",
                "TestSupport",
            ]
        ),
        // The module graph against docs/ARCHITECTURE.md, and what the executables link.
        .testTarget(name: "ArchitectureTests", dependencies: ["TestSupport"]),
        .testTarget(
            name: "EndToEndTests",
            dependencies: ["Contracts", "RPCRuntime", "AppStoreVerification", "PostgresClient", "TestSupport", "Demo"]),
    ],
    swiftLanguageModes: [.v6]
)
