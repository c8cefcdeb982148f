import Glibc
import RPCRuntime
import Synchronization
import XCTest

/// `EventLoop.armOnce`: a descriptor watched for one event from any thread,
/// its waiter run once on the loop, re-armed by modifying the epoll entry.
final class EventLoopOneShotTests: XCTestCase {
    private final class CountingWaiter: OneShotWaiter, @unchecked Sendable {
        let loop: EventLoop
        let calls = Mutex<[Bool]>([])
        init(loop: EventLoop) { self.loop = loop }
        override func descriptorBecameReady(_ events: UInt32) {
            calls.withLock { $0.append(loop.inEventLoop) }
        }
    }

    private func waitUntil(_ condition: () -> Bool) async throws {
        let deadline = ContinuousClock.now + .seconds(5)
        while !condition() && ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(2)) }
    }

    func testOneEventPerArmingOnTheLoopThread() async throws {
        let loop = try EventLoop(name: "test")
        var fds: [Int32] = [0, 0]
        XCTAssertEqual(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &fds), 0)
        defer { close(fds[0]); close(fds[1]) }
        let waiter = CountingWaiter(loop: loop)
        try loop.armOnce(fd: fds[0], writable: false, alreadyRegistered: false, waiter: waiter)
        var byte: UInt8 = 1
        XCTAssertEqual(write(fds[1], &byte, 1), 1)
        try await waitUntil { waiter.calls.withLock { $0.count } == 1 }
        // Still readable, but the arming was used up: no second call.
        try await Task.sleep(for: .milliseconds(30))
        XCTAssertEqual(waiter.calls.withLock { $0 }, [true])
        // Armed again (an existing entry, modified): the pending byte fires it at once.
        try loop.armOnce(fd: fds[0], writable: false, alreadyRegistered: true, waiter: waiter)
        try await waitUntil { waiter.calls.withLock { $0.count } == 2 }
        XCTAssertEqual(waiter.calls.withLock { $0 }, [true, true])
        loop.disarm(fd: fds[0])
        await loop.shutdown()
    }

    func testAFailedArmingThrowsAndKeepsNothing() async throws {
        let loop = try EventLoop(name: "test")
        weak var released: CountingWaiter?
        do {
            let waiter = CountingWaiter(loop: loop)
            released = waiter
            XCTAssertThrowsError(try loop.armOnce(fd: -1, writable: false, alreadyRegistered: false, waiter: waiter))
        }
        XCTAssertNil(released, "the loop kept no reference to the waiter")
        await loop.shutdown()
    }
}
