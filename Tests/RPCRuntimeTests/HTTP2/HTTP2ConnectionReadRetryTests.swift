import Foundation
import RPCCore
@testable import RPCRuntime
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// A TLS read can stop until the socket is writable (SSL_read answering
/// WANT_WRITE, e.g. to send the reply to a key update while the send
/// buffer is full). The connection then watches writability, and must
/// retry the read when the socket becomes writable, as HTTP/1.1's
/// connection does: otherwise input TLS already took in waits for the
/// next readable event, which may never come, while each writable event
/// only flushes.
final class HTTP2ConnectionReadRetryTests: XCTestCase {
    /// A transport over one end of a socket pair that behaves as TLS can:
    /// its first read takes the socket's bytes and then wants the socket
    /// writable; the bytes it holds (the client's preface and SETTINGS)
    /// come out of the reads after that. Writes go to the socket.
    private final class WantsWritableOnceTransport: ByteTransport {
        let fd: Int32
        private var held: [UInt8]
        private var wantedWritable = false
        private(set) var needsWritable = false
        var negotiatedProtocol: String? { nil }

        init(fd: Int32, held: [UInt8]) {
            self.fd = fd
            self.held = held
        }

        func read(into buffer: UnsafeMutableRawBufferPointer) -> TransportRead {
            if !wantedWritable {
                wantedWritable = true
                _ = readSocket(into: buffer)
                needsWritable = true
                return .wouldBlock
            }
            needsWritable = false
            guard !held.isEmpty else { return readSocket(into: buffer) }
            let count = min(buffer.count, held.count)
            held.withUnsafeBytes { buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: $0[0..<count])) }
            held.removeFirst(count)
            return .bytes(count)
        }

        /// The socket's own bytes are not HTTP/2 here: they only wake the loop.
        private func readSocket(into buffer: UnsafeMutableRawBufferPointer) -> TransportRead {
            let count = Glibc.read(fd, buffer.baseAddress, buffer.count)
            if count == 0 { return .endOfStream }
            if count < 0 { return errno == EAGAIN ? .wouldBlock : .failed(POSIXError(.EIO)) }
            return .wouldBlock
        }

        func write(_ bytes: UnsafeRawBufferPointer) -> TransportWrite {
            let count = Glibc.write(fd, bytes.baseAddress, bytes.count)
            if count >= 0 {
                needsWritable = false
                return .wrote(count)
            }
            return errno == EAGAIN ? .wouldBlock : .failed(POSIXError(.EIO))
        }
    }

    func testAReadThatWantedTheSocketWritableIsRetriedWhenItIs() async throws {
        var pair: [Int32] = [-1, -1]
        XCTAssertEqual(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &pair), 0)
        let (serverEnd, clientEnd) = (pair[0], pair[1])
        defer { close(clientEnd) }
        _ = fcntl(serverEnd, F_SETFL, fcntl(serverEnd, F_GETFL) | O_NONBLOCK)
        var timeout = timeval(tv_sec: 5, tv_usec: 0)
        setsockopt(clientEnd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        let loop = try EventLoop(name: "read-retry")
        let clientInput = RawHTTP2Client.preface + RawHTTP2Client.frame(type: 0x4, flags: 0, streamID: 0, payload: [])
        let connection = await withCheckedContinuation {
            (continuation: CheckedContinuation<LoopBound<HTTP2Connection>?, Never>) in
            let accepted = loop.execute {
                let transport = WantsWritableOnceTransport(fd: serverEnd, held: clientInput)
                guard
                    let connection = try? HTTP2Connection(
                        loop: loop, fd: serverEnd, transport: transport, role: .server, remotePeer: "pair",
                        limits: RPCLimits()),
                    (try? connection.start()) != nil
                else { return continuation.resume(returning: nil) }
                continuation.resume(returning: LoopBound(connection, loop: loop))
            }
            if !accepted { continuation.resume(returning: nil) }
        }
        XCTAssertNotNil(connection)
        // One byte wakes the server's read, which then wants the socket writable.
        XCTAssertEqual(Glibc.write(clientEnd, [0], 1), 1)
        let settingsFlags = try await onDedicatedThread { () -> [UInt8] in
            var received: [UInt8] = []
            var flags: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: 4096)
            for _ in 0..<100 where !flags.contains(0x1) {
                let count = buffer.withUnsafeMutableBytes { recv(clientEnd, $0.baseAddress, $0.count, 0) }
                guard count > 0 else { break }
                received += buffer[0..<count]
                flags = Self.settingsFlags(in: received)
            }
            return flags
        }
        XCTAssertEqual(settingsFlags, [0x0, 0x1], "our SETTINGS, then the ACK of the client's: its input was read")
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let accepted = loop.execute {
                connection?.value.close()
                continuation.resume()
            }
            if !accepted { continuation.resume() }
        }
        await loop.shutdown()
    }

    /// The flags of each whole SETTINGS frame in `bytes`.
    private static func settingsFlags(in bytes: [UInt8]) -> [UInt8] {
        var flags: [UInt8] = []
        var offset = 0
        while bytes.count - offset >= 9 {
            let length = Int(bytes[offset]) << 16 | Int(bytes[offset + 1]) << 8 | Int(bytes[offset + 2])
            guard bytes.count - offset - 9 >= length else { break }
            if bytes[offset + 3] == 0x4 { flags.append(bytes[offset + 4]) }
            offset += 9 + length
        }
        return flags
    }
}
