import Glibc
import RPCRuntime
import XCTest

/// OpenSSL writes TLS records with write(2), without MSG_NOSIGNAL: on a loop
/// thread a write to a peer that hung up must fail with EPIPE rather than
/// raise SIGPIPE, which would kill the process (and with it this test run).
final class EventLoopBrokenPipeTests: XCTestCase {
    func testAWriteToAPeerThatHungUpIsEPIPEOnTheLoop() async throws {
        var pair: [Int32] = [-1, -1]
        XCTAssertEqual(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &pair), 0)
        let (ours, theirs) = (pair[0], pair[1])
        close(theirs)
        let loop = try EventLoop(name: "test")
        let outcome = await withCheckedContinuation { (continuation: CheckedContinuation<(Int, Int32), Never>) in
            loop.execute {
                let byte: [UInt8] = [0x2A]
                let written = byte.withUnsafeBytes { write(ours, $0.baseAddress, 1) }
                continuation.resume(returning: (written, errno))
            }
        }
        XCTAssertEqual(outcome.0, -1)
        XCTAssertEqual(outcome.1, EPIPE)
        close(ours)
        await loop.shutdown()
    }
}
