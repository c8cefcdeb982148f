import Foundation
import RPCCore
import RPCRuntime
import Synchronization
import XCTest

/// Streams the peer makes end in a reset before our answer ("MadeYouReset",
/// CVE-2025-8671): a WINDOW_UPDATE that overflows a stream's window makes
/// nghttp2 itself reset the stream (FLOW_CONTROL_ERROR), which its own
/// rapid-reset limit (RST_STREAM frames received) never counts, while each
/// such stream may already have started work. The server counts them
/// against the same bound and ends the connection with
/// GOAWAY(ENHANCE_YOUR_CALM). (nghttp2 1.52 takes a stream's WINDOW_UPDATE
/// of 0, or DATA after its END_STREAM, as a connection error: those end
/// the connection by themselves.)
final class ProvokedResetTests: XCTestCase {
    /// Answers nothing.
    private final class SilentDelegate: HTTP2StreamDelegate {
        func streamDidReceiveHeaders(_ stream: HTTP2Stream, headers: [HTTPHeaderField], endStream: Bool) {}
        func streamDidReceiveData(_ stream: HTTP2Stream, bytes: [UInt8], endStream: Bool) {}
        func streamDidClose(_ stream: HTTP2Stream, errorCode: UInt32) {}
    }

    /// The streams the server opened (made a delegate for).
    private final class Counter: Sendable {
        let started = Mutex(0)
    }

    /// HEADERS(n, END_STREAM) and WINDOW_UPDATE(n, 2^31 - 1), which takes
    /// the stream's send window past 2^31 - 1, for the streams `streamIDs`.
    static func provokedResets(streamIDs: some Sequence<UInt32>, headerBlock: [UInt8]) -> [UInt8] {
        var bytes: [UInt8] = []
        for streamID in streamIDs {
            bytes += RawHTTP2Client.frame(type: 0x1, flags: 0x5, streamID: streamID, payload: headerBlock)
            bytes += RawHTTP2Client.frame(type: 0x8, flags: 0, streamID: streamID, payload: [0x7F, 0xFF, 0xFF, 0xFF])
        }
        return bytes
    }

    func testProvokedResetsPastTheBurstEndTheConnectionWithEnhanceYourCalm() async throws {
        let counter = Counter()
        let server = try HTTP2Server(configuration: .init()) { _ in
            counter.started.withLock { $0 += 1 }
            return SilentDelegate()
        }
        let port = try server.start()
        let limits = RPCLimits()
        XCTAssertEqual(limits.streamResetBurstMax, 1000)
        let (goAwayCode, resetsSeen) = try await onDedicatedThread { () -> (UInt32?, Int) in
            let client = try RawHTTP2Client(port: port)
            let block = RawHTTP2Client.headerBlock([
                (":method", "GET"), (":scheme", "http"), (":path", "/x"), (":authority", "localhost"),
            ])
            try client.sendPreface()
            // 2,000 streams, twice the burst, in batches of 100 each answered
            // with its resets before the next: streams past the concurrency
            // limit would be refused unopened, which starts no work and is
            // not what this counts.
            var resets = 0
            for batch in 0..<20 {
                let first = UInt32(200 * batch + 1)
                try? client.send(
                    Self.provokedResets(streamIDs: stride(from: first, to: first + 200, by: 2), headerBlock: block))
                let expected = resets + 100
                for _ in 0..<10_000 where resets < expected {
                    guard let frame = client.readFrame() else { return (nil, resets) }
                    if frame.type == 0x3 { resets += 1 }
                    if frame.type == 0x7, frame.payload.count >= 8 {
                        return (frame.payload[4..<8].reduce(0) { $0 << 8 | UInt32($1) }, resets)
                    }
                }
            }
            return (nil, resets)
        }
        XCTAssertEqual(goAwayCode, 0xB, "GOAWAY(ENHANCE_YOUR_CALM), after \(resetsSeen) RST_STREAM frames")
        XCTAssertGreaterThanOrEqual(resetsSeen, 1000, "the burst itself is allowed")
        let started = counter.started.withLock { $0 }
        XCTAssertLessThanOrEqual(started, 1100, "no stream opens after the batch that passed the burst")
        await server.shutdown(gracePeriod: .seconds(1))
    }
}
