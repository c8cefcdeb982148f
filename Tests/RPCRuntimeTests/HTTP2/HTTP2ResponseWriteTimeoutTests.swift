import Foundation
import RPCCore
import RPCRuntime
import Synchronization
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// A server's response write timeout (`HTTP2Server.Configuration.responseWriteTimeout`):
/// a peer that holds its responses (a zero flow-control window, or no
/// reads at all) loses the connection, whose open streams are not idle and
/// so were never closed by any other timer; a peer that reads keeps it.
final class HTTP2ResponseWriteTimeoutTests: XCTestCase {
    /// The error codes of the streams that closed, in order.
    private final class Closes: Sendable {
        private let codes = Mutex<[UInt32]>([])
        func record(_ code: UInt32) { codes.withLock { $0.append(code) } }
        var all: [UInt32] { codes.withLock { $0 } }
    }

    /// Answers 200 with `bodyBytes` bytes once the request ended.
    private final class AnsweringDelegate: HTTP2StreamDelegate {
        private let bodyBytes: Int
        private let closes: Closes

        init(bodyBytes: Int, closes: Closes) {
            self.bodyBytes = bodyBytes
            self.closes = closes
        }

        func streamDidReceiveHeaders(_ stream: HTTP2Stream, headers: [HTTPHeaderField], endStream: Bool) {
            if endStream { respond(stream) }
        }

        func streamDidReceiveData(_ stream: HTTP2Stream, bytes: [UInt8], endStream: Bool) {
            if endStream { respond(stream) }
        }

        func streamDidClose(_ stream: HTTP2Stream, errorCode: UInt32) { closes.record(errorCode) }

        private func respond(_ stream: HTTP2Stream) {
            stream.sendHeaders([HTTPHeaderField(name: ":status", value: "200")], endStream: false)
            stream.sendData([UInt8](repeating: 0x61, count: bodyBytes), endStream: true)
        }
    }

    private static let get: [(String, String)] = [
        (":method", "GET"), (":scheme", "http"), (":path", "/x"), (":authority", "localhost"),
    ]

    private func startServer(bodyBytes: Int, closes: Closes) throws -> (HTTP2Server, Int) {
        let server = try HTTP2Server(configuration: .init(responseWriteTimeout: .milliseconds(300))) { _ in
            AnsweringDelegate(bodyBytes: bodyBytes, closes: closes)
        }
        return (server, try server.start())
    }

    /// Waits (bounded, 10 s) until the server has no connection left.
    private func waitUntilNoConnection(_ server: HTTP2Server) async throws -> Int {
        var count = await server.connectionCount()
        for _ in 0..<1000 where count > 0 {
            try await Task.sleep(for: .milliseconds(10))
            count = await server.connectionCount()
        }
        return count
    }

    func testAResponseHeldByAZeroWindowEndsItsConnectionWithGoAway() async throws {
        let closes = Closes()
        let (server, port) = try startServer(bodyBytes: 100, closes: closes)
        let (types, goAwayCode) = try await onDedicatedThread { () -> ([UInt8], UInt32?) in
            let client = try RawHTTP2Client(port: port)
            // SETTINGS_INITIAL_WINDOW_SIZE (4) = 0: no DATA may flow on any stream.
            try client.send(
                RawHTTP2Client.preface
                    + RawHTTP2Client.frame(type: 0x4, flags: 0, streamID: 0, payload: [0, 4, 0, 0, 0, 0]))
            try client.sendHeaders(streamID: 1, fields: Self.get, endStream: true)
            var types: [UInt8] = []
            for _ in 0..<100 {
                guard let frame = client.readFrame() else { break }
                if frame.streamID == 1 { types.append(frame.type) }
                if frame.type == 0x7, frame.payload.count >= 8 {
                    return (
                        types,
                        UInt32(frame.payload[4]) << 24 | UInt32(frame.payload[5]) << 16
                            | UInt32(frame.payload[6]) << 8 | UInt32(frame.payload[7])
                    )
                }
            }
            return (types, nil)
        }
        XCTAssertEqual(types, [0x1], "the response's HEADERS, its DATA held by the window")
        XCTAssertEqual(goAwayCode, 0xB, "GOAWAY(ENHANCE_YOUR_CALM)")
        let left = try await waitUntilNoConnection(server)
        XCTAssertEqual(left, 0, "the connection is closed")
        XCTAssertEqual(closes.all, [HTTP2ErrorCodes.connectionClosed], "the stream ended with its connection")
        await server.shutdown(gracePeriod: .seconds(1))
    }

    func testAPeerThatReadsNothingLosesItsConnection() async throws {
        let closes = Closes()
        // 8 MiB: more than the client's small receive buffer and the
        // server's send buffer (4 MiB at most, net.ipv4.tcp_wmem) hold.
        let (server, port) = try startServer(bodyBytes: 8 * 1024 * 1024, closes: closes)
        let fd = try await Self.connectWithoutReading(port: port)
        defer { close(fd) }
        // The client reads nothing from here on. Its stream ends with the
        // connection (waited for first: on a busy machine the server may
        // not have taken the connection in yet, and "no connection" would
        // hold before the test began).
        for _ in 0..<1000 where closes.all.isEmpty {
            try await Task.sleep(for: .milliseconds(10))
        }
        let left = try await waitUntilNoConnection(server)
        XCTAssertEqual(left, 0, "a connection whose peer reads nothing is closed")
        XCTAssertEqual(closes.all, [HTTP2ErrorCodes.connectionClosed], "the stream ended with its connection")
        await server.shutdown(gracePeriod: .seconds(1))
    }

