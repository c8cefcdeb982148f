import RPCCore
import RPCRuntime
import XCTest

/// The generic HTTP/2 layer used directly, as the Gateway's JSON API will.
final class HTTP2ServerTests: XCTestCase {
    /// Answers every request with 200, echoing the request path and body length.
    private final class EchoDelegate: HTTP2StreamDelegate {
        private var path = ""
        private var bodyBytes = 0

        func streamDidReceiveHeaders(_ stream: HTTP2Stream, headers: [HTTPHeaderField], endStream: Bool) {
            path = headers.first(named: ":path") ?? ""
            if endStream { respond(stream) }
        }

        func streamDidReceiveData(_ stream: HTTP2Stream, bytes: [UInt8], endStream: Bool) {
            bodyBytes += bytes.count
            if endStream { respond(stream) }
        }

        func streamDidClose(_ stream: HTTP2Stream, errorCode: UInt32) {}

        private func respond(_ stream: HTTP2Stream) {
            stream.sendHeaders(
                [
                    HTTPHeaderField(name: ":status", value: "200"),
                    HTTPHeaderField(name: "content-type", value: "application/json"),
                    HTTPHeaderField(name: "x-path", value: path),
                    HTTPHeaderField(name: "x-body-bytes", value: String(bodyBytes)),
                ], endStream: false)
            stream.sendData(Array("{\"ok\":true}".utf8), endStream: true)
        }
    }

    func testGenericServerServesPlainHTTP2Requests() async throws {
        let server = try HTTP2Server(configuration: .init()) { _ in EchoDelegate() }
        let port = try server.start()
        let response = try await onDedicatedThread { () -> [(String, String)]? in
            let client = try RawHTTP2Client(port: port)
            try client.sendPreface()
            try client.sendHeaders(
                streamID: 1,
                fields: [
                    (":method", "POST"), (":scheme", "http"), (":path", "/v1/credits"),
                    (":authority", "localhost"), ("content-type", "application/json"),
                ])
            try client.sendData(streamID: 1, bytes: Array("{\"a\":1}".utf8), endStream: true)
            return client.readResponse(streamID: 1)
        }
        XCTAssertEqual(response?.value(":status"), "200")
        XCTAssertEqual(response?.value("x-path"), "/v1/credits")
        XCTAssertEqual(response?.value("x-body-bytes"), "7")
        await server.shutdown(gracePeriod: .seconds(1))
    }
}
