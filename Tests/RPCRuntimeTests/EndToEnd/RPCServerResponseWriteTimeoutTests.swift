import RPCCore
import RPCRuntime
import XCTest

/// `RPCServer.Configuration.responseWriteTimeout`: a gRPC client that never
/// takes its answer (a zero flow-control window) loses the connection with
/// GOAWAY(ENHANCE_YOUR_CALM); stock clients, which read, are unaffected
/// (every other end-to-end test runs with the default bound).
final class RPCServerResponseWriteTimeoutTests: XCTestCase {
    func testAnAnswerHeldByAZeroWindowEndsTheConnection() async throws {
        let server = RPCServer(
            configuration: .init(listen: .init(host: "127.0.0.1", port: 0), responseWriteTimeout: .milliseconds(300)),
            router: makeTestRouter())
        let port = try server.start()
        let goAwayCode = try await onDedicatedThread { () -> UInt32? in
            let client = try RawHTTP2Client(port: port)
            // SETTINGS_INITIAL_WINDOW_SIZE (4) = 0: no DATA may flow on any stream.
            try client.send(
                RawHTTP2Client.preface
                    + RawHTTP2Client.frame(type: 0x4, flags: 0, streamID: 0, payload: [0, 4, 0, 0, 0, 0]))
            try client.sendHeaders(streamID: 1, fields: RawHTTP2Client.grpcRequest(path: "/test.v1.Test/Echo"))
            // An uncompressed length-prefixed message "hi".
            try client.sendData(streamID: 1, bytes: [0, 0, 0, 0, 2, 0x68, 0x69], endStream: true)
            for _ in 0..<100 {
                guard let frame = client.readFrame() else { return nil }
                if frame.type == 0x7, frame.payload.count >= 8 {
                    return UInt32(frame.payload[4]) << 24 | UInt32(frame.payload[5]) << 16
                        | UInt32(frame.payload[6]) << 8 | UInt32(frame.payload[7])
                }
            }
            return nil
        }
        XCTAssertEqual(goAwayCode, 0xB, "GOAWAY(ENHANCE_YOUR_CALM)")
        var open = await server.connectionCount()
        for _ in 0..<500 where open > 0 {
            try await Task.sleep(for: .milliseconds(10))
            open = await server.connectionCount()
        }
        XCTAssertEqual(open, 0, "the connection is closed")
        await server.shutdown(gracePeriod: .seconds(1))
    }

    func testTheDefaultIsThirtySeconds() {
        let configuration = RPCServer.Configuration(listen: .init(host: "127.0.0.1", port: 0))
        XCTAssertEqual(configuration.responseWriteTimeout, .seconds(30))
    }
}
