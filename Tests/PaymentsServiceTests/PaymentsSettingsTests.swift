@testable import PaymentsService
import ServiceKit
import TestSupport
import XCTest

/// PaymentsService reads every setting (the saga's, Apple's, the jobs', the
/// App Store Server API's, internal authentication) before it connects to
/// anything, and reports all problems at once, in `--help` order.
final class PaymentsSettingsTests: XCTestCase {
    private let root = ServiceProcess.repositoryRoot.appendingPathComponent("config/AppleRootCA-G3.cer").path

    private func read(_ environment: [String: String]) throws -> (PaymentsSettings?, [SettingProblem]) {
        var settings = SettingsCollector(
            try CommandLineOptions(specs: PaymentsSettings.specs, arguments: [], environment: environment))
        let read = PaymentsSettings.read(&settings)
        return (read, settings.ordered)
    }

    func testEveryProblemIsReportedInHelpOrder() throws {
        let (settings, problems) = try read([
            "DATABASE_URL": "postgresql:///payments", "POINTS_ADDR": "points", "SAGA_LEASE_MS": "0",
            "SAGA_POLL_INTERVAL_MS": "5",
            "INTERNAL_AUTH": "off", "APPLE_BUNDLE_ID": "com.example.app", "APPLE_ENVIRONMENTS": "Production,Xcode",
            "APPLE_ROOT_CERTS": root,
            "APPLE_SANDBOX_USER_IDS": "not-a-uuid", "RECONCILE_STUCK_AFTER_SECONDS": "0", "CONSUMPTION_ANSWERS": "on",
            "CONSUMPTION_RETRY_SECONDS": "9999",
        ])
        XCTAssertNil(settings)
        XCTAssertEqual(
            problems.map(\.setting),
            [
                "POINTS_ADDR", "SAGA_POLL_INTERVAL_MS", "SAGA_LEASE_MS", "APPLE_APP_APPLE_ID", "APPLE_LOCAL_TESTING",
                "APPLE_SANDBOX_USER_IDS",
                "RECONCILE_STUCK_AFTER_SECONDS", "CONSUMPTION_RETRY_SECONDS",
            ])
        for problem in problems {
            XCTAssertTrue(problem.requirement.hasPrefix("must "), problem.description)
            XCTAssertFalse(problem.reason.isEmpty)
        }
    }

    func testMigrateNeedsOnlyTheDatabaseAndTheSagaTiming() throws {
        var settings = SettingsCollector(
            try CommandLineOptions(
                specs: PaymentsSettings.specs, arguments: [],
                environment: [
                    "DATABASE_URL": "postgresql:///payments", "SAGA_RETRY_MAX_MS": "0",
                ]))
        XCTAssertNil(PaymentsSettings.read(&settings, serving: false))
        XCTAssertEqual(
            settings.ordered.map(\.setting), ["SAGA_RETRY_MAX_MS"],
            "no certificate or Apple setting is needed to migrate")
    }

    /// A lease under a second is refused; the call into PointsService gets
    /// half the lease, at most 5 s, so it ends while the lease holds.
    func testTheLeaseHasAFloorAndBoundsTheLedgerCall() throws {
        func lease(_ text: String) throws -> (RetryBackoff?, [String]) {
            var settings = SettingsCollector(
                try CommandLineOptions(
                    specs: PaymentsSettings.specs, arguments: [],
                    environment: [
                        "DATABASE_URL": "postgresql:///payments", "SAGA_LEASE_MS": text,
                    ]))
            let backoff = PaymentsSettings.readBackoff(&settings)
            return (backoff, settings.ordered.map(\.description))
        }
        let (refused, problems) = try lease("999")
        XCTAssertNil(refused)
        XCTAssertEqual(problems.count, 1)
        XCTAssertTrue(problems[0].hasPrefix("SAGA_LEASE_MS must be"), problems[0])
        XCTAssertEqual(try lease("1000").0?.ledgerCallTimeout, .milliseconds(500))
        XCTAssertEqual(try lease("4000").0?.ledgerCallTimeout, .seconds(2))
        XCTAssertEqual(try lease("30000").0?.ledgerCallTimeout, .seconds(5))
        XCTAssertEqual(RetryBackoff().ledgerCallTimeout, .seconds(5), "the default lease, 30 s")
    }

