import Foundation
import RPCCore
@testable import RPCRuntime
import XCTest

/// A stream the server refused unprocessed (RST_STREAM REFUSED_STREAM, as
/// for streams above a GOAWAY's last id) is sent again once, as a stock
/// gRPC client's transparent retry does; the `grpc-timeout` sent is what is
/// left of the caller's timeout, never the whole of it again.
final class RefusedStreamRetryTests: XCTestCase {
    /// What the server saw: each stream's grpc-timeout, in order.
    private final class Seen: @unchecked Sendable {
        private let lock = NSLock()
        private var seen: [String] = []
        let refuseFirst: Int
        init(refuseFirst: Int) { self.refuseFirst = refuseFirst }
        /// Records a stream's grpc-timeout; how many streams came so far.
        func record(_ timeout: String) -> Int {
            lock.withLock {
                seen.append(timeout); return seen.count
            }
        }
        var timeouts: [String] { lock.withLock { seen } }
    }

    /// Refuses the first `refuseFirst` streams of the server, answers the
    /// others with one gRPC message [7, 8, 9].
    private final class RefusingDelegate: HTTP2StreamDelegate {
        private let seen: Seen
        init(seen: Seen) { self.seen = seen }

        func streamDidReceiveHeaders(_ stream: HTTP2Stream, headers: [HTTPHeaderField], endStream: Bool) {
            let count = seen.record(headers.first(named: "grpc-timeout") ?? "")
            if count <= seen.refuseFirst {
                stream.reset(errorCode: HTTP2Stream.ErrorCode.refusedStream)
            }
        }

        func streamDidReceiveData(_ stream: HTTP2Stream, bytes: [UInt8], endStream: Bool) {
            guard endStream, seen.timeouts.count > seen.refuseFirst else { return }
            stream.sendHeaders(
                [
                    HTTPHeaderField(name: ":status", value: "200"),
                    HTTPHeaderField(name: "content-type", value: "application/grpc"),
                ], endStream: false)
            stream.sendData([0, 0, 0, 0, 3, 7, 8, 9], endStream: false)
            stream.sendTrailers([HTTPHeaderField(name: "grpc-status", value: "0")])
        }

        func streamDidClose(_ stream: HTTP2Stream, errorCode: UInt32) {}
    }

    private let method = MethodDescriptor(service: "testing.v1.Echo", method: "Unary")

    func testARefusedStreamIsSentAgainOnceWithTheTimeLeft() async throws {
        let seen = Seen(refuseFirst: 1)
        let server = try HTTP2Server(configuration: .init()) { _ in RefusingDelegate(seen: seen) }
        let port = try server.start()
        let client = try makeTestClient(ports: [port])
        let response = try await client.unaryRaw(method, request: [1], metadata: [:], timeout: .seconds(30))
        XCTAssertEqual(response.message, [7, 8, 9])
        let timeouts = seen.timeouts
        XCTAssertEqual(timeouts.count, 2, "refused once, then served")
        let first = try XCTUnwrap(GRPCTimeout.parse(timeouts[0]))
        let second = try XCTUnwrap(GRPCTimeout.parse(timeouts[1]))
        XCTAssertLessThanOrEqual(first, .seconds(30))
        XCTAssertLessThanOrEqual(second, first, "the time left, not the whole timeout again")
        await client.close()
        await server.shutdown(gracePeriod: .seconds(1))
    }

    func testASecondRefusalFailsTheCallUnavailable() async throws {
        let seen = Seen(refuseFirst: 2)
        let server = try HTTP2Server(configuration: .init()) { _ in RefusingDelegate(seen: seen) }
        let port = try server.start()
        let client = try makeTestClient(ports: [port])
        let error = await expectRPCError {
            _ = try await client.unaryRaw(self.method, request: [1], metadata: [:], timeout: .seconds(30))
        }
        XCTAssertEqual(error?.code, .unavailable)
        XCTAssertEqual(seen.timeouts.count, 2, "sent again once, never more")
        await client.close()
        await server.shutdown(gracePeriod: .seconds(1))
    }

    func testTheTimeoutSentIsWhatIsLeftWhenTheStreamOpens() async throws {
        let loop = try EventLoop(name: "timeout-test")
        let call = ClientCall(path: "/a/b", metadata: [:], body: [], timeout: .seconds(2), limits: .default, loop: loop)
        try await Task.sleep(for: .milliseconds(500))
        let sent = try XCTUnwrap(
            call.requestHeaders(authority: "x", scheme: "http").first(named: "grpc-timeout").flatMap(GRPCTimeout.parse))
        XCTAssertLessThanOrEqual(sent, .milliseconds(1_510))
        XCTAssertGreaterThan(sent, .milliseconds(1_000))
        await loop.shutdown()
    }
}
