import Foundation
import TestSupport
import XCTest

/// The App Store Server API settings at start-up: optional (without them
/// the service runs and says once that the jobs are off), all three or none,
/// and a bad key refused with a message that names the setting and never
/// shows the key.
final class PaymentsAppStoreAPISettingsTests: XCTestCase {
    static let shared = SharedCluster()

    override class func tearDown() {
        shared.shutdownBlocking()
        super.tearDown()
    }

    private static let jobsOff = [
        "NOTIFICATION_RECOVERY_INTERVAL_SECONDS": "0", "RECONCILE_INTERVAL_SECONDS": "0",
        "REVOKED_SWEEP_INTERVAL_SECONDS": "0",
    ]

    func testTheKeySettingsAreOptionalAllOrNoneAndABadKeyStopsStartUpWithAClearMessage() async throws {
        let cluster = try await Self.shared.cluster()
        // Without them the service runs, and says once that the jobs are off.
        let lines = cluster.paymentsLogs.split(separator: "\n").filter {
            $0.contains("notification recovery and reconciliation jobs are off")
        }
        XCTAssertEqual(lines.count, 1, cluster.paymentsLogs)
        XCTAssertTrue(lines.first?.contains("\"level\":\"notice\"") ?? false)

        let wrongCurve = try await AppStoreAPIKeys.write(curve: "P-384")
        let garbage = NSTemporaryDirectory() + "/AuthKey_\(UUID().uuidString).p8"
        try "-----BEGIN PRIVATE KEY-----\nbm90IGEga2V5IGF0IGFsbCwganVzdCB0ZXh0\n-----END PRIVATE KEY-----\n".write(
            toFile: garbage, atomically: true, encoding: .utf8)
        let cases: [(settings: [String: String], expected: String, secret: [String])] = [
            (
                [
                    "APPLE_API_KEY_PATH": wrongCurve.path, "APPLE_API_KEY_ID": AppStoreAPIKeys.keyID,
                    "APPLE_API_ISSUER_ID": AppStoreAPIKeys.issuerID,
                ],
                "APPLE_API_KEY_PATH must be usable (\(wrongCurve.path) is not an EC key on P-256",
                AppStoreAPIKeys.bodyLines(wrongCurve.pem)
            ),
            (
                [
                    "APPLE_API_KEY_PATH": garbage, "APPLE_API_KEY_ID": AppStoreAPIKeys.keyID,
                    "APPLE_API_ISSUER_ID": AppStoreAPIKeys.issuerID,
                ],
                "APPLE_API_KEY_PATH must be usable (\(garbage) is a key block that does not decode to a key",
                ["bm90IGEga2V5IGF0IGFsbCwganVzdCB0ZXh0"]
            ),
            (
                [
                    "APPLE_API_KEY_PATH": "/nonexistent/AuthKey.p8", "APPLE_API_KEY_ID": AppStoreAPIKeys.keyID,
                    "APPLE_API_ISSUER_ID": AppStoreAPIKeys.issuerID,
                ],
                "APPLE_API_KEY_PATH must be usable (cannot read the key file /nonexistent/AuthKey.p8)", []
            ),
            (
                ["APPLE_API_KEY_PATH": wrongCurve.path],
                "APPLE_API_KEY_ID must be set when APPLE_API_KEY_PATH is", AppStoreAPIKeys.bodyLines(wrongCurve.pem)
            ),
        ]
        let original = cluster.paymentsEnvironment
        await cluster.payments.stop()
        for (settings, expected, secret) in cases {
            cluster.paymentsEnvironment = original.merging(settings) { $1 }.merging(Self.jobsOff) { $1 }
            do {
                try await cluster.startPayments()
                XCTFail("PaymentsService started with \(settings)")
                await cluster.payments.stop()
            } catch {
                let message = "\(error)"
                XCTAssertTrue(message.contains("PaymentsService: \(expected)"), message)
                for line in secret { XCTAssertFalse(message.contains(line), "the key reached the output") }
            }
        }
        // A good key: the service starts and says the jobs are on.
        let good = try await AppStoreAPIKeys.write()
        cluster.paymentsEnvironment = original.merging([
            "APPLE_API_KEY_PATH": good.path, "APPLE_API_KEY_ID": AppStoreAPIKeys.keyID,
            "APPLE_API_ISSUER_ID": AppStoreAPIKeys.issuerID,
        ]) { $1 }.merging(Self.jobsOff) { $1 }
        try await cluster.startPayments()
        XCTAssertTrue(cluster.paymentsLogs.contains("App Store Server API configured"), cluster.paymentsLogs)
        for line in AppStoreAPIKeys.bodyLines(good.pem) { XCTAssertFalse(cluster.paymentsLogs.contains(line)) }
        for path in [wrongCurve.path, garbage, good.path] { try? FileManager.default.removeItem(atPath: path) }
        cluster.paymentsEnvironment = original
    }
}
