import Foundation
@testable import HTTPServer
import RPCRuntime
import TestSupport
import XCTest

/// Over HTTP/2, a request refused from its head (`refuseBeforeBody`) whose
/// declared body is within its path's limit may still send that body,
/// dropped as it comes; the request deadline bounds how long.
final class HTTP2EarlyAnswerDrainTests: XCTestCase {
    /// Refuses every request that announces a body, from its head.
    private struct RefusingHeads: HTTPResponder {
        func respond(to request: HTTPRequest, origin: RequestOrigin) async -> HTTPResponse {
            HTTPResponse(status: 200, body: [])
        }

        func framingFailure(_ error: HTTPRequestError, origin: RequestOrigin) -> HTTPResponse {
            HTTPResponse(status: error.status, body: Array(error.reason.rawValue.utf8))
        }

        func refuseBeforeBody(_ head: HTTPRequestHead, origin: RequestOrigin) -> HTTPResponse? {
            HTTPResponse(status: 401, body: Array("refused".utf8))
        }
    }

    func testABodyThatNeverComesIsResetAtTheRequestDeadline() async throws {
        let server = try HTTPServer(
            configuration: .init(port: 0, http2RequestTimeoutMilliseconds: 300), responder: RefusingHeads())
        let port = try await server.start()
        let frames = try await offPool { () -> [H2CClient.Frame]? in
            let client = try H2CClient(port: port)
            try client.sendPreface()
            try client.sendHeaders(
                streamID: 1,
                fields: H2CClient.request(method: "POST", path: "/upload", extra: [("content-length", "100")]),
                endStream: false)
            // The answer ends stream 1 on the server's side; the client's
            // side stays open until the deadline resets it.
            guard let answer = client.readStream(1) else { return nil }
            guard let reset = client.readStream(1) else { return answer }
            return answer + reset
        }
        XCTAssertEqual(
            frames?.map(\.type),
            [H2CClient.FrameType.headers, H2CClient.FrameType.data, H2CClient.FrameType.resetStream])
        XCTAssertEqual(frames?.dropLast().last.map { String(decoding: $0.payload, as: UTF8.self) }, "refused")
        XCTAssertEqual(frames?.last?.errorCode, 0, "RST_STREAM(NO_ERROR) at the deadline")
        await server.shutdown(gracePeriod: .seconds(1))
    }
}
