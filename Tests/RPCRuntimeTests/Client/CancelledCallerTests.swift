import Foundation
import RPCCore
import RPCRuntime
import Synchronization
import XCTest

/// A call made by a task that is already cancelled sends nothing: it
/// throws CANCELLED before a stream is opened. (From a task on the
/// client's loop the call used to be sent at once and reset a moment
/// later, a stream the server opened, and could start a handler for, for
/// nothing.)
final class CancelledCallerTests: XCTestCase {
    /// The request paths the server saw, in order.
    private final class Paths: Sendable {
        private let seen = Mutex<[String]>([])
        func record(_ path: String) { seen.withLock { $0.append(path) } }
        var all: [String] { seen.withLock { $0 } }
    }

    /// Records each stream's path and answers Trailers-Only UNIMPLEMENTED.
    private final class RecordingDelegate: HTTP2StreamDelegate {
        private let paths: Paths
        init(paths: Paths) { self.paths = paths }

        func streamDidReceiveHeaders(_ stream: HTTP2Stream, headers: [HTTPHeaderField], endStream: Bool) {
            paths.record(headers.first(named: ":path") ?? "")
        }

        func streamDidReceiveData(_ stream: HTTP2Stream, bytes: [UInt8], endStream: Bool) {
            guard endStream else { return }
            stream.sendHeaders(
                [
                    HTTPHeaderField(name: ":status", value: "200"),
                    HTTPHeaderField(name: "content-type", value: "application/grpc"),
                    HTTPHeaderField(name: "grpc-status", value: "12"),
                ], endStream: true)
        }

        func streamDidClose(_ stream: HTTP2Stream, errorCode: UInt32) {}
    }

    func testACallFromACancelledTaskOnTheLoopSendsNothing() async throws {
        let paths = Paths()
        let server = try HTTP2Server(configuration: .init()) { _ in RecordingDelegate(paths: paths) }
        let port = try server.start()
        let loop = try EventLoop(name: "cancelled-caller")
        let client = try RPCClient(targets: [HostAndPort(host: "127.0.0.1", port: port)], loop: loop)
        let warmUp = MethodDescriptor(service: "test.v1.Test", method: "WarmUp")
        let cancelled = MethodDescriptor(service: "test.v1.Test", method: "Cancelled")
        let after = MethodDescriptor(service: "test.v1.Test", method: "After")
        // The connection is up, so a call would be sent at once.
        let first = await expectRPCError { _ = try await client.unaryRaw(warmUp, request: [1]) }
        XCTAssertEqual(first?.code, .unimplemented)

        let task = Task(executorPreference: loop) { () -> RPCError? in
            withUnsafeCurrentTask { $0?.cancel() }
            return await expectRPCError { _ = try await client.unaryRaw(cancelled, request: [1]) }
        }
        let error = await task.value
        XCTAssertEqual(error?.code, .cancelled)

        // Streams arrive in order: once the next call is answered, a stream
        // for the cancelled one would have been seen.
        let next = await expectRPCError { _ = try await client.unaryRaw(after, request: [1]) }
        XCTAssertEqual(next?.code, .unimplemented)
        XCTAssertEqual(paths.all, [warmUp.path, after.path], "no stream for the cancelled call")
        await client.close()
        await loop.shutdown()
        await server.shutdown(gracePeriod: .seconds(1))
    }
}
