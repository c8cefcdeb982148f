import AppStoreServerAPI
import Foundation
@testable import PaymentsService
import ServiceKit
import XCTest

/// The pure planning of the jobs that ask Apple: notification history
/// windows, the next run after each outcome, `recover-notifications`'
/// window arguments. No I/O.
final class AppleSyncPlanningTests: XCTestCase {
    private let now: Int64 = 1_780_000_000_000
    private let hour: Int64 = 3_600_000
    private let day: Int64 = 86_400_000

    // MARK: NotificationRecoveryWindow

    func testFirstRunAsksForTheFailuresOfTheWholeReach() throws {
        let production = try XCTUnwrap(
            NotificationRecoveryWindow.next(
                resumeAtMilliseconds: nil, now: now, overlapMilliseconds: hour,
                environment: .production, marginMilliseconds: hour))
        XCTAssertEqual(
            production,
            NotificationRecoveryWindow(
                startMilliseconds: now - 180 * day + hour, endMilliseconds: now, onlyFailures: true))
        let sandbox = try XCTUnwrap(
            NotificationRecoveryWindow.next(
                resumeAtMilliseconds: nil, now: now, overlapMilliseconds: hour,
                environment: .sandbox, marginMilliseconds: hour))
        XCTAssertEqual(sandbox.startMilliseconds, now - 30 * day + hour, "sandbox keeps 30 days")
        XCTAssertTrue(sandbox.onlyFailures)
    }

    func testLaterRunsOverlapTheLastProcessedPoint() throws {
        let window = try XCTUnwrap(
            NotificationRecoveryWindow.next(
                resumeAtMilliseconds: now - hour, now: now, overlapMilliseconds: hour,
                environment: .production, marginMilliseconds: hour))
        XCTAssertEqual(
            window,
            NotificationRecoveryWindow(startMilliseconds: now - 2 * hour, endMilliseconds: now, onlyFailures: false))
        XCTAssertEqual(window.resumeAfterCompletion, now)
    }

    func testAResumePointOlderThanTheReachStartsInsideIt() throws {
        // The service was off for 40 days: sandbox history only goes back 30.
        let window = try XCTUnwrap(
            NotificationRecoveryWindow.next(
                resumeAtMilliseconds: now - 40 * day, now: now, overlapMilliseconds: hour,
                environment: .sandbox, marginMilliseconds: hour))
        XCTAssertEqual(window.startMilliseconds, now - 30 * day + hour)
        XCTAssertFalse(window.onlyFailures)
    }

    func testNothingToAskWhenTheResumePointIsNotBehindNow() {
        XCTAssertNil(
            NotificationRecoveryWindow.next(
                resumeAtMilliseconds: now + 2 * hour, now: now, overlapMilliseconds: hour,
                environment: .production, marginMilliseconds: hour), "clock stepped back")
        XCTAssertNil(
            NotificationRecoveryWindow.next(
                resumeAtMilliseconds: now, now: now, overlapMilliseconds: 0,
                environment: .production, marginMilliseconds: hour))
        XCTAssertNotNil(
            NotificationRecoveryWindow.next(
                resumeAtMilliseconds: now, now: now, overlapMilliseconds: 1,
                environment: .production, marginMilliseconds: hour))
    }

    func testAWindowKeepsOnlyWhatAppleStillKeeps() {
        let window = NotificationRecoveryWindow(
            startMilliseconds: now - 10 * day, endMilliseconds: now - day, onlyFailures: true)
        XCTAssertEqual(window.startingNoEarlier(than: now - 20 * day), window, "in reach: unchanged")
        XCTAssertEqual(window.startingNoEarlier(than: now - 10 * day), window)
        XCTAssertEqual(
            window.startingNoEarlier(than: now - 5 * day),
            NotificationRecoveryWindow(startMilliseconds: now - 5 * day, endMilliseconds: now - day, onlyFailures: true)
        )
        XCTAssertNil(window.startingNoEarlier(than: now - day), "nothing of it left")
        XCTAssertNil(window.startingNoEarlier(than: now))
    }

