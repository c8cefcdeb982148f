import Foundation
@testable import Gateway
import Metrics
import XCTest

/// The pipeline counts every answer once: by the route's pattern (never the
/// concrete path, so ids cannot explode the series), method and status,
/// with its latency and, for problems, the problem code.
final class GatewayMetricsCountingTests: XCTestCase {
    private var harness: GatewayHarness!

    override func setUp() async throws {
        harness = try await GatewayHarness.start()
    }

    override func tearDown() async throws {
        await harness.stop()
        harness = nil
    }

    private func requests(_ route: String, _ method: String, _ status: Int) -> Double {
        harness.metrics.httpRequests.labels(route, method, String(status)).value
    }

    func testAnswersAreCountedByRoutePatternMethodAndStatus() async throws {
        _ = try await harness.request("GET", "/api/v1/points/balance", headers: [GatewayHarness.bearer])
        _ = try await harness.request("GET", "/api/v1/points/balance", headers: [GatewayHarness.bearer])
        _ = try await harness.request("GET", "/api/v1/points/balance")
        _ = try await harness.request("GET", "/api/v1/payments/apple/transactions/2000000000000001", headers: [GatewayHarness.bearer])
        XCTAssertEqual(requests("/api/v1/points/balance", "GET", 200), 2)
        XCTAssertEqual(requests("/api/v1/points/balance", "GET", 401), 1)
        XCTAssertEqual(harness.metrics.httpProblems.labels("/api/v1/points/balance", "UNAUTHENTICATED").value, 1)
        XCTAssertEqual(harness.metrics.httpRequestDuration.labels("/api/v1/points/balance", "GET").count, 3)
        let transactionRoute = "/api/v1/payments/apple/transactions/{transactionId}"
        let byPattern = harness.metrics.httpRequestDuration.labels(transactionRoute, "GET").count
        XCTAssertEqual(byPattern, 1, "counted under the pattern, not the transaction id")
    }

    func testUnmatchedPathsAndUnknownMethodsAreBounded() async throws {
        _ = try await harness.request("GET", "/metrics")
        _ = try await harness.request("GET", "/nothing/here/42")
        _ = try await harness.request("BREW", "/api/v1/points/balance", headers: [GatewayHarness.bearer])
        XCTAssertEqual(requests(IAPMetricLabels.unmatchedRoute, "GET", 404), 2, "the public port serves no /metrics")
        XCTAssertEqual(harness.metrics.httpProblems.labels(IAPMetricLabels.unmatchedRoute, "NOT_FOUND").value, 2)
        // The parser refuses unknown methods (501) before any route is read.
        XCTAssertEqual(requests(IAPMetricLabels.unmatchedRoute, IAPMetricLabels.otherMethod, 501), 1, "an unknown method is `other`")
        XCTAssertEqual(harness.metrics.httpProblems.labels(IAPMetricLabels.unmatchedRoute, "NOT_IMPLEMENTED").value, 1)
    }
}
