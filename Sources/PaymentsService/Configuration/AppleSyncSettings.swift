import ServiceKit

/// How often the jobs that need Apple's view run, and their windows
/// (`APPLE_API_*` must be set for any of them to run). An interval of 0
/// turns that job off. Bounds are checked at start-up.
struct AppleSyncSettings: Sendable, Equatable {
    /// Get Notification History (per environment the deployment accepts).
    var notificationRecoveryInterval: Duration = .seconds(3600)
    /// How far each window reaches back before the last fully processed point.
    var notificationRecoveryOverlap: Duration = .seconds(3600)
    /// Rows owing a step or `received` for longer than `stuckAfter` get Apple's view.
    var reconcileInterval: Duration = .seconds(900)
    var stuckAfter: Duration = .seconds(3600)
    /// Get Transaction History (`revoked=true`) for every user with credited purchases.
    var revokedSweepInterval: Duration = .seconds(86_400)
    var revokedSweepLookbackDays: Int = 180
    /// How long a job run holds its lease without renewing it (another
    /// instance takes over a dead holder's job after it). Short, so a
    /// killed holder's job has a new leader within seconds: a holder that
    /// waits on Apple longer than this loses the job, and its late writes
    /// are fenced (nothing is done twice, only retried elsewhere).
    var lease: Duration = .seconds(20)

    static let optionSpecs: [OptionSpec] = [
        OptionSpec(
            flag: nil, env: "NOTIFICATION_RECOVERY_INTERVAL_SECONDS", default: "3600",
            help: "How often Get Notification History is read to recover notifications that never reached us (0 = off)."
        ),
        OptionSpec(
            flag: nil, env: "NOTIFICATION_RECOVERY_OVERLAP_SECONDS", default: "3600",
            help: "How far each notification history window reaches back before the last fully processed point."),
        OptionSpec(
            flag: nil, env: "RECONCILE_INTERVAL_SECONDS", default: "900",
            help: "How often rows stuck owing a step or received are reconciled with Get Transaction Info (0 = off)."),
        OptionSpec(
            flag: nil, env: "RECONCILE_STUCK_AFTER_SECONDS", default: "3600",
            help: "Age after which an owed step or a received row counts as stuck (also how often one row is re-asked)."
        ),
        OptionSpec(
            flag: nil, env: "REVOKED_SWEEP_INTERVAL_SECONDS", default: "86400",
            help:
                "How often Get Transaction History (revoked) is swept for every user with credited purchases (0 = off)."
        ),
        OptionSpec(
            flag: nil, env: "REVOKED_SWEEP_LOOKBACK_DAYS", default: "180",
            help: "Purchases at most this old are swept for revocations."),
        OptionSpec(
            flag: nil, env: "APPLE_SYNC_LEASE_SECONDS", default: "20",
            help:
                "How long one instance holds a job's lease between renewals (a crashed holder's job moves on after it)."
        ),
    ]

    /// The shortest recovery overlap accepted: a window ends at our clock's
    /// now, Apple indexes a notification some time after sending it, and
    /// clocks differ; without overlap those notifications fall between
    /// two windows.
    static let overlapSecondsMin: Int64 = 60

    /// The longest interval or window accepted (one year).
    static let secondsMax = 366 * 86_400

    init() {}

    init(_ options: CommandLineOptions) throws(SettingsError) {
        self = try SettingsCollector.reading(options) { Self.read(&$0) }
    }

    /// Reads every job setting, reporting each problem to `settings`.
    static func read(_ settings: inout SettingsCollector) -> AppleSyncSettings? {
        func seconds(_ name: String, allowZero: Bool, _ reason: String) -> Duration? {
            settings.integer(name, in: (allowZero ? 0 : 1)...Int64(secondsMax), unit: "of seconds", because: reason).map
            { .seconds($0) }
        }
        let recovery = seconds(
            "NOTIFICATION_RECOVERY_INTERVAL_SECONDS", allowZero: true,
            "it is how often notifications Apple could not deliver are fetched again (0 turns the job off)")
        let overlap = settings.integer(
            "NOTIFICATION_RECOVERY_OVERLAP_SECONDS", in: Self.overlapSecondsMin...Int64(secondsMax), unit: "of seconds",
            because:
                "each recovery window reaches back this far so a notification Apple indexed late, or sent on the edge, is not missed"
        )
        .map { Duration.seconds($0) }
        let reconcile = seconds(
            "RECONCILE_INTERVAL_SECONDS", allowZero: true,
            "it is how often stuck purchases are compared with Apple's view (0 turns the job off)")
        let stuck = seconds(
            "RECONCILE_STUCK_AFTER_SECONDS", allowZero: false,
            "a purchase older than this that still owes a step counts as stuck")
        let revoked = seconds(
            "REVOKED_SWEEP_INTERVAL_SECONDS", allowZero: true,
            "it is how often refunds Apple never notified are looked for (0 turns the job off)")
        let lease = seconds(
            "APPLE_SYNC_LEASE_SECONDS", allowZero: false,
            "another instance takes over a job whose holder stopped renewing its lease for this long")
        let days = settings.integer(
            "REVOKED_SWEEP_LOOKBACK_DAYS", in: 1...366, unit: "of days",
            because: "purchases older than this are not swept for refunds")
        guard let recovery, let overlap, let reconcile, let stuck, let revoked, let lease, let days else { return nil }
        var result = AppleSyncSettings()
        result.notificationRecoveryInterval = recovery
        result.notificationRecoveryOverlap = overlap
        result.reconcileInterval = reconcile
        result.stuckAfter = stuck
        result.revokedSweepInterval = revoked
        result.lease = lease
        result.revokedSweepLookbackDays = Int(days)
        return result
    }

    /// For the start-up log line.
    var summary: [String: String] {
        [
            "notification_recovery_interval_s": "\(notificationRecoveryInterval.components.seconds)",
            "reconcile_interval_s": "\(reconcileInterval.components.seconds)",
            "revoked_sweep_interval_s": "\(revokedSweepInterval.components.seconds)",
        ]
    }
}