    /// Only a notification refused for what it is is skipped; a failure of
    /// ours (internal, database) stops the walk so the page is read again.
    func testRecoverySkipsOnlyNotificationsRefusedForWhatTheyAre() {
        XCTAssertTrue(
            NotificationRecovery.refusesForGood(.transactionInvalid(jwsFailure: "bad_signature", problem: "")))
        XCTAssertTrue(
            NotificationRecovery.refusesForGood(.validationFailed(field: "signed_payload", problem: "is required")))
        XCTAssertFalse(
            NotificationRecovery.refusesForGood(.internalFailure(detail: "insert conflicted but no row is visible")))
        XCTAssertFalse(NotificationRecovery.refusesForGood(.databaseUnavailable(detail: "")))
        XCTAssertFalse(NotificationRecovery.refusesForGood(.grantFailed(detail: "")))
        XCTAssertFalse(NotificationRecovery.refusesForGood(.appleUnavailable(detail: "ocsp")))
    }

    /// A sweep skips a customer only for Apple's word on that customer's
    /// data; a failure of the whole run (cancelled at shutdown, TLS, the
    /// key, a malformed answer) stops it instead of skipping everyone.
    func testASweepSkipsOnlyFailuresOfOneCustomer() {
        func apple(_ kind: AppStoreServerAPIError.Kind, _ code: Int? = nil) -> Reconciler.Failure {
            .apple(
                AppStoreServerAPIError(
                    kind: kind, detail: "", httpStatus: nil,
                    apiErrorCode: code.map { APIErrorCode(rawValue: Int64($0)) }))
        }
        XCTAssertTrue(apple(.badRequest, 4_000_006).concernsOnlyThisItem)
        XCTAssertTrue(apple(.notFound, 4_040_010).concernsOnlyThisItem)
        XCTAssertTrue(apple(.responseTooLarge).concernsOnlyThisItem)
        XCTAssertTrue(apple(.invalidArgument).concernsOnlyThisItem, "an id the client refuses to send")
        for kind: AppStoreServerAPIError.Kind in [
            .cancelled, .tlsFailed, .signingFailed, .invalidResponse, .unauthorized, .forbidden,
            .unexpectedStatus, .timeout, .serverError, .rateLimited,
        ] {
            XCTAssertFalse(apple(kind).concernsOnlyThisItem, "\(kind)")
        }
        XCTAssertFalse(apple(.notFound).concernsOnlyThisItem, "a 404 without Apple's code: a wrong base URL")
        XCTAssertFalse(apple(.notFound, 4_040_003).concernsOnlyThisItem, "the app is unknown: our configuration")
    }

    // MARK: SyncJobSchedule

    func testNextRunAfterEachOutcome() {
        let interval = Duration.seconds(3600)
        XCTAssertEqual(SyncJobSchedule.nextRun(after: .completed, nowMilliseconds: now, interval: interval), now + hour)
        XCTAssertEqual(SyncJobSchedule.nextRun(after: .moreToDo, nowMilliseconds: now, interval: interval), now + 1_000)
        XCTAssertEqual(
            SyncJobSchedule.nextRun(after: .failed(reason: "x"), nowMilliseconds: now, interval: interval),
            now + 300_000)
        XCTAssertEqual(
            SyncJobSchedule.nextRun(after: .failed(reason: "x"), nowMilliseconds: now, interval: .seconds(10)),
            now + 10_000)
        XCTAssertNil(SyncJobSchedule.nextRun(after: .lostLease, nowMilliseconds: now, interval: interval))
    }

    func testARateLimitedJobWaitsAtLeastWhatAppleAsked() {
        // Longer than the interval: Apple's wait wins.
        XCTAssertEqual(
            SyncJobSchedule.nextRun(
                after: .rateLimited(retryAfter: .seconds(7200)), nowMilliseconds: now, interval: .seconds(60)),
            now + 2 * hour)
        XCTAssertEqual(
            SyncJobSchedule.nextRun(
                after: .rateLimited(retryAfter: .seconds(120)), nowMilliseconds: now, interval: .seconds(3600)),
            now + 120_000)
        XCTAssertEqual(
            SyncJobSchedule.nextRun(
                after: .rateLimited(retryAfter: nil), nowMilliseconds: now, interval: .seconds(3600)), now + 60_000)
        XCTAssertEqual(
            SyncJobSchedule.nextRun(
                after: .rateLimited(retryAfter: .zero), nowMilliseconds: now, interval: .seconds(3600)), now + 1_000)
    }

