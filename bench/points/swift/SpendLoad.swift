import BenchSupport
import Contracts
import Foundation
import RPCRuntime

/// Spend calls (1 credit, distinct event ids) for users funded beforehand:
/// a pool of users round-robin ("distinct": rarely two at once on one row)
/// or one user ("hot": every spend waits on that user's row lock), driven
/// as a bounded closed-loop load.
struct SpendLoad {
    let client: RPCClient
    let options: BenchOptions
    let runId: String
    let users: [UUID]

    /// Credits one funding grant gives (premium_pack x 10).
    static let creditsPerFunding: Int64 = 4_150
    static let distinctUsersMax = 1_024

    /// Funds enough users (or the hot user enough times) for `spends` spends of 1 credit.
    static func funded(client: RPCClient, options: BenchOptions, runId: String, spends: Int) async throws -> SpendLoad {
        let users =
            options.mode == .hot
            ? [UUID()] : (0..<min(Self.distinctUsersMax, max(options.concurrency * 64, 1))).map { _ in UUID() }
        let perUser = Int64(spends / users.count + 1)
        let grantsPerUser = Int((perUser + creditsPerFunding - 1) / creditsPerFunding)
        let funding = ClosedLoopLoad(concurrency: options.concurrency, seconds: BenchOptions.secondsMax)
        let outcome = await funding.run(requests: users.count * grantsPerUser) { number in
            var request = GrantRequest()
            request.eventId = "bench.fund:\(runId):\(number)"
            request.userId = users[number % users.count].uuidString
            request.productCode = "premium_pack"
            request.quantity = 10
            request.bizId = "bench-fund-\(runId)-\(number)"
            _ = try await client.call(PointsMethods.grant, request, timeout: .seconds(BenchOptions.callTimeoutSeconds))
        }
        guard outcome.errors == 0, outcome.completed == users.count * grantsPerUser else {
            throw BenchError.failed(
                "funding: \(outcome.completed) grants, \(outcome.errors) errors (\(outcome.firstError ?? ""))")
        }
        return SpendLoad(client: client, options: options, runId: runId, users: users)
    }

    func run(requests: Int, label: String) async -> ClosedLoopLoad.Outcome {
        let load = ClosedLoopLoad(concurrency: options.concurrency, seconds: options.seconds)
        return await load.run(requests: requests) { number in
            var request = SpendRequest()
            request.eventId = "bench.spend:\(runId):\(label):\(number)"
            request.userId = users[number % users.count].uuidString
            request.amount = 1
            request.bizType = "bench"
            request.bizId = "bench-\(runId)"
            let response = try await client.call(
                PointsMethods.spend, request, timeout: .seconds(BenchOptions.callTimeoutSeconds))
            guard !response.replayed else { throw BenchError.failed("spend \(request.eventId) answered as a replay") }
        }
    }
}
