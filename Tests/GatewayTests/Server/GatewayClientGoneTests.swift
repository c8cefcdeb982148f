import Foundation
import HTTPServer
import Metrics
import TestSupport
import XCTest
@testable import Gateway

/// A client that goes away before its answer stops the work behind it: the
/// request's Task is cancelled, so the backend call is reset and the
/// backend's handler cancelled; the gateway logs and counts a 499.
final class GatewayClientGoneTests: XCTestCase {
    private func waitForCancelledBackendCall(_ harness: GatewayHarness) async throws {
        // Well within the call's own deadline (GatewayLimits.readTimeout,
        // 3 s), which would cancel the backend's handler too.
        for _ in 0..<100 where harness.doubles.cancelledCalls == 0 {
            try await Task.sleep(for: .milliseconds(10))
        }
        XCTAssertEqual(
            harness.doubles.cancelledCalls, 1, "the backend's handler was cancelled at once, not at the deadline")
        for _ in 0..<300 where !harness.logs.allLines.contains(where: { $0.contains("client closed request") }) {
            try await Task.sleep(for: .milliseconds(10))
        }
        let line = try XCTUnwrap(harness.logs.allLines.first { $0.contains("client closed request") })
        XCTAssertTrue(line.contains(#""status":"499""#), line)
        let counted = harness.metrics.httpRequests.labels("/api/v1/points/balance", "GET", "499").value
        XCTAssertEqual(counted, 1)
        XCTAssertEqual(
            harness.metrics.httpRefusals.labels(RefusalReasonLabel.backendUnavailable.rawValue).value, 0,
            "a client's abort is not a backend outage")
    }

    private func waitForBackendCall(_ harness: GatewayHarness) async throws {
        for _ in 0..<300 where !harness.doubles.recordedMethods.contains("GetBalance") {
            try await Task.sleep(for: .milliseconds(10))
        }
        XCTAssertEqual(harness.doubles.recordedMethods, ["GetBalance"])
    }

    func testHTTP1ClientClosingBeforeTheAnswerCancelsTheBackendCall() async throws {
        let harness = try await GatewayHarness.start()
        harness.doubles.setDelay(milliseconds: 10_000)
        let port = harness.port
        let client = try await onDedicatedThread { () -> RawHTTPClient in
            let client = try RawHTTPClient(port: port)
            try client.send(
                GatewayHarness.requestText("GET", "/api/v1/points/balance", headers: [GatewayHarness.bearer]))
            return client
        }
        try await waitForBackendCall(harness)
        // The client goes away (the descriptor itself is closed by the client's deinit).
        shutdown(client.fd, Int32(SHUT_RDWR))
        try await waitForCancelledBackendCall(harness)
        await harness.stop()
    }

    func testHTTP2StreamResetBeforeTheAnswerCancelsTheBackendCall() async throws {
        let harness = try await GatewayHarness.start()
        harness.doubles.setDelay(milliseconds: 10_000)
        let port = harness.port
        let client = try await onDedicatedThread { () -> RawHTTPClient in
            let client = try RawHTTPClient(port: port)
            try client.sendHTTP2Preface()
            // HPACK: :method GET (static 2), :scheme http (6), :path and
            // :authority literal with indexed names 4 and 1, authorization
            // literal with indexed name 23; no Huffman coding.
            var block: [UInt8] = [0x82, 0x86]
            block += Self.literal(nameIndex: 4, value: "/api/v1/points/balance")
            block += Self.literal(nameIndex: 1, value: "gateway.test")
            block += Self.literal(nameIndex: 23, value: GatewayHarness.bearer.1)
            try client.send(RawHTTPClient.frame(type: 0x1, flags: 0x5, streamID: 1, payload: block))
            return client
        }
        try await waitForBackendCall(harness)
        // RST_STREAM(CANCEL) on stream 1; the connection stays open.
        try await onDedicatedThread {
            try client.send(RawHTTPClient.frame(type: 0x3, flags: 0, streamID: 1, payload: [0, 0, 0, 8]))
        }
        try await waitForCancelledBackendCall(harness)
        let connections = await harness.server.connectionCount()
        XCTAssertEqual(connections, 1, "a reset stream is not a closed connection")
        shutdown(client.fd, Int32(SHUT_RDWR))
        await harness.stop()
    }

    /// The request's Task is cancelled before it ever ran (its stream was
    /// reset at once): the gateway answers without admission, token check or
    /// backend call, and logs and counts the 499 as for a client gone later.
    func testARequestWhoseClientIsGoneBeforeItStartsCostsNoWork() async throws {
        let harness = try await GatewayHarness.start()
        let application = harness.application
        var headers = HTTPHeaders()
        headers.add(name: "host", value: "gateway.test")
        headers.add(name: GatewayHarness.bearer.0, value: GatewayHarness.bearer.1)
        let request = HTTPRequest(
            method: "GET", target: "/api/v1/points/balance", version: .http1_1, headers: headers, body: [],
            keepAlive: true)
        let task = Task(executorPreference: harness.loop) { () -> HTTPResponse in
            withUnsafeCurrentTask { $0?.cancel() }
            return await application.respond(
                to: request, origin: RequestOrigin(protocolName: "HTTP/2", remotePeer: "127.0.0.1:1"))
        }
        _ = await task.value
        XCTAssertEqual(harness.doubles.recordedMethods, [], "no backend call")
        let line = try XCTUnwrap(harness.logs.allLines.first { $0.contains("client closed request") })
        XCTAssertTrue(line.contains(#""status":"499""#), line)
        XCTAssertFalse(line.contains("user_id"), "the token was not even read: \(line)")
        XCTAssertEqual(harness.metrics.httpRequests.labels("/api/v1/points/balance", "GET", "499").value, 1)
        XCTAssertEqual(harness.metrics.httpRefusals.labels(RefusalReasonLabel.backendUnavailable.rawValue).value, 0)
        await harness.stop()
    }

    /// Streams the client makes the server reset as soon as they open
    /// (MadeYouReset, CVE-2025-8671: HEADERS with END_STREAM, then a
    /// WINDOW_UPDATE that overflows the stream's window, which nghttp2
    /// answers with RST_STREAM(FLOW_CONTROL_ERROR)) cost no backend call,
    /// and past the rapid-reset burst the connection ends with
    /// GOAWAY(ENHANCE_YOUR_CALM).
    func testProvokedHTTP2ResetsCostNoBackendWorkAndEndTheConnection() async throws {
        let harness = try await GatewayHarness.start()
        let port = harness.port
        let (goAway, resets) = try await onDedicatedThread { () -> ([UInt8]?, Int) in
            let client = try RawHTTPClient(port: port, receiveTimeoutSeconds: 10)
            try client.sendHTTP2Preface()
            // Not the balance route, whose reads share calls.
            let block = RawHTTPClient.getBlock("/api/v1/points/packages", extra: [RawHTTPClient.bearerField])
            var resets = 0
            // 2,000 streams in batches of 50 (half the concurrency limit, so
            // none is refused unopened), each batch's resets read before the next.
            for batch in 0..<40 {
                var bytes: [UInt8] = []
                for index in 0..<50 {
                    let streamID = UInt32(2 * (50 * batch + index) + 1)
                    bytes += RawHTTPClient.frame(type: 0x1, flags: 0x5, streamID: streamID, payload: block)
                    bytes += RawHTTPClient.frame(
                        type: 0x8, flags: 0, streamID: streamID, payload: [0x7F, 0xFF, 0xFF, 0xFF])
                }
                try? client.send(bytes)
                let expected = resets + 50
                for _ in 0..<10_000 where resets < expected {
                    guard let frame = try client.readFrame() else { return (nil, resets) }
                    if frame.type == 0x3 { resets += 1 }
                    if frame.type == 0x7 { return (frame.payload, resets) }
                }
            }
            return (nil, resets)
        }
        XCTAssertEqual(goAway?[4..<8].map { $0 }, [0, 0, 0, 0xB], "GOAWAY(ENHANCE_YOUR_CALM) after \(resets) resets")
        XCTAssertGreaterThanOrEqual(resets, 1000, "the burst itself is allowed")
        // Calls that reached the backend before the gateway reset them
        // (at most as many as requests; none once a request's Task is
        // seen to be cancelled before it starts).
        try await Task.sleep(for: .milliseconds(200))
        XCTAssertLessThan(harness.doubles.recordedMethods.count, 100, "far fewer backend calls than requests")
        await harness.stop()
    }

    /// A literal header field with incremental indexing and an indexed name (RFC 7541 section 6.2.1).
    private static func literal(nameIndex: Int, value: String) -> [UInt8] {
        HTTP2FrameBytes.literalField(nameIndex: nameIndex, value: value, indexed: true)
    }
}
