// PointsService grant benchmark: Grant calls with distinct event ids over
// gRPC (RPCRuntime client), for distinct users or one hot user, bounded in
// count and time. Driven by bench/points/run.sh, which also runs pgbench on
// the same cluster as the ceiling. Prints one `key=value` line.
import BenchSupport
import Contracts
import Foundation
import RPCRuntime
import ServiceKit

let options: BenchOptions
do {
    options = try BenchOptions(arguments: Array(CommandLine.arguments.dropFirst()))
} catch BenchError.usage(let message) {
    if !message.isEmpty { FileHandle.standardError.write(Data("PointsBench: \(message)\n".utf8)) }
    FileHandle.standardError.write(Data((BenchOptions.usage + "\n").utf8))
    exit(2)
}

do {
    let client = try RPCClient(targets: [HostAndPort(parsing: options.target)])
    let load = GrantLoad(client: client, options: options, runId: String(UInt64.random(in: 1...UInt64.max), radix: 36), hotUser: UUID())
    if options.warmupRequests > 0 {
        let warmup = await load.run(requests: options.warmupRequests, label: "warmup")
        if warmup.completed == 0 {
            throw BenchError.failed("warm-up: no grant succeeded (\(warmup.firstError ?? "no error recorded"))")
        }
    }
    let outcome = await load.run(requests: options.requests, label: "measured")
    await client.close()
    let summary = LatencySummary(nanoseconds: outcome.latenciesNanoseconds)
    let rate = outcome.ratePerSecond
    print(String(format: "mode=%@ concurrency=%d requests=%d errors=%d seconds=%.2f grants_per_second=%.0f p50_ms=%.2f p99_ms=%.2f max_ms=%.2f",
                 options.mode.rawValue, options.concurrency, outcome.completed, outcome.errors, outcome.elapsedSeconds, rate,
                 summary.p50Milliseconds, summary.p99Milliseconds, summary.maxMilliseconds))
    if let firstError = outcome.firstError { FileHandle.standardError.write(Data("PointsBench: first error: \(firstError)\n".utf8)) }
    exit(outcome.errors == 0 && outcome.completed > 0 ? 0 : 1)
} catch {
    FileHandle.standardError.write(Data("PointsBench: \(error)\n".utf8))
    exit(1)
}
