import AppStoreServerAPI
import Foundation
import Logging
import ServiceKit

/// Recovers App Store Server Notifications that never reached us (an
/// outage, a failed delivery past Apple's retries): reads Get Notification
/// History page by page, oldest first, and feeds every `signedPayload` to
/// `PaymentProcessor.handleNotification`, the same path Apple's deliveries
/// take, so a notification already processed (by its notificationUUID)
/// changes nothing. Used by the hourly job (`run`) and by `PaymentsService
/// recover-notifications` (`walk`).
struct NotificationRecovery: Sendable {
    let client: AppStoreServerAPIClient
    let processor: PaymentProcessor
    let logger: Logger

    /// What a walk did.
    struct Tally: Equatable, Sendable {
        var pages = 0
        /// Notifications recorded now (they had not reached us).
        var recorded = 0
        /// Already recorded (delivered before, or read in an earlier window).
        var duplicates = 0
        /// Refused by the notification path for good (e.g. a JWS the verifier
        /// refuses); logged, and left in Apple's history.
        var skipped = 0
    }

    enum End: Equatable, Sendable {
        /// The last page was read.
        case complete
        /// `pagesMax` pages were read; continue from the token.
        case pageBound(nextToken: String)
        /// Stopped early (rate limited, Apple or our side failing, lease lost);
        /// the page that failed is read again next time.
        case stopped(SyncJobOutcome)
        /// Apple refused the page token (expired or invalid): read the window again from its start.
        case tokenRefused
    }

    /// Reads `request`'s pages from `token` (nil: the first), at most
    /// `pagesMax`. After each page fully handed over, `checkpoint(next)`
    /// persists the position; false (lease lost) stops the walk.
    func walk(
        _ request: NotificationHistoryRequest, from token: String?, environment: AppStoreServerEnvironment,
        pagesMax: Int,
        requestId: String, checkpoint: (String?) async -> Bool
    ) async -> (tally: Tally, end: End) {
        var tally = Tally()
        var token = token
        while tally.pages < pagesMax {
            let page: NotificationHistoryPage
            do {
                page = try await client.notificationHistory(request, paginationToken: token, environment: environment)
            } catch {
                if token != nil
                    && (error.apiErrorCode == .paginationTokenExpired || error.apiErrorCode == .invalidPaginationToken)
                {
                    return (tally, .tokenRefused)
                }
                return (tally, .stopped(Self.outcome(of: error)))
            }
            tally.pages += 1
            for item in page.notificationHistory {
                do {
                    let response = try await processor.handleNotification(item.signedPayload, requestId: requestId)
                    if response.duplicate { tally.duplicates += 1 } else { tally.recorded += 1 }
                } catch  where !Self.refusesForGood(error) {
                    // Our database, Apple's OCSP, or a failure of ours (an
                    // internal one, an unexpected database error): this page
                    // is read again next time, never skipped past.
                    return (tally, .stopped(.failed(reason: error.reason.rawValue)))
                } catch {
                    tally.skipped += 1
                    logger.warning(
                        "history notification refused by the notification path",
                        [
                            "environment": environment.rawValue, "reason": error.reason.rawValue,
                            "page": "\(tally.pages)",
                            "request_id": requestId,
                        ])
                }
            }
            guard page.hasMore else { return (tally, .complete) }
            guard let next = page.paginationToken, !next.isEmpty, next != token else {
                return (tally, .stopped(.failed(reason: "hasMore without a new paginationToken")))
            }
            token = next
            guard await checkpoint(next) else { return (tally, .stopped(.lostLease)) }
        }
        return (tally, token.map { .pageBound(nextToken: $0) } ?? .complete)
    }

    /// A notification the notification path refuses for what it is (its
    /// JWS does not verify, its shape is not Apple's): reading it again
    /// cannot change that, so the walk logs it and goes on. Every other
    /// failure is ours or transient and stops the walk at its page.
    static func refusesForGood(_ error: PaymentsError) -> Bool {
        switch error {
        case .transactionInvalid, .validationFailed: true
        default: false
        }
    }

