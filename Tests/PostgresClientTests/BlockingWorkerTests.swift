import Dispatch
@testable import PostgresClient
import Synchronization
import XCTest

/// The worker's queue bound, without a database: jobs are plain closures.
final class BlockingWorkerTests: XCTestCase {
    func testJobsBeyondTheMaximumAreRefusedAndTheFinalJobIsNot() throws {
        let worker = BlockingWorker(name: "test-worker", jobsQueuedMax: 2)
        let started = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let finished = DispatchSemaphore(value: 0)
        let ran = Mutex<[String]>([])
        // Hold the thread: the jobs below wait, and the running one does not count.
        try worker.submit {
            started.signal()
            release.wait()
        }
        started.wait()
        try worker.submit { ran.withLock { $0.append("first") } }
        try worker.submit { ran.withLock { $0.append("second") } }
        XCTAssertThrowsError(try worker.submit { ran.withLock { $0.append("refused") } }) { error in
            XCTAssertEqual((error as? PostgresError)?.code, .connectionQueueFull)
        }
        worker.stop(after: {
            ran.withLock { $0.append("final") }
            finished.signal()
        })
        release.signal()
        XCTAssertEqual(finished.wait(timeout: .now() + 10), .success)
        XCTAssertEqual(ran.withLock { $0 }, ["first", "second", "final"])
    }

    func testRunFailsWithConnectionQueueFullWhenTheQueueIsFull() async throws {
        let worker = BlockingWorker(name: "test-worker", jobsQueuedMax: 1)
        let started = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        try worker.submit {
            started.signal()
            release.wait()
        }
        started.wait()
        let drained = DispatchSemaphore(value: 0)
        try worker.submit { drained.signal() }
        do {
            _ = try await worker.run { .success(1) }
            XCTFail("expected connectionQueueFull")
        } catch {
            XCTAssertEqual(error.code, .connectionQueueFull)
        }
        release.signal()
        drained.wait()  // The queued job runs: nothing waits any more.
        let value = try await worker.run { .success(2) }
        XCTAssertEqual(value, 2)
        worker.stop()
    }
}
