import XCTest
@testable import Gateway

/// HTTP/2 timeouts with a hand-written client (short timeouts configured).
final class GatewayServerHTTP2TimeoutTests: XCTestCase {
    private static let goAway: UInt8 = 0x7
    private static let data: UInt8 = 0x0
    private static let headers: UInt8 = 0x1
    private static let resetStream: UInt8 = 0x3

    func testIdleHTTP2ConnectionGetsGoAwayAndCloses() async throws {
        let harness = try await GatewayHarness.start(
            configuration: .init(
                host: "127.0.0.1", port: 0, http2IdleTimeoutMilliseconds: 300))
        let port = harness.port
        let (frames, closed) = try await onDedicatedThread { () -> ([RawHTTPClient.Frame], Bool) in
            let client = try RawHTTPClient(port: port, receiveTimeoutSeconds: 10)
            try client.sendHTTP2Preface()
            return try client.readFrames()
        }
        XCTAssertTrue(closed, "closed well before the 10 s read timeout")
        XCTAssertTrue(frames.contains { $0.type == Self.goAway }, "GOAWAY before closing")
        await harness.stop()
    }

    /// GET /healthz: HPACK static :method GET (2) and :scheme http (6),
    /// :path and :authority as literals without indexing (names 4 and 1).
    private static let getHealthz: [UInt8] =
        [0x82, 0x86, 0x04, 8] + Array("/healthz".utf8) + [0x01, 12] + Array("gateway.test".utf8)

    func testBusyHTTP2ConnectionGetsNoGoAwayWhileRequestsKeepComing() async throws {
        let harness = try await GatewayHarness.start(
            configuration: .init(
                host: "127.0.0.1", port: 0, http2IdleTimeoutMilliseconds: 1_000))
        let port = harness.port
        let (answered, goAwayWhileBusy, goAwayWhenIdle, closed) = try await onDedicatedThread {
            () -> (Int, Bool, Bool, Bool) in
            let client = try RawHTTPClient(port: port, receiveTimeoutSeconds: 10)
            try client.sendHTTP2Preface()
            var answered = 0
            var goAwayWhileBusy = false
            // 35 requests 100 ms apart: over three idle timeouts in all, but
            // never a tenth of one without a request.
            for index in 0..<35 {
                let streamID = UInt32(2 * index + 1)
                try client.send(
                    RawHTTPClient.frame(type: Self.headers, flags: 0x5, streamID: streamID, payload: Self.getHealthz))
                var ended = false
                for _ in 0..<100 where !ended {
                    guard let frame = try client.readFrame() else { return (answered, goAwayWhileBusy, false, true) }
                    if frame.type == Self.goAway { goAwayWhileBusy = true }
                    ended =
                        frame.streamID == streamID && frame.flags & 0x1 != 0
                        && (frame.type == Self.headers || frame.type == Self.data)
                }
                if ended { answered += 1 }
                Thread.sleep(forTimeInterval: 0.1)
            }
            // Then truly idle: GOAWAY, and the connection closes.
            var goAwayWhenIdle = false
            for _ in 0..<100 {
                guard let frame = try client.readFrame() else {
                    return (answered, goAwayWhileBusy, goAwayWhenIdle, true)
                }
                if frame.type == Self.goAway { goAwayWhenIdle = true }
            }
            return (answered, goAwayWhileBusy, goAwayWhenIdle, false)
        }
        XCTAssertEqual(answered, 35)
        XCTAssertFalse(goAwayWhileBusy, "a connection with a request every 100 ms is not idle")
        XCTAssertTrue(goAwayWhenIdle, "GOAWAY once idle")
        XCTAssertTrue(closed, "closed well before the 10 s read timeout")
        await harness.stop()
    }

