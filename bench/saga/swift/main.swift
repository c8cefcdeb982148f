// Full verify→grant sagas per second: Payments.VerifyTransaction over gRPC
// with pre-signed, distinct StoreKit 2 transactions (bench/gateway's
// GatewayBench writes them), a new user per purchase, against a real
// PaymentsService and PointsService with both databases. Every answer must
// be GRANTED. Prints one `key=value` line.
//
//   SagaBench --target HOST:PORT --bodies FILE [--concurrency C] [--seconds S] [--requests N]
import BenchSupport
import Contracts
import Foundation
import RPCRuntime
import ServiceKit
import StrictJSON

struct Usage: Error, CustomStringConvertible { var description: String }

func argument(_ name: String, in arguments: [String]) -> String? {
    guard let index = arguments.firstIndex(of: name), index + 1 < arguments.count else { return nil }
    return arguments[index + 1]
}

do {
    let arguments = Array(CommandLine.arguments.dropFirst())
    guard let target = argument("--target", in: arguments), let bodiesPath = argument("--bodies", in: arguments) else {
        throw Usage(
            description:
                "usage: SagaBench --target HOST:PORT --bodies FILE [--concurrency C] [--seconds S] [--requests N]")
    }
    let concurrency = Int(argument("--concurrency", in: arguments) ?? "16") ?? 16
    let seconds = Double(argument("--seconds", in: arguments) ?? "10") ?? 10
    guard (1...256).contains(concurrency), seconds > 0, seconds <= 120 else {
        throw Usage(description: "concurrency 1...256, seconds 0...120")
    }

    // Each line: {"productCode", "appStoreProductId", "transactionId", "signedTransactionInfo"}.
    let parser = StrictJSONParser(documentBytesMax: 64 * 1024)
    var requests: [VerifyTransactionRequest] = []
    for line in try String(contentsOfFile: bodiesPath, encoding: .utf8).split(separator: "\n") {
        guard case .object(let body) = try parser.parse(String(line)),
            case .string(let productCode)? = body["productCode"],
            case .string(let storeId)? = body["appStoreProductId"],
            case .string(let transactionId)? = body["transactionId"],
            case .string(let jws)? = body["signedTransactionInfo"]
        else {
            throw Usage(description: "malformed line in \(bodiesPath)")
        }
        var request = VerifyTransactionRequest()
        request.userId = UUID().uuidString.lowercased()
        request.emailHash = (0..<32).map { _ in String(format: "%02x", UInt8.random(in: 0...255)) }.joined()
        request.productCode = productCode
        request.appStoreProductId = storeId
        request.transactionId = transactionId
        request.signedTransactionInfo = jws
        request.emailMasked = "b***@example.com"
        requests.append(request)
    }
    let prepared = requests
    let total = min(requests.count, Int(argument("--requests", in: arguments) ?? "\(requests.count)") ?? requests.count)
    let client = try RPCClient(targets: [HostAndPort(parsing: target)])
    let load = ClosedLoopLoad(concurrency: concurrency, seconds: seconds)
    let outcome = await load.run(requests: total) { number in
        let response = try await client.call(PaymentsMethods.verifyTransaction, prepared[number], timeout: .seconds(30))
        guard response.outcome == .granted else {
            throw Usage(description: "transaction \(prepared[number].transactionId): \(response.outcome)")
        }
    }
    await client.close()
    let summary = LatencySummary(nanoseconds: outcome.latenciesNanoseconds)
    print(
        String(
            format:
                "concurrency=%d sagas=%d errors=%d seconds=%.2f sagas_per_second=%.0f p50_ms=%.2f p99_ms=%.2f max_ms=%.2f",
            concurrency, outcome.completed, outcome.errors, outcome.elapsedSeconds, outcome.ratePerSecond,
            summary.p50Milliseconds, summary.p99Milliseconds, summary.maxMilliseconds))
    if let firstError = outcome.firstError {
        FileHandle.standardError.write(Data("SagaBench: first error: \(firstError)\n".utf8))
    }
    exit(outcome.errors == 0 && outcome.completed > 0 ? 0 : 1)
} catch {
    FileHandle.standardError.write(Data("SagaBench: \(error)\n".utf8))
    exit(2)
}
