import RPCCore
import RPCRuntime
import Synchronization
import XCTest

/// Bad and abusive input over raw TCP. After each case the server must still answer a normal call.
final class MalformedInputTests: XCTestCase {
    private var server: RPCServer!
    private var port = 0
    private let probe = HandlerProbe()

    override func setUp() async throws {
        (server, port) = try startTestServer(probe: probe)
    }

    override func tearDown() async throws {
        try await assertServerStillAnswers()
        await server.shutdown(gracePeriod: .seconds(1))
    }

    private func assertServerStillAnswers() async throws {
        let client = try makeTestClient(ports: [port])
        let response = try await client.unary(
            TestMethods.echo, request: RawMessage("still here"), responseType: RawMessage.self)
        XCTAssertEqual(response.message.text, "still here")
        await client.close()
    }

    private func waitFor(_ counter: HandlerProbe.Counter, atLeast value: Int) async throws {
        for _ in 0..<500 where probe.count(counter) < value {
            try await Task.sleep(for: .milliseconds(10))
        }
    }

    private func rawResponse(_ build: @escaping @Sendable (RawHTTP2Client) throws -> Void) async throws -> [(
        String, String
    )]? {
        let port = self.port
        return try await onDedicatedThread {
            let client = try RawHTTP2Client(port: port)
            try client.sendPreface()
            try build(client)
            return client.readResponse(streamID: 1)
        }
    }

    func testGarbageInsteadOfPrefaceClosesConnection() async throws {
        let port = self.port
        let closed = try await onDedicatedThread {
            let client = try RawHTTP2Client(port: port)
            try client.send(Array("GET / HTTP/1.1\r\nHost: x\r\n\r\ngarbage garbage garbage".utf8))
            return client.readUntilClosed()
        }
        XCTAssertTrue(closed)
    }

    func testTruncatedLengthPrefixIsInternal() async throws {
        let response = try await rawResponse { client in
            try client.sendHeaders(streamID: 1, fields: RawHTTP2Client.grpcRequest(path: TestMethods.echo.path))
            try client.sendData(streamID: 1, bytes: [0, 0, 0], endStream: true)
        }
        XCTAssertEqual(response?.value("grpc-status"), "13")
    }

    func testLengthPrefixLargerThanBodyIsInternal() async throws {
        let response = try await rawResponse { client in
            try client.sendHeaders(streamID: 1, fields: RawHTTP2Client.grpcRequest(path: TestMethods.echo.path))
            try client.sendData(streamID: 1, bytes: [0, 0, 0, 0, 10, 1, 2], endStream: true)
        }
        XCTAssertEqual(response?.value("grpc-status"), "13")
    }

    func testOversizedPrefixIsAnsweredBeforeTheBodyThenReset() async throws {
        let response = try await rawResponse { client in
            try client.sendHeaders(streamID: 1, fields: RawHTTP2Client.grpcRequest(path: TestMethods.echo.path))
            // Announce 64 MiB but send only the prefix and keep the stream open.
            try client.sendData(streamID: 1, bytes: [0, 4, 0, 0, 0], endStream: false)
        }
        XCTAssertEqual(response?.value("grpc-status"), "8")
    }

    func testWrongContentTypeIsHTTP415() async throws {
        let response = try await rawResponse { client in
            try client.sendHeaders(
                streamID: 1,
                fields: RawHTTP2Client.grpcRequest(path: TestMethods.echo.path, contentType: "application/json"))
            try client.sendData(streamID: 1, bytes: Array("{}".utf8), endStream: true)
        }
        XCTAssertEqual(response?.value(":status"), "415")
    }

    func testCompressedMessageWithUnsupportedEncodingIsUnimplemented() async throws {
        let response = try await rawResponse { client in
            try client.sendHeaders(
                streamID: 1,
                fields: RawHTTP2Client.grpcRequest(path: TestMethods.echo.path, extra: [("grpc-encoding", "gzip")]))
            try client.sendData(streamID: 1, bytes: [1, 0, 0, 0, 2, 0x1F, 0x8B], endStream: true)
        }
        XCTAssertEqual(response?.value("grpc-status"), "12")
        XCTAssertEqual(response?.value("grpc-accept-encoding"), "identity")
    }

    func testCompressedFlagWithoutEncodingIsInternal() async throws {
        let response = try await rawResponse { client in
            try client.sendHeaders(streamID: 1, fields: RawHTTP2Client.grpcRequest(path: TestMethods.echo.path))
            try client.sendData(streamID: 1, bytes: [1, 0, 0, 0, 1, 7], endStream: true)
        }
        XCTAssertEqual(response?.value("grpc-status"), "13")
    }

    func testServerAnswersDeadlineExceededOnItsOwn() async throws {
        // The raw client never cancels: only the server's timer can end this call.
        let response = try await rawResponse { client in
            try client.sendHeaders(
                streamID: 1,
                fields: RawHTTP2Client.grpcRequest(path: TestMethods.sleep.path, extra: [("grpc-timeout", "100m")]))
            try client.sendData(streamID: 1, bytes: MessageFramer.frame(Array("10000".utf8)), endStream: true)
        }
        XCTAssertEqual(response?.value("grpc-status"), "4")
        try await waitFor(.cancelled, atLeast: 1)
        XCTAssertEqual(probe.cancelled.withLock { $0 }, 1)
    }

