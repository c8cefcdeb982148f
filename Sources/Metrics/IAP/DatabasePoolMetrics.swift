/// The PostgreSQL connection pool of a service.
public struct DatabasePoolMetrics: Sendable {
    public let connectionsInUse: Gauge
    public let connectionsMax: Gauge
    public let waiters: Gauge
    public let acquireWait: Histogram
    public let acquireTimeouts: Counter

    public init(registry: MetricsRegistry) throws(MetricsRegistrationError) {
        connectionsInUse = try registry.makeGauge(IAPMetricNames.databasePoolConnectionsInUse)
        connectionsMax = try registry.makeGauge(IAPMetricNames.databasePoolConnectionsMax)
        waiters = try registry.makeGauge(IAPMetricNames.databasePoolWaiters)
        acquireWait = try registry.makeHistogram(IAPMetricNames.databasePoolAcquireWait)
        acquireTimeouts = try registry.makeCounter(IAPMetricNames.databasePoolAcquireTimeouts)
    }

    /// The pool's state now (from a render-time collector).
    public func update(inUse: Int, max: Int, waiters waiting: Int) {
        connectionsInUse.set(Double(inUse))
        connectionsMax.set(Double(max))
        waiters.set(Double(waiting))
    }

    /// One acquisition: how long it waited, and whether it gave up.
    public func recordAcquire(waited: Duration, timedOut: Bool) {
        acquireWait.observe(waited)
        if timedOut { acquireTimeouts.increment() }
    }
}
