/// When to resubmit a purchase after a retryable answer: exponential
/// backoff from `initialDelayMilliseconds`, capped at
/// `maximumDelayMilliseconds`, with jitter (each delay is between half and
/// all of its step, so many devices do not come back at once), at most
/// `attemptsPerSessionMax` retries per launch. After that the purchase
/// waits for the next launch (or `CreditsClient.resumePendingPurchases()`).
public struct RetrySchedule: Sendable, Hashable {
    public var initialDelayMilliseconds: Int64
    public var maximumDelayMilliseconds: Int64
    public var attemptsPerSessionMax: Int

    public init(
        initialDelayMilliseconds: Int64 = 2_000, maximumDelayMilliseconds: Int64 = 300_000,
        attemptsPerSessionMax: Int = 12
    ) {
        precondition(
            initialDelayMilliseconds > 0 && maximumDelayMilliseconds >= initialDelayMilliseconds
                && attemptsPerSessionMax > 0)
        self.initialDelayMilliseconds = initialDelayMilliseconds
        self.maximumDelayMilliseconds = maximumDelayMilliseconds
        self.attemptsPerSessionMax = attemptsPerSessionMax
    }

    /// The delay before retry `attempt` (1 for the first retry), or nil once
    /// the session's retries are used up. `unitRandom` is in 0..<1.
    public func delayMilliseconds(beforeRetry attempt: Int, unitRandom: Double) -> Int64? {
        precondition(attempt >= 1)
        guard attempt <= attemptsPerSessionMax else { return nil }
        var step = initialDelayMilliseconds
        for _ in 1..<attempt where step < maximumDelayMilliseconds {
            step = min(step * 2, maximumDelayMilliseconds)
        }
        let random = min(max(unitRandom, 0), 1)
        let delay = step / 2 + Int64((Double(step - step / 2) * random).rounded(.down))
        assert(delay >= step / 2 && delay <= step)
        return delay
    }
}
