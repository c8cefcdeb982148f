import BenchSupport
import Contracts
import Foundation
import RPCRuntime

/// Grant calls with distinct event ids, for distinct users or one hot user,
/// driven as a bounded closed-loop load.
struct GrantLoad {
    let client: RPCClient
    let options: BenchOptions
    /// Distinguishes this run's event ids from every earlier run's.
    let runId: String
    let hotUser: UUID

    func run(requests: Int, label: String) async -> ClosedLoopLoad.Outcome {
        let load = ClosedLoopLoad(concurrency: options.concurrency, seconds: options.seconds)
        return await load.run(requests: requests) { number in
            let request = grantRequest(number: number, label: label)
            let response = try await client.call(
                PointsMethods.grant, request, timeout: .seconds(BenchOptions.callTimeoutSeconds))
            guard !response.replayed else { throw BenchError.failed("grant \(request.eventId) answered as a replay") }
        }
    }

    private func grantRequest(number: Int, label: String) -> GrantRequest {
        var request = GrantRequest()
        request.eventId = "bench.points:\(runId):\(label):\(number)"
        request.userId = (options.mode == .hot ? hotUser : UUID()).uuidString
        request.productCode = options.productCode
        request.bizId = "bench-\(runId)-\(label)-\(number)"
        return request
    }
}
