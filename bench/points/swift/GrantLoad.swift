import Contracts
import Foundation
import RPCRuntime
import Synchronization

/// A bounded closed-loop load of Grant calls: `concurrency` tasks each take
/// the next request number until `requests` are taken or the deadline passes.
struct GrantLoad {
    /// What one run measured.
    struct Outcome {
        var completed: Int
        var errors: Int
        var firstError: String?
        var elapsedSeconds: Double
        var latenciesNanoseconds: [UInt64]
    }

    let client: RPCClient
    let options: BenchOptions
    /// Distinguishes this run's event ids from every earlier run's.
    let runId: String
    let hotUser: UUID

    func run(requests: Int, label: String) async -> Outcome {
        let next = RequestCounter()
        let clock = ContinuousClock()
        let start = clock.now
        let deadline = start.advanced(by: .milliseconds(Int64(options.seconds * 1000)))
        let perTask = await withTaskGroup(of: Outcome.self) { group in
            for _ in 0..<options.concurrency {
                group.addTask { await worker(next: next, requests: requests, label: label, deadline: deadline) }
            }
            var all: [Outcome] = []
            for await outcome in group { all.append(outcome) }
            return all
        }
        let elapsed = start.duration(to: clock.now)
        return Outcome(
            completed: perTask.reduce(0) { $0 + $1.completed }, errors: perTask.reduce(0) { $0 + $1.errors },
            firstError: perTask.lazy.compactMap(\.firstError).first,
            elapsedSeconds: Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18,
            latenciesNanoseconds: perTask.flatMap(\.latenciesNanoseconds))
    }

    private func worker(next: RequestCounter, requests: Int, label: String, deadline: ContinuousClock.Instant) async -> Outcome {
        var outcome = Outcome(completed: 0, errors: 0, firstError: nil, elapsedSeconds: 0, latenciesNanoseconds: [])
        outcome.latenciesNanoseconds.reserveCapacity(requests / options.concurrency + 1)
        while ContinuousClock.now < deadline {
            let number = next.take()
            guard number < requests else { break }
            let request = grantRequest(number: number, label: label)
            let started = DispatchTime.now().uptimeNanoseconds
            do {
                let response = try await client.call(PointsMethods.grant, request, timeout: .seconds(BenchOptions.callTimeoutSeconds))
                guard !response.replayed else { throw BenchError.failed("grant \(request.eventId) answered as a replay") }
                outcome.completed += 1
                outcome.latenciesNanoseconds.append(DispatchTime.now().uptimeNanoseconds - started)
            } catch {
                outcome.errors += 1
                if outcome.firstError == nil { outcome.firstError = "\(error)" }
            }
        }
        return outcome
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

/// Hands out request numbers 0, 1, 2, ... to the load tasks.
final class RequestCounter: Sendable {
    private let next = Atomic<Int>(0)

    /// The next unclaimed request number.
    func take() -> Int { next.wrappingAdd(1, ordering: .relaxed).oldValue }
}
