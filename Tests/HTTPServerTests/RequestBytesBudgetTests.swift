import Foundation
import Glibc
@testable import HTTPServer
import RPCRuntime
import TestSupport
import XCTest

/// One bound on the request bytes a server holds over all its connections:
/// many connections each sending a body under its limit, and stalling,
/// once could hold more than the process may use, before any token check.
final class RequestBytesBudgetTests: XCTestCase {
    /// A blocking loopback client, used off the cooperative pool.
    private final class Client: @unchecked Sendable {
        private let fd: Int32

        init(port: Int) throws {
            fd = try connectLoopbackSocket(port: port)
        }

        deinit { close(fd) }

        func send(_ bytes: [UInt8]) {
            var sent = 0
            while sent < bytes.count {
                let count = bytes[sent...].withUnsafeBytes {
                    Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
                }
                guard count > 0 else { return }
                sent += count
            }
        }

        /// Everything until the server closes or 5 s pass, as text.
        func readUntilClosed() -> String {
            var received: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: 65_536)
            while true {
                let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
                guard count > 0 else { break }
                received += buffer[0..<count]
            }
            return String(decoding: received, as: UTF8.self)
        }
    }

    private static func head(contentLength: Int) -> [UInt8] {
        Array(
            "POST /upload HTTP/1.1\r\nHost: test\r\nConnection: close\r\nContent-Length: \(contentLength)\r\n\r\n".utf8)
    }

    func testAConnectionPastTheServersBoundIsAnswered503WhileOthersGoOn() async throws {
        let server = try HTTPServer(
            configuration: .init(port: 0, requestBytesBufferedMax: 100_000), responder: BodyLengthResponder())
        let port = try await server.start()
        let (first, refused, afterwards) = try await offPool { () -> (String, String, String) in
            // A holds 50,000 bytes of a 60,000-byte body and stalls.
            let holder = try Client(port: port)
            holder.send(Self.head(contentLength: 60_000) + [UInt8](repeating: 0x61, count: 50_000))
            Thread.sleep(forTimeInterval: 0.2)
            // B's 55,000 would make 105,000: refused, and closed.
            let late = try Client(port: port)
            late.send(Self.head(contentLength: 60_000) + [UInt8](repeating: 0x62, count: 55_000))
            let refused = late.readUntilClosed()
            // A finishes within the bound and is answered.
            holder.send([UInt8](repeating: 0x61, count: 10_000))
            let first = holder.readUntilClosed()
            // Both gave their bytes back: a third body fits again.
            let next = try Client(port: port)
            next.send(Self.head(contentLength: 60_000) + [UInt8](repeating: 0x63, count: 60_000))
            return (first, refused, next.readUntilClosed())
        }
        XCTAssertTrue(refused.hasPrefix("HTTP/1.1 503 "), refused.prefix(80).description)
        XCTAssertTrue(refused.hasSuffix("bufferedBytesExhausted"), refused.suffix(80).description)
        XCTAssertTrue(
            first.hasPrefix("HTTP/1.1 200 ") && first.hasSuffix("\r\n\r\n60000"), first.suffix(80).description)
        XCTAssertTrue(
            afterwards.hasPrefix("HTTP/1.1 200 ") && afterwards.hasSuffix("\r\n\r\n60000"),
            afterwards.suffix(80).description)
        await server.shutdown(gracePeriod: .seconds(1))
    }

    /// HTTP/2 header lists count as decoded (HPACK lets a few wire bytes
    /// stand for a whole field): a stream whose headers would pass the
    /// bound is answered 503 at once and reset; the others go on, and what
    /// an answered stream held is given back.
    func testHTTP2HeaderListsCountAgainstTheServersBound() async throws {
        let server = try HTTPServer(
            configuration: .init(port: 0, requestBytesBufferedMax: 20_000), responder: BodyLengthResponder())
        let port = try await server.start()
        // About 12,100 bytes counted each: one fits, two do not.
        let padded = H2CClient.request(
            method: "POST", path: "/upload", extra: [("x-pad", String(repeating: "p", count: 12_000))])
        let (refused, refusedReset, first, next) = try await offPool {
            () -> ([H2CClient.Frame]?, H2CClient.Frame?, [H2CClient.Frame]?, [H2CClient.Frame]?) in
            let client = try H2CClient(port: port)
            try client.sendPreface()
            // Stream 1's headers arrive and it waits for its body.
            try client.sendHeaders(streamID: 1, fields: padded, endStream: false)
            // Stream 3's would pass the bound.
            try client.sendHeaders(streamID: 3, fields: padded, endStream: false)
            let refused = client.readStream(3)
            let refusedReset = client.readStream(3)?.last
            // Stream 1 ends and is answered.
            try client.sendData(streamID: 1, bytes: Array("hello".utf8), endStream: true)
            let first = client.readStream(1)
            // Stream 1 gave its share back: the same headers fit again.
            try client.sendHeaders(streamID: 5, fields: padded, endStream: true)
            return (refused, refusedReset, first, client.readStream(5))
        }
        XCTAssertEqual(
            refused?.map(\.type), [H2CClient.FrameType.headers, H2CClient.FrameType.data], "an early answer")
        XCTAssertEqual(refused?.last.map { String(decoding: $0.payload, as: UTF8.self) }, "bufferedBytesExhausted")
        XCTAssertEqual(refusedReset?.type, H2CClient.FrameType.resetStream)
        XCTAssertEqual(refusedReset?.errorCode, 0, "RST_STREAM(NO_ERROR) after the answer")
        XCTAssertEqual(first?.last.map { String(decoding: $0.payload, as: UTF8.self) }, "5", "stream 1's body length")
        XCTAssertEqual(next?.last.map { String(decoding: $0.payload, as: UTF8.self) }, "0", "answered, not refused")
        await server.shutdown(gracePeriod: .seconds(1))
    }

    /// A header block still arriving counts too: a connection may hold one
    /// (up to 16 KiB) for as long as its CONTINUATION frames stall, so
    /// thousands of connections could hold far more than the bound. One
    /// that passes the bound while arriving is not kept and is answered 503
    /// once complete; one that completes within it is counted once.
    func testHTTP2HeaderBlocksStillArrivingCountAgainstTheServersBound() async throws {
        let server = try HTTPServer(
            configuration: .init(port: 0, requestBytesBufferedMax: 20_000), responder: BodyLengthResponder())
        let port = try await server.start()
        // About 12,100 bytes counted each: one fits, two do not.
        let padded = H2CClient.request(
            method: "POST", path: "/upload", extra: [("x-pad", String(repeating: "p", count: 12_000))])
        let unfinishedHeaders = H2CClient.frame(
            type: H2CClient.FrameType.headers, flags: 0, streamID: 1,
            payload: H2CClient.headerBlock(padded))
        let lastContinuation = H2CClient.frame(type: 0x9, flags: 0x4, streamID: 1, payload: [])
        let (refusedWhole, refusedArriving, first, next) = try await offPool {
            () -> ([H2CClient.Frame]?, [H2CClient.Frame]?, [H2CClient.Frame]?, [H2CClient.Frame]?) in
            // A's block arrives without END_HEADERS and stalls.
            let stalled = try H2CClient(port: port)
            try stalled.sendPreface()
            try stalled.send(unfinishedHeaders)
            _ = stalled.readFrame()  // the server's SETTINGS: A's bytes were read
            // B's whole header list would pass the bound with A's block.
            let whole = try H2CClient(port: port)
            try whole.sendPreface()
            try whole.sendHeaders(streamID: 1, fields: padded, endStream: false)
            let refusedWhole = whole.readStream(1)
            // C's block passes the bound while arriving: answered once complete.
            let arriving = try H2CClient(port: port)
            try arriving.sendPreface()
            try arriving.send(unfinishedHeaders)
            try arriving.send(lastContinuation)
            let refusedArriving = arriving.readStream(1)
            // A's block completes (an empty CONTINUATION with END_HEADERS),
            // counted once, and its request is answered.
            try stalled.send(lastContinuation)
            try stalled.sendData(streamID: 1, bytes: Array("hello".utf8), endStream: true)
            let first = stalled.readStream(1)
            // Everything was given back: the same list fits again.
            try whole.sendHeaders(streamID: 3, fields: padded, endStream: true)
            return (refusedWhole, refusedArriving, first, whole.readStream(3))
        }
        for refused in [refusedWhole, refusedArriving] {
            XCTAssertEqual(refused?.first?.type, H2CClient.FrameType.headers, "an early answer")
            XCTAssertEqual(refused?.last.map { String(decoding: $0.payload, as: UTF8.self) }, "bufferedBytesExhausted")
        }
        XCTAssertEqual(first?.last.map { String(decoding: $0.payload, as: UTF8.self) }, "5", "A's body length")
        XCTAssertEqual(next?.last.map { String(decoding: $0.payload, as: UTF8.self) }, "0", "answered, not refused")
        await server.shutdown(gracePeriod: .seconds(1))
    }

    func testTheBudgetRefusesOnlyWhatDoesNotFit() {
        let budget = RequestBytesBudget(bytesMax: 100)
        XCTAssertTrue(budget.resize(from: 0, to: 60))
        XCTAssertFalse(budget.resize(from: 0, to: 41), "101 held")
        XCTAssertEqual(budget.bytesHeld, 60, "a refused increase changes nothing")
        XCTAssertTrue(budget.resize(from: 0, to: 40))
        XCTAssertTrue(budget.resize(from: 60, to: 0), "a decrease always applies")
        XCTAssertTrue(budget.resize(from: 40, to: 100))
        XCTAssertEqual(budget.bytesHeld, 100)
    }

    /// While a request is in flight, the 503 waits for its answer.
    func testTheMachineAnswers503AfterTheRequestInFlight() {
        var machine = HTTPConnectionStateMachine(nowMilliseconds: 0)
        let actions = machine.bytesReceived(
            Array(
                "GET /a HTTP/1.1\r\nHost: h\r\n\r\nPOST /b HTTP/1.1\r\nHost: h\r\nContent-Length: 10\r\n\r\n12345".utf8),
            nowMilliseconds: 0)
        guard case .dispatch = actions.first else { return XCTFail("\(actions)") }
        XCTAssertEqual(machine.heldByteCount, 5, "the partial body")
        XCTAssertTrue(machine.bufferedBytesExhausted(nowMilliseconds: 1).isEmpty, "the answer in flight goes first")
        XCTAssertEqual(machine.heldByteCount, 0)
        XCTAssertFalse(machine.wantsRead)
        let after = machine.responseWritten(nowMilliseconds: 2)
        XCTAssertEqual(after.count, 1)
        guard case .writeErrorAndClose(let error) = after.first else { return XCTFail("\(after)") }
        XCTAssertEqual(error.reason, .bufferedBytesExhausted)
        XCTAssertEqual(error.status, 503)
    }
}
