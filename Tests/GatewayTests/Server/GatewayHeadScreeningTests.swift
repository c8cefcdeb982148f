import Foundation
import HTTPServer
import XCTest
@testable import Gateway

/// A request the gateway refuses from its head alone (an unknown route, a
/// missing or bad bearer token) is answered before its body is read, over
/// HTTP/1.1 (then the connection closes) and HTTP/2 (then the stream is
/// reset with NO_ERROR): a client without a credential never has a body
/// held against the server's request bytes (`HTTPResponder.refuseBeforeBody`).
final class GatewayHeadScreeningTests: XCTestCase {
    private static let verifyPath = "/api/v1/payments/apple/transactions/verify"

    /// A POST head announcing `contentLength` bytes, none of which is sent.
    private static func postHead(_ path: String, headers: [(String, String)], contentLength: Int) -> String {
        var text = "POST \(path) HTTP/1.1\r\nHost: gateway.test\r\nContent-Type: application/json\r\n"
        for (name, value) in headers { text += "\(name): \(value)\r\n" }
        return text + "Content-Length: \(contentLength)\r\n\r\n"
    }

    func testABadTokenIsAnsweredBeforeTheBodyAndTheConnectionCloses() async throws {
        let harness = try await GatewayHarness.start()
        let port = harness.port
        let head = Self.postHead(
            Self.verifyPath, headers: [("Authorization", "Bearer not-a-token"), ("X-Request-Id", "early")],
            contentLength: 60_000)
        let (response, closed) = try await onDedicatedThread { () -> (RawResponse, Bool) in
            let client = try RawHTTPClient(port: port, receiveTimeoutSeconds: 5)
            try client.send(head)
            // Part of the body: the answer must not wait for the rest.
            try client.send(String(repeating: "x", count: 1000))
            return (try client.readResponse(), try client.waitForClose())
        }
        XCTAssertEqual(response.status, 401)
        XCTAssertEqual(response.header("Content-Type"), "application/problem+json")
        XCTAssertEqual(response.header("Connection"), "close")
        XCTAssertEqual(response.header("X-Request-Id"), "early")
        XCTAssertEqual(response.json["instance"] as? String, Self.verifyPath)
        XCTAssertTrue(closed)
        XCTAssertEqual(
            harness.metrics.httpRequests.labels(Self.verifyPath, "POST", "401").value, 1,
            "counted as any answered request")
        await harness.stop()
    }

    func testAnUnknownRouteAndAMissingTokenAreAnsweredBeforeTheBody() async throws {
        let harness = try await GatewayHarness.start()
        let port = harness.port
        let heads = [
            Self.postHead("/api/v1/nothing-here", headers: [], contentLength: 60_000),
            Self.postHead(Self.verifyPath, headers: [], contentLength: 60_000),
            // A route of another method: 405 from the head too.
            Self.postHead("/api/v1/points/balance", headers: [GatewayHarness.bearer], contentLength: 60_000),
        ]
        let statuses = try await onDedicatedThread { () -> [Int] in
            try heads.map { head in
                let client = try RawHTTPClient(port: port, receiveTimeoutSeconds: 5)
                try client.send(head)
                return try client.readResponse().status
            }
        }
        XCTAssertEqual(statuses, [404, 401, 405])
        await harness.stop()
    }

    /// A head with a good token is read as before: the body then decides.
    func testAGoodTokenStillHasItsBodyRead() async throws {
        let harness = try await GatewayHarness.start()
        let port = harness.port
        let body = GatewayHarness.verifyBody()
        let head = Self.postHead(Self.verifyPath, headers: [GatewayHarness.bearer], contentLength: body.utf8.count)
        let response = try await onDedicatedThread { () -> RawResponse in
            let client = try RawHTTPClient(port: port, receiveTimeoutSeconds: 5)
            try client.send(head)
            Thread.sleep(forTimeInterval: 0.05)
            try client.send(body)
            return try client.readResponse()
        }
        XCTAssertNotEqual(response.status, 401)
        XCTAssertNotEqual(response.header("Connection"), "close")
        await harness.stop()
    }