    func testConsumptionAnswersNeedTheAppStoreServerAPI() throws {
        let (_, problems) = try read([
            "DATABASE_URL": "postgresql:///payments", "INTERNAL_AUTH": "off", "APPLE_BUNDLE_ID": "com.example.app",
            "APPLE_APP_APPLE_ID": "1", "APPLE_ROOT_CERTS": root, "CONSUMPTION_ANSWERS": "on",
        ])
        XCTAssertEqual(
            problems.map(\.description),
            [
                "CONSUMPTION_ANSWERS must be off unless APPLE_API_KEY_PATH, APPLE_API_KEY_ID and APPLE_API_ISSUER_ID are set: "
                    + "consumption answers are sent through the App Store Server API"
            ])
    }

    func testGoodSettingsAreRead() throws {
        let (settings, problems) = try read([
            "DATABASE_URL": "postgresql:///payments", "INTERNAL_AUTH": "off", "APPLE_BUNDLE_ID": "com.example.app",
            "APPLE_APP_APPLE_ID": "1", "APPLE_ROOT_CERTS": root,
            "APPLE_SANDBOX_USER_IDS": "0f8fad5b-d9cb-469f-a165-70867728950e",
        ])
        XCTAssertEqual(problems, [])
        XCTAssertEqual(settings?.serving?.listen.description, "127.0.0.1:50051")
        XCTAssertEqual(settings?.serving?.points.targets.map(\.description), ["127.0.0.1:50052"])
        XCTAssertEqual(settings?.serving?.sagaPollInterval, .seconds(1))
        XCTAssertEqual(settings?.backoff.leaseMilliseconds, 30_000)
        XCTAssertEqual(settings?.serving?.sandboxUserIds.count, 1)
        XCTAssertNotNil(settings?.serving)
        XCTAssertNil(settings?.serving?.appStoreAPI ?? nil)
        XCTAssertEqual(settings?.serving?.sync, AppleSyncSettings())
    }

    /// App receipts are checked under the shipped Apple roots unless
    /// `APPLE_RECEIPT_ROOT_CERTS` names others; a file that is not a
    /// certificate stops start-up with that setting named.
    func testReceiptRootsDefaultToTheShippedAppleRootsAndABadFileIsNamed() throws {
        let good = [
            "DATABASE_URL": "postgresql:///payments", "INTERNAL_AUTH": "off", "APPLE_BUNDLE_ID": "com.example.app",
            "APPLE_APP_APPLE_ID": "1", "APPLE_ROOT_CERTS": root,
        ]
        let (settings, problems) = try read(good)
        XCTAssertEqual(problems, [])
        XCTAssertNotNil(settings?.serving?.receiptVerifier)
        XCTAssertEqual(
            AppleVerificationSettings.defaultReceiptRootPaths,
            "config/AppleIncRootCertificate.cer,config/AppleRootCA-G3.cer")

        let notACertificate = ServiceProcess.repositoryRoot.appendingPathComponent("config/packages.json").path
        let (refused, refusals) = try read(
            good.merging(["APPLE_RECEIPT_ROOT_CERTS": "\(root),\(notACertificate)"]) { $1 })
        XCTAssertNil(refused)
        XCTAssertEqual(refusals.map(\.setting), ["APPLE_RECEIPT_ROOT_CERTS"])
        XCTAssertTrue(refusals.first?.description.contains("packages.json") == true, refusals.first?.description ?? "")
        let (_, missing) = try read(good.merging(["APPLE_RECEIPT_ROOT_CERTS": "/nonexistent/root.pem"]) { $1 })
        XCTAssertEqual(missing.map(\.setting), ["APPLE_RECEIPT_ROOT_CERTS"])
    }
}
