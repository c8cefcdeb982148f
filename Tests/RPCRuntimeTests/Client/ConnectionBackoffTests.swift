import Foundation
import RPCCore
@testable import RPCRuntime
import XCTest

final class ConnectionBackoffTests: XCTestCase {
    func testBackoffGrowsAndCaps() {
        let backoff = ConnectionBackoff(
            initialDelay: .milliseconds(100), multiplier: 2, maximumDelay: .milliseconds(500))
        XCTAssertEqual(backoff.delay(afterFailures: 1), .milliseconds(100))
        XCTAssertEqual(backoff.delay(afterFailures: 2), .milliseconds(200))
        XCTAssertEqual(backoff.delay(afterFailures: 3), .milliseconds(400))
        XCTAssertEqual(backoff.delay(afterFailures: 4), .milliseconds(500))
        XCTAssertEqual(backoff.delay(afterFailures: 1000), .milliseconds(500))
    }
}

/// A server that accepts and closes at once (at its connection limit, or
/// not speaking HTTP/2) counts as a failed connect: calls back off instead of
/// reconnecting each time. The backoff once reset as soon as TCP connected.
final class ConnectionBackoffUntilSettingsTests: XCTestCase {
    func testAConnectionClosedBeforeTheServersSettingsBacksOff() async throws {
        let listener = try TCPListener(host: "127.0.0.1", port: 0, backlog: 64)
        let accepted = ManagedCounter()
        let acceptor = Thread {
            let until = Date().addingTimeInterval(5)
            while Date() < until && !accepted.stopped {
                if let socket = try? listener.accept() {
                    accepted.increment()
                    socket.close()
                } else {
                    usleep(1_000)
                }
            }
            // The listener is the acceptor's: closed on its thread, then said so.
            listener.close()
            accepted.finish()
        }
        acceptor.start()
        let client = try RPCClient(
            targets: [HostAndPort(host: "127.0.0.1", port: listener.port)],
            configuration: .init(backoff: ConnectionBackoff(initialDelay: .seconds(2), maximumDelay: .seconds(2))))
        let method = MethodDescriptor(service: "testing.v1.Echo", method: "Unary")
        for _ in 0..<10 {
            let error = await expectRPCError {
                _ = try await client.unaryRaw(method, request: [1], metadata: [:], timeout: .seconds(2))
            }
            XCTAssertEqual(error?.code, .unavailable)
        }
        XCTAssertLessThanOrEqual(accepted.value, 2, "backing off, not a connection per call")
        accepted.stop()
        await client.close()
        while !accepted.finished { try await Task.sleep(for: .milliseconds(5)) }
    }
}

/// A counter, a stop flag and an end flag shared with the acceptor thread.
private final class ManagedCounter: @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0
    private var isStopped = false
    func increment() { lock.withLock { count += 1 } }
    var value: Int { lock.withLock { count } }
    func stop() { lock.withLock { isStopped = true } }
    var stopped: Bool { lock.withLock { isStopped } }
    private var isFinished = false
    func finish() { lock.withLock { isFinished = true } }
    var finished: Bool { lock.withLock { isFinished } }
}

/// Outgoing connections notice a peer gone without a reset within about a
/// minute (TCP keepalive and TCP_USER_TIMEOUT), not TCP's 15 min to 2 h.
final class DeadPeerDetectionTests: XCTestCase {
    func testOutgoingSocketsCarryKeepaliveAndAUserTimeout() throws {
        let listener = try TCPListener(host: "127.0.0.1", port: 0, backlog: 4)
        defer { listener.close() }
        let (fd, _) = try Socket.connect(host: "127.0.0.1", port: listener.port)
        defer { close(fd) }
        func option(_ level: Int32, _ name: Int32) -> Int32 {
            var value: Int32 = -1
            var length = socklen_t(MemoryLayout<Int32>.size)
            XCTAssertEqual(getsockopt(fd, level, name, &value, &length), 0)
            return value
        }
        XCTAssertEqual(option(SOL_SOCKET, SO_KEEPALIVE), 1)
        XCTAssertEqual(option(Int32(IPPROTO_TCP), TCP_KEEPIDLE), 30)
        XCTAssertEqual(option(Int32(IPPROTO_TCP), TCP_KEEPINTVL), 10)
        XCTAssertEqual(option(Int32(IPPROTO_TCP), TCP_KEEPCNT), 3)
        XCTAssertEqual(option(Int32(IPPROTO_TCP), TCP_USER_TIMEOUT), 30_000)
    }
}
