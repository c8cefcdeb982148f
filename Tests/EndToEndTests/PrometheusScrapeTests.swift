import Foundation
import TestSupport
import XCTest

/// The issue's proof that the metrics are real: a real Prometheus scrapes
/// the three running processes every second while a purchase and its refund
/// go through the gateway, and its HTTP API then finds the purchase, the
/// refund (the notification, the clawback) and the saga's outcomes counted.
/// `promtool check metrics` passes on every process's exposition. Bounded:
/// about 10 s when all goes well, 60 s at most.
final class PrometheusScrapeTests: XCTestCase {
    static let settleAttemptsMax = 300
    static let pollPauseMilliseconds = 200

    func testARealPrometheusFindsThePurchaseTheRefundAndTheSagaCounted() async throws {
        let system = try await EndToEndSystem.get()
        let ports = try XCTUnwrap(system.adminPorts)
        let prometheus = try PrometheusServer(jobs: [
            ("iap-gateway", ports.gateway), ("iap-payments", ports.payments), ("iap-points", ports.points),
        ])
        defer { prometheus.stop() }
        try await prometheus.waitUntilReady()
        // Every target up before anything happens, so the baseline is scraped
        // (a series no earlier test created is absent: 0).
        let up = try await settle(prometheus, #"sum(up{job=~"iap-.*"})"#) { $0 == 3 }
        XCTAssertEqual(up, 3, prometheus.logs.suffix(2000).description)
        let baseline = try await prometheus.scalar(Self.purchases) ?? 0
        let refundsBefore = try await prometheus.scalar(Self.refunds) ?? 0

        let user = system.user()
        let transactionId = EndToEndSystem.randomTransactionId()
        let verified = try await system.verify(user, productCode: "starter_pack", transactionId: transactionId)
        XCTAssertEqual(verified.json["status"] as? String, "granted", verified.text)
        let refund = try await system.notify(
            type: "REFUND", transactionId: transactionId, productId: EndToEndSystem.productId("starter_pack"),
            appAccountToken: nil)
        XCTAssertEqual(refund.status, 200, refund.text)

        let purchases = try await settle(prometheus, Self.purchases) { ($0 ?? 0) >= baseline + 1 }
        XCTAssertEqual(purchases, baseline + 1, "the purchase, as the gateway answered it")
        let refunds = try await settle(prometheus, Self.refunds) { ($0 ?? 0) >= refundsBefore + 1 }
        XCTAssertEqual(refunds, refundsBefore + 1, "the refund notification, as PaymentsService recorded it")
        let clawbacks = try await settle(prometheus, #"sum(iap_clawbacks_total{job="iap-payments"})"#) {
            ($0 ?? 0) >= 1
        }
        XCTAssertGreaterThanOrEqual(clawbacks ?? 0, 1, "the refund's clawback")
        for step in ["grant", "clawback"] {
            let applied = try await settle(
                prometheus, #"sum(iap_saga_steps_total{job="iap-payments",step="\#(step)",outcome="applied"})"#
            ) {
                ($0 ?? 0) >= 1
            }
            XCTAssertGreaterThanOrEqual(applied ?? 0, 1, "the saga's \(step) step")
        }
        let grants = try await settle(
            prometheus,
            #"sum(iap_rpc_server_requests_total{job="iap-points",method="/points.v1.Points/Grant",code="OK"})"#
        ) {
            ($0 ?? 0) >= 1
        }
        XCTAssertGreaterThanOrEqual(grants ?? 0, 1, "PointsService's grant")
        let dependencies = try await prometheus.query(#"iap_dependency_up"#)
        XCTAssertEqual(
            Set(dependencies.map { "\($0.labels["job"] ?? "") \($0.labels["dependency"] ?? "")" }),
            [
                "iap-gateway points", "iap-gateway payments", "iap-payments database", "iap-payments points",
                "iap-points database",
            ])
        XCTAssertTrue(dependencies.allSatisfy { $0.value == 1 }, "\(dependencies)")

        for (name, port) in [("gateway", ports.gateway), ("payments", ports.payments), ("points", ports.points)] {
            let snapshot = try await MetricsSnapshot.scrape(adminPort: port)
            let check = try await promtoolCheckMetrics(snapshot.text)
            XCTAssertEqual(check.status, 0, "promtool check metrics on \(name): \(check.output)")
        }
    }

    static let purchases =
        #"sum(iap_http_requests_total{job="iap-gateway",route="/api/v1/payments/apple/transactions/verify",method="POST",status="200"})"#
    static let refunds = #"sum(iap_notifications_total{job="iap-payments",type="REFUND",outcome="recorded"})"#

    /// Queries until `done` holds (bounded); returns the last value.
    private func settle(_ prometheus: PrometheusServer, _ expression: String, until done: (Double?) -> Bool)
        async throws -> Double?
    {
        var value: Double?
        for _ in 0..<Self.settleAttemptsMax {
            value = try await prometheus.scalar(expression)
            if done(value) { return value }
            try await Task.sleep(for: .milliseconds(Self.pollPauseMilliseconds))
        }
        return value
    }

    private func promtoolCheckMetrics(_ text: String) async throws -> (status: Int32, output: String) {
        let directory = NSTemporaryDirectory() + "promtool-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try Data(text.utf8).write(to: URL(fileURLWithPath: directory + "/metrics.prom"))
        let status = try await offPool {
            try Command.run(
                ["/bin/sh", "-c", "exec /usr/bin/promtool check metrics < \"$0\"", directory + "/metrics.prom"],
                outputPath: directory + "/out.txt")
        }
        return (status, (try? String(contentsOfFile: directory + "/out.txt", encoding: .utf8)) ?? "")
    }
}
