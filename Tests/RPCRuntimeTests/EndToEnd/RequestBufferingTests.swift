import RPCCore
import RPCRuntime
import XCTest

/// What a server holds of request bodies it has not handed to a handler:
/// a unary call's second message is refused at its prefix, and one
/// connection's buffered bytes are bounded. Over raw HTTP/2 on 127.0.0.1.
final class RequestBufferingTests: XCTestCase {
    private static let echoPath = TestMethods.echo.path

    /// A prefix announcing `bodyBytes`, then `sentBytes` of the body.
    private static func partialMessage(announcing bodyBytes: Int, sending sentBytes: Int) -> [UInt8] {
        [
            0, UInt8(bodyBytes >> 24 & 0xFF), UInt8(bodyBytes >> 16 & 0xFF), UInt8(bodyBytes >> 8 & 0xFF),
            UInt8(bodyBytes & 0xFF),
        ]
            + [UInt8](repeating: 0x61, count: sentBytes)
    }

    func testSecondMessageOnUnaryCallIsRefusedAtItsPrefix() async throws {
        let (server, port) = try startTestServer()
        let response = try await onDedicatedThread {
            let client = try RawHTTP2Client(port: port)
            try client.sendPreface()
            try client.sendHeaders(streamID: 1, fields: RawHTTP2Client.grpcRequest(path: Self.echoPath))
            // One whole message, then only the prefix of a second one of
            // 1 MiB, the stream left open: the answer must not wait for it.
            try client.sendData(
                streamID: 1, bytes: MessageFramer.frame([1, 2, 3]) + [0, 0, 0x10, 0, 0], endStream: false)
            return client.readResponse(streamID: 1)
        }
        XCTAssertEqual(response?.value("grpc-status"), "13")
        XCTAssertEqual(response?.value("grpc-message"), "Too many request messages for a unary call")
        try await assertServerAnswers(port: port)
        await server.shutdown(gracePeriod: .seconds(1))
    }

    /// A deadline that passes while the request is still arriving is
    /// answered DEADLINE_EXCEEDED, then RST_STREAM(NO_ERROR) asks the client
    /// to stop sending: the stream gives back its place at once.
    func testADeadlineMidUploadIsAnsweredThenTheStreamIsReset() async throws {
        let (server, port) = try startTestServer()
        let (status, resetCode) = try await onDedicatedThread { () -> (String?, UInt32?) in
            let client = try RawHTTP2Client(port: port)
            try client.sendPreface()
            try client.sendHeaders(
                streamID: 1, fields: RawHTTP2Client.grpcRequest(path: Self.echoPath, extra: [("grpc-timeout", "200m")]))
            try client.sendData(
                streamID: 1, bytes: Self.partialMessage(announcing: 1000, sending: 10), endStream: false)
            let status = client.readResponse(streamID: 1)?.value("grpc-status")
            for _ in 0..<100 {
                guard let frame = client.readFrame() else { break }
                if frame.type == 0x3, frame.streamID == 1, frame.payload.count == 4 {
                    return (
                        status,
                        UInt32(frame.payload[0]) << 24 | UInt32(frame.payload[1]) << 16 | UInt32(frame.payload[2]) << 8
                            | UInt32(frame.payload[3])
                    )
                }
            }
            return (status, nil)
        }
        XCTAssertEqual(status, "4")
        XCTAssertEqual(resetCode, 0, "RST_STREAM(NO_ERROR) after the answer")
        try await assertServerAnswers(port: port)
        await server.shutdown(gracePeriod: .seconds(1))
    }

    func testStreamPastTheConnectionsBufferedBytesIsRefusedAndItsBytesFreed() async throws {
        var limits = RPCLimits()
        limits.messageSizeBytesMax = 1000
        limits.requestBytesBufferedPerConnectionMax = 3000
        let (server, port) = try startTestServer(limits: limits)
        let answers = try await onDedicatedThread { () -> [String: String?] in
            let client = try RawHTTP2Client(port: port)
            try client.sendPreface()
            var answers: [String: String?] = [:]
            // Streams 1, 3 and 5 each hold 905 bytes of a 1000-byte message: 2715.
            for stream: UInt32 in [1, 3, 5] {
                try client.sendHeaders(streamID: stream, fields: RawHTTP2Client.grpcRequest(path: Self.echoPath))
                try client.sendData(
                    streamID: stream, bytes: Self.partialMessage(announcing: 1000, sending: 900), endStream: false)
            }
            // Stream 7: 200 bytes fit (2915), 200 more would not (3115).
            try client.sendHeaders(streamID: 7, fields: RawHTTP2Client.grpcRequest(path: Self.echoPath))
            try client.sendData(
                streamID: 7, bytes: Self.partialMessage(announcing: 1000, sending: 195), endStream: false)
            try client.sendData(streamID: 7, bytes: [UInt8](repeating: 0x62, count: 200), endStream: false)
            let refused = client.readResponse(streamID: 7)
            answers["7"] = refused?.value("grpc-status")
            answers["7-message"] = refused?.value("grpc-message")
            // Stream 7's 200 bytes were freed: exactly 285 more fit (3000).
            try client.sendHeaders(streamID: 9, fields: RawHTTP2Client.grpcRequest(path: Self.echoPath))
            try client.sendData(streamID: 9, bytes: Self.partialMessage(announcing: 280, sending: 280), endStream: true)
            answers["9"] = client.readResponse(streamID: 9)?.value("grpc-status")
            // The streams held before still complete.
            try client.sendData(streamID: 1, bytes: [UInt8](repeating: 0x63, count: 100), endStream: true)
            answers["1"] = client.readResponse(streamID: 1)?.value("grpc-status")
            return answers
        }
        XCTAssertEqual(answers["7"], "8", "RESOURCE_EXHAUSTED for the stream past the bound")
        XCTAssertEqual(answers["7-message"], "Request bytes buffered on this connection exceed 3000")
        XCTAssertEqual(answers["9"], "0", "the refused stream's bytes no longer count")
        XCTAssertEqual(answers["1"], "0")
        try await assertServerAnswers(port: port)
        await server.shutdown(gracePeriod: .seconds(1))
    }

    private func assertServerAnswers(port: Int) async throws {
        let client = try makeTestClient(ports: [port])
        let response = try await client.unary(
            TestMethods.echo, request: RawMessage("still here"), responseType: RawMessage.self)
        XCTAssertEqual(response.message.text, "still here")
        await client.close()
    }
}
