import BenchSupport
import Contracts
import Foundation
import RPCRuntime

/// GetBalance calls straight to PointsService (no gateway) for users
/// funded beforehand: a pool of users round-robin ("distinct") or one user
/// ("hot"), driven as a bounded closed-loop load. Each answer must show the
/// user's credits.
struct BalanceLoad {
    let client: RPCClient
    let options: BenchOptions
    let users: [UUID]

    func run(requests: Int, label: String) async -> ClosedLoopLoad.Outcome {
        let load = ClosedLoopLoad(concurrency: options.concurrency, seconds: options.seconds)
        return await load.run(requests: requests) { number in
            var request = GetBalanceRequest()
            request.userId = users[number % users.count].uuidString
            let response = try await client.call(
                PointsMethods.getBalance, request, timeout: .seconds(BenchOptions.callTimeoutSeconds))
            guard response.balance > 0 else {
                throw BenchError.failed("balance of funded user \(request.userId) read as 0")
            }
        }
    }
}
