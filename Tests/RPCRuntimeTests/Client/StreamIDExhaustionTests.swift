import RPCCore
@testable import RPCRuntime
import XCTest

/// A client connection whose HTTP/2 stream ids run out (after 2^30 calls in
/// production; here after three, through the test hook) retires like one
/// that received GOAWAY: its calls finish, new ones go to a fresh connection.
final class StreamIDExhaustionTests: XCTestCase {
    func testCallsKeepSucceedingWhenStreamIDsRunOut() async throws {
        let probe = HandlerProbe()
        let (server, port) = try startTestServer(probe: probe)
        var configuration = RPCClient.Configuration(
            backoff: ConnectionBackoff(initialDelay: .milliseconds(20), maximumDelay: .milliseconds(200)))
        // Stream ids 2^31 - 5, 2^31 - 3 and 2^31 - 1: three calls per connection.
        configuration.firstStreamIDForTesting = Int32.max - 4
        let client = try RPCClient(targets: [HostAndPort(host: "127.0.0.1", port: port)], configuration: configuration)

        // A slow call holds the first connection's first stream across its retirement.
        let slow = Task {
            try await client.unary(TestMethods.sleep, request: RawMessage("300"), responseType: RawMessage.self).message
                .text
        }
        for _ in 0..<200 where probe.count(.started) == 0 {
            try await Task.sleep(for: .milliseconds(10))
        }
        XCTAssertEqual(probe.count(.started), 1)

        // Ten calls need four connections; every one of them must succeed.
        for index in 0..<10 {
            let response = try await client.unary(
                TestMethods.echo, request: RawMessage("call \(index)"), responseType: RawMessage.self)
            XCTAssertEqual(response.message.text, "call \(index)")
        }
        let slowAnswer = try await slow.value
        XCTAssertEqual(slowAnswer, "slept", "the call in flight on the retired connection finishes")

        // Retired connections close once their streams ended: only the current one stays.
        var open = await server.connectionCount()
        for _ in 0..<300 where open != 1 {
            try await Task.sleep(for: .milliseconds(10))
            open = await server.connectionCount()
        }
        XCTAssertEqual(open, 1)

        await client.close()
        await server.shutdown(gracePeriod: .seconds(1))
    }
}
