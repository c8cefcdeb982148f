import Logging
import RPCRuntime
import ServiceKit
import XCTest
@testable import Gateway

/// The in-process entry point the end-to-end tests use.
final class GatewayRuntimeTests: XCTestCase {
    func testRuntimeServesAndBecomesReadyOnItsOwnProbe() async throws {
        let doubles = BackendDoubles.make()
        let ports = try doubles.start()
        let keys = try JWTKeySet(hs256Secret: GatewayHarness.secret, es256PublicKeyPEM: nil)
        let verifier = JWTVerifier(
            configuration: JWTVerifierConfiguration(
                keys: keys, issuer: GatewayHarness.issuer, audience: GatewayHarness.audience))
        let logs = MemorySink()
        let gateway = try GatewayRuntime(
            listen: HostAndPort(host: "127.0.0.1", port: 0),
            pointsTargets: [HostAndPort(host: "127.0.0.1", port: ports.points)],
            paymentsTargets: [HostAndPort(host: "127.0.0.1", port: ports.payments)],
            verifier: verifier, emailIdentity: try EmailIdentity(hashKey: GatewayHarness.emailHashKey),
            logger: Logger(service: "gateway", sink: logs))
        let port = try await gateway.start()
        var status = 0
        for _ in 0..<50 where status != 200 {
            status = try await onDedicatedThread {
                let client = try RawHTTPClient(port: port)
                try client.send(GatewayHarness.requestText("GET", "/readyz"))
                return try client.readResponse().status
            }
            if status != 200 { try await Task.sleep(for: .milliseconds(100)) }
        }
        XCTAssertEqual(status, 200, "the background probe found both backends serving")
        XCTAssertTrue(logs.allLines.contains { $0.contains("backends ready") })
        let balance = try await onDedicatedThread {
            let client = try RawHTTPClient(port: port)
            try client.send(
                GatewayHarness.requestText("GET", "/api/v1/points/balance", headers: [GatewayHarness.bearer]))
            return try client.readResponse()
        }
        XCTAssertEqual(balance.status, 200)
        XCTAssertTrue(gateway.readiness.isReady)
        await gateway.shutdown(gracePeriod: .seconds(1))
        XCTAssertFalse(
            gateway.readiness.isReady, "the admin listener's /readyz, which outlives the drain, says not ready")
        await doubles.stop()
    }
}
