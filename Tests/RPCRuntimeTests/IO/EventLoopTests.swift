@testable import RPCRuntime
import Synchronization
import XCTest

final class EventLoopTests: XCTestCase {
    func testExecuteRunsOnLoopThreadInOrder() async throws {
        let loop = try EventLoop(name: "test")
        let order = Mutex<[Int]>([])
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            for index in 0..<100 {
                loop.execute {
                    XCTAssertTrue(loop.inEventLoop)
                    order.withLock { $0.append(index) }
                    if index == 99 { continuation.resume() }
                }
            }
        }
        XCTAssertEqual(order.withLock { $0 }, Array(0..<100))
        XCTAssertFalse(loop.inEventLoop)
        await loop.shutdown()
    }

    func testTimersFireByDeadlineAndCancelledOnesNever() async throws {
        let loop = try EventLoop(name: "test")
        let fired = Mutex<[String]>([])
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            loop.execute {
                loop.schedule(after: .milliseconds(30)) {
                    fired.withLock { $0.append("late") }; continuation.resume()
                }
                let cancelled = loop.schedule(after: .milliseconds(10)) { fired.withLock { $0.append("cancelled") } }
                loop.schedule(after: .milliseconds(5)) { fired.withLock { $0.append("early") } }
                loop.schedule(after: .zero) { fired.withLock { $0.append("now") } }
                loop.cancel(cancelled)
            }
        }
        XCTAssertEqual(fired.withLock { $0 }, ["now", "early", "late"])
        await loop.shutdown()
    }

    func testExecuteAfterShutdownIsRefused() async throws {
        let loop = try EventLoop(name: "test")
        await loop.shutdown()
        XCTAssertFalse(loop.execute {})
        await loop.shutdown()  // Idempotent.
    }

    func testClientCallAfterCloseIsUnavailable() async throws {
        let (server, port) = try startTestServer()
        let client = try makeTestClient(ports: [port])
        await client.close()
        let error = await expectRPCError {
            _ = try await client.unary(TestMethods.echo, request: RawMessage("x"), responseType: RawMessage.self)
        }
        XCTAssertEqual(error?.code, .unavailable)
        await server.shutdown(gracePeriod: .zero)
        let connections = await server.connectionCount()
        XCTAssertEqual(connections, 0)
        await server.shutdown(gracePeriod: .zero)  // Idempotent.
    }
}

/// Cancelled timers do not pile up in the heap, and the ones left still fire in order.
final class EventLoopTimerHeapTests: XCTestCase {
    func testCancelledTimersAreDroppedAndTheRestFireInOrder() async throws {
        let loop = try EventLoop(name: "test")
        let fired = Mutex<[Int]>([])
        let heapCount: Int = await withCheckedContinuation { continuation in
            loop.execute {
                // A server re-arming an idle timer per request: 10,000 far
                // timers, each cancelled when the next is armed.
                var previous: EventLoop.TimerID?
                for _ in 0..<10_000 {
                    if let previous { loop.cancel(previous) }
                    previous = loop.schedule(after: .seconds(30)) { fired.withLock { $0.append(-1) } }
                }
                if let previous { loop.cancel(previous) }
                // Three live ones, scheduled out of order among the dead.
                for (index, delay) in [(2, 30), (0, 10), (1, 20)] {
                    loop.schedule(after: .milliseconds(delay)) {
                        fired.withLock { $0.append(index) }
                        if index == 2 { continuation.resume(returning: loop.timerHeapCount) }
                    }
                }
            }
        }
        XCTAssertEqual(fired.withLock { $0 }, [0, 1, 2])
        XCTAssertLessThanOrEqual(heapCount, EventLoop.cancelledTimerEntriesKeptMax + 3)
        await loop.shutdown()
    }
}
