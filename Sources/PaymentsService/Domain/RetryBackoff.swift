/// When the worker tries a pending saga step again: exponential backoff with
/// a cap, and jitter so many instances do not retry in lockstep.
struct RetryBackoff: Sendable {
    var initialDelayMilliseconds: Int64 = 500
    var maximumDelayMilliseconds: Int64 = 5 * 60 * 1000
    /// How long a claimed step is leased to one worker before another may
    /// take it over (covers a worker that crashed mid-step).
    var leaseMilliseconds: Int64 = 30_000

    /// Delay before attempt number `attempt` (1-based), with `jitter` in 0..<1
    /// scaling the upper half of the delay.
    func delayMilliseconds(attempt: Int, jitter: Double) -> Int64 {
        precondition(attempt >= 1, "attempts are counted from 1")
        let exponent = min(attempt - 1, 30)
        let base = min(initialDelayMilliseconds.multipliedReportingOverflow(by: 1 << exponent).partialValue, maximumDelayMilliseconds)
        let clampedJitter = min(max(jitter, 0), 0.999_999)
        return base / 2 + Int64(Double(base / 2) * clampedJitter)
    }
}
