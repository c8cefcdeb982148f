import Foundation
import HTTPServer
import RPCRuntime
import TestSupport
import XCTest

/// Where the server runs its responder: on a Task that prefers its event
/// loop, over HTTP/1.1 and h2c alike, and on a loop lent by its owner,
/// which the server's shutdown leaves running.
final class HTTPServerLoopTests: XCTestCase {
    /// Answers whether it ran on `loop`'s thread, before and after a suspension.
    private struct LoopReporter: HTTPResponder {
        let loop: EventLoop

        func respond(to request: HTTPRequest, origin: RequestOrigin) async -> HTTPResponse {
            let before = loop.inEventLoop
            try? await Task.sleep(for: .milliseconds(1))
            let after = loop.inEventLoop
            return HTTPResponse(status: 200, body: Array("\(before) \(after)".utf8))
        }

        func framingFailure(_ error: HTTPRequestError, origin: RequestOrigin) -> HTTPResponse {
            HTTPResponse(status: 400)
        }
    }

    private func curl(_ arguments: [String]) async throws -> String {
        let path = NSTemporaryDirectory() + "http-loop-curl-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: path) }
        let status = try await offPool {
            try Command.run(
                ["/usr/bin/curl", "--silent", "--show-error", "--max-time", "10"] + arguments, outputPath: path)
        }
        XCTAssertEqual(status, 0)
        return (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""
    }

    func testTheResponderRunsOnALentLoopWhichOutlivesTheServer() async throws {
        let loop = try EventLoop(name: "lent")
        let server = try HTTPServer(configuration: .init(port: 0), responder: LoopReporter(loop: loop), loop: loop)
        XCTAssertTrue(server.loop === loop)
        let port = try await server.start()
        let http1 = try await curl(["http://127.0.0.1:\(port)/"])
        XCTAssertEqual(http1, "true true")
        let h2c = try await curl(["--http2-prior-knowledge", "http://127.0.0.1:\(port)/"])
        XCTAssertEqual(h2c, "true true")
        await server.shutdown(gracePeriod: .seconds(1))
        XCTAssertTrue(loop.execute {}, "the lent loop still runs after the server's shutdown")
        await loop.shutdown()
    }

    /// Answers whether its task has an executor preference (the server's loop).
    private struct PreferenceReporter: HTTPResponder {
        func respond(to request: HTTPRequest, origin: RequestOrigin) async -> HTTPResponse {
            let preferred = withUnsafeCurrentTask { $0?.unownedTaskExecutor != nil }
            return HTTPResponse(status: 200, body: Array("\(preferred)".utf8))
        }

        func framingFailure(_ error: HTTPRequestError, origin: RequestOrigin) -> HTTPResponse {
            HTTPResponse(status: 400)
        }
    }

    func testAServerWithItsOwnLoopRunsTheResponderThereAndStopsIt() async throws {
        let server = try HTTPServer(configuration: .init(port: 0), responder: PreferenceReporter())
        let port = try await server.start()
        let http1 = try await curl(["http://127.0.0.1:\(port)/"])
        XCTAssertEqual(http1, "true")
        let h2c = try await curl(["--http2-prior-knowledge", "http://127.0.0.1:\(port)/"])
        XCTAssertEqual(h2c, "true")
        await server.shutdown(gracePeriod: .seconds(1))
        XCTAssertFalse(server.loop.execute {}, "the server stopped its own loop")
    }
}
