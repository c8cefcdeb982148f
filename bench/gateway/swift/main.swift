// Fixtures for bench/gateway/run.sh: signs `--count` fresh StoreKit 2
// transactions (distinct transaction ids) with a throw-away local testing PKI
// shaped like Apple's, and writes
//   <out>/root.der      the PKI's root: PaymentsService must trust it (APPLE_ROOT_CERTS)
//   <out>/bodies.jsonl  one verify-route request body per line
// The PKI lives only for this run. Never deploy its root.
//
//   GatewayBench --out DIR [--count N] [--bundle-id ID] [--environment Sandbox]
//                [--product-code starter_pack] [--app-store-product-id ID]
import AppStoreVerification
import Foundation

/// The command line, with the transaction count bounded.
struct FixtureOptions {
    static let countMax = 200_000

    var outputDirectory = ""
    var count = 5_000
    var bundleId = "com.meeyao.qianwen"
    var environment = "Sandbox"
    var productCode = "starter_pack"
    var appStoreProductId = "com.meeyao.qianwen.starter_pack"

    init(arguments: [String]) throws {
        var index = 0
        func value() throws -> String {
            index += 1
            guard index < arguments.count else { throw FixtureError("missing value for \(arguments[index - 1])") }
            return arguments[index]
        }
        while index < arguments.count {
            switch arguments[index] {
            case "--out": outputDirectory = try value()
            case "--count":
                let text = try value()
                guard let parsed = Int(text), (1...Self.countMax).contains(parsed) else {
                    throw FixtureError("--count must be 1...\(Self.countMax)")
                }
                count = parsed
            case "--bundle-id": bundleId = try value()
            case "--environment": environment = try value()
            case "--product-code": productCode = try value()
            case "--app-store-product-id": appStoreProductId = try value()
            case let other: throw FixtureError("unknown argument \(other)")
            }
            index += 1
        }
        guard !outputDirectory.isEmpty else { throw FixtureError("--out DIR is required") }
    }
}

/// A usage or I/O problem, said in words.
struct FixtureError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

do {
    let options = try FixtureOptions(arguments: Array(CommandLine.arguments.dropFirst()))
    let authority = try LocalTestingCertificateAuthority()
    let nowMilliseconds = Int64(Date().timeIntervalSince1970 * 1000)
    // 16-digit ids like Apple's, unique per run: a random 10-digit prefix, then the index.
    let idBase = UInt64.random(in: 1_000_000_000...9_999_999_999) * 1_000_000
    var bodies = ""
    bodies.reserveCapacity(options.count * 2_600)
    for index in 0..<options.count {
        let transactionId = String(idBase + UInt64(index))
        let payload =
            "{\"transactionId\":\"\(transactionId)\",\"originalTransactionId\":\"\(transactionId)\","
            + "\"bundleId\":\"\(options.bundleId)\",\"productId\":\"\(options.appStoreProductId)\","
            + "\"purchaseDate\":\(nowMilliseconds - 5000),\"quantity\":1,\"type\":\"Consumable\","
            + "\"inAppOwnershipType\":\"PURCHASED\",\"environment\":\"\(options.environment)\",\"signedDate\":\(nowMilliseconds)}"
        let jws = try authority.sign(payloadJSON: payload)
        bodies +=
            "{\"productCode\":\"\(options.productCode)\",\"appStoreProductId\":\"\(options.appStoreProductId)\","
            + "\"transactionId\":\"\(transactionId)\",\"signedTransactionInfo\":\"\(jws)\"}\n"
    }
    let directory = URL(fileURLWithPath: options.outputDirectory)
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    try authority.rootDER.write(to: directory.appendingPathComponent("root.der"))
    try Data(bodies.utf8).write(to: directory.appendingPathComponent("bodies.jsonl"))
    print("wrote \(options.count) verify bodies and root.der to \(options.outputDirectory)")
} catch {
    FileHandle.standardError.write(Data("GatewayBench: \(error)\n".utf8))
    exit(1)
}
