// JWS verification benchmark: cold (chain built) versus warm (cache hit,
// one P-256 signature check) verification on a generated local testing PKI.
// Bounded in count: `JWSBench [warmIterations] [coldIterations]`.
import AppStoreVerification
import Foundation

let arguments = CommandLine.arguments
let warmIterations = min(max(Int(arguments.dropFirst().first ?? "") ?? 5_000, 1), 200_000)
let coldIterations = min(max(Int(arguments.dropFirst(2).first ?? "") ?? 500, 1), 20_000)

let nowSeconds = Int64(Date().timeIntervalSince1970)
let authority = try LocalTestingCertificateAuthority(options: .init(nowSeconds: nowSeconds))
let payload = "{\"transactionId\":\"2000000000000001\",\"bundleId\":\"com.iap.bench\",\"productId\":\"points_100\","
    + "\"purchaseDate\":\(nowSeconds * 1000),\"type\":\"Consumable\",\"environment\":\"Sandbox\",\"signedDate\":\(nowSeconds * 1000)}"
let jws = try authority.sign(payloadJSON: payload)
let configuration = VerifierConfiguration(
    bundleId: "com.iap.bench", appAppleId: nil, allowedEnvironments: [.sandbox], trustedRoots: [authority.rootDER])

func measure(_ label: String, iterations: Int, _ body: () throws -> Void) rethrows {
    let clock = ContinuousClock()
    let start = clock.now
    for _ in 0..<iterations { try body() }
    let elapsed = clock.now - start
    let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    let microseconds = seconds * 1e6 / Double(iterations)
    print("\(label): \(iterations) in \(String(format: "%.3f", seconds)) s, \(String(format: "%.1f", microseconds)) us/op, "
        + "\(String(format: "%.0f", Double(iterations) / seconds)) op/s")
}

let warm = try SignedDataVerifier(configuration: configuration)
_ = try warm.verifyTransaction(jws)
try measure("warm (cached chain)", iterations: warmIterations) { _ = try warm.verifyTransaction(jws) }
try measure("cold (new verifier, chain built)", iterations: coldIterations) {
    _ = try SignedDataVerifier(configuration: configuration).verifyTransaction(jws)
}