    /// A client that keeps its flow-control window at zero holds its
    /// answers, and would hold the connection for ever: past the write
    /// timeout it gets GOAWAY and is closed, and the work of its other
    /// requests stops (their backend calls are cancelled).
    func testHTTP2ResponseHeldByAZeroWindowClosesTheConnectionAfterTheWriteTimeout() async throws {
        let harness = try await GatewayHarness.start(
            configuration: .init(
                host: "127.0.0.1", port: 0, http2IdleTimeoutMilliseconds: 60_000,
                responseWriteTimeoutMilliseconds: 1_000))
        harness.doubles.setDelay(milliseconds: 10_000)
        let port = harness.port
        let (frames, closed) = try await onDedicatedThread { () -> ([RawHTTPClient.Frame], Bool) in
            let client = try RawHTTPClient(port: port, receiveTimeoutSeconds: 10)
            // SETTINGS_INITIAL_WINDOW_SIZE (4) = 0: no DATA may flow.
            try client.send(
                Array("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".utf8)
                    + RawHTTPClient.frame(type: 0x4, flags: 0, streamID: 0, payload: [0, 4, 0, 0, 0, 0]))
            // Stream 1 is answered at once (its body held by the window);
            // stream 3 waits on its backend call.
            try client.send(
                RawHTTPClient.frame(
                    type: Self.headers, flags: 0x5, streamID: 1, payload: RawHTTPClient.getBlock("/healthz")))
            try client.send(
                RawHTTPClient.frame(
                    type: Self.headers, flags: 0x5, streamID: 3,
                    payload: RawHTTPClient.getBlock("/api/v1/points/balance", extra: [RawHTTPClient.bearerField])))
            var frames: [RawHTTPClient.Frame] = []
            for _ in 0..<100 {
                guard let frame = try client.readFrame() else { return (frames, true) }
                frames.append(frame)
            }
            return (frames, false)
        }
        XCTAssertTrue(closed, "closed well before the 10 s read timeout")
        XCTAssertEqual(
            frames.filter { $0.streamID == 1 }.map(\.type), [Self.headers], "the answer's HEADERS; its DATA never left")
        let goAway = frames.first { $0.type == Self.goAway }
        XCTAssertEqual(goAway?.payload[4..<8].map { $0 }, [0, 0, 0, 0xB], "GOAWAY(ENHANCE_YOUR_CALM)")
        for _ in 0..<300 where harness.doubles.cancelledCalls == 0 {
            try await Task.sleep(for: .milliseconds(10))
        }
        XCTAssertEqual(harness.doubles.recordedMethods, ["GetBalance"])
        XCTAssertEqual(
            harness.doubles.cancelledCalls, 1, "the other request's backend call was cancelled with its connection")
        await harness.stop()
    }

    func testHTTP2RequestThatNeverCompletesIsAnsweredAndReset() async throws {
        let harness = try await GatewayHarness.start(
            configuration: .init(
                host: "127.0.0.1", port: 0, http2IdleTimeoutMilliseconds: 60_000, http2RequestTimeoutMilliseconds: 300))
        let port = harness.port
        let (frames, closed) = try await onDedicatedThread { () -> ([RawHTTPClient.Frame], Bool) in
            let client = try RawHTTPClient(port: port, receiveTimeoutSeconds: 3)
            try client.sendHTTP2Preface()
            // POST to the notification route (no token needed, so its head
            // is not refused before the body) with END_HEADERS but no
            // END_STREAM, and no body ever: HPACK static :method POST (3),
            // :scheme http (6), :path (literal, indexed name 4), :authority
            // "x" (literal, indexed name 1).
            let block: [UInt8] =
                [0x83, 0x86] + RawHTTPClient.literal(nameIndex: 4, value: "/api/v1/payments/apple/notifications")
                + [0x41, 0x01, UInt8(ascii: "x")]
            try client.send(RawHTTPClient.frame(type: 0x1, flags: 0x4, streamID: 1, payload: block))
            // The connection stays open (long idle timeout): read until the
            // receive timeout, then look at what came.
            return try client.readFrames()
        }
        XCTAssertFalse(closed)
        let onStream = frames.filter { $0.streamID == 1 }
        XCTAssertEqual(
            onStream.map(\.type), [Self.headers, Self.data, Self.resetStream],
            "an early 408 with its problem body, then RST_STREAM")
        XCTAssertEqual(onStream.first.map { $0.flags & 0x1 }, 0, "the 408's headers do not end the stream")
        guard onStream.count == 3 else { return await harness.stop() }
        XCTAssertEqual(onStream[1].flags & 0x1, 0x1, "its body does")
        XCTAssertTrue(String(decoding: onStream[1].payload, as: UTF8.self).contains(#""code":"REQUEST_TIMEOUT""#))
        XCTAssertEqual(onStream[2].payload, [0, 0, 0, 0], "RST_STREAM(NO_ERROR)")
        XCTAssertEqual(harness.doubles.recordedMethods, [])
        await harness.stop()
    }
}
