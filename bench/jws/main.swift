// JWS verification benchmark. Verifies one signed transaction in a loop that
// is bounded both in count and in time, and prints one machine-readable line
// per mode (`key=value` pairs, e.g. `verifications_per_second=...`).
//
//   JWSBench [--jws FILE --root FILE --bundle-id ID] [--mode cached|cold|both]
//            [--iterations N] [--seconds S]
//
// With --jws/--root it verifies that real JWS (e.g. the Apple-signed fixture)
// offline, effective date = signedDate; without them it signs a transaction
// with a generated local testing PKI. Modes: `cached` reuses one verifier
// (chain cache hit: parse + one P-256 signature check); `cold` builds a new
// verifier per verification (root parsed, chain built and checked each time).
import AppStoreVerification
import Foundation

/// Parsed command line; every count and duration is clamped to a bound.
struct BenchOptions {
    static let iterationsMax = 2_000_000
    static let secondsMax = 30.0

    var jwsPath: String?
    var rootPath: String?
    var bundleId = "com.iap.bench"
    var modes = ["cached", "cold"]
    var iterations = 20_000
    var seconds = 3.0

    init(arguments: [String]) throws {
        var index = 0
        func value() throws -> String {
            index += 1
            guard index < arguments.count else { throw BenchError.usage("missing value for \(arguments[index - 1])") }
            return arguments[index]
        }
        while index < arguments.count {
            switch arguments[index] {
            case "--jws": jwsPath = try value()
            case "--root": rootPath = try value()
            case "--bundle-id": bundleId = try value()
            case "--mode":
                let mode = try value()
                guard ["cached", "cold", "both"].contains(mode) else { throw BenchError.usage("unknown mode \(mode)") }
                modes = mode == "both" ? ["cached", "cold"] : [mode]
            case "--iterations":
                guard let count = Int(try value()) else { throw BenchError.usage("--iterations needs an integer") }
                iterations = min(max(count, 1), Self.iterationsMax)
            case "--seconds":
                guard let limit = Double(try value()), limit > 0 else {
                    throw BenchError.usage("--seconds needs a number")
                }
                seconds = min(limit, Self.secondsMax)
            default: throw BenchError.usage("unknown argument \(arguments[index])")
            }
            index += 1
        }
        guard (jwsPath == nil) == (rootPath == nil) else { throw BenchError.usage("--jws and --root go together") }
    }
}

enum BenchError: Error, CustomStringConvertible {
    case usage(String)
    case unreadable(String)

    var description: String {
        switch self {
        case .usage(let text): return "usage: \(text)"
        case .unreadable(let path): return "cannot read \(path)"
        }
    }
}

/// The JWS to verify and the configuration that accepts it.
struct BenchInput {
    let label: String
    let jws: String
    let configuration: VerifierConfiguration

    static func load(_ options: BenchOptions) throws -> BenchInput {
        if let jwsPath = options.jwsPath, let rootPath = options.rootPath {
            guard let data = FileManager.default.contents(atPath: jwsPath) else { throw BenchError.unreadable(jwsPath) }
            let jws = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
            let roots = try VerifierConfiguration.loadRoots(paths: [rootPath])
            let configuration = VerifierConfiguration(
                bundleId: options.bundleId, appAppleId: nil, allowedEnvironments: [.sandbox],
                trustedRoots: roots)
            return BenchInput(label: "file", jws: jws, configuration: configuration)
        }
        let nowSeconds = Int64(Date().timeIntervalSince1970)
        let authority = try LocalTestingCertificateAuthority(options: .init(nowSeconds: nowSeconds))
        let payload =
            "{\"transactionId\":\"2000000000000001\",\"bundleId\":\"\(options.bundleId)\","
            + "\"productId\":\"points_100\",\"purchaseDate\":\(nowSeconds * 1000),\"type\":\"Consumable\","
            + "\"environment\":\"Sandbox\",\"signedDate\":\(nowSeconds * 1000)}"
        let configuration = VerifierConfiguration(
            bundleId: options.bundleId, appAppleId: nil, allowedEnvironments: [.sandbox],
            trustedRoots: [authority.rootDER])
        return BenchInput(
            label: "generated", jws: try authority.sign(payloadJSON: payload), configuration: configuration)
    }
}

/// Runs `body` until `iterations` or `seconds` is reached; returns (count, seconds).
func measure(iterations: Int, seconds: Double, _ body: () throws -> Void) rethrows -> (Int, Double) {
    let clock = ContinuousClock()
    let start = clock.now
    let deadline = start + .nanoseconds(Int64(seconds * 1e9))
    var count = 0
    while count < iterations {
        try body()
        count += 1
        // Checking the clock every 64 iterations keeps its cost out of the figure.
        if count & 63 == 0, clock.now >= deadline { break }
    }
    let elapsed = clock.now - start
    return (count, Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18)
}

do {
    let options = try BenchOptions(arguments: Array(CommandLine.arguments.dropFirst()))
    let input = try BenchInput.load(options)
    let cached = try SignedDataVerifier(configuration: input.configuration)
    let decoded = try cached.verifyTransaction(input.jws)
    print(
        "# input=\(input.label) transaction_id=\(decoded.transactionId ?? "-") jws_length_bytes=\(input.jws.utf8.count)"
    )
    for mode in options.modes {
        let (count, seconds): (Int, Double)
        switch mode {
        case "cached":
            // Warm-up so the first measured call is a cache hit like the rest.
            for _ in 0..<100 { _ = try cached.verifyTransaction(input.jws) }
            (count, seconds) = try measure(iterations: options.iterations, seconds: options.seconds) {
                _ = try cached.verifyTransaction(input.jws)
            }
        default:
            (count, seconds) = try measure(iterations: options.iterations, seconds: options.seconds) {
                _ = try SignedDataVerifier(configuration: input.configuration).verifyTransaction(input.jws)
            }
        }
        let perSecond = Double(count) / seconds
        print(
            "mode=\(mode) input=\(input.label) iterations=\(count) seconds=\(String(format: "%.3f", seconds)) "
                + "microseconds_per_verification=\(String(format: "%.2f", 1e6 / perSecond)) "
                + "verifications_per_second=\(String(format: "%.0f", perSecond))")
    }
} catch {
    FileHandle.standardError.write(Data("JWSBench: \(error)\n".utf8))
    exit(1)
}
