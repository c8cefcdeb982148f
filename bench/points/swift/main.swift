// PointsService benchmark: Grant (or Spend, or GetBalance) calls with distinct event ids over
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
    let runId = String(UInt64.random(in: 1...UInt64.max), radix: 36)
    let run: (Int, String) async -> ClosedLoopLoad.Outcome
    switch options.operation {
    case .grant:
        let load = GrantLoad(client: client, options: options, runId: runId, hotUser: UUID())
        run = { await load.run(requests: $0, label: $1) }
    case .spend:
        let load = try await SpendLoad.funded(
            client: client, options: options, runId: runId,
            spends: options.requests + options.warmupRequests)
        run = { await load.run(requests: $0, label: $1) }
    case .balance:
        let funded = try await SpendLoad.funded(client: client, options: options, runId: runId, spends: 1)
        let load = BalanceLoad(client: client, options: options, users: funded.users)
        run = { await load.run(requests: $0, label: $1) }
    }
    if options.warmupRequests > 0 {
        let warmup = await run(options.warmupRequests, "warmup")
        if warmup.completed == 0 {
            throw BenchError.failed(
                "warm-up: no \(options.operation.rawValue) succeeded (\(warmup.firstError ?? "no error recorded"))")
        }
    }
    let outcome = await run(options.requests, "measured")
    await client.close()
    let summary = LatencySummary(nanoseconds: outcome.latenciesNanoseconds)
    let rate = outcome.ratePerSecond
    print(
        String(
            format:
                "operation=%@ mode=%@ concurrency=%d requests=%d errors=%d seconds=%.2f %@s_per_second=%.0f p50_ms=%.2f p99_ms=%.2f max_ms=%.2f",
            options.operation.rawValue, options.mode.rawValue, options.concurrency, outcome.completed, outcome.errors,
            outcome.elapsedSeconds, options.operation.rawValue, rate,
            summary.p50Milliseconds, summary.p99Milliseconds, summary.maxMilliseconds))
    if let firstError = outcome.firstError {
        FileHandle.standardError.write(Data("PointsBench: first error: \(firstError)\n".utf8))
    }
    exit(outcome.errors == 0 && outcome.completed > 0 ? 0 : 1)
} catch {
    FileHandle.standardError.write(Data("PointsBench: \(error)\n".utf8))
    exit(1)
}