    func testStreamResetMidCallCancelsHandler() async throws {
        let port = self.port
        let client = try await onDedicatedThread { () -> RawHTTP2Client in
            let client = try RawHTTP2Client(port: port)
            try client.sendPreface()
            try client.sendHeaders(streamID: 1, fields: RawHTTP2Client.grpcRequest(path: TestMethods.sleep.path))
            try client.sendData(streamID: 1, bytes: MessageFramer.frame(Array("10000".utf8)), endStream: true)
            return client
        }
        try await waitFor(.started, atLeast: 1)
        XCTAssertEqual(probe.started.withLock { $0 }, 1)
        try await onDedicatedThread { try client.sendReset(streamID: 1) }
        try await waitFor(.cancelled, atLeast: 1)
        XCTAssertEqual(probe.cancelled.withLock { $0 }, 1)
        client.close()
    }

    func testClientDisconnectMidCallCancelsHandler() async throws {
        let port = self.port
        let client = try await onDedicatedThread { () -> RawHTTP2Client in
            let client = try RawHTTP2Client(port: port)
            try client.sendPreface()
            try client.sendHeaders(streamID: 1, fields: RawHTTP2Client.grpcRequest(path: TestMethods.sleep.path))
            try client.sendData(streamID: 1, bytes: MessageFramer.frame(Array("10000".utf8)), endStream: true)
            return client
        }
        try await waitFor(.started, atLeast: 1)
        client.close()
        try await waitFor(.cancelled, atLeast: 1)
        XCTAssertEqual(probe.cancelled.withLock { $0 }, 1)
        for _ in 0..<500 where await server.connectionCount() > 0 {
            try await Task.sleep(for: .milliseconds(10))
        }
        let connections = await server.connectionCount()
        XCTAssertEqual(connections, 0)
    }

    /// Opens `count` streams on one new connection, resetting each at once,
    /// then makes one real call on that connection; abandons 50 more streams
    /// without reset and hangs up. Returns the real call's response fields.
    private static func abandonStreams(port: Int, count: Int) throws -> [(String, String)]? {
        let client = try RawHTTP2Client(port: port)
        defer { client.close() }
        try client.sendPreface()
        let headers = RawHTTP2Client.headerBlock(RawHTTP2Client.grpcRequest(path: TestMethods.echo.path))
        var streamID: UInt32 = 1
        var batch: [UInt8] = []
        for index in 0..<count {
            batch += RawHTTP2Client.frame(type: 0x1, flags: 0x4, streamID: streamID, payload: headers)
            batch += RawHTTP2Client.frame(type: 0x3, flags: 0, streamID: streamID, payload: [0, 0, 0, 8])
            streamID += 2
            if batch.count > 32 * 1024 || index == count - 1 {
                try client.send(batch)
                batch = []
            }
        }
        try client.sendHeaders(streamID: streamID, fields: RawHTTP2Client.grpcRequest(path: TestMethods.echo.path))
        try client.sendData(streamID: streamID, bytes: MessageFramer.frame(Array("ok".utf8)), endStream: true)
        let answer = client.readResponse(streamID: streamID)
        streamID += 2
        for _ in 0..<50 {
            try client.sendHeaders(streamID: streamID, fields: RawHTTP2Client.grpcRequest(path: TestMethods.echo.path))
            streamID += 2
        }
        return answer
    }

    func testTenThousandAbandonedStreamsAcrossConnections() async throws {
        let port = self.port
        // Bounded: 11 connections x 910 streams (>= 10,000), under the per-connection reset burst.
        let answers = try await onDedicatedThread { () -> [String?] in
            try (0..<11).map { _ in try Self.abandonStreams(port: port, count: 910)?.value("grpc-status") }
        }
        XCTAssertEqual(answers, Array(repeating: "0", count: 11))
        for _ in 0..<500 where await server.connectionCount() > 0 {
            try await Task.sleep(for: .milliseconds(10))
        }
        let connections = await server.connectionCount()
        XCTAssertEqual(connections, 0)
    }

    func testResetFloodOnOneConnectionEndsItWithGoAway() async throws {
        let port = self.port
        let answer = try await onDedicatedThread { try Self.abandonStreams(port: port, count: 10_000) }
        // nghttp2's rapid-reset defence ends the session with GOAWAY(INTERNAL_ERROR).
        XCTAssertEqual(answer?.value("goaway"), "2", "\(String(describing: answer))")
        let lastStream = Int(answer?.value("goaway-last-stream") ?? "") ?? 0
        XCTAssertGreaterThanOrEqual(lastStream, 2 * 1000 - 1)
        for _ in 0..<500 where await server.connectionCount() > 0 {
            try await Task.sleep(for: .milliseconds(10))
        }
        let connections = await server.connectionCount()
        XCTAssertEqual(connections, 0)
    }
}
