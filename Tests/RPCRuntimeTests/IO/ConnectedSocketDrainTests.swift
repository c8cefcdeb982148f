#if canImport(Glibc)
import Glibc
#endif
@testable import RPCRuntime
import XCTest

/// A plain socket's short read tells that its receive queue is empty.
final class ConnectedSocketDrainTests: XCTestCase {
    func testShortPlainReadMeansTheSocketWasDrained() throws {
        var fds: [Int32] = [-1, -1]
        XCTAssertEqual(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0, &fds), 0)
        defer { close(fds[1]) }
        let socket = ConnectedSocket(adopting: fds[0], remotePeer: "test")
        var buffer = [UInt8](repeating: 0, count: 64)
        let hundred = [UInt8](repeating: 7, count: 100)
        XCTAssertEqual(hundred.withUnsafeBytes { write(fds[1], $0.baseAddress, $0.count) }, 100)

        XCTAssertEqual(buffer.withUnsafeMutableBytes { socket.read(into: $0) }, .bytes(64))
        XCTAssertFalse(socket.lastReadDrainedSocket, "a full buffer says nothing of what is left")
        XCTAssertEqual(buffer.withUnsafeMutableBytes { socket.read(into: $0) }, .bytes(36))
        XCTAssertTrue(socket.lastReadDrainedSocket)
        XCTAssertEqual(buffer.withUnsafeMutableBytes { socket.read(into: $0) }, .wouldBlock)
        XCTAssertFalse(socket.lastReadDrainedSocket)
    }

    func testShortPlainTransportReadMeansDrainedButPrefixBytesDoNot() throws {
        var fds: [Int32] = [-1, -1]
        XCTAssertEqual(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0, &fds), 0)
        defer { close(fds[0]); close(fds[1]) }
        let transport = PrefixedTransport(prefix: [1, 2, 3], base: PlainTransport(fd: fds[0]))
        var buffer = [UInt8](repeating: 0, count: 64)
        let ten = [UInt8](repeating: 7, count: 10)
        XCTAssertEqual(ten.withUnsafeBytes { write(fds[1], $0.baseAddress, $0.count) }, 10)

        guard case .bytes(3) = buffer.withUnsafeMutableBytes({ transport.read(into: $0) }) else {
            return XCTFail("prefix")
        }
        XCTAssertFalse(transport.lastReadDrainedSocket, "the prefix's bytes say nothing of the socket")
        guard case .bytes(10) = buffer.withUnsafeMutableBytes({ transport.read(into: $0) }) else {
            return XCTFail("socket")
        }
        XCTAssertTrue(transport.lastReadDrainedSocket)
    }
}
