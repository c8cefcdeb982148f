@testable import AppStoreServerAPI
import AppStoreVerification
import Metrics
@testable import PaymentsService
import XCTest

/// How PaymentsService names what it counts: saga outcomes, notification
/// outcomes, App Store Server API endpoints and attempts.
final class PaymentsMetricsLabelTests: XCTestCase {
    func testSagaStepsAndOutcomes() {
        XCTAssertEqual(LedgerStepRunner.stepLabel(.grant), .grant)
        XCTAssertEqual(LedgerStepRunner.stepLabel(.clawback(cycle: 1, amount: 10, reason: "REFUND")), .clawback)
        XCTAssertEqual(LedgerStepRunner.stepLabel(.reverse(cycle: 1)), .reversal)
        XCTAssertEqual(LedgerStepRunner.outcomeLabel(StepOutcome.granted()), .applied)
        XCTAssertEqual(LedgerStepRunner.outcomeLabel(StepOutcome.clawedBack(deducted: 5, overdue: 5)), .applied)
        XCTAssertEqual(
            LedgerStepRunner.outcomeLabel(StepOutcome.grantRefused(reason: "STARTER_PACK_INELIGIBLE")), .refused)
        XCTAssertEqual(LedgerStepRunner.outcomeLabel(StepFailure.transient(detail: "unavailable")), .deferred)
        XCTAssertEqual(
            LedgerStepRunner.outcomeLabel(StepFailure.needsOperator(reason: .productNotFound, detail: "")),
            .needsOperator)
        XCTAssertEqual(SagaBacklogSampler.labelled([.grant: 2, .reverseClawback: 1]), [.grant: 2, .reversal: 1])
    }

    func testNotificationOutcomes() {
        XCTAssertEqual(
            PaymentProcessor.notificationOutcome(of: .transactionInvalid(jwsFailure: "bad_chain", problem: "")),
            .invalid)
        XCTAssertEqual(
            PaymentProcessor.notificationOutcome(of: .validationFailed(field: "signed_payload", problem: "")), .invalid)
        XCTAssertEqual(PaymentProcessor.notificationOutcome(of: .databaseUnavailable(detail: "")), .failed)
        XCTAssertEqual(PaymentProcessor.notificationOutcome(of: .appleUnavailable(detail: "")), .failed)
    }

    func testEndpointsFromRequestShapesNeverIds() {
        let cases: [(String, String, AppStoreAPIEndpointLabel?)] = [
            ("GET", "/inApps/v1/transactions/2000000000000001", .getTransactionInfo),
            ("GET", "/inApps/v2/history/2000000000000001", .getTransactionHistory),
            ("GET", "/inApps/v2/refund/lookup/2000000000000001", .getRefundHistory),
            ("POST", "/inApps/v1/notifications/history", .getNotificationHistory),
            ("POST", "/inApps/v1/notifications/test", .requestTestNotification),
            ("GET", "/inApps/v1/notifications/test/token-1", .getTestNotificationStatus),
            ("PUT", "/inApps/v2/transactions/consumption/2000000000000001", .sendConsumptionInformation),
            ("GET", "/inApps/v1/lookup/MQ12345", .lookUpOrderId),
            ("GET", "/inApps/v1/transactions/appTransactions/2000000000000001", .getAppTransactionInfo),
            ("PUT", "/inApps/v1/transactions/2000000000000001/appAccountToken", .setAppAccountToken),
            ("GET", "/inApps/v1/somethingElse", nil), ("DELETE", "/inApps/v1/transactions/1", nil),
            ("GET", "/other/v1/x/y", nil),
        ]
        for (method, path, expected) in cases {
            XCTAssertEqual(
                AppStoreAPIAttemptRecorder.endpoint(method: method, path: path), expected, "\(method) \(path)")
        }
    }

    func testAttemptsAreCountedWhenTheyEndWithTheirOutcome() throws {
        let metrics = try PaymentsMetrics(registry: MetricsRegistry(), processSampler: { nil })
        let recorder = AppStoreAPIAttemptRecorder(metrics: metrics)
        func event(_ kind: AppStoreServerAPIEvent.Kind, attempt: Int, error: AppStoreServerAPIError? = nil)
            -> AppStoreServerAPIEvent
        {
            AppStoreServerAPIEvent(
                kind: kind, environment: .sandbox, method: "GET", path: "/inApps/v1/transactions/1", attempt: attempt,
                httpStatus: nil, error: error, retryAfter: nil)
        }
        recorder.record(event(.attempt, attempt: 1))
        recorder.record(event(.retry, attempt: 1, error: AppStoreServerAPIError(kind: .rateLimited, detail: "429")))
        recorder.record(event(.attempt, attempt: 2))
        recorder.record(event(.succeeded, attempt: 2))
        let requests = metrics.appStoreAPIRequests
        XCTAssertEqual(requests.labels("get_transaction_info", "sandbox", "rate_limited").value, 1)
        XCTAssertEqual(requests.labels("get_transaction_info", "sandbox", "ok").value, 1)
        XCTAssertEqual(metrics.appStoreAPIRequestDuration.labels("get_transaction_info", "sandbox").count, 2)
    }

    /// The series the notification and App Store Server API alerts watch
    /// with increase()/rate() exist at zero from the start: one that first
    /// appears at 1 has no earlier sample, and its first event is not seen.
    func testTheSeriesTheAlertsWatchStartAtZero() throws {
        let registry = MetricsRegistry()
        _ = try PaymentsMetrics(
            registry: registry, notificationTypes: NotificationType.knownValues.map(\.rawValue),
            processSampler: { nil })
        let lines = Set(registry.render().split(separator: "\n").map(String.init))
        for type in ["unknown", "REFUND", "REVOKE", "CONSUMPTION_REQUEST", "ONE_TIME_CHARGE", "TEST"] {
            for outcome in ["failed", "invalid"] {
                XCTAssertTrue(
                    lines.contains("iap_notifications_total{type=\"\(type)\",outcome=\"\(outcome)\"} 0"),
                    "\(type) \(outcome)")
            }
        }
        for endpoint in AppStoreAPIEndpointLabel.allCases {
            for environment in ["production", "sandbox"] {
                for outcome in [AppStoreServerAPIError.Kind.unauthorized, .forbidden] {
                    let line =
                        "iap_app_store_api_requests_total{endpoint=\"\(endpoint.rawValue)\",environment=\"\(environment)\",outcome=\"\(outcome.rawValue)\"} 0"
                    XCTAssertTrue(lines.contains(line), line)
                }
            }
        }
        XCTAssertFalse(
            registry.render().contains("metrics_label_overflow_total{"), "every zero series fits its family's bound")
    }
}
