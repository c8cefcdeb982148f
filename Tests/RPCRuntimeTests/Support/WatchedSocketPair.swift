#if canImport(Glibc)
import Glibc
#endif
@testable import RPCRuntime
import XCTest

/// A Unix socket pair whose first end a loop watches: a test makes it
/// readable by writing a byte to the other end, and the loop's handler
/// reads that byte. Both ends close on deinit.
final class WatchedSocketPair: @unchecked Sendable {
    let watched: Int32
    let writer: Int32

    init() throws {
        var fds: [Int32] = [-1, -1]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &fds) == 0 else {
            throw SystemError(call: "socketpair", errorNumber: errno)
        }
        (watched, writer) = (fds[0], fds[1])
    }

    deinit {
        close(watched)
        close(writer)
    }

    /// On `loop`'s thread: watches the first end; `onRead` runs after each byte is read.
    func watch(on loop: EventLoop, onRead: @escaping () -> Void) {
        try! loop.register(fd: watched, events: .readable) { [watched] _ in
            var byte: UInt8 = 0
            _ = read(watched, &byte, 1)
            onRead()
        }
    }

    /// Makes the watched end readable.
    func makeReadable() {
        var byte: UInt8 = 1
        XCTAssertEqual(write(writer, &byte, 1), 1)
    }

    /// Stops `loop` watching the first end.
    func unwatch(from loop: EventLoop) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            loop.execute { [watched] in
                loop.unregister(fd: watched); continuation.resume()
            }
        }
    }
}
