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
        .library(name: "RPCRuntime", targets: ["RPCRuntime"]),
        .library(name: "IAPCreditsClient", targets: ["IAPCreditsClient"]),
    ],
    targets: [
        // MARK: C libraries from Debian (pkg-config names as in the issue).
        .systemLibrary(name: "CNGHTTP2", pkgConfig: "libnghttp2", providers: [.apt(["libnghttp2-dev"])]),
        .systemLibrary(name: "CProtobufC", pkgConfig: "libprotobuf-c", providers: [.apt(["libprotobuf-c-dev"])]),
        .systemLibrary(name: "COpenSSL", pkgConfig: "openssl", providers: [.apt(["libssl-dev"])]),
        .systemLibrary(name: "CLibPQ", pkgConfig: "libpq", providers: [.apt(["libpq-dev"])]),

        // MARK: Contracts: protobuf-c code generated from Protos/ and its Swift face.
        .target(
            name: "CContracts",
            path: "Sources/CContracts",
            cSettings: [.headerSearchPath("include")],
            linkerSettings: [.linkedLibrary("protobuf-c")]
        ),
        .target(name: "Contracts", dependencies: ["CContracts", "CProtobufC", "RPCRuntime"]),

        // MARK: Infrastructure.
        .target(name: "RPCRuntime", dependencies: ["CNGHTTP2", "COpenSSL"]),
        .target(name: "PostgresClient", dependencies: ["CLibPQ"]),
        .target(name: "StrictJSON"),
        // The field rules all three services share (ids, codes, the email identity).
        .target(name: "FieldRules"),
        // Prometheus metrics: families, the text exposition, /proc, the IAP names (no C).
        .target(name: "Metrics"),
        .target(name: "AppStoreVerification", dependencies: ["COpenSSL", "StrictJSON"]),
        // Apple's App Store Server API over HTTP/2 + TLS (RPCRuntime's loop), ES256 JWTs.
        .target(name: "AppStoreServerAPI", dependencies: ["RPCRuntime", "AppStoreVerification", "StrictJSON"]),
        // StoreKit 1 app receipts read locally (PKCS #7 / ASN.1, DER and BER); pure Swift, no C.
        .target(name: "AppReceipt"),
        .executableTarget(name: "JWSBench", dependencies: ["AppStoreVerification"], path: "bench/jws"),
        .target(name: "BenchSupport", path: "bench/support"),
        .executableTarget(name: "PointsBench", dependencies: ["RPCRuntime", "Contracts", "ServiceKit", "BenchSupport"], path: "bench/points/swift"),
        .executableTarget(name: "SagaBench", dependencies: ["RPCRuntime", "Contracts", "ServiceKit", "BenchSupport", "StrictJSON"], path: "bench/saga/swift"),
        .executableTarget(name: "GatewayBench", dependencies: ["AppStoreVerification"], path: "bench/gateway/swift"),
        .executableTarget(name: "FaultBench", dependencies: ["AppStoreVerification", "RPCRuntime", "Contracts", "IAPCreditsClient"], path: "bench/fault/swift"),
        // The self-pipe signal handler behind ServiceKit's ShutdownSignal.
        .target(name: "CSignalPipe"),
        .target(name: "ServiceKit", dependencies: ["RPCRuntime", "Contracts", "PostgresClient", "CSignalPipe"]),

        // MARK: The three services.
        .executableTarget(
            name: "PointsService",
            dependencies: ["ServiceKit", "RPCRuntime", "Contracts", "PostgresClient", "COpenSSL", "FieldRules", "StrictJSON"]
        ),
        .executableTarget(
            name: "PaymentsService",
            dependencies: ["ServiceKit", "RPCRuntime", "Contracts", "PostgresClient", "AppStoreVerification", "AppStoreServerAPI", "StrictJSON", "FieldRules", "AppReceipt"]
        ),
        .executableTarget(
            name: "Gateway",
            dependencies: ["ServiceKit", "RPCRuntime", "Contracts", "COpenSSL", "CNGHTTP2", "StrictJSON", "FieldRules"]
        ),
        // A whole purchase through the running gateway, printed step by step (scripts/run.sh).
        .executableTarget(name: "Demo", dependencies: ["AppStoreVerification", "COpenSSL"]),
        // A unary echo server on RPCRuntime for interop tests and the benchmark.
        .executableTarget(name: "EchoServer", dependencies: ["RPCRuntime", "Contracts", "ServiceKit"]),
        // The same echo with protobuf-c as codec, for bench/rpc/run.sh.
        .executableTarget(name: "RPCBenchServer", dependencies: ["RPCRuntime", "CContracts"], path: "bench/rpc/swift"),

        // The app's side (docs/CLIENT.md): Foundation only, so it builds for iOS too.
        .target(name: "IAPCreditsClient"),

        // MARK: Tests.
        .target(name: "TestSupport", dependencies: ["PostgresClient", "COpenSSL"], path: "Tests/TestSupport"),
        .testTarget(name: "StrictJSONTests", dependencies: ["StrictJSON"]),
        .testTarget(name: "MetricsTests", dependencies: ["Metrics"]),
        .testTarget(name: "FieldRulesTests", dependencies: ["FieldRules", "TestSupport"]),
        .testTarget(name: "ContractsTests", dependencies: ["Contracts"]),
        .testTarget(name: "RPCRuntimeTests", dependencies: ["RPCRuntime", "Contracts", "ServiceKit", "TestSupport"]),
        .testTarget(name: "PostgresClientTests", dependencies: ["PostgresClient"]),
        .testTarget(
            name: "AppStoreVerificationTests",
            dependencies: ["AppStoreVerification", "COpenSSL", "TestSupport"],
            resources: [.copy("Fixtures")]
        ),
        .testTarget(name: "ServiceKitTests", dependencies: ["ServiceKit"]),
        .testTarget(name: "AppReceiptTests", dependencies: ["AppReceipt", "TestSupport"]),
        .testTarget(name: "AppStoreServerAPITests", dependencies: ["AppStoreServerAPI", "AppStoreVerification", "StrictJSON", "COpenSSL", "TestSupport"]),
        .testTarget(name: "PointsServiceTests", dependencies: ["PointsService", "PostgresClient", "Contracts", "RPCRuntime", "TestSupport", "FieldRules"]),
        .testTarget(name: "PaymentsServiceTests", dependencies: ["PaymentsService", "AppStoreVerification", "PostgresClient", "Contracts", "RPCRuntime", "TestSupport", "FieldRules"]),
        .testTarget(name: "GatewayTests", dependencies: ["Gateway", "Contracts", "RPCRuntime", "ServiceKit", "COpenSSL", "TestSupport", "StrictJSON", "FieldRules"]),
        .target(name: "IAPCreditsClientTestSupport", dependencies: ["IAPCreditsClient"], path: "Tests/IAPCreditsClientTestSupport"),
        .testTarget(name: "IAPCreditsClientTests", dependencies: ["IAPCreditsClient", "IAPCreditsClientTestSupport", "Gateway"]),
        .testTarget(
            name: "IAPCreditsClientIntegrationTests",
            dependencies: ["IAPCreditsClient", "IAPCreditsClientTestSupport", "AppStoreVerification", "PostgresClient", "TestSupport"]
        ),
        .testTarget(name: "EndToEndTests", dependencies: ["Contracts", "RPCRuntime", "ServiceKit", "AppStoreVerification", "PostgresClient", "TestSupport", "Demo"]),
    ],
    swiftLanguageModes: [.v6]
)