    /// Over HTTP/2: a bad token is answered from the head. A body past
    /// the path's limit (or of no declared length) is stopped by
    /// RST_STREAM(NO_ERROR) after the answer; one declared within it may
    /// still come, is dropped as it comes, and the stream ends as the
    /// client meant it to (a client may take a reset during its upload as
    /// a failure and never show the answer: curl 7.88 does).
    func testOverHTTP2ABadTokenIsAnsweredAndTheStreamResetWithoutItsBody() async throws {
        let harness = try await GatewayHarness.start()
        let frames = try await Self.badTokenPost(port: harness.port, declaring: 70_000, thenSend: nil)
        XCTAssertEqual(frames.first?.type, 0x1, "the answer's HEADERS")
        XCTAssertTrue(frames.contains { $0.type == 0x0 }, "its problem body")
        XCTAssertEqual(frames.last?.type, 0x3, "then RST_STREAM")
        XCTAssertEqual(frames.last?.payload, [0, 0, 0, 0], "NO_ERROR")
        XCTAssertEqual(
            harness.metrics.httpRequests.labels(Self.verifyPath, "POST", "401").value, 1,
            "counted as any answered request")
        await harness.stop()
    }

    func testOverHTTP2ABodyDeclaredWithinTheLimitMayFinishAfterTheAnswer() async throws {
        let harness = try await GatewayHarness.start()
        let frames = try await Self.badTokenPost(port: harness.port, declaring: 60_000, thenSend: 60_000)
        XCTAssertEqual(frames.first?.type, 0x1, "the answer's HEADERS")
        XCTAssertTrue(
            frames.contains { $0.type == 0x0 && $0.flags & 0x1 != 0 }, "its problem body, ending the response")
        XCTAssertFalse(frames.contains { $0.type == 0x3 }, "no RST_STREAM: the client ended its request")
        XCTAssertEqual(harness.metrics.httpRequests.labels(Self.verifyPath, "POST", "401").value, 1)
        XCTAssertEqual(harness.doubles.recordedMethods, [], "nothing reached a backend")
        await harness.stop()
    }

    func testOverHTTP2MoreThanTheDeclaredBodyResetsTheStream() async throws {
        let harness = try await GatewayHarness.start()
        let frames = try await Self.badTokenPost(port: harness.port, declaring: 1_000, thenSend: 2_000)
        XCTAssertEqual(frames.last?.type, 0x3, "RST_STREAM")
        XCTAssertEqual(
            frames.last?.payload, [0, 0, 0, 1], "PROTOCOL_ERROR: more DATA than content-length (RFC 9113 8.1.1)")
        await harness.stop()
    }

    /// A POST to the verify route with a bad token declaring `declaring`
    /// body bytes; after the answer, `thenSend` bytes of body (in DATA
    /// frames of 16 KiB, the last with END_STREAM) and a PING. Stream 1's
    /// frames until its RST_STREAM, or until the PING's ACK.
    private static func badTokenPost(port: Int, declaring: Int, thenSend: Int?) async throws -> [RawHTTPClient.Frame] {
        try await onDedicatedThread { () -> [RawHTTPClient.Frame] in
            let client = try RawHTTPClient(port: port, receiveTimeoutSeconds: 5)
            try client.sendHTTP2Preface()
            // :method POST (static 3), :scheme http (static 7), the path,
            // :authority, authorization (23), content-length (28); no END_STREAM.
            let block: [UInt8] =
                [0x83, 0x86] + RawHTTPClient.literal(nameIndex: 4, value: Self.verifyPath)
                + RawHTTPClient.literal(nameIndex: 1, value: "gateway.test")
                + RawHTTPClient.literal(nameIndex: 23, value: "Bearer not-a-token")
                + RawHTTPClient.literal(nameIndex: 28, value: "\(declaring)")
            try client.send(RawHTTPClient.frame(type: 0x1, flags: 0x4, streamID: 1, payload: block))
            var frames: [RawHTTPClient.Frame] = []
            // The answer (HEADERS, then DATA with END_STREAM), and its reset when one comes.
            while let frame = try client.readFrame() {
                if frame.streamID == 1 { frames.append(frame) }
                if frame.streamID == 1 && frame.type == 0x3 { break }
                if thenSend != nil && frame.streamID == 1 && frame.type == 0x0 && frame.flags & 0x1 != 0 { break }
            }
            guard let bodyBytes = thenSend, frames.last?.type != 0x3 else { return frames }
            var sent = 0
            while sent < bodyBytes {
                let chunk = min(16_384, bodyBytes - sent)
                sent += chunk
                try client.send(
                    RawHTTPClient.frame(
                        type: 0x0, flags: sent == bodyBytes ? 0x1 : 0, streamID: 1,
                        payload: [UInt8](repeating: 0x61, count: chunk)))
            }
            try client.send(
                RawHTTPClient.frame(type: 0x6, flags: 0, streamID: 0, payload: [UInt8](repeating: 7, count: 8)))
            while let frame = try client.readFrame() {
                if frame.streamID == 1 { frames.append(frame) }
                if frame.type == 0x3 && frame.streamID == 1 { break }
                if frame.type == 0x6 && frame.flags & 0x1 != 0 { break }
            }
            return frames
        }
    }
}
