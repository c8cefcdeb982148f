import RPCCore
import RPCRuntime
import XCTest

/// What a server holds of request bodies it has not handed to a handler:
/// a unary call's second message is refused at its prefix. Over raw
/// HTTP/2 on 127.0.0.1.
final class RequestBufferingTests: XCTestCase {
    private static let echoPath = TestMethods.echo.path

    func testSecondMessageOnUnaryCallIsRefusedAtItsPrefix() async throws {
        let (server, port) = try startTestServer()
        let response = try await onDedicatedThread {
            let client = try RawHTTP2Client(port: port)
            try client.sendPreface()
            try client.sendHeaders(streamID: 1, fields: RawHTTP2Client.grpcRequest(path: Self.echoPath))
            // One whole message, then only the prefix of a second one of
            // 1 MiB, the stream left open: the answer must not wait for it.
            try client.sendData(streamID: 1, bytes: MessageFramer.frame([1, 2, 3]) + [0, 0, 0x10, 0, 0], endStream: false)
            return client.readResponse(streamID: 1)
        }
        XCTAssertEqual(response?.value("grpc-status"), "13")
        XCTAssertEqual(response?.value("grpc-message"), "Too many request messages for a unary call")
        try await assertServerAnswers(port: port)
        await server.shutdown(gracePeriod: .seconds(1))
    }

    private func assertServerAnswers(port: Int) async throws {
        let client = try makeTestClient(ports: [port])
        let response = try await client.unary(TestMethods.echo, request: RawMessage("still here"), responseType: RawMessage.self)
        XCTAssertEqual(response.message.text, "still here")
        await client.close()
    }
}
