@testable import RPCRuntime
import Synchronization
import XCTest

/// The loop runs work that submitted work within one iteration, for a few
/// rounds, and still turns to its descriptors and timers.
final class EventLoopSubmittedRoundsTests: XCTestCase {
    func testWorkThatKeepsSubmittingWorkStarvesNeitherDescriptorsNorTimers() async throws {
        let loop = try EventLoop(name: "test", submittedRoundsPerIterationMax: 8)
        let sockets = try WatchedSocketPair()
        let seen = Mutex((readable: false, timer: false, rounds: 0))
        let giveUpAt = ContinuousClock.now + .seconds(5)
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            // Resubmits itself until both the descriptor's event and the
            // timer have run on the loop, or (starved) for 5 s.
            @Sendable func spin() {
                let done = seen.withLock { state -> Bool in
                    state.rounds += 1
                    return state.readable && state.timer
                }
                if done || ContinuousClock.now > giveUpAt { continuation.resume() } else { loop.execute(spin) }
            }
            loop.execute {
                sockets.watch(on: loop) { seen.withLock { $0.readable = true } }
                loop.schedule(after: .milliseconds(5)) { seen.withLock { $0.timer = true } }
                spin()
            }
            sockets.makeReadable()
        }
        let state = seen.withLock { $0 }
        XCTAssertTrue(state.readable, "the descriptor's event waited behind the queue")
        XCTAssertTrue(state.timer, "the timer waited behind the queue")
        XCTAssertGreaterThan(state.rounds, loop.submittedRoundsPerIterationMax)
        await sockets.unwatch(from: loop)
        await loop.shutdown()
    }

    func testAChainOfStepsRunsBeforeIOWithRoundsAndAfterItWithOne() async throws {
        let withRounds = try await orderOfChainAndIO(rounds: 8)
        XCTAssertEqual(withRounds, ["1", "2", "3", "io"])
        let withOne = try await orderOfChainAndIO(rounds: 1)
        XCTAssertEqual(withOne, ["io", "1", "2", "3"])
    }

    /// A descriptor becomes readable, then a chain of three steps (each
    /// queued by the one before) starts: which ran first.
    private func orderOfChainAndIO(rounds: Int) async throws -> [String] {
        let loop = try EventLoop(name: "test", submittedRoundsPerIterationMax: rounds)
        let sockets = try WatchedSocketPair()
        let order = Mutex<[String]>([])
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            @Sendable func note(_ event: String) {
                let count = order.withLock {
                    $0.append(event); return $0.count
                }
                if count == 4 { continuation.resume() }
            }
            loop.execute {
                sockets.watch(on: loop) { note("io") }
                sockets.makeReadable()
                queueStepChain(on: loop, ["1", "2", "3"], note: note)
            }
        }
        await sockets.unwatch(from: loop)
        await loop.shutdown()
        return order.withLock { $0 }
    }

    func testWorkSubmittedByWorkRunsInSubmissionOrder() async throws {
        let loop = try EventLoop(name: "test", submittedRoundsPerIterationMax: 8)
        let order = Mutex<[Int]>([])
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            loop.execute {
                for index in 0..<3 {
                    loop.execute {
                        order.withLock { $0.append(index) }
                        loop.execute {
                            order.withLock { $0.append(10 + index) }
                            if index == 2 { continuation.resume() }
                        }
                    }
                }
            }
        }
        XCTAssertEqual(order.withLock { $0 }, [0, 1, 2, 10, 11, 12])
        await loop.shutdown()
    }
}
