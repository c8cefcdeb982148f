/// When the worker tries a pending saga step again: exponential backoff with
/// a cap, and jitter so many instances do not retry in lockstep.
struct RetryBackoff: Sendable {
    var initialDelayMilliseconds: Int64 = 500
    var maximumDelayMilliseconds: Int64 = 5 * 60 * 1000
    /// How long a claimed step is leased to one worker before another may
    /// take it over (covers a worker that crashed mid-step).
    var leaseMilliseconds: Int64 = 30_000

    /// The shortest lease accepted (`SAGA_LEASE_MS`): a lease shorter than
    /// a step's work hands the step to a second runner while the first
    /// still runs it (safe, every call is idempotent, but each step then
    /// runs twice).
    static let leaseMillisecondsMin: Int64 = 1_000
    /// The longest a call into PointsService may take (`PointsLedger`).
    static let ledgerCallTimeoutMax: Duration = .seconds(5)

    /// A saga step's call into PointsService ends within half the lease
    /// (at most `ledgerCallTimeoutMax`), so the runner that claimed the
    /// step finishes with it, or gives it up as a deadline, while its lease
    /// still holds: no second runner takes over a step whose call is still
    /// in flight.
    var ledgerCallTimeout: Duration {
        min(Self.ledgerCallTimeoutMax, .milliseconds(max(leaseMilliseconds, Self.leaseMillisecondsMin) / 2))
    }

    /// Delay before attempt number `attempt` (1-based), with `jitter` in 0..<1
    /// scaling the upper half of the delay.
    func delayMilliseconds(attempt: Int, jitter: Double) -> Int64 {
        precondition(attempt >= 1, "attempts are counted from 1")
        let exponent = min(attempt - 1, 30)
        let base = min(
            initialDelayMilliseconds.multipliedReportingOverflow(by: 1 << exponent).partialValue,
            maximumDelayMilliseconds)
        let clampedJitter = min(max(jitter, 0), 0.999_999)
        return base / 2 + Int64(Double(base / 2) * clampedJitter)
    }
}
