import RPCRuntime
import Synchronization
import XCTest

/// `EventLoop` as a `TaskExecutor`: tasks that prefer a loop run on its
/// thread, jobs for a stopped loop still run, and work handed over from
/// many threads at once (sharing wake-ups) is never lost.
final class EventLoopTaskExecutorTests: XCTestCase {
    func testATaskPreferringTheLoopRunsOnItsThreadAcrossSuspensions() async throws {
        let loop = try EventLoop(name: "test")
        let onLoop = await Task(executorPreference: loop) { () -> [Bool] in
            var seen = [loop.inEventLoop]
            await Task.yield()
            seen.append(loop.inEventLoop)
            try? await Task.sleep(for: .milliseconds(5))
            seen.append(loop.inEventLoop)
            // A continuation resumed from another thread comes back to the loop.
            await withCheckedContinuation { continuation in
                Thread.detachNewThread { continuation.resume() }
            }
            seen.append(loop.inEventLoop)
            return seen
        }.value
        XCTAssertEqual(onLoop, [true, true, true, true])
        let elsewhere = await Task { loop.inEventLoop }.value
        XCTAssertFalse(elsewhere)
        await loop.shutdown()
    }

    func testAJobForAStoppedLoopRunsOnThePool() async throws {
        let loop = try EventLoop(name: "test")
        await loop.shutdown()
        let answer = await Task(executorPreference: loop) { loop.inEventLoop ? -1 : 42 }.value
        XCTAssertEqual(answer, 42)
    }

    func testATaskOnTheLoopThatStopsItFinishes() async throws {
        let loop = try EventLoop(name: "test")
        let finished = await Task(executorPreference: loop) { () -> Bool in
            await loop.shutdown()
            return !loop.inEventLoop
        }.value
        XCTAssertTrue(finished)
        XCTAssertFalse(loop.execute {})
    }

    /// Only the first work after a drain writes the eventfd; the rest rely
    /// on it. Eight threads racing the loop's drain must lose nothing: a lost
    /// wake-up would leave work queued while the loop sleeps (it has no timer
    /// here to wake it), and the count short.
    func testWorkFromManyThreadsAtOnceAllRuns() async throws {
        let loop = try EventLoop(name: "test")
        let total = 8 * 5_000
        let ran = Mutex(0)
        for _ in 0..<8 {
            Thread.detachNewThread {
                for _ in 0..<5_000 { loop.execute { ran.withLock { $0 += 1 } } }
            }
        }
        let deadline = ContinuousClock.now + .seconds(20)
        while ran.withLock({ $0 }) < total && ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(5))
        }
        XCTAssertEqual(ran.withLock { $0 }, total)
        await loop.shutdown()
    }
}
