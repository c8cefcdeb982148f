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
        _ = try await harness.request(
            "GET", "/api/v1/payments/apple/transactions/2000000000000001", headers: [GatewayHarness.bearer])
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
        XCTAssertEqual(
            requests(IAPMetricLabels.unmatchedRoute, IAPMetricLabels.otherMethod, 501), 1,
            "an unknown method is `other`")
        XCTAssertEqual(harness.metrics.httpProblems.labels(IAPMetricLabels.unmatchedRoute, "NOT_IMPLEMENTED").value, 1)
    }

    func testA405IsCountedWithMethodOther() async throws {
        let response = try await harness.request("DELETE", "/api/v1/points/balance", headers: [GatewayHarness.bearer])
        XCTAssertEqual(response.status, 405)
        XCTAssertEqual(requests("/api/v1/points/balance", IAPMetricLabels.otherMethod, 405), 1)
        XCTAssertEqual(requests("/api/v1/points/balance", "DELETE", 405), 0)
    }

    /// Anonymous 405s on every route with every method cannot fill the
    /// latency family's table: a real pair first seen afterwards still gets
    /// its own series (it went to `other` when each 405 kept its method).
    func testAnonymous405sLeaveRoomForEveryRealRouteAndMethod() throws {
        let registry = MetricsRegistry()
        let metrics = try GatewayMetrics(registry: registry, processSampler: { nil })
        let methods = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "BREW"]
        for spec in RouteSpec.all {
            for method in methods {
                metrics.recordRequest(route: spec.pattern, method: method, status: 405, duration: .milliseconds(1))
            }
        }
        for method in methods {
            metrics.recordRequest(
                route: IAPMetricLabels.unmatchedRoute, method: method, status: 404, duration: .milliseconds(1))
        }
        for spec in RouteSpec.all {
            for method in spec.method == "GET" ? ["GET", "HEAD"] : [spec.method] {
                metrics.recordRequest(route: spec.pattern, method: method, status: 200, duration: .milliseconds(1))
                XCTAssertEqual(
                    metrics.httpRequestDuration.labels(spec.pattern, method).count, 1, "\(method) \(spec.pattern)")
            }
        }
        XCTAssertFalse(
            registry.render().contains("metrics_label_overflow_total{metric=\"iap_http_request_duration_seconds\"}"),
            registry.render())
    }
}