    /// The response's stream ends (the client resets it) while the bytes
    /// already serialized for it wait for a socket the client does not
    /// read: no response is pending any more and the connection has no
    /// stream, but its idle GOAWAY could never leave either. A socket pair
    /// with a fixed, small buffer (no TCP autotuning) makes the stall
    /// certain; the server adopts its end as it would an accepted socket.
    func testSerializedBytesTheSocketRefusesStillEndTheConnection() async throws {
        let closes = Closes()
        let server = try HTTP2Server(configuration: .init(responseWriteTimeout: .seconds(1))) { _ in
            AnsweringDelegate(bodyBytes: 1024 * 1024, closes: closes)
        }
        var pair: [Int32] = [-1, -1]
        XCTAssertEqual(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &pair), 0)
        let (serverEnd, clientEnd) = (pair[0], pair[1])
        defer { close(clientEnd) }
        var sendBufferBytes: Int32 = 8 * 1024
        setsockopt(serverEnd, SOL_SOCKET, SO_SNDBUF, &sendBufferBytes, socklen_t(MemoryLayout<Int32>.size))
        _ = fcntl(serverEnd, F_SETFL, fcntl(serverEnd, F_GETFL) | O_NONBLOCK)
        let adopted = await withCheckedContinuation { continuation in
            let accepted = server.loop.execute {
                continuation.resume(
                    returning: (try? server.adopt(fd: serverEnd, initialBytes: [], remotePeer: "pair") {}) != nil)
            }
            if !accepted { continuation.resume(returning: false) }
        }
        XCTAssertTrue(adopted)
        try Self.send(Self.requestWithLargeWindows, to: clientEnd)
        // Time for the answer to fill the socket (not asserted: if the reset
        // came after the timeout, the pending response would end it the same).
        try await Task.sleep(for: .milliseconds(100))
        try Self.send(RawHTTP2Client.frame(type: 0x3, flags: 0, streamID: 1, payload: [0, 0, 0, 8]), to: clientEnd)
        let left = try await waitUntilNoConnection(server)
        XCTAssertEqual(left, 0, "a connection whose peer reads nothing is closed")
        XCTAssertEqual(closes.all, [0x8], "the stream ended with the client's reset, before the connection")
        await server.shutdown(gracePeriod: .seconds(1))
    }

    /// The preface, flow-control windows as large as HTTP/2 allows (so only
    /// the socket holds a response back), and a GET on stream 1.
    private static var requestWithLargeWindows: [UInt8] {
        let settings = RawHTTP2Client.frame(type: 0x4, flags: 0, streamID: 0, payload: [0, 4, 0x7F, 0xFF, 0xFF, 0xFF])
        let increment: UInt32 = 0x7FFF_FFFF - 65_535
        let windowUpdate = RawHTTP2Client.frame(
            type: 0x8, flags: 0, streamID: 0,
            payload: [
                UInt8(increment >> 24), UInt8(increment >> 16 & 0xFF), UInt8(increment >> 8 & 0xFF),
                UInt8(increment & 0xFF),
            ])
        let headers = RawHTTP2Client.frame(type: 0x1, flags: 0x5, streamID: 1, payload: RawHTTP2Client.headerBlock(get))
        return RawHTTP2Client.preface + settings + windowUpdate + headers
    }

    private static func send(_ bytes: [UInt8], to fd: Int32) throws {
        let sent = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        guard sent == bytes.count else { throw POSIXError(.EPIPE) }
    }

    /// Connects with a small receive buffer and asks for stream 1's answer
    /// (`requestWithLargeWindows`); the caller then reads nothing.
    private static func connectWithoutReading(port: Int) async throws -> Int32 {
        try await onDedicatedThread { () -> Int32 in
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var receiveBufferBytes: Int32 = 16 * 1024
            setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &receiveBufferBytes, socklen_t(MemoryLayout<Int32>.size))
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = in_port_t(UInt16(port).bigEndian)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
            guard connected == 0 else {
                close(fd)
                throw POSIXError(.ECONNREFUSED)
            }
            do {
                try send(requestWithLargeWindows, to: fd)
            } catch {
                close(fd)
                throw error
            }
            return fd
        }
    }

    func testAPeerThatReadsKeepsItsConnectionPastTheTimeout() async throws {
        let closes = Closes()
        let (server, port) = try startServer(bodyBytes: 16 * 1024, closes: closes)
        let ended = try await onDedicatedThread { () -> [Bool] in
            let client = try RawHTTP2Client(port: port)
            try client.sendPreface()
            var ended: [Bool] = []
            // Two requests, more than the timeout apart, each answered in full.
            for streamID: UInt32 in [1, 3] {
                try client.sendHeaders(streamID: streamID, fields: Self.get, endStream: true)
                var streamEnded = false
                for _ in 0..<1000 where !streamEnded {
                    guard let frame = client.readFrame() else { break }
                    streamEnded = frame.streamID == streamID && frame.type == 0x0 && frame.endStream
                }
                ended.append(streamEnded)
                if streamID == 1 { Thread.sleep(forTimeInterval: 0.6) }
            }
            return ended
        }
        XCTAssertEqual(ended, [true, true], "both answered on the one connection, the second after the timeout")
        XCTAssertEqual(closes.all, [0, 0], "each stream closed normally, not with its connection")
        await server.shutdown(gracePeriod: .seconds(1))
    }
}
