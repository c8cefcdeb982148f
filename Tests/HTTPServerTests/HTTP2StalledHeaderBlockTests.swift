import Foundation
@testable import HTTPServer
import RPCRuntime
import TestSupport
import XCTest

/// A header block whose CONTINUATION never comes: HTTP/2 lets no other
/// frame of the connection be read until it does, so only the request
/// deadline ends it. The stream is answered at the deadline, reset, and the
/// connection, left without streams, gets GOAWAY and is closed.
final class HTTP2StalledHeaderBlockTests: XCTestCase {
    func testAHeaderBlockThatNeverEndsIsAnsweredAtTheDeadlineAndItsConnectionClosed() async throws {
        let server = try HTTPServer(
            configuration: .init(port: 0, http2IdleTimeoutMilliseconds: 500, http2RequestTimeoutMilliseconds: 300),
            responder: BodyLengthResponder())
        let port = try await server.start()
        let (frames, closed) = try await offPool { () -> ([H2CClient.Frame], Bool) in
            let client = try H2CClient(port: port)
            try client.sendPreface()
            // HEADERS without END_HEADERS, and nothing after it.
            try client.send(
                H2CClient.frame(
                    type: H2CClient.FrameType.headers, flags: 0, streamID: 1,
                    payload: H2CClient.headerBlock(H2CClient.request(method: "GET", path: "/x"))))
            var frames: [H2CClient.Frame] = []
            for _ in 0..<100 {
                guard let frame = client.readFrame() else { return (frames, true) }
                frames.append(frame)
            }
            return (frames, false)
        }
        let stream = frames.filter { $0.streamID == 1 }
        XCTAssertEqual(
            stream.map(\.type),
            [H2CClient.FrameType.headers, H2CClient.FrameType.data, H2CClient.FrameType.resetStream])
        XCTAssertEqual(stream.dropLast().last.map { String(decoding: $0.payload, as: UTF8.self) }, "requestTimeout")
        XCTAssertEqual(stream.last?.errorCode, 0, "RST_STREAM(NO_ERROR) after the answer")
        XCTAssertEqual(frames.last?.type, H2CClient.FrameType.goAway)
        XCTAssertTrue(closed, "the server closed the connection (within H2CClient's 5 s read bound)")
        await server.shutdown(gracePeriod: .seconds(1))
    }
}
