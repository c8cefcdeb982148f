import Dispatch
import RPCRuntime
import Synchronization
import XCTest

/// `submit` is bounded by `submissionsQueuedMax`; `execute` (completions)
/// is not, and the bound counts only what waits, not what already ran.
final class EventLoopSubmissionLimitTests: XCTestCase {
    func testSubmitBeyondTheMaximumIsRefusedWhileExecuteIsNot() async throws {
        let loop = try EventLoop(name: "test", submissionsQueuedMax: 4)
        XCTAssertEqual(loop.submissionsQueuedMax, 4)
        let started = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let ran = Mutex(0)
        // Hold the loop thread so everything below waits in the queue.
        loop.execute {
            started.signal()
            release.wait()
        }
        started.wait()
        for _ in 0..<4 { try loop.submit { ran.withLock { $0 += 1 } } }
        XCTAssertThrowsError(try loop.submit { ran.withLock { $0 += 100 } }) { error in
            XCTAssertEqual(error as? EventLoopSubmissionError, .queueFull(submissionsQueuedMax: 4))
        }
        XCTAssertTrue(loop.execute { ran.withLock { $0 += 10 } }, "completions are never shed")
        release.signal()
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            loop.execute { continuation.resume() }
        }
        XCTAssertEqual(ran.withLock { $0 }, 14)
        // Drained: the bound applies to what waits, so submitting works again.
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, Error>) in
            do { try loop.submit { continuation.resume() } } catch { continuation.resume(throwing: error) }
        }
        await loop.shutdown()
        XCTAssertThrowsError(try loop.submit {}) { error in
            XCTAssertEqual(error as? EventLoopSubmissionError, .loopStopped)
        }
    }
}
