import Foundation
import Synchronization

/// A bounded closed-loop load: `concurrency` tasks each take the next request
/// number until `requests` are taken or `seconds` pass, run `operation` on
/// it, and time it. Shared by the benchmark tools.
public struct ClosedLoopLoad: Sendable {
    /// What one run measured.
    public struct Outcome: Sendable {
        public var completed: Int
        public var errors: Int
        public var firstError: String?
        public var elapsedSeconds: Double
        public var latenciesNanoseconds: [UInt64]

        /// Completed operations per second.
        public var ratePerSecond: Double { elapsedSeconds > 0 ? Double(completed) / elapsedSeconds : 0 }
    }

    public var concurrency: Int
    public var seconds: Double

    public init(concurrency: Int, seconds: Double) {
        precondition(concurrency > 0 && seconds > 0, "a load needs workers and time")
        self.concurrency = concurrency
        self.seconds = seconds
    }

    public func run(requests: Int, _ operation: @escaping @Sendable (Int) async throws -> Void) async -> Outcome {
        let next = RequestCounter()
        let clock = ContinuousClock()
        let start = clock.now
        let deadline = start.advanced(by: .milliseconds(Int64(seconds * 1000)))
        let perTask = await withTaskGroup(of: Outcome.self) { group in
            for _ in 0..<concurrency {
                group.addTask {
                    var outcome = Outcome(
                        completed: 0, errors: 0, firstError: nil, elapsedSeconds: 0, latenciesNanoseconds: [])
                    while ContinuousClock.now < deadline {
                        let number = next.take()
                        guard number < requests else { break }
                        let started = DispatchTime.now().uptimeNanoseconds
                        do {
                            try await operation(number)
                            outcome.completed += 1
                            outcome.latenciesNanoseconds.append(DispatchTime.now().uptimeNanoseconds - started)
                        } catch {
                            outcome.errors += 1
                            if outcome.firstError == nil { outcome.firstError = "\(error)" }
                        }
                    }
                    return outcome
                }
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
}

/// Hands out request numbers 0, 1, 2, ... to the load tasks.
final class RequestCounter: Sendable {
    private let next = Atomic<Int>(0)

    /// The next unclaimed request number.
    func take() -> Int { next.wrappingAdd(1, ordering: .relaxed).oldValue }
}
