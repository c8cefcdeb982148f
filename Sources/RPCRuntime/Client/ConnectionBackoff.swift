/// Exponential reconnect backoff with a cap, as a pure value.
public struct ConnectionBackoff: Sendable, Hashable {
    public var initialDelay: Duration
    public var multiplier: Double
    public var maximumDelay: Duration

    public init(
        initialDelay: Duration = .milliseconds(100), multiplier: Double = 1.6, maximumDelay: Duration = .seconds(5)
    ) {
        precondition(initialDelay > .zero && multiplier >= 1 && maximumDelay >= initialDelay)
        self.initialDelay = initialDelay
        self.multiplier = multiplier
        self.maximumDelay = maximumDelay
    }

    /// Delay after the `attempt`-th consecutive failure (1-based).
    public func delay(afterFailures attempt: Int) -> Duration {
        var delay = initialDelay
        for _ in 1..<max(1, min(attempt, 64)) {
            delay = delay * multiplier
            if delay >= maximumDelay { return maximumDelay }
        }
        return min(delay, maximumDelay)
    }
}
