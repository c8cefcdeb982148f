import RPCRuntime
import XCTest

final class EndToEndTests: XCTestCase {
    func testUnarySuccessRoundTrip() async throws {
        let (server, port) = try startTestServer()
        let client = try makeTestClient(ports: [port])
        let response = try await client.unary(TestMethods.echo, request: RawMessage("hello"), responseType: RawMessage.self)
        XCTAssertEqual(response.message.text, "hello")
        await client.close()
        await server.shutdown(gracePeriod: .seconds(1))
    }
}
