/// Decides, after a failed attempt, whether to try again and after how
/// long. Pure: the jitter source is injected, so tests are deterministic.
/// `Retry-After` is obeyed when it is at most `retryAfterMax`; a longer one
/// ends the call (the caller reschedules rather than hold a task for
/// minutes). Otherwise the wait is exponential backoff with "equal jitter"
/// (half fixed, half random) so many clients do not retry in lockstep.
struct RetryPolicy: Sendable {
    enum Decision: Equatable {
        case retry(after: Duration)
        case giveUp
    }

    let limits: AppStoreServerAPILimits
    /// A value in 0..<1.
    let random: @Sendable () -> Double

    init(limits: AppStoreServerAPILimits, random: @escaping @Sendable () -> Double = { Double.random(in: 0..<1) }) {
        self.limits = limits
        self.random = random
    }

    /// `attempt` is the 1-based number of the attempt that just failed;
    /// `waited` the time already spent between earlier attempts.
    func decide(after error: AppStoreServerAPIError, attempt: Int, waited: Duration) -> Decision {
        guard error.isRetryable, attempt < limits.attemptsMax else { return .giveUp }
        let wait: Duration
        if let retryAfter = error.retryAfter {
            guard retryAfter <= limits.retryAfterMax else { return .giveUp }
            wait = retryAfter
        } else {
            wait = backoff(afterAttempt: attempt)
        }
        guard waited + wait <= limits.retryWaitTotalMax else { return .giveUp }
        return .retry(after: wait)
    }

    /// `backoffInitial * 2^(attempt-1)`, capped at `backoffMax`, then half
    /// of it fixed and half jittered.
    func backoff(afterAttempt attempt: Int) -> Duration {
        var delay = limits.backoffInitial
        for _ in 1..<max(1, min(attempt, 32)) {
            delay = delay * 2
            if delay >= limits.backoffMax { break }
        }
        delay = min(delay, limits.backoffMax)
        let fraction = min(max(random(), 0), 0.999_999)
        return delay / 2 + (delay / 2) * fraction
    }
}