    func testOutcomeLabelsFitTheColumn() {
        XCTAssertEqual(SyncJobOutcome.rateLimited(retryAfter: nil).label, "rate_limited")
        XCTAssertLessThanOrEqual(SyncJobOutcome.failed(reason: String(repeating: "x", count: 200)).label.count, 64)
    }

    // MARK: recover-notifications arguments

    func testSinceTakesHoursOrISO8601() throws {
        XCTAssertEqual(try RecoverNotificationsCommand.since("6", nowMilliseconds: now), now - 6 * hour)
        XCTAssertEqual(try RecoverNotificationsCommand.since("2026-05-01", nowMilliseconds: now), 1_777_593_600_000)
        XCTAssertEqual(
            try RecoverNotificationsCommand.since("2026-05-01T08:00:00Z", nowMilliseconds: now), 1_777_622_400_000)
        XCTAssertEqual(
            try RecoverNotificationsCommand.since("2026-05-01T10:00:00+02:00", nowMilliseconds: now), 1_777_622_400_000)
        XCTAssertEqual(
            try RecoverNotificationsCommand.since("2026-05-01T08:00:00.250Z", nowMilliseconds: now), 1_777_622_400_250)
    }

    func testSinceRefusesWhatItCannotRead() {
        for text in ["", "0", "4321", "-3", "1.5", "yesterday", "2026-13-01", "2026-05-01T08:00:00", "٣"] {
            XCTAssertThrowsError(try RecoverNotificationsCommand.since(text, nowMilliseconds: now), text)
        }
        XCTAssertNoThrow(try RecoverNotificationsCommand.since("4320", nowMilliseconds: now), "180 days")
    }

    func testABareOnlyFailuresFlagMeansOne() {
        XCTAssertEqual(
            RecoverNotificationsCommand.expandingBareFlags(["--since", "2", "--only-failures"]),
            ["--since", "2", "--only-failures=1"])
        XCTAssertEqual(
            RecoverNotificationsCommand.expandingBareFlags(["--only-failures", "--since", "2"]),
            ["--only-failures=1", "--since", "2"])
        XCTAssertEqual(
            RecoverNotificationsCommand.expandingBareFlags(["--only-failures", "0"]), ["--only-failures", "0"])
    }

    func testJobSettingsAreBounded() throws {
        func settings(_ values: [String: String]) throws -> AppleSyncSettings {
            try AppleSyncSettings(
                CommandLineOptions(specs: AppleSyncSettings.optionSpecs, arguments: [], environment: values))
        }
        XCTAssertEqual(try settings([:]), AppleSyncSettings())
        XCTAssertEqual(try settings(["RECONCILE_INTERVAL_SECONDS": "0"]).reconcileInterval, .zero, "0 turns a job off")
        XCTAssertThrowsError(try settings(["RECONCILE_STUCK_AFTER_SECONDS": "0"]))
        XCTAssertThrowsError(try settings(["NOTIFICATION_RECOVERY_INTERVAL_SECONDS": "-1"]))
        XCTAssertThrowsError(try settings(["REVOKED_SWEEP_INTERVAL_SECONDS": "99999999"]))
        XCTAssertThrowsError(try settings(["REVOKED_SWEEP_LOOKBACK_DAYS": "0"]))
        XCTAssertThrowsError(try settings(["APPLE_SYNC_LEASE_SECONDS": "ten"]))
        XCTAssertThrowsError(
            try settings(["NOTIFICATION_RECOVERY_OVERLAP_SECONDS": "0"]),
            "notifications indexed late would fall between windows")
        XCTAssertThrowsError(try settings(["NOTIFICATION_RECOVERY_OVERLAP_SECONDS": "59"]))
        XCTAssertEqual(
            try settings(["NOTIFICATION_RECOVERY_OVERLAP_SECONDS": "60"]).notificationRecoveryOverlap, .seconds(60))
    }
}
