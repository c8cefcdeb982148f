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
    /// instance takes over a dead holder's job after it).
    var lease: Duration = .seconds(300)

    static let optionSpecs: [OptionSpec] = [
        OptionSpec(flag: nil, env: "NOTIFICATION_RECOVERY_INTERVAL_SECONDS", default: "3600",
                   help: "How often Get Notification History is read to recover notifications that never reached us (0 = off)."),
        OptionSpec(flag: nil, env: "NOTIFICATION_RECOVERY_OVERLAP_SECONDS", default: "3600",
                   help: "How far each notification history window reaches back before the last fully processed point."),
        OptionSpec(flag: nil, env: "RECONCILE_INTERVAL_SECONDS", default: "900",
                   help: "How often rows stuck owing a step or received are reconciled with Get Transaction Info (0 = off)."),
        OptionSpec(flag: nil, env: "RECONCILE_STUCK_AFTER_SECONDS", default: "3600",
                   help: "Age after which an owed step or a received row counts as stuck (also how often one row is re-asked)."),
        OptionSpec(flag: nil, env: "REVOKED_SWEEP_INTERVAL_SECONDS", default: "86400",
                   help: "How often Get Transaction History (revoked) is swept for every user with credited purchases (0 = off)."),
        OptionSpec(flag: nil, env: "REVOKED_SWEEP_LOOKBACK_DAYS", default: "180",
                   help: "Purchases at most this old are swept for revocations."),
        OptionSpec(flag: nil, env: "APPLE_SYNC_LEASE_SECONDS", default: "300",
                   help: "How long one instance holds a job's lease between renewals (a crashed holder's job moves on after it)."),
    ]

    /// The longest interval or window accepted (one year).
    static let secondsMax = 366 * 86_400

    init() {}

    init(_ options: CommandLineOptions) throws {
        func seconds(_ name: String, allowZero: Bool) throws -> Duration {
            let text = try options.required(name)
            guard let value = Int(text), value >= (allowZero ? 0 : 1), value <= Self.secondsMax else {
                throw CommandLineError("\(name) must be a whole number of seconds, \(allowZero ? 0 : 1)...\(Self.secondsMax)")
            }
            return .seconds(value)
        }
        notificationRecoveryInterval = try seconds("NOTIFICATION_RECOVERY_INTERVAL_SECONDS", allowZero: true)
        notificationRecoveryOverlap = try seconds("NOTIFICATION_RECOVERY_OVERLAP_SECONDS", allowZero: true)
        reconcileInterval = try seconds("RECONCILE_INTERVAL_SECONDS", allowZero: true)
        stuckAfter = try seconds("RECONCILE_STUCK_AFTER_SECONDS", allowZero: false)
        revokedSweepInterval = try seconds("REVOKED_SWEEP_INTERVAL_SECONDS", allowZero: true)
        lease = try seconds("APPLE_SYNC_LEASE_SECONDS", allowZero: false)
        let lookback = try options.required("REVOKED_SWEEP_LOOKBACK_DAYS")
        guard let days = Int(lookback), (1...366).contains(days) else {
            throw CommandLineError("REVOKED_SWEEP_LOOKBACK_DAYS must be 1...366")
        }
        revokedSweepLookbackDays = days
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
