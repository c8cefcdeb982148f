import AppStoreServerAPI

/// The window one run of notification recovery asks Get Notification
/// History for (UNIX milliseconds of the first send attempt). Pure.
///
/// A run reads from the last fully processed point minus `overlap` to now,
/// so a notification Apple indexed late, or first sent at the very end of
/// the last window, is read again (its notificationUUID makes the second
/// read change nothing). The very first run has no such point: it asks for
/// the failures (`onlyFailures`, notifications Apple could not deliver) of
/// the whole history Apple keeps, then regular windows start from there.
/// Every start stays `margin` inside Apple's reach: 180 days in
/// production, 30 in sandbox (Apple refuses an older start, 4000012).
struct NotificationRecoveryWindow: Equatable, Sendable {
    var startMilliseconds: Int64
    var endMilliseconds: Int64
    var onlyFailures: Bool

    static let dayMilliseconds: Int64 = 86_400_000

    /// How far back Apple keeps notification history.
    static func reachMilliseconds(_ environment: AppStoreServerEnvironment) -> Int64 {
        switch environment {
        case .production: 180 * dayMilliseconds
        case .sandbox: 30 * dayMilliseconds
        }
    }

    /// The earliest start Apple accepts now, with `margin` to spare.
    static func earliestStart(now: Int64, environment: AppStoreServerEnvironment, marginMilliseconds: Int64) -> Int64 {
        now - reachMilliseconds(environment) + marginMilliseconds
    }

    /// The next window; nil when there is nothing to ask (the last
    /// processed point is not behind now, e.g. after a clock step back).
    static func next(
        resumeAtMilliseconds resume: Int64?, now: Int64, overlapMilliseconds overlap: Int64,
        environment: AppStoreServerEnvironment, marginMilliseconds margin: Int64
    ) -> NotificationRecoveryWindow? {
        precondition(overlap >= 0 && margin >= 0, "overlap and margin are not negative")
        let earliest = earliestStart(now: now, environment: environment, marginMilliseconds: margin)
        guard let resume else {
            return NotificationRecoveryWindow(startMilliseconds: earliest, endMilliseconds: now, onlyFailures: true)
        }
        let start = max(resume - overlap, earliest)
        guard start < now else { return nil }
        return NotificationRecoveryWindow(startMilliseconds: start, endMilliseconds: now, onlyFailures: false)
    }

    /// This window without what lies before `earliest` (Apple's reach): the
    /// same window when it starts there or later; nil when all of it lies
    /// before.
    func startingNoEarlier(than earliest: Int64) -> NotificationRecoveryWindow? {
        guard startMilliseconds < earliest else { return self }
        guard earliest < endMilliseconds else { return nil }
        var moved = self
        moved.startMilliseconds = earliest
        return moved
    }

    /// Where the last fully processed point stands once this window is read.
    var resumeAfterCompletion: Int64 { endMilliseconds }
}
