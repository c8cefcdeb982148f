import Metrics
import Synchronization
import XCTest
@testable import Gateway

/// The admission limits over a real server: the concurrent-request cap
/// (503 with Retry-After, health probes still answered) and the
/// notification route's per-address rate limit (429 with Retry-After).
final class GatewayAdmissionTests: XCTestCase {
    private static let notification = #"{"signedPayload":"\#(GatewayHarness.signedTransactionInfo)"}"#

    func testRequestsBeyondTheConcurrentCapAre503WithRetryAfterWhileHealthStaysAnswerable() async throws {
        let admission = RequestAdmission(limits: AdmissionLimits(concurrentRequestsMax: 1))
        let harness = try await GatewayHarness.start(admission: admission)
        let ready = await harness.awaitReadiness(true)
        XCTAssertTrue(ready)
        harness.doubles.setDelay(milliseconds: 1_000)
        let slow = Task { try await harness.request("GET", "/api/v1/points/balance", headers: [GatewayHarness.bearer]) }
        for _ in 0..<300 where admission.inFlightCount == 0 { try await Task.sleep(for: .milliseconds(5)) }
        XCTAssertEqual(admission.inFlightCount, 1)

        let refused = try await harness.request("GET", "/api/v1/points/packages", headers: [GatewayHarness.bearer])
        XCTAssertEqual(refused.status, 503)
        XCTAssertEqual(refused.json["code"] as? String, "SERVICE_UNAVAILABLE")
        XCTAssertEqual(refused.json["retryable"] as? Bool, true)
        XCTAssertEqual(refused.header("Retry-After"), String(GatewayLimits.overloadedRetryAfterSeconds))
        let health = try await harness.request("GET", "/healthz")
        XCTAssertEqual(health.status, 200, "health probes are exempt")
        let readiness = try await harness.request("GET", "/readyz")
        XCTAssertEqual(readiness.status, 200, "readiness is exempt from the cap")

        let first = try await slow.value
        XCTAssertEqual(first.status, 200)
        XCTAssertEqual(admission.inFlightCount, 0, "every admitted request leaves")
        let after = try await harness.request("GET", "/api/v1/points/packages", headers: [GatewayHarness.bearer])
        XCTAssertEqual(after.status, 200)
        XCTAssertEqual(harness.metrics.httpRefusals.labels("overloaded").value, 1)
        XCTAssertEqual(
            harness.doubles.recordedMethods, ["GetBalance", "ListPackages"], "the refused request reached nothing")
        await harness.stop()
    }

    func testNotificationsBeyondTheBurstAre429WithRetryAfterPerClientAddress() async throws {
        let now = ManualMilliseconds()
        let admission = RequestAdmission(
            limits: AdmissionLimits(notificationRule: TokenBucketTable.Rule(ratePerSecond: 1, burst: 2)),
            monotonicMilliseconds: { now.value })
        let harness = try await GatewayHarness.start(admission: admission)
        var statuses: [Int] = []
        var last: RawResponse?
        for _ in 0..<3 {
            let response = try await harness.request(
                "POST", "/api/v1/payments/apple/notifications", headers: [("Content-Type", "application/json")],
                body: Self.notification)
            statuses.append(response.status)
            last = response
        }
        XCTAssertEqual(statuses, [200, 200, 429])
        XCTAssertEqual(last?.json["code"] as? String, "RATE_LIMITED")
        XCTAssertEqual(last?.header("Retry-After"), "1")
        XCTAssertEqual(
            harness.doubles.recordedMethods, ["HandleNotification", "HandleNotification"],
            "the refused one cost no signature check")
        let balance = try await harness.request("GET", "/api/v1/points/balance", headers: [GatewayHarness.bearer])
        XCTAssertEqual(balance.status, 200, "other routes are not rate limited")
        now.advance(by: 1_000)
        let refilled = try await harness.request(
            "POST", "/api/v1/payments/apple/notifications", headers: [("Content-Type", "application/json")],
            body: Self.notification)
        XCTAssertEqual(refilled.status, 200, "a token is back after a second")
        XCTAssertEqual(harness.metrics.httpRefusals.labels("rate_limited").value, 1)
        XCTAssertEqual(harness.metrics.httpProblems.labels(IAPMetricLabels.notificationsRoute, "RATE_LIMITED").value, 1)
        await harness.stop()
    }

    func testABackendThatIsDownIs503WithRetryAfterAndCountedAsBackendUnavailable() async throws {
        let harness = try await GatewayHarness.start(admission: RequestAdmission(limits: AdmissionLimits()))
        await harness.doubles.stop()
        let response = try await harness.request("GET", "/api/v1/points/balance", headers: [GatewayHarness.bearer])
        XCTAssertEqual(response.status, 503)
        XCTAssertEqual(response.json["code"] as? String, "SERVICE_UNAVAILABLE")
        XCTAssertEqual(response.header("Retry-After"), String(GatewayLimits.unavailableRetryAfterSeconds))
        let notReady = await harness.awaitReadiness(false)
        XCTAssertTrue(notReady)
        let readiness = try await harness.request("GET", "/readyz")
        XCTAssertEqual(readiness.status, 503)
        XCTAssertEqual(readiness.header("Retry-After"), String(GatewayLimits.unavailableRetryAfterSeconds))
        XCTAssertEqual(harness.metrics.httpRefusals.labels("backend_unavailable").value, 2)
        await harness.stop()
    }
}

/// A settable monotonic clock for the rate limiter.
final class ManualMilliseconds: Sendable {
    private let current = Mutex<Int64>(1_000_000)

    var value: Int64 { current.withLock { $0 } }

    func advance(by milliseconds: Int64) { current.withLock { $0 += milliseconds } }
}
