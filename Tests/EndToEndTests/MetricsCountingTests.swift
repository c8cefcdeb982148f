import AppStoreVerification
import Foundation
import XCTest

/// The metrics of the three running processes count what happened: a
/// purchase and its refund move exactly the series they should, scraped
/// from each process's admin listener before and after.
final class MetricsCountingTests: XCTestCase {
    static let verifyRoute = "/api/v1/payments/apple/transactions/verify"
    static let notificationsRoute = "/api/v1/payments/apple/notifications"

    func testAPurchaseAndItsRefundMoveExactlyTheirCounters() async throws {
        let system = try await EndToEndSystem.get()
        let ports = try XCTUnwrap(system.adminPorts)
        let before = try await Self.scrapeAll(ports)
        let user = system.user()
        let transactionId = EndToEndSystem.randomTransactionId()
        let verified = try await system.verify(user, productCode: "popular_pack", transactionId: transactionId)
        XCTAssertEqual(verified.json["status"] as? String, "granted", verified.text)
        let refund = try await system.notify(
            type: "REFUND", transactionId: transactionId, productId: EndToEndSystem.productId("popular_pack"),
            appAccountToken: nil)
        XCTAssertEqual(refund.status, 200, refund.text)
        let settled = try await system.eventually { try await system.paymentStatus(transactionId) == "refunded" }
        XCTAssertTrue(settled)
        // A notification signed by a stranger: refused, counted as invalid of an unknown type.
        let forged = try LocalTestingCertificateAuthority().sign(
            payloadJSON: #"{"notificationType":"REFUND","notificationUUID":"\#(UUID().uuidString)","version":"2.0"}"#)
        system.neverLog(forged)
        let invalid = try await system.send("POST", Self.notificationsRoute, json: ["signedPayload": forged])
        XCTAssertEqual(invalid.status, 422, invalid.text)
        let after = try await Self.scrapeAll(ports)

        func moved(
            _ process: KeyPath<Snapshots, MetricsSnapshot>, _ name: String, _ labels: KeyValuePairs<String, String>
        ) -> Double {
            after[keyPath: process].value(name, labels) - before[keyPath: process].value(name, labels)
        }
        // The gateway: one answer per request, by route pattern and status; the refused notification's problem.
        XCTAssertEqual(
            moved(
                \.gateway, "iap_http_requests_total", ["route": Self.verifyRoute, "method": "POST", "status": "200"]), 1
        )
        XCTAssertEqual(
            moved(
                \.gateway, "iap_http_requests_total",
                ["route": Self.notificationsRoute, "method": "POST", "status": "200"]), 1)
        XCTAssertEqual(
            moved(
                \.gateway, "iap_http_requests_total",
                ["route": Self.notificationsRoute, "method": "POST", "status": "422"]), 1)
        XCTAssertEqual(
            moved(
                \.gateway, "iap_http_problems_total",
                ["route": Self.notificationsRoute, "code": "PAYMENT_TRANSACTION_INVALID"]), 1)
        XCTAssertEqual(
            moved(\.gateway, "iap_http_request_duration_seconds_count", ["route": Self.verifyRoute, "method": "POST"]),
            1)
        XCTAssertEqual(
            moved(
                \.gateway, "iap_rpc_client_requests_total",
                ["method": "/payments.v1.Payments/VerifyTransaction", "code": "OK"]), 1)
        XCTAssertEqual(
            moved(
                \.gateway, "iap_rpc_client_requests_total",
                ["method": "/payments.v1.Payments/HandleNotification", "code": "OK"]), 1)
        XCTAssertEqual(after.gateway.value("iap_dependency_up", ["dependency": "points"]), 1)
        XCTAssertEqual(after.gateway.value("iap_dependency_up", ["dependency": "payments"]), 1)
        // PaymentsService: its RPCs, the saga's two steps, the clawback, the notifications, the JWS checks.
        XCTAssertEqual(
            moved(
                \.payments, "iap_rpc_server_requests_total",
                ["method": "/payments.v1.Payments/VerifyTransaction", "code": "OK"]), 1)
        XCTAssertEqual(
            moved(
                \.payments, "iap_rpc_server_requests_total",
                ["method": "/payments.v1.Payments/HandleNotification", "code": "OK"]), 1)
        XCTAssertEqual(
            moved(\.payments, "iap_rpc_client_requests_total", ["method": "/points.v1.Points/Grant", "code": "OK"]), 1)
        XCTAssertEqual(
            moved(\.payments, "iap_rpc_client_requests_total", ["method": "/points.v1.Points/Clawback", "code": "OK"]),
            1)
        XCTAssertEqual(moved(\.payments, "iap_saga_steps_total", ["step": "grant", "outcome": "applied"]), 1)
        XCTAssertEqual(moved(\.payments, "iap_saga_steps_total", ["step": "clawback", "outcome": "applied"]), 1)
        XCTAssertEqual(moved(\.payments, "iap_clawbacks_total", ["result": "covered"]), 1)
        XCTAssertEqual(moved(\.payments, "iap_overdue_credits_total", [:]), 0)
        XCTAssertEqual(moved(\.payments, "iap_notifications_total", ["type": "REFUND", "outcome": "recorded"]), 1)
        XCTAssertEqual(moved(\.payments, "iap_notifications_total", ["type": "unknown", "outcome": "invalid"]), 1)
        XCTAssertEqual(
            moved(\.payments, "iap_jws_verifications_total", ["kind": "transaction", "outcome": "verified"]), 2)
        XCTAssertEqual(
            moved(\.payments, "iap_jws_verifications_total", ["kind": "notification", "outcome": "verified"]), 1)
        let refusedChecks = after.payments.samples.filter {
            $0.key.hasPrefix(#"iap_jws_verifications_total{kind="notification""#) && !$0.key.contains("verified")
        }
        .reduce(0.0) { $0 + $1.value - (before.payments.samples[$1.key] ?? 0) }
        XCTAssertEqual(refusedChecks, 1, "the forged notification's failed check")
        XCTAssertGreaterThan(moved(\.payments, "iap_db_pool_acquire_wait_seconds_count", [:]), 0)
        XCTAssertEqual(after.payments.value("iap_dependency_up", ["dependency": "database"]), 1)
        XCTAssertEqual(after.payments.value("iap_dependency_up", ["dependency": "points"]), 1)
        // PointsService: the grant and the clawback PaymentsService asked for.
        XCTAssertEqual(
            moved(\.points, "iap_rpc_server_requests_total", ["method": "/points.v1.Points/Grant", "code": "OK"]), 1)
        XCTAssertEqual(
            moved(\.points, "iap_rpc_server_requests_total", ["method": "/points.v1.Points/Clawback", "code": "OK"]), 1)
        XCTAssertEqual(after.points.value("iap_db_pool_connections_max"), 16)
        XCTAssertGreaterThan(after.points.value("process_resident_memory_bytes"), 0)
    }

    func testLivenessReadinessAndNoMetricsOnThePublicPort() async throws {
        let system = try await EndToEndSystem.get()
        let ports = try XCTUnwrap(system.adminPorts)
        for port in [ports.gateway, ports.payments, ports.points] {
            let live = try await HTTPExchange.send(port: port, method: "GET", path: "/livez", headers: [], body: nil)
            XCTAssertEqual(live.status, 200)
            let ready = try await HTTPExchange.send(port: port, method: "GET", path: "/readyz", headers: [], body: nil)
            XCTAssertEqual(ready.status, 200, ready.text)
        }
        let publicMetrics = try await system.send("GET", "/metrics")
        XCTAssertEqual(publicMetrics.status, 404, "the gateway's public port must not expose /metrics")
    }

    /// One scrape of each process.
    struct Snapshots {
        let gateway: MetricsSnapshot
        let payments: MetricsSnapshot
        let points: MetricsSnapshot
    }

    static func scrapeAll(_ ports: (gateway: Int, payments: Int, points: Int)) async throws -> Snapshots {
        Snapshots(
            gateway: try await MetricsSnapshot.scrape(adminPort: ports.gateway),
            payments: try await MetricsSnapshot.scrape(adminPort: ports.payments),
            points: try await MetricsSnapshot.scrape(adminPort: ports.points))
    }
}
