/// Every bound of the jobs and commands that ask Apple (TIGER_STYLE: a
/// named maximum for each loop, batch and page walk, in one place).
enum AppleSyncLimits {
    /// Transactions of one user `reconcile --user-id` asks Apple about.
    static let userTransactionsMax = 500
    /// Pages of one customer's transaction history read by `reconcile
    /// --user-id` (20 transactions a page) and by the revoked sweep.
    static let historyPagesMax = 10
    /// Notification history pages one job run or command walks before it
    /// stops (and resumes from the stored token).
    static let notificationPagesPerRunMax = 50
    /// Pages `recover-notifications` walks per environment (100,000 notifications).
    static let notificationPagesPerCommandMax = 5_000
    /// Rows the stuck sweep reconciles per run.
    static let stuckRowsPerRunMax = 100
    /// Users the revoked sweep visits per run (it resumes after the last).
    static let sweepUsersPerRunMax = 200
    /// How long a job waits before the next run when a page bound stopped
    /// it (it has more to do).
    static let continueAfter: Duration = .seconds(1)
    /// How long a job waits after a failure (capped by its interval).
    static let retryAfterFailure: Duration = .seconds(300)
    /// How long a job loop sleeps at most between looks at its schedule.
    static let pollMax: Duration = .seconds(30)
    /// How far history windows stay inside Apple's reach (180 days in
    /// production, 30 in sandbox), so a window start never falls off it
    /// between our clock and Apple's.
    static let reachMargin: Duration = .seconds(3600)
    /// `request-test-notification`: status polls and the wait between them.
    static let testNotificationPollsMax = 300
    static let testNotificationPollInterval: Duration = .seconds(1)
}
