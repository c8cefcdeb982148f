@testable import RPCRuntime
import Synchronization
import XCTest

/// `EventLoop.whenCaughtUp`: work that waits until the loop has handled the
/// descriptors that were ready and the work queued, or until its limit.
final class EventLoopCatchUpTests: XCTestCase {
    /// A waiter registered before a readable descriptor and a chain of
    /// three steps runs after all of them, on a loop of one round per
    /// iteration as the gateway's (each step a separate iteration).
    func testAWaiterRunsAfterTheReadyDescriptorsAndTheQueuedWork() async throws {
        let loop = try EventLoop(name: "test", submittedRoundsPerIterationMax: 1)
        let sockets = try WatchedSocketPair()
        let order = Mutex<[String]>([])
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            @Sendable func note(_ event: String) { order.withLock { $0.append(event) } }
            loop.execute {
                sockets.watch(on: loop) { note("io") }
                loop.whenCaughtUp(within: .seconds(30)) {
                    note("caught up")
                    continuation.resume()
                }
                sockets.makeReadable()
                queueStepChain(on: loop, ["1", "2", "3"], note: note)
            }
        }
        let seen = order.withLock { $0 }
        XCTAssertEqual(seen.last, "caught up")
        XCTAssertEqual(Set(seen), ["io", "1", "2", "3", "caught up"])
        await sockets.unwatch(from: loop)
        await loop.shutdown()
    }

    func testAnIdleLoopRunsAWaiterAtOnce() async throws {
        let loop = try EventLoop(name: "test")
        let startedAt = ContinuousClock.now
        await loop.caughtUp(within: .seconds(30))
        XCTAssertLessThan(ContinuousClock.now - startedAt, .seconds(10), "an idle loop waited for the limit")
        await loop.shutdown()
    }

    /// Work that keeps queuing work never lets the loop catch up: the
    /// waiter runs once its limit has passed, while that work still runs.
    func testAWaiterOfALoopThatNeverCatchesUpRunsAtItsLimit() async throws {
        let loop = try EventLoop(name: "test", submittedRoundsPerIterationMax: 1)
        let limit = Duration.milliseconds(20)
        let state = Mutex((waiterRan: false, spins: 0))
        let giveUpAt = ContinuousClock.now + .seconds(10)
        let startedAt = ContinuousClock.now
        let ranAt = Mutex<ContinuousClock.Instant?>(nil)
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            @Sendable func spin() {
                let done = state.withLock { state -> Bool in
                    state.spins += 1
                    return state.waiterRan
                }
                if done || ContinuousClock.now > giveUpAt { continuation.resume() } else { loop.execute(spin) }
            }
            loop.execute {
                loop.whenCaughtUp(within: limit) {
                    ranAt.withLock { $0 = .now }
                    state.withLock { $0.waiterRan = true }
                }
                spin()
            }
        }
        let ran = try XCTUnwrap(ranAt.withLock { $0 }, "the waiter never ran while work kept coming")
        XCTAssertGreaterThanOrEqual(
            ran - startedAt, limit, "the waiter ran before the loop caught up or its limit passed")
        XCTAssertLessThan(ran, giveUpAt)
        await loop.shutdown()
    }

    /// A loop that exits runs its waiters (a task awaiting `caughtUp` is not
    /// left behind), and `caughtUp` on an exited loop returns at once.
    func testALoopThatExitsRunsItsWaiters() async throws {
        let loop = try EventLoop(name: "test", submittedRoundsPerIterationMax: 1)
        let ran = Mutex(false)
        // A chain of 100 steps keeps the loop from catching up past the
        // iteration it is told to stop in, so the waiter can only run on exit.
        @Sendable func spin(_ left: Int) {
            if left > 0 { loop.execute { spin(left - 1) } }
        }
        loop.execute {
            loop.whenCaughtUp(within: .seconds(60)) { ran.withLock { $0 = true } }
            loop.execute {
                spin(100)
                loop.stopSoon()
            }
        }
        let deadline = ContinuousClock.now + .seconds(10)
        while !ran.withLock({ $0 }) && ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(2))
        }
        XCTAssertTrue(ran.withLock { $0 }, "the waiter was dropped when the loop exited")
        await loop.shutdown()
        await loop.caughtUp(within: .seconds(60))
    }
}