    static func outcome(of error: AppStoreServerAPIError) -> SyncJobOutcome {
        if error.kind == .rateLimited { return .rateLimited(retryAfter: error.retryAfter) }
        return .failed(reason: "\(error.kind)" + (error.apiErrorCode.map { " \($0)" } ?? ""))
    }

    // MARK: The job

    /// One run for `environment`: continue the window in progress from its
    /// page token, or open the next window (`NotificationRecoveryWindow`);
    /// read at most `AppleSyncLimits.notificationPagesPerRunMax` pages; when
    /// the window is read to its end, the resume point moves to its end.
    func run(environment: AppStoreServerEnvironment, lease: SyncJobLease, state: SyncJobState, overlap: Duration) async
        -> SyncJobOutcome
    {
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        var window = state.window
        var token = state.pageToken
        do {
            if window == nil {
                window = NotificationRecoveryWindow.next(
                    resumeAtMilliseconds: state.resumeMilliseconds, now: now,
                    overlapMilliseconds: overlap.wholeMilliseconds,
                    environment: environment, marginMilliseconds: AppleSyncLimits.reachMargin.wholeMilliseconds)
                guard let window else { return .completed }
                token = nil
                guard try await lease.saveWindow(window, pageToken: nil) else { return .lostLease }
            }
            guard var window else { return .completed }
            // A window left waiting (Apple or we failed for longer than the
            // margin) may start before what Apple still keeps: it would be
            // refused (4000012) on every run. Its start moves into reach.
            let earliest = NotificationRecoveryWindow.earliestStart(
                now: now, environment: environment, marginMilliseconds: AppleSyncLimits.reachMargin.wholeMilliseconds)
            let inReach = window.startingNoEarlier(than: earliest)
            if inReach != window {
                logger.critical(
                    "ALERT notification history out of Apple's reach was not read",
                    [
                        "environment": environment.rawValue, "alert": "notification_history_gap",
                        "from_ms": "\(window.startMilliseconds)", "to_ms": "\(min(earliest, window.endMilliseconds))",
                    ])
                guard let inReach else {
                    // Nothing of it is left in reach: done with it.
                    return try await lease.completeWindow(resumeMilliseconds: window.resumeAfterCompletion)
                        ? .moreToDo : .lostLease
                }
                window = inReach
                token = nil
                guard try await lease.saveWindow(window, pageToken: nil) else { return .lostLease }
            }
            let request = NotificationHistoryRequest(
                startDate: window.startMilliseconds, endDate: window.endMilliseconds,
                onlyFailures: window.onlyFailures ? true : nil)
            let (tally, end) = await walk(
                request, from: token, environment: environment, pagesMax: AppleSyncLimits.notificationPagesPerRunMax,
                requestId: "recovery-\(environment.rawValue.lowercased())"
            ) { next in
                (try? await lease.saveWindow(window, pageToken: next)) ?? false
            }
            logger.notice(
                "notification history read",
                [
                    "environment": environment.rawValue, "window_start_ms": "\(window.startMilliseconds)",
                    "window_end_ms": "\(window.endMilliseconds)",
                    "only_failures": "\(window.onlyFailures)", "pages": "\(tally.pages)",
                    "recorded": "\(tally.recorded)",
                    "duplicates": "\(tally.duplicates)", "skipped": "\(tally.skipped)", "end": Self.label(end),
                ])
            switch end {
            case .complete:
                return try await lease.completeWindow(resumeMilliseconds: window.resumeAfterCompletion)
                    ? .completed : .lostLease
            case .pageBound:
                return .moreToDo
            case .tokenRefused:
                return try await lease.saveWindow(window, pageToken: nil) ? .moreToDo : .lostLease
            case .stopped(let outcome):
                return outcome
            }
        } catch {
            return .failed(reason: error.reason.rawValue)
        }
    }

    static func label(_ end: End) -> String {
        switch end {
        case .complete: "complete"
        case .pageBound: "page_bound"
        case .stopped(let outcome): outcome.label
        case .tokenRefused: "token_refused"
        }
    }
}
