import Synchronization

/// A clock that moves only when a test advances it: `sleep` suspends until
/// `advance(by:)` passes the deadline, so timeout logic is tested without
/// waiting for real time. Cancelling a sleeping task ends its sleep with
/// `CancellationError`, as `ContinuousClock` does.
final class ManualClock: Clock, Sendable {
    /// A point on the manual time line: the time advanced since creation.
    struct Instant: InstantProtocol {
        var offset: Duration
        func advanced(by duration: Duration) -> Instant { Instant(offset: offset + duration) }
        func duration(to other: Instant) -> Duration { other.offset - offset }
        static func < (lhs: Instant, rhs: Instant) -> Bool { lhs.offset < rhs.offset }
    }

    private struct Sleeper {
        let deadline: Instant
        let continuation: CheckedContinuation<Void, any Error>
    }

    private struct State {
        var now = Instant(offset: .zero)
        var nextID: UInt64 = 0
        var sleepers: [UInt64: Sleeper] = [:]
        /// Sleeps cancelled before they were registered.
        var cancelledIDs: Set<UInt64> = []
        /// Tests waiting until this many sleepers are registered.
        var sleeperWatchers: [(id: UInt64, count: Int, continuation: CheckedContinuation<Bool, Never>)] = []
    }

    private let state = Mutex(State())

    var now: Instant { state.withLock { $0.now } }
    var minimumResolution: Duration { .zero }

    /// How many sleeps are waiting for the clock to move.
    var sleeperCount: Int { state.withLock { $0.sleepers.count } }

    func sleep(until deadline: Instant, tolerance: Duration? = nil) async throws {
        let id = state.withLock { state in
            state.nextID += 1
            return state.nextID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let (outcome, watchers) = state.withLock {
                    state -> (Result<Void, any Error>?, [CheckedContinuation<Bool, Never>]) in
                    if state.cancelledIDs.remove(id) != nil { return (.failure(CancellationError()), []) }
                    if deadline <= state.now { return (.success(()), []) }
                    state.sleepers[id] = Sleeper(deadline: deadline, continuation: continuation)
                    let count = state.sleepers.count
                    let ready = state.sleeperWatchers.filter { $0.count <= count }.map(\.continuation)
                    state.sleeperWatchers.removeAll { $0.count <= count }
                    return (nil, ready)
                }
                if let outcome { continuation.resume(with: outcome) }
                for watcher in watchers { watcher.resume(returning: true) }
            }
        } onCancel: {
            let sleeper = state.withLock { state in
                guard let sleeper = state.sleepers.removeValue(forKey: id) else {
                    state.cancelledIDs.insert(id)
                    return Sleeper?.none
                }
                return sleeper
            }
            sleeper?.continuation.resume(throwing: CancellationError())
        }
    }

    /// Moves the clock forward and wakes every sleep whose deadline it passed.
    func advance(by duration: Duration) {
        precondition(duration >= .zero, "a clock does not go back")
        let due = state.withLock { state in
            state.now = state.now.advanced(by: duration)
            let now = state.now
            let due = state.sleepers.filter { $0.value.deadline <= now }
            for id in due.keys { state.sleepers[id] = nil }
            return Array(due.values)
        }
        for sleeper in due { sleeper.continuation.resume() }
    }

    /// True once at least `count` sleeps wait for the clock; false when
    /// they do not within `realTimeLimit` (code that sleeps on another clock
    /// fails the test instead of hanging it).
    func waitForSleepers(count: Int, realTimeLimit: Duration = .seconds(10)) async -> Bool {
        await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
            let watcherID: UInt64? = state.withLock { state in
                if state.sleepers.count >= count { return nil }
                state.nextID += 1
                state.sleeperWatchers.append((state.nextID, count, continuation))
                return state.nextID
            }
            guard let watcherID else { return continuation.resume(returning: true) }
            Task {
                try? await Task.sleep(for: realTimeLimit)
                let expired = self.state.withLock { state in
                    let index = state.sleeperWatchers.firstIndex { $0.id == watcherID }
                    return index.map { state.sleeperWatchers.remove(at: $0).continuation }
                }
                expired?.resume(returning: false)
            }
        }
    }
}
